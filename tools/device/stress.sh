#!/bin/bash
# `gpucheck stress` against its targets on the GPU machine, in one call of about 5 minutes (one
# GPU) to 7 minutes (two; HALF is then 20 s instead of 30) (docs/PERFORMANCE.md).
# Stage first, here: tools/device/stage.sh stress; carry .devrun/stress. Steps, each logged
# with its command, exit code and the tail of its stderr:
#   1. peers.py --ops sustained: torch's bf16 8192 GEMM loop for DUR s (default 60; warms the GPU)
#   2. stress --tests gemm --dtype bf16 on cuda0 for DUR s      → sustained vs torch (≥ 0.97)
#   3. the same for HALF s with --no-check, then HALF s checked  → checks' cost (≤ 3 %)
#   4. stress --tests memory on cuda0 for HALF s, and bench's 1 GiB device-to-device copy
#                                                               → coverage (≥ 90 % of free),
#                                                                 GB/s vs D2D copy (≥ 0.7)
#   5. with two GPUs: cuda1 alone for DUR s, then cuda0,cuda1 at once for DUR s
#                                                               → each ≥ 0.97 × its single figure
#   6. stress --device all, default tests (gemm, memory, copy) for HALF s: every verdict PASS
#   7. planted faults on the GPU (GPUCHECK_TEST_STRESS_FAULT): a flipped GEMM bit and a bad
#      memory word on cuda0, 10 s of gemm,memory on every GPU: exit 1, cuda0 FAIL for results,
#      any other GPU PASS
# Output under $OUT (default ./stress-out): runs.jsonl (every gpucheck document, one a line, with
# its step), peer.jsonl, log.txt (commands, stderr, nvidia-smi before/after), table.md. The
# table is printed last.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
stage=.devrun/stress
out=${OUT:-$root/stress-out}
mkdir -p "$out"
DUR=${DUR:-60}
log=$out/log.txt
runs=$out/runs.jsonl
: >"$log"
: >"$runs"
say() { echo "stress.sh: $*" | tee -a "$log" >&2; }

[ -f "$stage/devlibs/env.sh" ] && source "$stage/devlibs/env.sh"
gpucheck=${GPUCHECK:-$stage/install/bin/gpucheck}
peers=${PEERS:-$stage/peers.py}
[ -x "$gpucheck" ] || { say "no $gpucheck: run tools/device/stage.sh stress here and carry $stage"; exit 2; }
[ -f "$peers" ] || { say "no $peers: run tools/device/stage.sh stress"; exit 2; }
cat "$stage/STAGED" 2>/dev/null
command -v nvidia-smi >/dev/null || { say "no nvidia-smi: not a GPU machine"; exit 2; }
gpus=$(nvidia-smi -L | grep -c '^GPU ')
# Two GPUs add two DUR-long steps: the shorter steps shrink so the call stays under 8 minutes.
if [ "$gpus" -ge 2 ]; then HALF=${HALF:-20}; else HALF=${HALF:-30}; fi
say "$("$gpucheck" --version 2>&1 | head -1); $gpus GPU(s); DUR=$DUR HALF=$HALF"
"$gpucheck" --version >>"$log" 2>&1 || { say "gpucheck does not run (missing library?):"; ldd "$gpucheck" | grep 'not found' | tee -a "$log"; exit 2; }
{ echo "== nvidia-smi before"; nvidia-smi; nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE,ECC,ROW_REMAPPER; } >>"$log" 2>&1

# run STEP ARGS...: one gpucheck stress/bench run; its document goes to runs.jsonl with the step.
run() {
  local step=$1; shift
  local doc=$out/.doc.json err=$out/.err.txt
  say "step $step: gpucheck $*"
  local t0=$SECONDS
  # A run that overstays its time is stopped with SIGINT: stress then still writes what ran.
  timeout -s INT -k 30 "$((DUR + 120))" "$gpucheck" "$@" --json -o "$doc" 2>"$err"
  local rc=$?
  say "step $step: exit $rc after $((SECONDS - t0)) s"
  tail -n 40 "$err" >>"$log"
  if [ "$rc" -ne 0 ]; then
    echo "---- step $step stderr (tail) ----" >&2
    tail -n 15 "$err" >&2
  fi
  if [ -s "$doc" ]; then
    python3 -c 'import json,sys; print(json.dumps({"step": sys.argv[1], "exit": int(sys.argv[2]), "doc": json.load(open(sys.argv[3]))}))' \
      "$step" "$rc" "$doc" >>"$runs" || say "step $step: its document does not parse"
    # A FAIL's reasons on the terminal at once: what to fix without another run.
    python3 - "$doc" <<'PY' >&2
import json, sys
d = json.load(open(sys.argv[1]))
for dev in d.get("stress", {}).get("devices", []):
    if dev.get("verdict") != "pass":
        print(f"  {dev['device']}: FAIL")
        for r in dev.get("reasons", []):
            print(f"    {r}")
PY
  else
    say "step $step: no document written"
  fi
  rm -f "$doc" "$err"
}

stress_gemm=(stress --tests gemm --dtype bf16 --gemm 8192)

# 1. The peer first: its loop also brings the GPU to its working temperature.
say "step peer: python3 $peers --ops sustained --gemm 8192 --dtypes bf16 --duration $DUR"
python3 "$peers" --ops sustained --gemm 8192 --dtypes bf16 --duration "$DUR" >"$out/peer.jsonl" 2>>"$log" ||
  say "step peer: peers.py failed (see log.txt)"
# 2.
run single-cuda0 "${stress_gemm[@]}" --device cuda0 --duration "${DUR}s"
# 3. Checks off, then on, same length, back to back.
run nocheck "${stress_gemm[@]}" --device cuda0 --duration "${HALF}s" --no-check
run check "${stress_gemm[@]}" --device cuda0 --duration "${HALF}s"
# 4.
run memory stress --tests memory --device cuda0 --duration "${HALF}s"
run d2d bench --device cuda0 --no-baseline --ops copy --copy 1GiB --reps 20 --min-time 0 --warmup 3
# 5.
if [ "$gpus" -ge 2 ]; then
  run single-cuda1 "${stress_gemm[@]}" --device cuda1 --duration "${DUR}s"
  run both "${stress_gemm[@]}" --device cuda0,cuda1 --duration "${DUR}s"
fi
# 6.
run all stress --device all --duration "${HALF}s"
# 7.
export GPUCHECK_TEST_STRESS_FAULT=cuda0:gemm_bit@3,cuda0:memory_word@1
run faults stress --device all --tests gemm,memory --duration 10s
unset GPUCHECK_TEST_STRESS_FAULT
{ echo "== nvidia-smi after"; nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE,ECC,ROW_REMAPPER; } >>"$log" 2>&1

python3 - "$runs" "$out/peer.jsonl" >"$out/table.md" <<'PY'
import json, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs[r["step"]] = r
peer = None
for line in open(sys.argv[2]):
    j = json.loads(line)
    if j.get("op") == "sustained":
        peer = j

def dev(step, name="cuda0"):
    r = runs.get(step)
    if not r:
        return None
    for d in r["doc"].get("stress", {}).get("devices", []):
        if d["device"] == name:
            return d
    return None

def rec(d, test):
    for r in (d or {}).get("records", []):
        if r.get("test") == test:
            return r
    return None

def tput(d, test="gemm"):
    r = rec(d, test)
    return r["throughput"]["value"] if r and "throughput" in r else None

def tele(d):
    t = (d or {}).get("telemetry", {})
    f = lambda k: t.get(k, {}).get("mean")
    return f"SM {f('sm_clock_mhz')} MHz, {f('power_w')} W, max {t.get('temperature_c', {}).get('max')} C"

rows = []
def row(what, value, target, ok, detail=""):
    rows.append(f"| {what} | {value} | {target} | {'ok' if ok else 'MISSED' if ok is False else '?'} | {detail} |")

g = tput(dev("single-cuda0"))
p = peer["TFLOPs"] if peer else None
row("sustained bf16 8192 GEMM, gpucheck / torch", f"{g:.1f} / {p:.1f} TFLOP/s = {g / p:.3f}" if g and p else f"{g} / {p}",
    ">= 0.97", (g / p >= 0.97) if g and p else None,
    f"gpucheck {tele(dev('single-cuda0'))}; torch min window {peer.get('window_TFLOPs_min') if peer else None}")
off, on = tput(dev("nocheck")), tput(dev("check"))
c = rec(dev("check"), "gemm")
row("checks' cost (1 - on/off)", f"{100 * (1 - on / off):.2f} % ({on:.1f} vs {off:.1f})" if on and off else f"{on} / {off}",
    "<= 3 %", (1 - on / off <= 0.03) if on and off else None,
    f"k = {c['checking'].get('check_every')}, full checks {c['checking'].get('full_checks')}, batch {c['checking'].get('batch')}, "
    f"{c['checking'].get('result_buffers')} result buffers" if c and "checking" in c else "")
m = rec(dev("memory"), "memory")
cov = m["memory"]["fraction_of_free"] if m and "memory" in m else None
row("memory test coverage of free memory", f"{100 * cov:.1f} %" if cov else cov, ">= 90 %", (cov >= 0.9) if cov else None,
    f"{m['memory']['bytes_tested'] / 2**30:.1f} GiB, {m['memory']['passes']} passes" if m and "memory" in m else "")
d2d = None
r = runs.get("d2d")
if r:
    for x in r["doc"].get("results", []):
        if x.get("op") == "copy" and x["shape"].get("direction") == "d2d" and x.get("status") == "ok":
            d2d = x["throughput"]["value"]
mem = tput(dev("memory"), "memory")
row("memory test GB/s / D2D copy GB/s", f"{mem:.0f} / {d2d:.0f} = {mem / d2d:.3f}" if mem and d2d else f"{mem} / {d2d}",
    ">= 0.7", (mem / d2d >= 0.7) if mem and d2d else None)
if "both" in runs:
    for name in ("cuda0", "cuda1"):
        single = tput(dev("single-" + name, name))
        both = tput(dev("both", name))
        row(f"{name} with both GPUs at once / alone", f"{both:.1f} / {single:.1f} = {both / single:.3f}" if both and single else f"{both} / {single}",
            ">= 0.97", (both / single >= 0.97) if both and single else None, tele(dev("both", name)))
f = runs.get("faults")
if f:
    for d in f["doc"].get("stress", {}).get("devices", []):
        want = "fail" if d["device"] == "cuda0" else "pass"
        row(f"planted faults, {d['device']}", d["verdict"].upper(), want.upper(),
            d["verdict"] == want and (want == "pass" or any(x.startswith("results:") for x in d.get("reasons", []))),
            "; ".join(d.get("reasons", []))[:300])
    row("planted faults, exit code", f["exit"], 1, f["exit"] == 1)
for step, r in runs.items():
    for d in r["doc"].get("stress", {}).get("devices", []):
        if step not in ("nocheck", "faults"):
            row(f"verdict, step {step}, {d['device']}", d["verdict"].upper(), "PASS", d["verdict"] == "pass",
                "; ".join(d.get("reasons", []))[:300])
print("| what | measured | target | | detail |\n|---|---|---|---|---|")
print("\n".join(rows))
PY
cat "$out/table.md"
ls "$out" | tee -a "$log" >/dev/null

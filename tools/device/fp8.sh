#!/bin/bash
# FP8 GEMM on cuda0 beside PyTorch, in one call of about two minutes (docs/PERFORMANCE.md).
# Stage first, here: tools/device/stage.sh fp8; carry .devrun/fp8. Steps, in this order, each
# logged:
#   1. torch._scaled_mm (tools/device/fp8_peer.py: e4m3 inputs, scales of 1.0, bf16 out, the
#      second operand column-major) at GEMM sizes                                  → peer1.jsonl
#   2. gpucheck bench --device cuda0 --ops gemm --dtype fp8 --gemm GEMM --no-baseline, through
#      torch's own cuBLAS/cuBLASLt (--cublas/--cublaslt: the same library as the peer) → torchlibs.json
#   3. the same with gpucheck's own library search (where it finds another cuBLAS)  → own.json
#   4. the peer again (the clocks after gpucheck's load)                            → peer2.jsonl
# Then a table: per size gpucheck's TFLOP/s (device time, the median of its repetitions), torch's
# (the better median of its two runs, and its fastest single call), the ratio of the medians
# (target ≥ 1), the share of H100/H200's dense FP8 peak of 1979 TFLOP/s (target ≥ 0.65), and the
# float64 verification (max_rel_error against its tolerance). torch's 30 calls run back to back,
# gpucheck's 20 in three rounds with host checks between: at 16384 the H200's power cap lowers the
# clocks of a back-to-back loop (see each record's context.sm_clock_mhz and clocks_event_reasons),
# so the fastest call is the figure at full clocks.
# GEMM=8192,16384 (sizes), STEPS="peer1 torchlibs own peer2" (which steps), REPS=30 (the peer's),
# BENCH_FLAGS="--reps 20 --warmup 3 --min-time 0" (gpucheck's, as tools/device/device-perf.sh times),
# BENCH_TIMEOUT=110 and PEER_TIMEOUT=50 (seconds a step may take), OUT=./fp8-out (outputs: the
# documents, log.txt, table.md).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
stage=.devrun/fp8
out=${OUT:-$root/fp8-out}
mkdir -p "$out"
GEMM=${GEMM:-8192,16384}
STEPS=${STEPS:-peer1 torchlibs own peer2}
REPS=${REPS:-30}
BENCH_FLAGS=${BENCH_FLAGS:---reps 20 --warmup 3 --min-time 0}
BENCH_TIMEOUT=${BENCH_TIMEOUT:-110}
PEER_TIMEOUT=${PEER_TIMEOUT:-50}
log=$out/log.txt
: >"$log"
say() { echo "fp8.sh: $*" | tee -a "$log" >&2; }
step() { [[ " $STEPS " == *" $1 "* ]]; }

gpucheck=${GPUCHECK:-$stage/install/bin/gpucheck}
[ -x "$gpucheck" ] || { say "no $gpucheck: run tools/device/stage.sh fp8 here and carry $stage"; exit 2; }
cat "$stage/STAGED" 2>/dev/null
command -v nvidia-smi >/dev/null || { say "no nvidia-smi: not a GPU machine"; exit 2; }
"$gpucheck" --version >>"$log" 2>&1 || { say "gpucheck does not run (missing library?):"; ldd "$gpucheck" | grep 'not found' | tee -a "$log"; exit 2; }
{ echo "== nvidia-smi before"; nvidia-smi; nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE; } >>"$log" 2>&1
say "$("$gpucheck" --version 2>&1 | head -1); $(nvidia-smi -L | head -1); GEMM=$GEMM STEPS=$STEPS"

# torch's own cuBLAS and cuBLASLt, from its site-packages (as tools/device/device_perf.py finds them).
read -r cublas cublaslt < <(python3 - <<'PY'
import importlib.util, os
spec = importlib.util.find_spec("torch")
site = os.path.dirname(os.path.dirname(spec.origin)) if spec and spec.origin else ""
found = {}
for key, names in (("cublas", ["libcublas.so.13", "libcublas.so.12"]),
                   ("cublaslt", ["libcublasLt.so.13", "libcublasLt.so.12"])):
    for sub in ("nvidia/cu13/lib", "nvidia/cublas/lib"):
        for n in names:
            p = os.path.join(site, sub, n)
            if key not in found and os.path.exists(p):
                found[key] = p
print(found.get("cublas", "-"), found.get("cublaslt", "-"))
PY
)
say "torch's cuBLAS: $cublas, cuBLASLt: $cublaslt"

peer() {  # peer NAME
  say "step $1: python3 tools/device/fp8_peer.py --gemm $GEMM --reps $REPS"
  local t0=$SECONDS
  PYTHONUNBUFFERED=1 timeout "$PEER_TIMEOUT" python3 tools/device/fp8_peer.py --gemm "$GEMM" --reps "$REPS" \
    >"$out/$1.jsonl" 2>>"$log" || say "step $1: fp8_peer.py failed (see log.txt)"
  say "step $1: $((SECONDS - t0)) s"
  cat "$out/$1.jsonl" >&2
}

bench() {  # bench NAME [LIBRARY FLAGS...]
  local name=$1; shift
  say "step $name: gpucheck bench --device cuda0 --ops gemm --dtype fp8 --gemm $GEMM --no-baseline $BENCH_FLAGS $*"
  local t0=$SECONDS
  # shellcheck disable=SC2086  # BENCH_FLAGS are words
  timeout -s INT -k 10 "$BENCH_TIMEOUT" "$gpucheck" bench --device cuda0 --ops gemm --dtype fp8 \
    --gemm "$GEMM" --no-baseline $BENCH_FLAGS "$@" --json -o "$out/$name.json" 2>"$out/$name.err"
  local rc=$?
  say "step $name: exit $rc after $((SECONDS - t0)) s"
  tail -n 20 "$out/$name.err" >>"$log"
  [ "$rc" -eq 0 ] || tail -n 15 "$out/$name.err" >&2
}

step peer1 && peer peer1
if step torchlibs; then
  if [ "$cublas" != - ] && [ "$cublaslt" != - ]; then
    bench torchlibs --cublas "$cublas" --cublaslt "$cublaslt"
  else
    say "step torchlibs: torch's cuBLAS not found: skipped"
  fi
fi
step own && bench own
step peer2 && peer peer2
{ echo "== nvidia-smi after"; nvidia-smi -q -d PERFORMANCE,CLOCK,POWER,TEMPERATURE; } >>"$log" 2>&1

python3 - "$out" >"$out/table.md" <<'PY'
import json, os, sys
out = sys.argv[1]
PEAK = 1979.0  # H100/H200 SXM dense FP8 (the datasheets' 3958 with sparsity, halved)
torch, fastest = {}, {}
for name in ("peer1", "peer2"):
    p = os.path.join(out, name + ".jsonl")
    if os.path.exists(p):
        for line in open(p):
            j = json.loads(line)
            torch.setdefault(j["m"], []).append(j["TFLOPs"])
            call = 2.0 * j["m"] * j["n"] * j["k"] / j["min_s"] / 1e12
            fastest[j["m"]] = max(fastest.get(j["m"], 0), call)
rows = ["| size | gpucheck (libs) | TFLOP/s | torch._scaled_mm TFLOP/s (runs; fastest call) | ratio | "
        "of 1979 | verification (max_rel_error / tolerance, method) | SM MHz | choice |",
        "|---|---|---|---|---|---|---|---|---|"]
for name in ("torchlibs", "own"):
    p = os.path.join(out, name + ".json")
    if not os.path.exists(p):
        continue
    try:
        doc = json.load(open(p))
    except ValueError as e:
        rows.append(f"| - | {name} | document does not parse: {e} | | | | | |")
        continue
    for r in doc.get("results", []):
        if r.get("op") != "gemm" or r.get("transfers") != "excluded":
            continue
        m = r["shape"]["m"]
        if r.get("status") != "ok":
            rows.append(f"| {m} | {name} | {r.get('status')}: {r.get('reason', '')[:200]} | | | | | | |")
            continue
        g = r["throughput"]["value"]
        t = torch.get(m, [])
        best = max(t) if t else None
        v = r.get("verification", {})
        c = r.get("choice", {})
        ctx = r.get("context", {})
        sm = ctx.get("sm_clock_mhz", {})
        clocks = f"{sm.get('mean', '?')} ({sm.get('min', '?')}–{sm.get('max', '?')}) " + \
            " ".join(ctx.get("clocks_event_reasons", []))
        peer = (f"{best:.1f} ({', '.join(f'{x:.1f}' for x in t)}; {fastest[m]:.1f})"
                if best else "-")
        rows.append(
            f"| {m} | {name} | {g:.1f} | {peer} | {f'{g / best:.3f}' if best else '-'} | "
            f"{g / PEAK:.3f} | {v.get('max_rel_error')} / {v.get('tolerance')}, {v.get('method')} | "
            f"{clocks} | {c.get('id', '')} {c.get('version', '')} {c.get('source', '')} |")
print("\n".join(rows))
PY
cat "$out/table.md"
ls "$out" >>"$log"

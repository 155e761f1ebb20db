#!/bin/bash
# OpenCL GEMM tuning on the GPU machine, in one call (about 6 minutes): NVIDIA's OpenCL GEMM (f32, f64,
# f16 at 4096 and 8192) tuned (first run), read from the cache (second run) and with --no-tune
# (CLBlast's defaults), beside torch.matmul with TF32 off (peers.py) in the same call; a table
# of ratios last. Logs and JSON go to $OUT (8 files at most).
#
#   bash tools/device/opencl-tune.sh        TUNE_BUDGET=45 (seconds per dtype) by default
#
# Reads .devrun/opencl-tune/ (tools/device/stage.sh opencl-tune, run on the dev machine and
# carried): install/bin/gpucheck, peers.py, devlibs/env.sh. NVIDIA's OpenCL is present there but
# not registered: an OCL_ICD_VENDORS directory in /tmp registers it for this run only.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
d=.devrun/opencl-tune
gpucheck=$d/install/bin/gpucheck
out=${OUT:-/tmp/opencl-tune-out}
budget=${TUNE_BUDGET:-45}
mkdir -p "$out"
log=$out/run.log
: >"$log"
say() { echo "opencl-tune: $*" | tee -a "$log"; }

for f in "$gpucheck" "$d/peers.py" "$d/devlibs/env.sh"; do
  [ -e "$f" ] || { say "missing $f: run tools/device/stage.sh opencl-tune on the dev machine and carry .devrun/opencl-tune"; exit 2; }
done
# shellcheck disable=SC1091
source "$d/devlibs/env.sh"
if ! "$gpucheck" --version >>"$log" 2>&1; then
  say "the staged gpucheck does not start; ldd says:"
  ldd "$gpucheck" 2>&1 | grep -i "not found" | tee -a "$log"
  exit 1
fi

# shellcheck source=tools/device/nvidia-opencl.sh
source "$root/tools/device/nvidia-opencl.sh"
say "NVIDIA OpenCL is $dev; tuning budget ${budget} s per dtype"

# ---- three runs of the same bench, then the peer
export XDG_CACHE_HOME=/tmp/opencl-tune-xdg
rm -rf "$XDG_CACHE_HOME"
common=(bench --device "$dev" --no-baseline --ops gemm --dtype f32,f64,f16 --gemm 4096,8192
        --reps 20 --min-time 0 --warmup 3 --json -v)
declare -A secs rcs
step() {  # step NAME ARGS...: one gpucheck run, its JSON in $out/NAME.json, its stderr in run.log
  local name=$1
  shift
  echo "==== $name: gpucheck $*" >>"$log"
  local t0 t1
  t0=$(date +%s.%N)
  timeout 420 "$gpucheck" "$@" -o "$out/$name.json" 2>>"$log"
  rcs[$name]=$?
  t1=$(date +%s.%N)
  secs[$name]=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
  say "$name: exit ${rcs[$name]} in ${secs[$name]} s"
  if [ "${rcs[$name]}" -ne 0 ]; then
    say "$name failed; the end of its log:"
    tail -n 25 "$log"
  fi
}
step tuned "${common[@]}" --tune-budget "$budget"
step cached "${common[@]}"
step notune "${common[@]}" --no-tune
cp "$XDG_CACHE_HOME"/gpucheck/*.json "$out/tuning-cache.json" 2>/dev/null ||
  say "no tuning cache file under $XDG_CACHE_HOME/gpucheck"
echo "==== peers.py" >>"$log"
t0=$(date +%s.%N)
PYTHONUNBUFFERED=1 timeout 300 python3 "$d/peers.py" --ops gemm --gemm 4096,8192 --dtypes f32,f64,f16 \
  --reps 20 >"$out/peers.jsonl" 2>>"$log"
say "peers.py: exit $? in $(python3 -c "import time; print(f'{time.time() - $t0:.1f}')") s"

# ---- the table
python3 - "$out" "${secs[tuned]}" "${secs[cached]}" "${secs[notune]}" <<'PY' | tee "$out/table.md"
import json, os, sys
out, t_tuned, t_cached, t_notune = sys.argv[1], *map(float, sys.argv[2:5])

def records(name):
    try:
        doc = json.load(open(os.path.join(out, name + ".json")))
    except Exception as e:
        print(f"({name}.json unreadable: {e})")
        return {}
    r = {}
    for rec in doc.get("results", []):
        if rec.get("op") != "gemm" or rec.get("transfers") != "excluded":
            continue
        key = (rec.get("dtype"), rec["shape"]["m"])
        if rec.get("status") != "ok":
            r[key] = (None, rec.get("status"), rec.get("reason", "")[:80])
        else:
            r[key] = (rec["throughput"]["value"], rec.get("impl"), rec.get("context", {}).get("tuning"))
    return r

runs = {n: records(n) for n in ("tuned", "cached", "notune")}
torch = {}
for line in open(os.path.join(out, "peers.jsonl"), errors="replace"):
    try:
        j = json.loads(line)
    except ValueError:
        continue
    if j.get("peer") == "torch" and j.get("op") == "gemm":
        torch[(j["dtype"], j["m"])] = j["TFLOPs"]

def cell(v):
    if v is None:
        return "-"
    if v[0] is None:
        return f"{v[1]}: {v[2]}"
    return f"{v[0]:.2f} ({v[1]}, {v[2]})"

def ratio(v, t):
    return f"{v[0] / t:.2f}x" if v and v[0] and t else "-"

print("\n| dtype | size | tuned run TFLOP/s | cached run | --no-tune | torch.matmul | tuned/torch | cached/torch | no-tune/torch | target |")
print("|---|---|---|---|---|---|---|---|---|---|")
for dt in ("f32", "f64", "f16"):
    for m in (4096, 8192):
        a, b, c = (runs[n].get((dt, m)) for n in ("tuned", "cached", "notune"))
        t = torch.get((dt, m))
        target = ""
        if dt == "f32":
            met = b and b[0] and t and b[0] / t >= 0.8
            target = ">= 0.8x: " + ("met" if met else "NOT met")
        print(f"| {dt} | {m} | {cell(a)} | {cell(b)} | {cell(c)} | {t if t is None else f'{t:.2f}'} | "
              f"{ratio(a, t)} | {ratio(b, t)} | {ratio(c, t)} | {target} |")
print(f"\nrun times: tuned {t_tuned:.1f} s, cached {t_cached:.1f} s, --no-tune {t_notune:.1f} s; "
      f"cached/--no-tune = {t_cached / t_notune:.2f} (target <= 1.10: "
      f"{'met' if t_cached <= 1.1 * t_notune else 'NOT met'})")
try:
    cache = json.load(open(os.path.join(out, "tuning-cache.json")))
    for dt, e in cache.get("dtypes", {}).items():
        ref = e.get("reference", {})
        speed = ref.get("seconds", 0) / e["seconds"] if e.get("seconds") else 0
        print(f"tuning {dt}: {e.get('impl')} {json.dumps(e.get('parameters', {}), separators=(',', ':'))} "
              f"on {e['shape']['m']}: {speed:.2f}x {ref.get('impl')}'s defaults; {e.get('timed')} timed, "
              f"{e.get('rejected_count')} rejected in {e.get('search_s', 0):.0f} s")
except Exception as e:
    print(f"(no tuning cache: {e})")
PY

#!/bin/bash
# OpenCL GEMM kernel variants on the GPU machine, in one call (2–4 minutes): gpucheck's own OpenCL SGEMM with given
# parameter sets (GPUCHECK_TEST_GEMM_PARAMS, one run each), a tuned run, and torch.matmul with
# TF32 off (peers.py), at 4096 and 8192, so that a kernel change is judged beside cuBLAS in the
# same call. Logs and JSON go to $OUT.
#
#   VARIANTS_FILE=path (one JSON object of parameters a line; default tools/device/gemm-variants.txt)
#   TUNE_BUDGET=60 (seconds; 0 skips the tuned run)   SIZES=4096,8192   DTYPE=f32
#
# Reads what tools/device/stage.sh opencl-tune staged in .devrun/opencl-tune (carry it).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
d=.devrun/opencl-tune
gpucheck=$d/install/bin/gpucheck
out=${OUT:-/tmp/opencl-variants-out}
variants=${VARIANTS_FILE:-tools/device/gemm-variants.txt}
budget=${TUNE_BUDGET:-60}
sizes=${SIZES:-4096,8192}
dtype=${DTYPE:-f32}
mkdir -p "$out"
log=$out/run.log
: >"$log"
say() { echo "opencl-variants: $*" | tee -a "$log"; }
for f in "$gpucheck" "$d/peers.py" "$d/devlibs/env.sh" "$variants"; do
  [ -e "$f" ] || { say "missing $f: run tools/device/stage.sh opencl-tune and carry .devrun/opencl-tune"; exit 2; }
done
# shellcheck disable=SC1091
source "$d/devlibs/env.sh"
# shellcheck source=tools/device/nvidia-opencl.sh
source "$root/tools/device/nvidia-opencl.sh"
# What NVIDIA's compiler makes of one parameter set (PTX, for 4096-like shapes): how many
# multiply-adds, loads of each width and spills; ptxas -v on the dev machine says the rest.
ptx() {  # ptx NAME PARAMS_JSON
  [ -x "$d/tools/cl-binary" ] || return 0
  local opts
  opts="$(python3 -c "import json,sys; print(' '.join(f'-D{k}={v}' for k, v in json.loads(sys.argv[1]).items()))" "$2") -DGC_${dtype^^} -DBT=0 -DEDGE=0 -DGALIGN=1"
  "$d/tools/cl-binary" NVIDIA kernels/opencl_gemm.cl "$opts" 2>>"$log" | tr -d '\000' >"$out/$1.ptx"
  say "$1 PTX: $(grep -c 'fma.rn.f32' "$out/$1.ptx") fma, $(grep -c 'ld.shared.v4' "$out/$1.ptx") ld.shared.v4, $(grep -c 'ld.shared.v2' "$out/$1.ptx") .v2, $(grep -cE 'ld.shared.(f|b)32' "$out/$1.ptx") scalar; $(grep -c 'ld.global.*v4' "$out/$1.ptx") ld.global.v4, $(grep -cE 'ld.global(.nc)?.(f|b)32' "$out/$1.ptx") scalar; $(grep -c 'ld.local\|st.local' "$out/$1.ptx") local ld/st"
}
export XDG_CACHE_HOME=/tmp/opencl-variants-xdg
rm -rf "$XDG_CACHE_HOME"
common=(bench --device "$dev" --no-baseline --ops gemm --dtype "$dtype" --gemm "$sizes"
        --reps 20 --min-time 0 --warmup 3 --json)
summary() {  # summary NAME: the transfers-excluded GEMM figures of $out/NAME.json, one line
  python3 - "$out/$1.json" "$1" <<'PY'
import json, sys
try:
    doc = json.load(open(sys.argv[1]))
except Exception as e:
    print(f"{sys.argv[2]}: unreadable ({e})"); sys.exit(0)
cells = []
for r in doc.get("results", []):
    if r.get("op") != "gemm" or r.get("transfers") != "excluded":
        continue
    v = r["throughput"]["value"] if r.get("status") == "ok" else r.get("status")
    cells.append(f"{r['shape']['m']}: {v if isinstance(v, str) else f'{v:.2f}'}")
print(f"{sys.argv[2]}: " + ", ".join(cells))
PY
}
i=0
while IFS= read -r params; do
  [[ -z "$params" || "$params" == \#* ]] && continue
  i=$((i + 1))
  echo "==== v$i $params" >>"$log"
  GPUCHECK_TEST_GEMM_PARAMS="$params" timeout 120 "$gpucheck" "${common[@]}" -o "$out/v$i.json" 2>>"$log"
  rc=$?
  say "v$i (exit $rc) $params"
  ptx "v$i" "$params"
  summary "v$i" | tee -a "$log"
done <"$variants"
if [ "$budget" != 0 ]; then
  echo "==== tuned" >>"$log"
  timeout 300 "$gpucheck" "${common[@]}" --tune-budget "$budget" -v -o "$out/tuned.json" 2>>"$log"
  say "tuned (exit $?), budget $budget s"
  summary tuned | tee -a "$log"
  cp "$XDG_CACHE_HOME"/gpucheck/*.json "$out/tuning-cache.json" 2>/dev/null
  python3 -c "import json,sys; [print('winner', k, v.get('impl'), json.dumps(v.get('parameters')), v.get('timed'), 'timed') for k, v in json.load(open(sys.argv[1])).get('dtypes', {}).items()]" "$out/tuning-cache.json" 2>&1 | tee -a "$log"
fi
echo "==== peers.py" >>"$log"
PYTHONUNBUFFERED=1 timeout 200 python3 "$d/peers.py" --ops gemm --gemm "$sizes" --dtypes "$dtype" --reps 20 \
  >"$out/peers.jsonl" 2>>"$log"
say "peers.py exit $?"
python3 -c "
import json, sys
for line in open(sys.argv[1]):
    try: j = json.loads(line)
    except ValueError: continue
    if j.get('peer') == 'torch' and j.get('op') == 'gemm': print('torch', j['dtype'], j['m'], round(j['TFLOPs'], 2))
" "$out/peers.jsonl" | tee -a "$log"

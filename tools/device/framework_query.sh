#!/bin/bash
# doctor asking the frameworks themselves on the GPU machine: framework_query beside the
# framework_* verdicts read from the files, for the venv at /opt/torch/.venv (torch 2.11+cu130,
# JAX with its CUDA plugin, CuPy) first on PATH; then a whole doctor run with and without
# --no-frameworks (what the children add beside the load run), and a 1 s budget (every child
# killed and reported, doctor still finishing). Prints a table last; logs under $OUT (default
# /tmp/gpucheck-framework-query-out). Needs tools/device/stage.sh framework-query run here first
# (.devrun/framework-query carried).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
OUT=${OUT:-/tmp/gpucheck-framework-query-out}
mkdir -p "$OUT"
stage=.devrun/framework-query
gpucheck=$stage/install/bin/gpucheck
[ -x "$gpucheck" ] || { echo "framework_query.sh: run tools/device/stage.sh framework-query first" >&2; exit 2; }
cat "$stage/STAGED" 2>/dev/null
venv=${VENV:-/opt/torch/.venv}
export PATH=$venv/bin:$PATH
{
  id
  nvidia-smi -L
  stat -c '%U:%G %a %n' "$venv" "$venv"/bin/python3 "$venv"/lib/python3*/site-packages
  "$venv/bin/python3" -c 'import torch, jax, cupy; print("torch", torch.__version__, "jax", jax.__version__, "cupy", cupy.__version__)'
} >"$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

rows=()
timed() {  # timed LABEL ARGS...: one doctor --json run, recorded as a table row
  local label=$1 t0 t1 rc
  shift
  t0=$(date +%s.%N)
  "$gpucheck" doctor --json "$@" >"$OUT/$label.json" 2>"$OUT/$label.err"
  rc=$?
  t1=$(date +%s.%N)
  rows+=("$(printf '%-20s  %6.2f s  exit %s' "$label" "$(awk "BEGIN{print $t1 - $t0}")" "$rc")")
}
ids=framework_torch,framework_jax,framework_cupy,framework_keras,framework_tensorflow,framework_query
timed frameworks --only "$ids"
timed full
timed full-no-frameworks --no-frameworks
timed budget-1s --only "$ids" --framework-timeout 1

summary() {  # the checks' statuses and findings, and each child's end, of one document
  "$venv/bin/python3" - "$1" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
for c in doc.get("checks", []):
    if c["id"].startswith("framework_"):
        print("  %-22s %-5s %s" % (c["id"], c["status"].upper(), c["finding"][:400]))
for e in doc.get("framework_queries", {}).get("entries", []):
    mm = e.get("answer", {}).get("matmul", {})
    print("  child %-10s %-9s %5.1f s  %s  matmul %s on %s" % (
        e["framework"], e["status"], e.get("seconds", 0), e["python"],
        "verified" if mm.get("verified") else "-", mm.get("device", "-")))
PY
}
for label in frameworks budget-1s; do
  echo "== $label"
  summary "$OUT/$label.json" | tee "$OUT/$label.txt"
done
echo "== timings"
printf '%s\n' "${rows[@]}" | tee "$OUT/timings.txt"

#!/bin/bash
# Where doctor's and probe's seconds go on a multi-GPU machine: `probe` on every GPU and on one,
# `doctor --quick` and a whole `doctor`, each timed, with -v's step lines (each probe child and
# the CUDA child's steps; doctor's probe, load children, peer copies, NVLink counters, frameworks
# and checks) and the load checks' verdicts, so one run shows the split.
#   bash tools/device/doctor-scale.sh [GPUCHECK]
# GPUCHECK defaults to the staged .devrun/health/install/bin/gpucheck, else build/src/gpucheck.
# Logs under $OUT (default /tmp/gpucheck-doctor-scale).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
OUT=${OUT:-/tmp/gpucheck-doctor-scale}
mkdir -p "$OUT"
gpucheck=${1:-}
if [ -z "$gpucheck" ]; then
  gpucheck=.devrun/health/install/bin/gpucheck
  [ -x "$gpucheck" ] || gpucheck=build/src/gpucheck
fi
[ -x "$gpucheck" ] || { echo "doctor-scale.sh: no gpucheck at $gpucheck" >&2; exit 2; }
"$gpucheck" --version
nvidia-smi --query-gpu=index,name,pci.bus_id,persistence_mode --format=csv,noheader

timed() {  # timed NAME CMD...: wall seconds and exit code; stdout and stderr kept under $OUT
  local name=$1 start=$EPOCHREALTIME
  shift
  "$@" >"$OUT/$name.json" 2>"$OUT/$name.err"
  local rc=$?
  awk -v a="$start" -v b="$EPOCHREALTIME" -v n="$name" -v rc="$rc" \
    'BEGIN { printf "%-16s %7.2f s  exit %d\n", n, b - a, rc }' | tee -a "$OUT/times.txt"
}

: >"$OUT/times.txt"
timed probe "$gpucheck" probe -v --json
timed probe-1gpu env CUDA_VISIBLE_DEVICES=0 "$gpucheck" probe -v --json
timed doctor-quick "$gpucheck" doctor --quick --no-state -v --json
timed doctor "$gpucheck" doctor -v --json
for name in probe probe-1gpu doctor-quick doctor; do
  echo "== $name"
  grep -h "probe child\|doctor: " "$OUT/$name.err"
done
echo "== doctor's load checks"
python3 - "$OUT/doctor.json" <<'EOF'
import json, sys
doc = json.load(open(sys.argv[1]))
ids = ("pcie_link_under_load", "clocks_under_load", "gpu_siblings", "p2p_access", "nvlink_errors")
for c in doc.get("checks", []):
    if c["id"] in ids:
        print(f'{c["id"]:22} {c["status"]:5} {c.get("finding", "")[:150]}')
for b in doc.get("backends", []):
    if b.get("name") == "cuda":
        for e in b.get("under_load", []):
            print("load", e.get("device"), e.get("status"), e.get("seconds"), e.get("reason", ""))
        bad = [p for p in b.get("p2p_under_load", []) if p.get("status") != "ok"]
        print("peer copies:", len(b.get("p2p_under_load", [])), "entries,", len(bad), "not ok", bad[:2])
EOF
echo "== times"
cat "$OUT/times.txt"

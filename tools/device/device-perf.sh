#!/bin/bash
# gpucheck beside PyTorch and CuPy on the GPU machine, in one call (docs/PERFORMANCE.md).
#
#   tools/device/device-perf.sh [device_perf.py options: --rounds 3 --budget-s 420 --system-libs ...]
#
# Runs three alternating rounds (gpucheck, then peers.py's measurements) of GEMM, exp, conv,
# copies, launch latency and the seed loop on cuda0, and prints one table: workload, gpucheck
# median, peer median, ratio (median of the rounds' ratios) and spread. With OUT set, every
# record goes to $OUT/perf.jsonl and the table to $OUT/perf-table.md.
#
# gpucheck: $GPUCHECK, else .devrun/perf/install/bin/gpucheck, .devrun/install/bin/gpucheck,
# build-perf/gpucheck, build/gpucheck. The peer script: $PEERS, else .devrun/perf/peers.py,
# .devrun/peers.py, ../shared/tools/peers.py (../shared does not travel to the GPU machine:
# copy peers.py into a carried, git-ignored folder). Needs python3 with torch (and cupy for
# latency); gpucheck's benchmark child gets torch's own cuBLAS/cuDNN (--cublas/--cudnn) when
# torch ships them.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
pick() { for f in "$@"; do [ -n "$f" ] && [ -e "$f" ] && { echo "$f"; return 0; }; done; return 1; }
gpucheck=$(pick "${GPUCHECK:-}" .devrun/perf/install/bin/gpucheck .devrun/install/bin/gpucheck \
  build-perf/gpucheck build/gpucheck) || { echo "device-perf: no gpucheck binary (set GPUCHECK)" >&2; exit 2; }
peers=$(pick "${PEERS:-}" .devrun/perf/peers.py .devrun/peers.py ../shared/tools/peers.py) ||
  { echo "device-perf: no peers.py (set PEERS)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "device-perf: no nvidia-smi: not a GPU machine" >&2; exit 2; }
echo "device-perf: $gpucheck ($("$gpucheck" --version 2>/dev/null | head -1)), peer $peers" >&2
exec python3 "$root/tools/device/device_perf.py" --gpucheck "$gpucheck" --peers "$peers" "$@"

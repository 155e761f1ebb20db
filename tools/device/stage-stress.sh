#!/bin/bash
# Stages what tools/device/stress.sh needs on the GPU machine, in the git-ignored .devrun/stress/:
# a stripped install tree of gpucheck built for sm_90 (install/bin/gpucheck) and peers.py. Issue
# 14's portable binary needs no bundle of Debian libraries (needed.txt lists what it loads).
#
#   tools/device/stage-stress.sh          # BUILD_DIR=build by default (-DGPUCHECK_CUDA_ARCHS=90)
# then, on the GPU machine, carrying .devrun/stress:
#   tools/device/stress.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
shared=""
for d in "${SHARED_DIR:-}" ../shared ../../shared /work/shared; do
  [ -n "$d" ] && [ -f "$d/tools/peers.py" ] && { shared=$d; break; }
done
[ -n "$shared" ] || { echo "stage-stress: no shared/tools/peers.py (set SHARED_DIR)" >&2; exit 2; }
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
if [ ! -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_WITH_CUDA=ON \
    -DGPUCHECK_CUDA_ARCHS=90
fi
grep -q '^GPUCHECK_CUDA_ARCHS:STRING=90' "$build/CMakeCache.txt" ||
  echo "stage-stress: warning: $build is not built for sm_90 only (GPUCHECK_CUDA_ARCHS)" >&2
cmake --build "$build" -j2 --target gpucheck
out=.devrun/stress
rm -rf "$out"
mkdir -p "$out"
cmake --install "$build" --prefix "$out/install" --strip >/dev/null
cp "$shared/tools/peers.py" "$out/peers.py"
readelf -d "$out/install/bin/gpucheck" | grep NEEDED >"$out/needed.txt"
"$out/install/bin/gpucheck" --version
du -sh "$out"
size=$(du -sm "$out" | cut -f1)
[ "$size" -lt 64 ] || { echo "stage-stress: $out is $size MiB, over the 64 MiB carry limit" >&2; exit 1; }
echo "stage-stress: ready; on the GPU machine carry .devrun/stress and run tools/device/stress.sh"

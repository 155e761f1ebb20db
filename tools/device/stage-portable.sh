#!/usr/bin/env bash
# Stages the portable release binary for the GPU machine (issue 14), here:
#   bash tools/device/stage-portable.sh
# Builds Release into build-release (CUDA for every architecture the toolkit supports, as
# tools/package.sh does), installs the stripped tree into .devrun/portable/install (git-ignored)
# and copies peers.py beside it. No .devlibs bundle: the point is that none is needed. Then the
# lead carries .devrun/portable and runs tools/device/portable.sh there.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${BUILD_DIR:-build-release}
stage=.devrun/portable
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_WITH_CUDA=ON \
  -DGPUCHECK_CUDA_ARCHS="${GPUCHECK_CUDA_ARCHS:-all}" -DGPUCHECK_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-2}" --target gpucheck gpucheck_man gpucheck_completion
rm -rf "$stage"
mkdir -p "$stage"
cmake --install "$build" --prefix "$PWD/$stage/install" --strip >/dev/null
peers=${PEERS:-$root/../shared/tools/peers.py}
[ -f "$peers" ] || peers=/work/shared/tools/peers.py
cp "$peers" "$stage/peers.py"
# The load-time needs of what is carried, as the lead will see them there.
readelf -d "$stage/install/bin/gpucheck" | grep NEEDED | tee "$stage/needed.txt"
size=$(du -sm "$stage" | cut -f1)
echo "staged $stage: ${size} MiB ($(du -sh "$stage/install/bin/gpucheck" | cut -f1) binary); carry it with tools/device/portable.sh"
[ "$size" -lt 48 ] || { echo "stage-portable: $stage is ${size} MiB, too close to the 64 MiB carry limit" >&2; exit 1; }

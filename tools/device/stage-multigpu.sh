#!/bin/bash
# Stages what tools/device/multigpu.sh runs on a GPU machine with two NVLink-joined GPUs (issue 17)
# into the git-ignored .devrun/multigpu (carry it; well under the 64 MiB a run may carry):
#   install/bin/gpucheck   stripped, CUDA kernels for sm_90 (H100/H200)
#   device_tests           the GPU-only tests (tests/device), stripped
#   peers.py               ../shared/tools/peers.py: PyTorch's side of the comparison
#   devlibs/               the Debian run-time libraries gpucheck needs (../shared/tools/device-bundle.sh)
#   multigpu.sh, multigpu_table.py, STAGED (the commit staged, and whether the tree was dirty)
# Usage, in the repository root: bash tools/device/stage-multigpu.sh   (BUILD_DIR: default build)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=${BUILD_DIR:-build}
out=.devrun/multigpu
shared=${SHARED:-$root/../shared}
[ -f "$shared/tools/peers.py" ] || shared=/work/shared
die() { echo "stage-multigpu: $*" >&2; exit 1; }
[ -f "$shared/tools/peers.py" ] || die "no peers.py under $shared/tools (set SHARED)"
[ -x /usr/local/cuda/bin/nvcc ] || die "no /usr/local/cuda/bin/nvcc: the CUDA backend cannot be built here"
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_WITH_CUDA=ON \
  -DGPUCHECK_CUDA_ARCHS=90 >/dev/null || die "cmake configure of $build failed"
grep -q 'GPUCHECK_CUDA_ARCHS:STRING=90$' "$build/CMakeCache.txt" ||
  die "$build is configured for other CUDA architectures; use BUILD_DIR=build-devrun"
cmake --build "$build" -j2 --target gpucheck device_tests || die "build failed"
rm -rf "$out"
mkdir -p "$out"
cmake --install "$build" --prefix "$out/install" --strip >/dev/null || die "install failed"
cp "$build/tests/device/device_tests" "$out/device_tests" && strip "$out/device_tests"
cp "$shared/tools/peers.py" "$out/peers.py"
cp tools/device/multigpu.sh tools/device/multigpu_table.py "$out/"
bash "$shared/tools/device-bundle.sh" "$out/devlibs" >/dev/null || die "device-bundle.sh failed"
# What was staged: the run's log prints it, so a result is never matched to the wrong tree.
{
  echo "commit $(git rev-parse HEAD)"
  git diff --quiet HEAD -- src tests tools configs schema && echo "tree clean" ||
    echo "tree DIRTY: uncommitted changes under src/tests/tools/configs/schema were built"
  echo "staged $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "binary $("$out/install/bin/gpucheck" --version 2>/dev/null | head -1)"
} > "$out/STAGED"
size_kib=$(du -sk "$out" | cut -f1)
cat "$out/STAGED"
echo "stage-multigpu: $out is $((size_kib / 1024)) MiB"
[ "$size_kib" -lt $((60 * 1024)) ] || die "$out is over 60 MiB: too large to carry"
echo "run on the device: bash .devrun/multigpu/multigpu.sh   (carry .devrun/multigpu)"

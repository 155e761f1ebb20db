#!/bin/bash
# Stages what tools/device/health.sh runs on the GPU machine into the git-ignored
# .devrun/health/: a stripped install tree of gpucheck (built here, CUDA on) and, until the
# portable binary lands, the Debian libraries it needs there (/work/shared/tools/device-bundle.sh).
#   tools/device/stage-health.sh [BUILD_DIR]     (default build: a CUDA build for sm_90)
# Then carry ".devrun/health" and run: bash tools/device/health.sh
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
build=${1:-build}
out=.devrun/health
export CMAKE_CXX_COMPILER_LAUNCHER=ccache CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CUDA_COMPILER_LAUNCHER=ccache
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_WITH_CUDA=ON \
  -DGPUCHECK_CUDA_ARCHS=90 >/dev/null
cmake --build "$build" -j2 --target gpucheck
rm -rf "$out/install"
cmake --install "$build" --prefix "$out/install" --strip >/dev/null
bundle=${DEVICE_BUNDLE:-/work/shared/tools/device-bundle.sh}
[ -d "$out/devlibs" ] || bash "$bundle" "$out/devlibs"
du -sh "$out"
echo "staged: $out/install/bin/gpucheck ($("$out/install/bin/gpucheck" --version))"

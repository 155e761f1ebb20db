#!/usr/bin/env bash
# Builds the stripped install tree tools/device/issue16.sh runs on the GPU machine (issue 16):
# .devrun/issue16/install/bin/gpucheck, CUDA on for every architecture the GPU machine has (90).
# Carry .devrun/issue16 to the GPU machine.
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${BUILD_DIR:-build-issue16}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_WITH_CUDA=ON \
  -DGPUCHECK_CUDA_ARCHS=90 -DGPUCHECK_BUILD_TESTS=OFF
cmake --build "$build" -j2 --target gpucheck
rm -rf .devrun/issue16
cmake --install "$build" --prefix .devrun/issue16/install --strip
ls -la .devrun/issue16/install/bin/gpucheck

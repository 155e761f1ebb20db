#!/usr/bin/env bash
# Installs the dependencies (Debian 12, as root), builds gpucheck and runs it: probe, then a quick
# bench when this build has the bench command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUCHECK_WITH_CUDA="${GPUCHECK_WITH_CUDA:-AUTO}" -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}"
cmake --build "$build" -j "$(nproc)" --target gpucheck
"$build/src/gpucheck" probe
if "$build/src/gpucheck" bench --help >/dev/null 2>&1; then
  "$build/src/gpucheck" bench --size small
fi

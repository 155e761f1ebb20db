#!/usr/bin/env bash
# Installs the dependencies (Debian 12, as root) and builds gpucheck into $BUILD_DIR (default
# build). Arguments name targets to build (default: everything, tests included).
#   GPUCHECK_WITH_CUDA / GPUCHECK_WITH_OPENCL = AUTO (default) | ON | OFF
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
build=${BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUCHECK_WITH_CUDA="${GPUCHECK_WITH_CUDA:-AUTO}" -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

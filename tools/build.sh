#!/usr/bin/env bash
# Installs the dependencies (Debian 12, as root) and builds gpucheck into $BUILD_DIR (default
# build). Arguments name targets to build (default: everything, tests included).
#   GPUCHECK_WITH_CUDA / GPUCHECK_WITH_OPENCL = AUTO (default) | ON | OFF
#   GPUCHECK_BUILD_TESTS = AUTO (default: where GoogleTest is found; also undoes the quickstart's
#   OFF in a shared build directory) | ON | OFF
#   GPUCHECK_UNITY = ON (default: unity groups, the fastest cold build) | OFF (each file alone;
#   the faster rebuild after an edit, as the dev preset)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
build=${BUILD_DIR:-build}
# CUDA for this machine's GPUs (or sm_75 PTX + sm_90 without one): tools/package.sh and the
# release preset build every architecture.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUCHECK_WITH_CUDA="${GPUCHECK_WITH_CUDA:-AUTO}" -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}" \
  -DGPUCHECK_CUDA_ARCHS="${GPUCHECK_CUDA_ARCHS:-dev}" -DGPUCHECK_UNITY="${GPUCHECK_UNITY:-ON}" \
  -DGPUCHECK_BUILD_TESTS="${GPUCHECK_BUILD_TESTS:-AUTO}"
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build" -j "$(nproc)" "${targets[@]}"

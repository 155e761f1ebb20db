#!/usr/bin/env bash
# Installs the dependencies (Debian 12, as root), builds gpucheck and its tests, runs ctest and
# prints one closing line: "N passed, N failed, N skipped".
#   GPUCHECK_WITH_CUDA=ON|OFF|AUTO (default AUTO)   BUILD_DIR (default build)
set -euo pipefail
cd "$(dirname "$0")/.."
# Everything: what the build needs and what only the tests need (Chromium, clang, Slurm, ...).
bash tools/setup-debian.sh --set build --set test
# Tests on, whatever an earlier quickstart left in the same build directory.
GPUCHECK_BUILD_TESTS=ON bash tools/build.sh
build=${BUILD_DIR:-build}
rc=0
# No test found is a failure, never "0 passed".
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" --no-tests=error \
  --output-junit "$(realpath "$build")/ctest-junit.xml" || rc=$?
/usr/bin/python3 tools/ctest_summary.py "$build/ctest-junit.xml"
exit "$rc"

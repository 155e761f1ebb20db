#!/usr/bin/env bash
# Stages what tools/device/views.sh runs on the GPU machine (issue 15, output for people), here:
#   bash tools/device/stage-views.sh [BUILD_DIR]     (default build: the dev build, CUDA for sm_90)
# Installs the stripped tree of the portable binary (issue 14: only the C library at load time,
# so no library bundle) into the git-ignored .devrun/views/install. Then the lead carries
# ".devrun/views" and runs: bash tools/device/views.sh
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
build=${1:-build}
stage=.devrun/views
cmake --build "$build" -j2 --target gpucheck
rm -rf "$stage"
mkdir -p "$stage"
cmake --install "$build" --prefix "$PWD/$stage/install" --strip >/dev/null
readelf -d "$stage/install/bin/gpucheck" | grep NEEDED | tee "$stage/needed.txt"
echo "staged $stage: $(du -sh "$stage" | cut -f1) ($("$stage/install/bin/gpucheck" --version))"

#!/usr/bin/env bash
# Installs the dependencies (Debian 12, as root), builds gpucheck and runs it: probe, then a
# quick bench of every device found.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/build.sh gpucheck
build=${BUILD_DIR:-build}
"$build/src/gpucheck" probe
"$build/src/gpucheck" bench --size small --min-time 0.1

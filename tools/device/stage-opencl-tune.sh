#!/bin/bash
# Stages what tools/device/opencl-tune.sh runs on the GPU machine (issue 20), here, into the
# git-ignored .devrun/opencl-tune/: a stripped install tree of gpucheck (OpenCL and CPU
# backends, no tests), peers.py beside it, and in devlibs/ the Debian libraries the binary
# still loads (libfmt9, libspdlog1.10, libtomlplusplus3, libclblast1; shared/tools/device-bundle.sh)
# until it is self-contained. Run it from anywhere; then the lead carries .devrun/opencl-tune.
#   tools/device/stage-opencl-tune.sh          (BUILD_DIR=build-devrun by default)
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
out=.devrun/opencl-tune
build=${BUILD_DIR:-build-devrun}
shared=${GPUCHECK_SHARED:-$root/../shared}
[ -f "$shared/tools/peers.py" ] || shared=/work/shared
for f in "$shared/tools/peers.py" "$shared/tools/device-bundle.sh"; do
  [ -f "$f" ] || { echo "stage-opencl-tune: $f is missing (set GPUCHECK_SHARED to the shared folder)" >&2; exit 2; }
done
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
# A build directory that exists keeps its configuration (BUILD_DIR=build reuses the main one).
[ -f "$build/CMakeCache.txt" ] ||
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_BUILD_TESTS=OFF \
    -DGPUCHECK_WITH_CUDA=OFF -DGPUCHECK_WITH_OPENCL=ON >/dev/null
cmake --build "$build" -j2 --target gpucheck
rm -rf "$out"
mkdir -p "$out"
cmake --install "$build" --prefix "$out/install" --strip >/dev/null
cp "$shared/tools/peers.py" "$out/peers.py"
mkdir -p "$out/tools"
gcc -O1 -Wall -Wextra -o "$out/tools/cl-binary" tools/device/cl-binary.c -lOpenCL
bash "$shared/tools/device-bundle.sh" "$out/devlibs" >/dev/null
"$out/install/bin/gpucheck" --version >/dev/null ||
  { echo "stage-opencl-tune: the staged binary does not start here" >&2; exit 1; }
size_kib=$(du -sk "$out" | cut -f1)
if [ "$size_kib" -gt $((48 * 1024)) ]; then
  echo "stage-opencl-tune: $out is ${size_kib} KiB, too close to the 64 MiB a call carries" >&2
  exit 1
fi
echo "staged $out (${size_kib} KiB): $("$out/install/bin/gpucheck" --version | head -1)"
echo "on the GPU machine: carry .devrun/opencl-tune and run: bash tools/device/opencl-tune.sh (or opencl-variants.sh)"

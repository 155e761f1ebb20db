#!/usr/bin/env bash
# From a fresh clone to the first answer: installs what building and running need (Debian 12, as
# root: tools/setup-debian.sh's build set), builds the gpucheck binary alone (no tests; through
# ccache where it is installed), then runs `gpucheck probe` and a quick bench of every device
# found. Prints how long each step took (wall and CPU seconds). BUILD_DIR (default build).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${BUILD_DIR:-build}
start=$SECONDS
timings=()
tf=$(mktemp)
trap 'rm -f "$tf"' EXIT
# step NAME COMMAND...: runs it and notes its wall time and the CPU time (user + system) of the
# processes it ran, as bash's `time` measures them.
step() {
  local name=$1 rc=0
  shift
  local TIMEFORMAT='%R %U %S'
  { time "$@" 2>&3 3>&-; } 3>&2 2>"$tf" || rc=$?
  local wall cpu
  read -r wall cpu < <(awk '{ printf "%.1f %.1f\n", $1, $2 + $3 }' "$tf")
  timings+=("$(printf '%-10s %5s s wall %6s s CPU' "$name" "$wall" "$cpu")")
  echo "quickstart: $name took $wall s ($cpu s CPU); $((SECONDS - start)) s since the start"
  return "$rc"
}
if [ "$(id -u)" = 0 ]; then
  step setup bash tools/setup-debian.sh --set build
fi
# ccache is used where installed (cmake/GpucheckDefaults.cmake); CUDA for this machine's GPUs only
# (GPUCHECK_CUDA_ARCHS=dev, as the `quick` preset): tools/package.sh builds every architecture.
# A unity build (cmake/GpucheckUnity.cmake): a cold build does each folder's shared template work
# once per group of files rather than once per file.
step configure cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCHECK_BUILD_TESTS=OFF \
  -DGPUCHECK_WITH_CUDA="${GPUCHECK_WITH_CUDA:-AUTO}" -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}" \
  -DGPUCHECK_CUDA_ARCHS="${GPUCHECK_CUDA_ARCHS:-dev}" -DGPUCHECK_UNITY=ON
step build cmake --build "$build" -j "$(nproc)" --target gpucheck
step probe "$build/src/gpucheck" probe
step bench "$build/src/gpucheck" bench --size small --min-time 0.1
echo "quickstart: done in $((SECONDS - start)) s"
printf '  %s\n' "${timings[@]}"

#!/usr/bin/env bash
# Stages what one device scenario runs on the GPU machine, here, into the git-ignored
# .devrun/SCENARIO/ (the lead carries that folder; a device call sends the repository and the
# carried paths, nothing else, and at most 64 MiB of them):
#   install/     a stripped `cmake --install` tree: install/bin/gpucheck
#   peers.py     PyTorch's side of the comparisons (shared/tools/peers.py), where the scenario has one
#   needed.txt   what the staged binary needs at load time (readelf NEEDED)
#   STAGED       the commit staged, whether the tree was dirty, when, and the binary's --version
#   ...          the scenario's extras (device_tests, tools/cl-binary, devlibs/)
#
#   tools/device/stage.sh SCENARIO [--no-build]     stage one scenario
#   tools/device/stage.sh --list                    the scenarios and the command each runs
#
# --no-build installs from the build directory as it is (no configure, no build): the staging
# alone, to check it here. BUILD_DIR picks the build directory (each scenario has a default); a
# directory that exists keeps its configuration. BUNDLE=1 adds devlibs/ (the Debian libraries
# of shared/tools/device-bundle.sh) to any scenario; opencl-tune always has it (CLBlast, clinfo).
# SHARED names the folder holding tools/peers.py and tools/device-bundle.sh.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root"
die() { echo "stage.sh: $1" >&2; exit "${2:-1}"; }

# scenario | default build dir | configure flags | build targets | extras | size limit (MiB) | run
# Extras: peers (peers.py), device_tests, cli_tests (run there with GPUCHECK_TEST_BINARY set to
# the staged binary), cl-binary, bundle (devlibs/), vkdebs (debs/: Debian's Vulkan loader and
# vulkaninfo with their client libraries, which the GPU machine lacks).
# Configure flags are used only when the build directory has no CMakeCache.txt yet.
cuda90="-DGPUCHECK_WITH_CUDA=ON -DGPUCHECK_CUDA_ARCHS=90"
scenarios=(
  "portable|build-release|-DGPUCHECK_WITH_CUDA=ON -DGPUCHECK_CUDA_ARCHS=${GPUCHECK_CUDA_ARCHS:-all} -DGPUCHECK_BUILD_TESTS=OFF|gpucheck|peers|48|bash tools/device/portable.sh"
  "multigpu|build|$cuda90|gpucheck device_tests|peers device_tests|60|bash tools/device/multigpu.sh"
  "stress|build|$cuda90|gpucheck|peers|60|bash tools/device/stress.sh"
  "fp8|build|$cuda90|gpucheck||60|bash tools/device/fp8.sh   (GEMM=, STEPS= narrow it)"
  "default-sizes|build|$cuda90|gpucheck|peers|60|bash tools/device/default_sizes.sh   (STEPS= narrows it), or default_run_time.sh"
  "opencl-tune|build-opencl|-DGPUCHECK_WITH_CUDA=OFF -DGPUCHECK_WITH_OPENCL=ON -DGPUCHECK_BUILD_TESTS=OFF|gpucheck|peers cl-binary bundle|48|bash tools/device/opencl-tune.sh   (or opencl-variants.sh)"
  "views|build|$cuda90|gpucheck||60|bash tools/device/views.sh"
  "net-allreduce|build|$cuda90|gpucheck||60|bash tools/device/net-allreduce.sh"
  "health|build|$cuda90|gpucheck||60|bash tools/device/health.sh"
  "doctor-traps|build|$cuda90|gpucheck||60|bash tools/device/doctor-traps.sh"
  "framework-query|build|$cuda90|gpucheck||60|bash tools/device/framework_query.sh"
  "compare|build-devrun|$cuda90 -DGPUCHECK_BUILD_TESTS=OFF|gpucheck||60|bash tools/device/compare.sh"
  "lib-choices|build|$cuda90|gpucheck||60|bash tools/device/lib_choices.sh   (RUNS as its argument, default 10)"
  "framework-bench|build|$cuda90|gpucheck|peers|60|python3 tools/device/framework_bench.py --gpucheck .devrun/framework-bench/install/bin/gpucheck --python /opt/torch/.venv/bin/python --peers .devrun/framework-bench/peers.py"
  "vulkan|build|$cuda90|gpucheck cli_tests|vkdebs cli_tests|60|bash tools/device/vulkan.sh   (STEPS=, GEMM=, TILES= narrow it)"
  "perf|build-perf|$cuda90 -DGPUCHECK_BUILD_TESTS=OFF|gpucheck|peers|60|tools/device/device-perf.sh   (OUT=... keeps perf.jsonl)"
)

list() {
  printf '%-16s %-14s %s\n' scenario build "then, on the GPU machine (carry .devrun/SCENARIO)"
  for s in "${scenarios[@]}"; do
    IFS='|' read -r name build _ _ _ _ run <<<"$s"
    printf '%-16s %-14s %s\n' "$name" "$build" "$run"
  done
}

[ $# -ge 1 ] || { list >&2; die "name a scenario" 2; }
case $1 in --list | -l) list; exit 0 ;; -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;; esac
scenario=$1
shift
do_build=1
for a in "$@"; do
  case $a in
    --no-build) do_build=0 ;;
    *) die "unknown argument '$a' (tools/device/stage.sh --help)" 2 ;;
  esac
done
spec=""
for s in "${scenarios[@]}"; do [ "${s%%|*}" = "$scenario" ] && spec=$s; done
[ -n "$spec" ] || { list >&2; die "unknown scenario '$scenario'" 2; }
IFS='|' read -r _ default_build flags targets extras limit_mib run <<<"$spec"
has() { [[ " $extras " == *" $1 "* ]]; }
build=${BUILD_DIR:-$default_build}
out=.devrun/$scenario

shared=""
for d in "${SHARED:-}" "$root/../shared" /work/shared; do
  [ -n "$d" ] && [ -f "$d/tools/peers.py" ] && { shared=$d; break; }
done
if has peers || has bundle || [ "${BUNDLE:-0}" = 1 ]; then
  [ -n "$shared" ] || die "no shared/tools/peers.py beside the repository (set SHARED)" 2
fi

if [ "$do_build" = 1 ]; then
  export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-ccache}
  export CMAKE_C_COMPILER_LAUNCHER=${CMAKE_C_COMPILER_LAUNCHER:-ccache}
  export CMAKE_CUDA_COMPILER_LAUNCHER=${CMAKE_CUDA_COMPILER_LAUNCHER:-ccache}
  if [ ! -f "$build/CMakeCache.txt" ]; then
    # shellcheck disable=SC2086  # the flags are words
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release $flags >/dev/null ||
      die "cmake configure of $build failed"
  fi
  # What `cmake --install` copies besides the binary: the completion, and the man page where
  # help2man was found (its target exists only then).
  targets="$targets gpucheck_completion"
  if grep -q '^GPUCHECK_HELP2MAN:FILEPATH=/' "$build/CMakeCache.txt"; then
    targets="$targets gpucheck_man"
  fi
  # shellcheck disable=SC2086
  cmake --build "$build" -j "${JOBS:-2}" --target $targets || die "build of $targets in $build failed"
fi
[ -f "$build/CMakeCache.txt" ] || die "no build in $build (run without --no-build, or set BUILD_DIR)" 2
# The GPU machine has H100 or H200 GPUs (sm_90): a CUDA scenario needs machine code for them.
# GPUCHECK_CUDA_ARCHS is read as src/backends/cuda/CMakeLists.txt resolves it: "all" (any preset
# that sets it, or none) covers sm_90; "dev" is "75;90-real" where no GPU answered nvidia-smi at
# configure time (this machine), else the configuring machine's own GPUs ("native"), unknown here.
if [[ "$flags" == *GPUCHECK_WITH_CUDA=ON* ]]; then
  archs=$(sed -n 's/^GPUCHECK_CUDA_ARCHS:STRING=//p' "$build/CMakeCache.txt")
  [ -n "$archs" ] || die "$build has no CUDA backend; use BUILD_DIR=build-devrun for a CUDA build"
  resolved=$archs
  if [ "$archs" = dev ]; then
    if nvidia-smi -L >/dev/null 2>&1; then resolved=native; else resolved="75;90-real"; fi
  fi
  sm90=0
  [[ "$resolved" == all* ]] && sm90=1
  IFS=';' read -ra arch_list <<<"$resolved"
  for a in "${arch_list[@]}"; do [[ "$a" =~ ^90a?(-real)?$ ]] && sm90=1; done
  [ "$sm90" = 1 ] ||
    die "$build is built for CUDA architectures '$archs' ($resolved), without sm_90 machine code (H100/H200): set BUILD_DIR, or configure with -DGPUCHECK_CUDA_ARCHS=all or 90"
fi

rm -rf "$out"
mkdir -p "$out"
cmake --install "$build" --prefix "$root/$out/install" --strip >/dev/null || die "install from $build failed"
bin=$out/install/bin/gpucheck
[ -x "$bin" ] || die "no $bin after the install (is gpucheck built in $build?)"
if has peers; then cp "$shared/tools/peers.py" "$out/peers.py"; fi
if has device_tests; then
  [ -x "$build/tests/device/device_tests" ] || die "no $build/tests/device/device_tests (build that target, or run without --no-build)"
  cp "$build/tests/device/device_tests" "$out/device_tests"
  strip "$out/device_tests"
fi
if has cli_tests; then
  [ -x "$build/tests/cli_tests" ] || die "no $build/tests/cli_tests (build that target, or run without --no-build)"
  cp "$build/tests/cli_tests" "$out/cli_tests"
  strip "$out/cli_tests"
fi
if has cl-binary; then
  mkdir -p "$out/tools"
  gcc -O1 -Wall -Wextra -o "$out/tools/cl-binary" tools/device/cl-binary.c -lOpenCL ||
    die "cl-binary did not build (opencl-headers and ocl-icd-opencl-dev installed?)"
fi
if has vkdebs; then
  mkdir -p "$out/debs"
  (cd "$out/debs" && apt-get download libvulkan1 vulkan-tools libx11-6 libxcb1 libxau6 libxdmcp6 \
    libbsd0 libmd0 libwayland-client0 libffi8 libglvnd0 libglx0 libegl1 libgl1 libopengl0 libgles2 >/dev/null) || die "apt-get download of the Vulkan packages failed"
fi
if has bundle || [ "${BUNDLE:-0}" = 1 ]; then
  bash "$shared/tools/device-bundle.sh" "$out/devlibs" >/dev/null || die "device-bundle.sh failed"
fi
readelf -d "$bin" | grep NEEDED >"$out/needed.txt" || true
# What was staged: each run script prints it, so a result is never matched to the wrong tree.
{
  echo "scenario $scenario, build $build"
  echo "commit $(git rev-parse HEAD 2>/dev/null || echo unknown)"
  if git diff --quiet HEAD -- src tests tools configs schema kernels cmake CMakeLists.txt 2>/dev/null; then
    echo "tree clean"
  else
    echo "tree DIRTY: uncommitted changes were built"
  fi
  echo "staged $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "binary $("$bin" --version 2>/dev/null | head -1)"
} >"$out/STAGED"
"$bin" --version >/dev/null 2>&1 || die "the staged binary does not start here"
size_kib=$(du -sk "$out" | cut -f1)
cat "$out/STAGED"
echo "stage.sh: $out is $((size_kib / 1024)) MiB ($(wc -l <"$out/needed.txt") libraries at load time)"
[ "$size_kib" -lt $((limit_mib * 1024)) ] ||
  die "$out is over $limit_mib MiB: too close to the 64 MiB a device call carries"
echo "on the GPU machine, carrying .devrun/$scenario: $run"

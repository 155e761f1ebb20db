#!/usr/bin/env bash
# The release build and its packages, in one command:
#   bash tools/package.sh            # -> dist/gpucheck_<version>_<arch>.deb, dist/gpucheck-<version>-Linux.tar.gz
#                                    #    and dist/gpucheck-<version>-py3-none-manylinux_2_34_<arch>.whl
# Builds into $BUILD_DIR (default build-release): Release, the CUDA backend for every architecture
# the toolkit supports (GPUCHECK_CUDA_ARCHS=all; GPUCHECK_WITH_CUDA=AUTO builds without CUDA where
# no toolkit is found), libstdc++/libgcc static; then checks the binary's load-time needs
# (tests/cli/test_binary_deps.cpp: readelf NEEDED allow-list, glibc <= 2.34), runs cpack and
# writes the pip wheel of the same build (the `wheel` target). Vulkan is required
# (GPUCHECK_WITH_VULKAN=ON): a machine without its headers or glslc fails here rather than
# shipping a package without the backend; the loader is opened at run time, so the packages
# start on machines without one.
# As root it installs the build dependencies first (tools/setup-debian.sh); JOBS sets -j.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
[ "$(id -u)" = 0 ] && bash tools/setup-debian.sh --set build --set test
build=${BUILD_DIR:-build-release}
dist=${DIST_DIR:-$root/dist}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DGPUCHECK_WITH_CUDA="${GPUCHECK_WITH_CUDA:-AUTO}" -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}" \
  -DGPUCHECK_WITH_VULKAN="${GPUCHECK_WITH_VULKAN:-ON}" \
  -DGPUCHECK_CUDA_ARCHS=all -DGPUCHECK_BUILD_TESTS=ON -DGPUCHECK_UNITY=ON
cmake --build "$build" -j "${JOBS:-$(nproc)}" --target gpucheck gpucheck_man gpucheck_completion cli_tests
# The packaged binary is the stripped one: check that one.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
cmake --install "$build" --prefix "$stage" --strip >/dev/null
GPUCHECK_TEST_BINARY="$stage/bin/gpucheck" "$build/tests/cli_tests" --gtest_filter='BinaryDeps.*'
mkdir -p "$dist"
(cd "$build" && cpack -B "$dist" >/dev/null)
rm -rf "$dist/_CPack_Packages"
rm -f "$build"/dist/gpucheck-*.whl
cmake --build "$build" --target wheel >/dev/null
cp "$build"/dist/gpucheck-*.whl "$dist"/
echo "packages in $dist:"
ls -l "$dist"/gpucheck*

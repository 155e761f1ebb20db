#!/usr/bin/env bash
# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, and the libFuzzer
# targets for the profile, document, rendezvous and framework-answer readers for a bounded time,
# in their own build directory (clang, CUDA off). Prints the same closing line as tools/test.sh.
#   SANITIZE_BUILD_DIR (default build-sanitize)   GPUCHECK_FUZZ_SECONDS (default 60 a target)
#   SANITIZE_TESTS: ctest -R regex of the tests to run (default: unit, CLI, schema and fuzz tests)
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup-debian.sh
build=${SANITIZE_BUILD_DIR:-build-sanitize}
# Every file compiled alone (no unity groups), unlike the main pass: a file that does not include
# what it uses fails here.
# Line tables are all a sanitizer's report needs (file:line in each frame); full debug info
# made every object and the test binaries' links several times larger for nothing here.
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -gline-tables-only -DNDEBUG" \
  -DGPUCHECK_WITH_CUDA=OFF -DGPUCHECK_WITH_OPENCL="${GPUCHECK_WITH_OPENCL:-AUTO}" \
  -DGPUCHECK_FUZZ=ON -DGPUCHECK_FUZZ_SECONDS="${GPUCHECK_FUZZ_SECONDS:-60}" -DGPUCHECK_UNITY=OFF
cmake --build "$build" -j "$(nproc)"
# Leaks: vendor libraries (pocl, OpenBLAS) keep theirs until exit; not ours to judge. SEGV is
# left to the kernel, so the crash test backend still dies by signal 11. Huge allocations (the
# 2^60-byte tests) fail with bad_alloc as without the sanitizer.
export ASAN_OPTIONS=detect_leaks=0:handle_segv=0:allocator_may_return_null=1:exitcode=86
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1:exitcode=87
# Not run here (tools/test.sh runs every one), as they judge the GCC release build rather than
# memory safety: the binary's link (static libstdc++/libgcc, glibc 2.34 floor) and the .deb's
# Depends, which this clang build does not make, and stress's 15 % wall-clock bound on a 10 s
# CPU run, which ASan's slowdown of a single batch of each test can exceed.
not_here='BinaryDeps\.(OnlyTheCLibraryFamilyIsNeeded|RunsOnGlibc234AndNewer)$|package\.deb$'
not_here+='|StressCli\.CpuDefaultsForTenSecondsKeepToTheDuration$'
# Nor the three longest runs (220 s of test time here), whose time goes to what is not ours (pocl
# compiling a kernel per tuning parameter set, Slurm's daemons, a minute of stress) while the
# gpucheck code they run is run here by shorter tests too (OpenClTuning.Tunes..., the other
# StressCli tests, doctor --quick's).
not_here+='|OpenClTuning\.TheKernelVerifiesAcrossItsParameters$|slurm\.healthcheck$'
not_here+='|StressCli\.QualifyStressRequirementIsMetAndUnmetByAPlantedFault$'
rc=0
ctest --test-dir "$build" --output-on-failure -j "$(nproc)" -R "${SANITIZE_TESTS:-.}" \
  -E "^(html\.|opencl\.warm|sweep\.pocl)|^($not_here)" \
  --output-junit "$(realpath "$build")/ctest-junit.xml" || rc=$?
/usr/bin/python3 tools/ctest_summary.py "$build/ctest-junit.xml"
exit "$rc"

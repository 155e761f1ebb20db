// The binary starts on a machine without any GPU library or BLAS, and on any glibc from 2.34 on
// (RHEL 9, Ubuntu 22.04): at load time it needs only the C library family.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>

using gpucheck::testing::have_program;
using gpucheck::testing::run_program;

namespace {

// The binary under test: GPUCHECK_TEST_BINARY (the installed or packaged one), else the build's.
std::string binary() {
  const char* given = std::getenv("GPUCHECK_TEST_BINARY");
  return given && *given ? given : GPUCHECK_BINARY;
}

std::vector<std::string> needed_entries(const std::string& readelf_out) {
  std::vector<std::string> out;
  static const std::regex kNeeded(R"(\(NEEDED\)\s+Shared library: \[([^\]]+)\])");
  for (std::sregex_iterator it(readelf_out.begin(), readelf_out.end(), kNeeded), end; it != end;
       ++it)
    out.push_back((*it)[1].str());
  return out;
}

}  // namespace

TEST(BinaryDeps, NoVendorLibraryAtLoadTime) {
  if (!have_program("readelf")) GTEST_SKIP() << "readelf not installed (binutils)";
  auto r = run_program("readelf", {"-d", binary()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_THAT(r.out, ::testing::HasSubstr("(NEEDED)"));  // we really read the dynamic section
  std::regex vendor(
      R"(lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nvidia-ml|OpenCL|clblast|openblas|blas|blis|mkl_rt)\.so)");
  EXPECT_FALSE(std::regex_search(r.out, vendor)) << r.out;
}

TEST(BinaryDeps, OnlyTheCLibraryFamilyIsNeeded) {
  if (!have_program("readelf")) GTEST_SKIP() << "readelf not installed (binutils)";
  auto r = run_program("readelf", {"-d", binary()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::set<std::string> allowed{"libc.so.6",
                                      "libm.so.6",
                                      "libdl.so.2",
                                      "libpthread.so.0",
                                      "librt.so.1",
                                      "ld-linux-x86-64.so.2",
                                      "ld-linux-aarch64.so.1"};
  const auto needed = needed_entries(r.out);
  ASSERT_FALSE(needed.empty()) << r.out;
  for (const auto& lib : needed)
    EXPECT_TRUE(allowed.count(lib)) << lib
                                    << " is needed at load time; allowed: libc, libm, "
                                       "ld-linux, libdl, libpthread, librt";
}

// Every versioned symbol the binary imports is glibc's, at version 2.34 or older: no newer
// glibc symbol (hypot@GLIBC_2.35, ...), and no GLIBCXX_/CXXABI_/GCC_ version (libstdc++ and
// libgcc are inside the binary).
TEST(BinaryDeps, RunsOnGlibc234AndNewer) {
  if (!have_program("objdump")) GTEST_SKIP() << "objdump not installed (binutils)";
  auto r = run_program("objdump", {"-T", binary()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  static const std::regex kVersion(
      R"(\b(GLIBC|GLIBCXX|CXXABI|GCC)_([0-9]+)\.([0-9]+)(\.[0-9]+)?\)?\s+(\S+))");
  int glibc_refs = 0;
  for (std::sregex_iterator it(r.out.begin(), r.out.end(), kVersion), end; it != end; ++it) {
    const std::string family = (*it)[1].str();
    const std::string symbol = (*it)[5].str();
    EXPECT_EQ(family, "GLIBC") << symbol << " needs " << (*it)[0].str()
                               << ": libstdc++/libgcc must be linked statically";
    if (family != "GLIBC") continue;
    ++glibc_refs;
    const auto version = std::make_tuple(std::stoi((*it)[2].str()), std::stoi((*it)[3].str()));
    EXPECT_LE(version, std::make_tuple(2, 34)) << symbol << " needs " << (*it)[0].str();
  }
  EXPECT_GT(glibc_refs, 10) << "objdump -T listed no glibc symbols: " << r.out.substr(0, 2000);
}

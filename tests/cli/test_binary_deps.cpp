// The binary starts on a machine without any GPU library: none is needed at load time.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <regex>

using gpucheck::testing::have_program;
using gpucheck::testing::run_program;

TEST(BinaryDeps, NoVendorLibraryAtLoadTime) {
  if (!have_program("readelf")) GTEST_SKIP() << "readelf not installed (binutils)";
  auto r = run_program("readelf", {"-d", GPUCHECK_BINARY});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_THAT(r.out, ::testing::HasSubstr("(NEEDED)"));  // we really read the dynamic section
  std::regex vendor(R"(lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nvidia-ml|OpenCL|clblast)\.so)");
  EXPECT_FALSE(std::regex_search(r.out, vendor)) << r.out;
}

// NCCL through the library search: a missing copy is an error naming what was searched, a given
// path (--nccl) is taken alone, and the hand-declared types agree with nccl.h where one is
// installed (the CUDA toolkit ships it on some machines, Debian's libnccl-dev on others).
#if GPUCHECK_HAVE_CUDA

#include "backends/cuda/cuda_peer_group.h"
#include "backends/cuda/nccl_library.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#if __has_include(<nccl.h>)
#include <nccl.h>
#define GPUCHECK_TEST_HAVE_NCCL_H 1
#endif

using namespace gpucheck::cuda;
using ::testing::HasSubstr;

TEST(NcclLibrary, AGivenPathThatIsNotThereNamesIt) {
  std::string error;
  auto lib = NcclLibrary::open({{"GPUCHECK_NCCL_LIB", "/nonexistent/libnccl.so.2"}}, &error);
  EXPECT_EQ(lib, nullptr);
  EXPECT_THAT(error, HasSubstr("/nonexistent/libnccl.so.2"));
  EXPECT_THAT(error, HasSubstr("searched --nccl /nonexistent/libnccl.so.2"));
}

TEST(NcclLibrary, TheSearchIsDescribedPlaceByPlace) {
  SearchRoots roots;
  roots.ld_library_path = {"/opt/a", "/opt/b"};
  roots.conda_prefix = "/opt/conda";
  roots.site_packages = {"/opt/venv/lib/python3.12/site-packages"};
  EXPECT_EQ(describe_nccl_search(roots),
            "LD_LIBRARY_PATH (/opt/a, /opt/b), the ld.so cache, /usr/local/cuda*/lib64, "
            "/opt/conda/lib, and nvidia/nccl/lib in the Python site-packages "
            "/opt/venv/lib/python3.12/site-packages");
  SearchRoots none;
  EXPECT_EQ(describe_nccl_search(none),
            "LD_LIBRARY_PATH, the ld.so cache, /usr/local/cuda*/lib64, and nvidia/nccl/lib in the "
            "Python site-packages (none found)");
}

TEST(NcclLibrary, SpecSearchesTorchsWheel) {
  const auto spec = nccl_spec();
  EXPECT_EQ(spec.soname(), "libnccl.so.2");
  EXPECT_EQ(spec.override_env, "GPUCHECK_NCCL_LIB");
  EXPECT_EQ(spec.wheel_dirs.front(), "nvidia/nccl/lib");
}

TEST(NcclLibrary, ResultNames) {
  EXPECT_EQ(nccl_result_name(0), "ncclSuccess");
  EXPECT_EQ(nccl_result_name(1), "ncclUnhandledCudaError");
  EXPECT_EQ(nccl_result_name(7), "ncclInProgress");
  EXPECT_EQ(nccl_result_name(42), "ncclResult 42");
}

TEST(NcclLibrary, MulticastStaysOff) {
  ::unsetenv("NCCL_NVLS_ENABLE");
  EXPECT_THAT(pin_nccl_nvls_off(), HasSubstr("set by gpucheck; was unset"));
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  EXPECT_EQ(pin_nccl_nvls_off(), "0 (from the environment)");
  ::setenv("NCCL_NVLS_ENABLE", "1", 1);
  EXPECT_THAT(pin_nccl_nvls_off(), HasSubstr("was '1'"));
  EXPECT_STREQ(std::getenv("NCCL_NVLS_ENABLE"), "0");
  ::unsetenv("NCCL_NVLS_ENABLE");
}

#if GPUCHECK_TEST_HAVE_NCCL_H
TEST(NcclDeclarations, MatchNcclH) {
  EXPECT_EQ(nccl::kSuccess, static_cast<int>(ncclSuccess));
  EXPECT_EQ(nccl::kInProgress, static_cast<int>(ncclInProgress));
  EXPECT_EQ(nccl::kFloat32, static_cast<int>(ncclFloat32));
  EXPECT_EQ(nccl::kSum, static_cast<int>(ncclSum));
  EXPECT_EQ(sizeof(nccl::Result), sizeof(ncclResult_t));
  EXPECT_EQ(sizeof(nccl::DataType), sizeof(ncclDataType_t));
  EXPECT_EQ(sizeof(nccl::RedOp), sizeof(ncclRedOp_t));
  EXPECT_EQ(sizeof(nccl::Comm), sizeof(ncclComm_t));
  EXPECT_EQ(nccl::kUniqueIdBytes, static_cast<std::size_t>(NCCL_UNIQUE_ID_BYTES));
  EXPECT_EQ(sizeof(nccl::UniqueId), sizeof(ncclUniqueId));
}
#else
TEST(NcclDeclarations, MatchNcclH) {
  GTEST_SKIP() << "no nccl.h on this machine: the declarations are checked where one exists";
}
#endif

#endif  // GPUCHECK_HAVE_CUDA

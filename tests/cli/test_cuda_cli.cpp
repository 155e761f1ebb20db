// gpucheck with no NVIDIA driver, with the toolkit's stub libcuda, and with the fake NVML: the
// CUDA section names each finding, and probe still exits 0.
#if GPUCHECK_HAVE_CUDA

#include "run_gpucheck.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using ::testing::Not;

namespace fs = std::filesystem;

namespace {

constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

nlohmann::json cuda_section(const std::string& out) {
  auto doc = nlohmann::json::parse(out);
  for (const auto& b : doc["backends"])
    if (b["name"] == "cuda") return b;
  ADD_FAILURE() << "no cuda section";
  return {};
}

// A real driver on this machine would be found through the ld.so cache whatever we set.
bool real_driver_installed() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
  if (h == nullptr) h = ::dlopen("libcuda.so.1", RTLD_LAZY);
  if (h == nullptr) return false;
  ::dlclose(h);
  return true;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d =
      fs::temp_directory_path() / ("gpucheck-cuda-cli-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(CudaCli, NoDriverIsAFindingNotInsufficient) {
  if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  auto empty = fresh_dir("empty");
  auto r = run_gpucheck({"probe", "--json"}, {{"LD_LIBRARY_PATH", empty.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto cuda = cuda_section(r.out);
  EXPECT_EQ(cuda["status"], "unavailable");
  EXPECT_EQ(cuda["finding"], "no_driver");
  std::string reason = cuda["reason"];
  EXPECT_THAT(reason, HasSubstr("no NVIDIA driver: libcuda.so.1: cannot open shared object file"));
  EXPECT_THAT(reason, Not(HasSubstr("insufficient")));
  // The libraries are still looked for and reported.
  EXPECT_TRUE(cuda["libraries"].contains("cublas"));
  EXPECT_TRUE(cuda["libraries"].contains("cudnn"));
}

TEST(CudaCli, ToolkitStubIsNamed) {
  if (!fs::exists(kStub)) GTEST_SKIP() << kStub << " not installed";
  auto dir = fresh_dir("stub");
  fs::create_symlink(kStub, dir / "libcuda.so.1");
  auto r = run_gpucheck({"probe", "--json"}, {{"LD_LIBRARY_PATH", dir.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto cuda = cuda_section(r.out);
  EXPECT_EQ(cuda["status"], "unavailable");
  EXPECT_EQ(cuda["finding"], "stub");
  std::string reason = cuda["reason"];
  EXPECT_THAT(reason, HasSubstr("the CUDA driver library loaded is the toolkit's stub ("));
  EXPECT_THAT(reason, HasSubstr("/stubs/libcuda.so)"));
  EXPECT_THAT(reason, Not(HasSubstr("insufficient")));
  fs::remove_all(dir);
}

TEST(CudaCli, BenchOnCudaWithoutDriverExits3) {
  if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  auto r = run_gpucheck({"bench", "--device", "cuda0", "--ops", "exp", "--size", "small", "--json"},
                        {{"LD_LIBRARY_PATH", fresh_dir("bench").string()}});
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_THAT(r.out + r.err, HasSubstr("no NVIDIA driver"));
}

TEST(CudaCli, FakeNvmlReportedWithoutDriver) {
  if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  auto dir = fresh_dir("nvml");
  std::ofstream(dir / "nvml.conf") << "driver_version=580.82.07\ndevice_count=1\n"
                                      "d0.name=NVIDIA H100 80GB HBM3\nd0.pci=00000000:17:00.0\n"
                                      "d0.persistence=0\n";
  auto r = run_gpucheck({"probe", "--json"},
                        {{"LD_LIBRARY_PATH", dir.string()},
                         {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                         {"GPUCHECK_FAKE_NVML_CONFIG", (dir / "nvml.conf").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto nvml = cuda_section(r.out)["nvml"];
  EXPECT_EQ(nvml["loaded"], true);
  EXPECT_EQ(nvml["driver_version"], "580.82.07");
  ASSERT_EQ(nvml["devices"].size(), 1u);
  EXPECT_EQ(nvml["devices"][0]["pci_bus_id"], "0000:17:00.0");
  EXPECT_EQ(nvml["devices"][0]["persistence_mode"], false);
  fs::remove_all(dir);
}

#endif  // GPUCHECK_HAVE_CUDA

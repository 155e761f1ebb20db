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

// The CUDA child reads NVML beside the driver and every GPU on its own thread: the GPUs keep
// NVML's order, its step times come out at -v, and no document carries them.
TEST(CudaCli, ProbeStepsAreLoggedAtVerboseAndGpusKeepTheirOrder) {
  if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  auto dir = fresh_dir("steps");
  std::ofstream(dir / "nvml.conf") << "device_count=3\n"
                                      "d0.name=NVIDIA H200\nd0.pci=00000000:17:00.0\n"
                                      "d1.name=NVIDIA H200\nd1.pci=00000000:2a:00.0\n"
                                      "d2.name=NVIDIA H200\nd2.pci=00000000:3b:00.0\n";
  auto r = run_gpucheck({"probe", "--json", "-v"},
                        {{"LD_LIBRARY_PATH", dir.string()},
                         {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                         {"GPUCHECK_FAKE_NVML_CONFIG", (dir / "nvml.conf").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("probe child cuda: exited with status 0 in "));
  EXPECT_THAT(r.err, HasSubstr("probe child cpu: exited with status 0 in "));
  EXPECT_THAT(r.err, HasSubstr("probe child cuda: its steps: driver "));
  EXPECT_THAT(r.err, HasSubstr(" s, libraries "));
  EXPECT_THAT(r.err, HasSubstr(" s, nvml "));
  EXPECT_THAT(r.err, HasSubstr(" s, total "));
  EXPECT_THAT(r.out, Not(HasSubstr("probe_steps")));
  auto nvml = cuda_section(r.out)["nvml"];
  ASSERT_EQ(nvml["devices"].size(), 3u) << nvml.dump(1);
  const char* pci[] = {"0000:17:00.0", "0000:2a:00.0", "0000:3b:00.0"};
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(nvml["devices"][i]["index"], i);
    EXPECT_EQ(nvml["devices"][i]["pci_bus_id"], pci[i]);
  }
  // Every ordered pair, row by row: 0→1, 0→2, 1→0, 1→2, 2→0, 2→1.
  ASSERT_EQ(nvml["pairs"].size(), 6u) << nvml.dump(1);
  const std::size_t order[][2] = {{0, 1}, {0, 2}, {1, 0}, {1, 2}, {2, 0}, {2, 1}};
  for (std::size_t p = 0; p < 6; ++p) {
    EXPECT_EQ(nvml["pairs"][p]["gpu"], pci[order[p][0]]) << p;
    EXPECT_EQ(nvml["pairs"][p]["peer"], pci[order[p][1]]) << p;
  }
  // Without -v none of it.
  r = run_gpucheck({"probe", "--json"},
                   {{"LD_LIBRARY_PATH", dir.string()},
                    {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                    {"GPUCHECK_FAKE_NVML_CONFIG", (dir / "nvml.conf").string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, Not(HasSubstr("its steps")));
  fs::remove_all(dir);
}

#endif  // GPUCHECK_HAVE_CUDA

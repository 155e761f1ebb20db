// doctor's CUDA and NVML checks end to end, probing for real: the toolkit's real stub libcuda.so
// linked as libcuda.so.1 on LD_LIBRARY_PATH, the fake libnvidia-ml through GPUCHECK_NVML_LIB
// (persistence off judged by --ci and CI, idle PCIe readings said to be idle), a kernel log
// under --sysroot, and the load flags.
#include "run_gpucheck.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const Json* check_of(const Json& doc, const std::string& id) {
  for (const auto& c : doc["checks"])
    if (c["id"] == id) return &c;
  ADD_FAILURE() << "no check " << id << " in " << doc.dump(2);
  return nullptr;
}

fs::path fresh_dir(const std::string& name) {
  fs::path d = fs::temp_directory_path() /
               ("gpucheck-doctor-cuda-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

TEST(DoctorCudaCli, LoadFlagsAreChecked) {
  auto r = run_gpucheck({"doctor", "--load-seconds", "0", "--list"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--load-seconds"));
  r = run_gpucheck({"doctor", "--no-load", "--ci", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(DoctorCudaCli, XidInASysrootKernelLogFails) {
  const fs::path root = fresh_dir("xid");
  fs::create_directories(root / "dev");
  std::ofstream(root / "dev" / "kmsg")
      << "4,1100,9000000,-;NVRM: Xid (PCI:0000:17:00): 79, pid=2211, name=python3, GPU has "
         "fallen off the bus.\n";
  auto r = run_gpucheck(
      {"doctor", "--json", "--no-load", "--sysroot", root.string(), "--only", "nvidia_xid"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json* c = check_of(doc, "nvidia_xid");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["status"], "fail");
  EXPECT_THAT((*c)["finding"].get<std::string>(), HasSubstr("Xid 79"));
  fs::remove_all(root);
}

#if GPUCHECK_HAVE_CUDA

constexpr const char* kStub = "/usr/local/cuda/lib64/stubs/libcuda.so";

// A real driver here would be found through the ld.so cache whatever LD_LIBRARY_PATH says.
bool real_driver_installed() {
  void* h = ::dlopen("libcuda.so.1", RTLD_LAZY);
  if (h == nullptr) return false;
  ::dlclose(h);
  return true;
}

TEST(DoctorCudaCli, TheToolkitsRealStubFails) {
  if (!fs::exists(kStub)) GTEST_SKIP() << kStub << " not installed";
  if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
  const fs::path dir = fresh_dir("stub");
  fs::create_symlink(kStub, dir / "libcuda.so.1");
  auto r = run_gpucheck({"doctor", "--json", "--only", "cuda_driver_stub,cuda_driver_library"},
                        {{"LD_LIBRARY_PATH", dir.string()}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  const Json* stub = check_of(doc, "cuda_driver_stub");
  ASSERT_NE(stub, nullptr);
  EXPECT_EQ((*stub)["status"], "fail") << stub->dump(2);
  EXPECT_THAT((*stub)["finding"].get<std::string>(), HasSubstr("/stubs/libcuda.so)"));
  EXPECT_THAT((*stub)["fix"].get<std::string>(), HasSubstr("LD_LIBRARY_PATH"));
  // The stub does load: the library check passes and leaves the verdict to the stub check.
  EXPECT_EQ((*check_of(doc, "cuda_driver_library"))["status"], "pass");
  fs::remove_all(dir);
}

class DoctorFakeNvml : public ::testing::Test {
 protected:
  void SetUp() override {
    if (real_driver_installed()) GTEST_SKIP() << "an NVIDIA driver is installed here";
    dir_ = fresh_dir(::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::ofstream(dir_ / "nvml.conf")
        << "driver_version=580.82.07\ncuda_driver_version=13000\ndevice_count=1\n"
           "d0.name=NVIDIA H100 80GB HBM3\nd0.pci=00000000:17:00.0\nd0.persistence=0\n"
           "d0.pcie_gen=1\nd0.pcie_width=16\nd0.pcie_max_gen=5\nd0.pcie_max_width=16\n"
           "d0.clocks_event_reasons=0x1\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  gpucheck::testing::RunResult doctor(std::vector<std::string> extra,
                                      std::optional<std::string> ci) {
    std::vector<std::string> args{"doctor", "--json", "--only",
                                  "nvidia_persistence_mode,pcie_link_under_load,clocks_under_load"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gpucheck(args, {{"LD_LIBRARY_PATH", dir_.string()},
                               {"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML},
                               {"GPUCHECK_FAKE_NVML_CONFIG", (dir_ / "nvml.conf").string()},
                               {"CI", ci}});
  }
  fs::path dir_;
};

TEST_F(DoctorFakeNvml, PersistenceOffIsInfoOffCiAndWarnWithCiFlagOrVariable) {
  auto r = doctor({}, std::nullopt);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  Json doc = Json::parse(r.out);
  EXPECT_EQ((*check_of(doc, "nvidia_persistence_mode"))["status"], "info");
  r = doctor({"--ci", "--fail-on", "warn"}, std::nullopt);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  doc = Json::parse(r.out);
  EXPECT_EQ((*check_of(doc, "nvidia_persistence_mode"))["status"], "warn");
  EXPECT_THAT((*check_of(doc, "nvidia_persistence_mode"))["fix"].get<std::string>(),
              HasSubstr("nvidia-persistenced"));
  r = doctor({}, std::string("true"));
  doc = Json::parse(r.out);
  EXPECT_EQ((*check_of(doc, "nvidia_persistence_mode"))["status"], "warn");
}

TEST_F(DoctorFakeNvml, WithoutACudaDeviceTheLinkIsReadIdleAndOnlyNoted) {
  auto r = doctor({}, std::nullopt);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  const Json* pcie = check_of(doc, "pcie_link_under_load");
  ASSERT_NE(pcie, nullptr);
  EXPECT_EQ((*pcie)["status"], "info") << pcie->dump(2);
  EXPECT_THAT((*pcie)["finding"].get<std::string>(), HasSubstr("read idle"));
  EXPECT_THAT((*pcie)["finding"].get<std::string>(),
              HasSubstr("gen 1 x16 below its maximum gen 5"));
  const Json* clocks = check_of(doc, "clocks_under_load");
  EXPECT_EQ((*clocks)["status"], "pass");
  EXPECT_THAT((*clocks)["finding"].get<std::string>(), HasSubstr("read idle"));
  // No CUDA device: nothing was loaded, and the facts say so by having no under_load.
  for (const auto& b : doc["backends"]) {
    if (b["name"] == "cuda") {
      EXPECT_FALSE(b.contains("under_load"));
    }
  }
}

#endif  // GPUCHECK_HAVE_CUDA

}  // namespace

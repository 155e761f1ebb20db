// Doctor part 2's readers and the load run's summary: the kernel module's version line, libcuda's
// file version, CUDA version texts, PCI class parsing from a hand-made sysfs, /proc/modules, the
// records of a load child folded into one entry, the NVML probe's MIG device count against the
// fake libnvidia-ml, and cuBLAS header versions.
#include "bench/group_engine.h"
#include "doctor/cuda_facts.h"
#include "doctor/under_load.h"
#include "scratch_root.h"

#if GPUCHECK_HAVE_CUDA
#include "backends/cuda/library_search.h"
#include "backends/cuda/nvml_probe.h"
#endif

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

class CudaFacts : public gpucheck::testing::ScratchRoot {
 protected:
  SystemView view() const {
    SystemView v;
    v.root = root_;
    return v;
  }
};

TEST_F(CudaFacts, KernelModuleVersionFromProprietaryAndOpenModules) {
  write("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.183.01  Sun May 12 19:39:15 UTC 2024\n"
        "GCC version:  gcc version 12.2.0 (Debian 12.2.0-14)\n");
  EXPECT_EQ(kernel_module_version(view()), "535.183.01");
  write("proc/driver/nvidia/version",
        "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.82.07  Release Build  "
        "(dvs-builder@U16-I3-B03-4-3)  Wed Aug 27 04:27:39 UTC 2025\n");
  EXPECT_EQ(kernel_module_version(view()), "580.82.07");
  write("proc/driver/nvidia/version", "garbage\n");
  EXPECT_EQ(kernel_module_version(view()), std::nullopt);
}

TEST(CudaVersions, LibcudaFileVersionAndCudaVersionText) {
  EXPECT_EQ(libcuda_file_version("/usr/lib/x86_64-linux-gnu/libcuda.so.580.82.07"), "580.82.07");
  EXPECT_EQ(libcuda_file_version("/usr/lib/wsl/lib/libcuda.so.1"), "");
  EXPECT_EQ(libcuda_file_version("/usr/local/cuda/lib64/stubs/libcuda.so"), "");
  EXPECT_EQ(parse_cuda_version("13.0"), 13000);
  EXPECT_EQ(parse_cuda_version("12.4.131"), 12040);
  EXPECT_EQ(parse_cuda_version("cu130"), std::nullopt);
  EXPECT_EQ(cuda_version_text(12080), "12.8");
  EXPECT_EQ(major_minor("9.14.0"), "9.14");
}

TEST_F(CudaFacts, PciDevicesOfNvidiaByClass) {
  write("sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n");
  write("sys/bus/pci/devices/0000:17:00.0/class", "0x030200\n");
  write("sys/bus/pci/devices/0000:05:00.0/vendor", "0x10de\n");
  write("sys/bus/pci/devices/0000:05:00.0/class", "0x068000\n");
  write("sys/bus/pci/devices/0000:00:1f.0/vendor", "0x8086\n");
  write("sys/bus/pci/devices/0000:00:1f.0/class", "0x030000\n");
  const auto all = nvidia_pci_devices(view());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_TRUE(all[0].is_nvswitch());
  EXPECT_FALSE(all[0].is_gpu());
  const auto gpus = nvidia_pci_gpus(view());
  ASSERT_EQ(gpus.size(), 1u);
  EXPECT_EQ(gpus[0].address, "0000:17:00.0");
  EXPECT_EQ(gpus[0].pci_class, 0x030200u);
}

TEST_F(CudaFacts, MissingSysfsAndProcModulesAreNotObservable) {
  EXPECT_THROW(nvidia_pci_devices(view()), NotObservable);
  try {
    loaded_modules(view());
    FAIL() << "no /proc/modules, yet modules were read";
  } catch (const NotObservable& e) {
    EXPECT_THAT(e.what(), HasSubstr("/proc/modules"));
  }
  write("proc/modules",
        "nvidia_uvm 1437696 0 - Live 0x0 (POE)\nnvidia 54140928 2 nvidia_uvm, Live 0x0\n");
  const auto m = loaded_modules(view());
  EXPECT_TRUE(m.contains("nvidia"));
  EXPECT_TRUE(m.contains("nvidia_uvm"));
  EXPECT_FALSE(m.contains("nouveau"));
}

TEST(LoadRun, RecordsFoldIntoOneEntry) {
  const Json records = Json::parse(R"([
    {"op": "copy", "status": "ok", "context": {"nvml_samples": 40,
      "clocks_event_reasons": ["gpu_idle"],
      "pcie_link_gen": {"mean": 4.8, "min": 1, "max": 5},
      "pcie_link_width": {"mean": 16, "min": 16, "max": 16}}},
    {"op": "gemm", "status": "ok", "context": {"nvml_samples": 30,
      "clocks_event_reasons": ["sw_power_cap", "hw_thermal_slowdown"],
      "pcie_link_gen": {"mean": 2, "min": 2, "max": 3}}},
    {"op": "gemm", "status": "failed", "reason": "cublasLtMatmul: CUBLAS_STATUS_EXECUTION_FAILED"}
  ])");
  const Json e = summarise_load_records(records);
  EXPECT_EQ(e["nvml_samples"], 70);
  EXPECT_EQ(e["clocks_event_reasons"],
            Json::parse(R"(["gpu_idle", "hw_thermal_slowdown", "sw_power_cap"])"));
  EXPECT_EQ(e["pcie_link_gen"]["min"], 1);
  EXPECT_EQ(e["pcie_link_gen"]["max"], 5);
  EXPECT_EQ(e["pcie_link_width"]["max"], 16);
  ASSERT_EQ(e["errors"].size(), 1u);
  EXPECT_THAT(e["errors"][0].get<std::string>(), HasSubstr("CUBLAS_STATUS_EXECUTION_FAILED"));
}

TEST(LoadRun, NoAvailableCudaSectionRunsNothing) {
  EXPECT_TRUE(run_cuda_load(Json{{"name", "cuda"}, {"status", "unavailable"}}, 1).empty());
  EXPECT_TRUE(run_cuda_load(Json{{"name", "cuda"}, {"status", "available"}}, 1).empty());
}

TEST(LoadRun, StepsFollowTheChecksAndQuickNeverLoads) {
  const std::vector<std::string_view> all = {"pcie_link_under_load", "clocks_under_load",
                                             "nvlink_errors",        "p2p_access",
                                             "gpu_siblings",         "nvidia_xid"};
  LoadSteps s = load_steps(all, false, false);
  EXPECT_TRUE(s.devices);
  EXPECT_TRUE(s.peer_copies);
  // --quick keeps nvlink_errors (judged against the state file), yet loads nothing.
  s = load_steps({"nvlink_errors", "nvidia_xid"}, true, false);
  EXPECT_FALSE(s.devices);
  EXPECT_FALSE(s.peer_copies);
  s = load_steps(all, false, true);
  EXPECT_FALSE(s.devices || s.peer_copies);
  s = load_steps({"pcie_link_under_load", "gpu_siblings"}, false, false);
  EXPECT_TRUE(s.devices);
  EXPECT_FALSE(s.peer_copies) << "no check judges peer copies";
  s = load_steps({"p2p_access"}, false, false);
  EXPECT_TRUE(s.devices && s.peer_copies);
  s = load_steps({"nvidia_xid", "cuda_devices"}, false, false);
  EXPECT_FALSE(s.devices || s.peer_copies);
}

// Every ordered pair once, neighbours in twos sharing no GPU, and a time a pair that shrinks
// with the round count so that the rounds together stay near seconds / 2.
TEST(LoadRun, PeerCopyPlanPairsShareNoGpuWithinARound) {
  const std::vector<std::string> gpus = {"cuda0", "cuda1", "cuda2", "cuda3"};
  const bench::BenchPlan plan = cuda_p2p_load_plan(gpus, 2.0);
  EXPECT_EQ(plan.group, gpus);
  EXPECT_EQ(plan.device, "cuda0,cuda1,cuda2,cuda3");
  ASSERT_EQ(plan.cells.size(), 12u);
  std::set<std::pair<std::string, std::string>> seen;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    const auto& c = std::get<bench::P2pShape>(plan.cells[i].shape);
    EXPECT_EQ(c.bytes, 256u << 20);
    EXPECT_TRUE(c.peer_access);
    EXPECT_FALSE(c.bidirectional);
    EXPECT_NE(c.src, c.dst);
    EXPECT_TRUE(seen.insert({c.src, c.dst}).second) << c.src << "->" << c.dst << " twice";
    if (i % 2 == 1) {  // four GPUs: two pairs a round
      const auto& o = std::get<bench::P2pShape>(plan.cells[i - 1].shape);
      const std::set<std::string> round = {c.src, c.dst, o.src, o.dst};
      EXPECT_EQ(round.size(), 4u) << "cells " << i - 1 << " and " << i << " share a GPU";
    }
  }
  EXPECT_EQ(seen.size(), 12u);
  // The group engine runs them as its six batches of two pairs, in the plan's order.
  const auto batches = bench::group_batches(plan);
  ASSERT_EQ(batches.size(), 6u);
  for (std::size_t b = 0; b < batches.size(); ++b)
    EXPECT_EQ(batches[b], (std::vector<std::size_t>{2 * b, 2 * b + 1})) << "batch " << b;
  EXPECT_DOUBLE_EQ(plan.policy.min_time_s, 2.0 / 2 / 6);  // six directed rounds
  EXPECT_GE(plan.policy.max_time_s, 1.0);                 // a PCIe pair's three repetitions
  EXPECT_EQ(plan.policy.warmup, 1);
  // Two GPUs: two rounds of one pair, each as long as before (seconds / 4).
  EXPECT_DOUBLE_EQ(cuda_p2p_load_plan({"cuda0", "cuda1"}, 2.0).policy.min_time_s, 0.5);
  // Sixteen: 30 rounds, never under the floor.
  std::vector<std::string> many;
  for (int i = 0; i < 16; ++i) many.push_back("cuda" + std::to_string(i));
  const auto big = cuda_p2p_load_plan(many, 2.0);
  EXPECT_EQ(big.cells.size(), 240u);
  EXPECT_DOUBLE_EQ(big.policy.min_time_s, 0.05);
  EXPECT_GE(big.policy.max_time_s, 4 * big.policy.min_time_s);
}

TEST(LoadRun, LoadChildSeesOnlyItsGpuByTheUuidNvmlGave) {
  const std::string uuid = "GPU-8f7a4c1e-2b3d-4e5f-9a8b-7c6d5e4f3a2b";
  Json d = {{"device", "cuda2"},
            {"device_uuid", uuid},
            {"properties", {{"nvml", {{"device_uuid", uuid}, {"mig_mode_current", false}}}}}};
  const auto env = load_child_env(d);
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env.at("CUDA_VISIBLE_DEVICES").value_or(""), uuid);
  // A MIG instance's CUDA UUID is not its GPU's: the whole view is kept.
  Json mig = d;
  mig["properties"]["nvml"]["mig_mode_current"] = true;
  EXPECT_TRUE(load_child_env(mig).empty());
  Json other = d;
  other["properties"]["nvml"]["device_uuid"] = "GPU-00000000-0000-0000-0000-000000000000";
  EXPECT_TRUE(load_child_env(other).empty());
  Json no_nvml = d;
  no_nvml["properties"].erase("nvml");
  EXPECT_TRUE(load_child_env(no_nvml).empty());
  EXPECT_TRUE(load_child_env(Json{{"device", "cuda0"}}).empty());
}

#if GPUCHECK_HAVE_CUDA
class FakeNvmlMig : public gpucheck::testing::ScratchRoot {};

TEST_F(FakeNvmlMig, CountsTheMigDevicesThatExist) {
  write("nvml.conf",
        "device_count=2\nd0.name=NVIDIA H100\nd0.mig=1,1\nd0.mig_devices=3\n"
        "d1.name=NVIDIA H100\nd1.mig=1,1\nd1.mig_devices=0\n");
  ::setenv("GPUCHECK_FAKE_NVML_CONFIG", (root_ / "nvml.conf").c_str(), 1);
  const Json j = gpucheck::cuda::probe_nvml({{"GPUCHECK_NVML_LIB", GPUCHECK_FAKE_NVML}});
  ::unsetenv("GPUCHECK_FAKE_NVML_CONFIG");
  ASSERT_EQ(j["devices"].size(), 2u) << j.dump(2);
  EXPECT_EQ(j["devices"][0]["mig_mode_current"], true);
  EXPECT_EQ(j["devices"][0]["mig_devices"], 3);
  EXPECT_EQ(j["devices"][1]["mig_devices"], 0);
}
class CudaHeaders : public gpucheck::testing::ScratchRoot {};

TEST_F(CudaHeaders, CublasHeaderVersionFromAToolkitsIncludeFolder) {
  EXPECT_EQ(gpucheck::cuda::parse_cublas_version_header(
                "#define CUBLAS_VER_MAJOR 13\n#define CUBLAS_VER_MINOR 1\n"
                "#define CUBLAS_VER_PATCH 0\n#define CUBLAS_VER_BUILD 3\n"),
            "13.1.0");
  EXPECT_EQ(gpucheck::cuda::parse_cublas_version_header("#define CUDNN_MAJOR 9\n"), std::nullopt);
  write("usr/local/cuda-12.4/include/cublas_api.h",
        "#define CUBLAS_VER_MAJOR 12\n#define CUBLAS_VER_MINOR 4\n#define CUBLAS_VER_PATCH 5\n");
  gpucheck::cuda::SearchRoots roots;
  roots.usr_local = (root_ / "usr/local").string();
  bool found = false;
  for (const auto& h : gpucheck::cuda::find_cublas_headers(roots))
    if (h.path == (root_ / "usr/local/cuda-12.4/include/cublas_api.h").string()) {
      found = true;
      EXPECT_EQ(h.version, "12.4.5");
    }
  EXPECT_TRUE(found);
}
#endif

}  // namespace
}  // namespace gpucheck::doctor

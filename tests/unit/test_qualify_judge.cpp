// qualify's verdicts from fabricated probe, doctor and bench sections: each kind met, unmet and
// skipped for its reason; "each" gives one verdict per device; a mismatch is unmet, loudly.
#include "qualify/judge.h"
#include "qualify/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace {

namespace q = gpucheck::qualify;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// Two CUDA devices (an H100 and an older card), pocl, and the CPU.
Json backends() {
  return Json::parse(R"([
    {"name": "cpu", "status": "available", "devices": [
      {"device": "cpu", "device_name": "Some CPU", "stable_id": "cpu"}]},
    {"name": "cuda", "status": "available", "nvml": {"driver_version": "580.159.04"}, "devices": [
      {"device": "cuda0", "device_name": "NVIDIA H100 80GB HBM3", "stable_id": "cuda:GPU-1",
       "device_uuid": "GPU-1", "pci_bus_id": "0000:00:06.0",
       "properties": {"compute_capability": "9.0", "global_memory_bytes": 85045510144}},
      {"device": "cuda1", "device_name": "Tesla T4", "stable_id": "cuda:GPU-2",
       "device_uuid": "GPU-2", "properties": {"compute_capability": "7.5",
       "global_memory_bytes": 15828320256}}]},
    {"name": "opencl", "status": "available", "devices": [
      {"device": "opencl0", "device_name": "pthread-cpu", "stable_id": "opencl:pocl/cpu",
       "properties": {"cl_driver_version": "3.1+debian", "cl_device_global_mem_size": 11771523072}}]},
    {"name": "metal", "status": "not_built", "reason": "not built on this platform"}
  ])");
}

q::Requirement parse_one(const std::string& body) {
  return q::parse_profile("[[require]]\n" + body, "p.toml").requirements.at(0);
}

q::Observations observations() {
  q::Observations o;
  o.backends = backends();
  o.memory = {{"total_bytes", 8LL << 30}};
  return o;
}

Json record(const std::string& device, const std::string& op, const std::string& dtype, Json shape,
            double throughput, const std::string& unit, const std::string& status = "ok") {
  Json r = {{"device", device},
            {"backend", device == "cpu" ? "cpu" : "cuda"},
            {"op", op},
            {"impl", "x"},
            {"dtype", dtype},
            {"shape", shape},
            {"transfers", "excluded"},
            {"status", status}};
  if (status == "ok") {
    r["throughput"] = {{"value", throughput}, {"unit", unit}};
    r["time_s"] = {{"median", 0.002}, {"stddev", 0.0001}};
  } else {
    r["reason"] = "element 17: 3.5 vs 0.35";
  }
  return r;
}

TEST(QualifyJudge, BackendAvailabilityAndDeviceCount) {
  auto o = observations();
  auto v = q::judge(
      parse_one("kind = \"backend\"\nname = \"cuda\"\navailable = true\ndevices_min = 2\n"), o);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(v[0].measured, 2);
  v = q::judge(parse_one("kind = \"backend\"\nname = \"metal\"\navailable = true\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("the metal backend is not_built: not built on this platform"));
}

TEST(QualifyJudge, DeviceCriteriaAnyAndEach) {
  auto o = observations();
  auto any =
      q::judge(parse_one("kind = \"device\"\nbackend = \"cuda\"\ncompute_capability_min = \"8.0\"\n"
                         "memory_gib_min = 40\ndriver_min = \"535.104\"\n"),
               o);
  ASSERT_EQ(any.size(), 1u);
  EXPECT_EQ(any[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(any[0].device, "cuda0");

  auto each = q::judge(parse_one("kind = \"device\"\ndevice = \"each\"\nbackend = \"cuda\"\n"
                                 "compute_capability_min = \"8.0\"\n"),
                       o);
  ASSERT_EQ(each.size(), 2u);
  EXPECT_EQ(each[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(each[1].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(each[1].reason, HasSubstr("compute capability 7.5 (required ≥ 8.0)"));

  auto named =
      q::judge(parse_one("kind = \"device\"\ndevice = \"cuda1\"\nname_regex = \"H100|H200\"\n"), o);
  EXPECT_EQ(named[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(named[0].reason, HasSubstr("name 'Tesla T4'"));

  // Compute capability is not observable on OpenCL: a skip, not a pass or a failure.
  auto ocl = q::judge(
      parse_one("kind = \"device\"\nbackend = \"opencl\"\ncompute_capability_min = \"8.0\"\n"), o);
  EXPECT_EQ(ocl[0].outcome, q::Outcome::kSkip);
  EXPECT_THAT(ocl[0].reason, HasSubstr("not observable"));
  auto cpu = q::judge(parse_one("kind = \"device\"\ndevice = \"cpu\"\nmemory_gib_min = 16\n"), o);
  EXPECT_EQ(cpu[0].outcome, q::Outcome::kUnmet);  // 8 GiB of host memory
}

// A Vulkan device's memory is its largest device-local heap; a host-visible heap does not count.
TEST(QualifyJudge, VulkanMemoryIsTheLargestDeviceLocalHeap) {
  auto o = observations();
  o.backends.push_back(Json::parse(R"({"name": "vulkan", "status": "available", "devices": [
      {"device": "vulkan0", "device_name": "A GPU", "stable_id": "vulkan:0000:00:06.0",
       "properties": {"driver_version": "580.159.4", "memory_heaps": [
         {"size": 85899345920, "flags": ["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"]},
         {"size": 270582939648, "flags": []},
         {"size": 257949696, "flags": ["VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"]}]}}]})"));
  const std::string rule = "kind = \"device\"\nbackend = \"vulkan\"\nmemory_gib_min = ";
  auto met = q::judge(parse_one(rule + "79\n"), o);
  ASSERT_EQ(met.size(), 1u);
  EXPECT_EQ(met[0].outcome, q::Outcome::kMet) << met[0].reason;
  EXPECT_EQ(met[0].device, "vulkan0");
  auto unmet = q::judge(parse_one(rule + "100\n"), o);
  EXPECT_EQ(unmet[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(unmet[0].reason, HasSubstr("memory 80.0 GiB"));
}

TEST(QualifyJudge, MissingDeviceIsUnmetWithTheBackendsWord) {
  auto o = observations();
  auto v = q::judge(parse_one("kind = \"device\"\ndevice = \"cuda7\"\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason,
              HasSubstr("device 'cuda7' is not there: the cuda backend found 2 device(s)"));
  v = q::judge(parse_one("kind = \"bench\"\nbackend = \"metal\"\nop = \"exp\"\nshape = { n = 8 }\n"
                         "min = 1\nunit = \"GB/s\"\n"),
               o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("no metal device found: the metal backend is not_built"));
}

TEST(QualifyJudge, DoctorWorstStatus) {
  auto o = observations();
  o.checks = Json::parse(R"([
    {"id": "cpu_isa", "status": "pass", "finding": "ok", "evidence": []},
    {"id": "cudnn_library", "status": "warn", "finding": "two cuDNN", "evidence": [], "fix": "x"},
    {"id": "nvidia_ecc", "status": "skip", "finding": "not observable here", "evidence": []}])");
  EXPECT_EQ(q::judge(parse_one("kind = \"doctor\"\n"), o)[0].outcome, q::Outcome::kMet);
  auto info = q::judge(parse_one("kind = \"doctor\"\nmax_status = \"info\"\n"), o);
  EXPECT_EQ(info[0].outcome, q::Outcome::kUnmet);
  EXPECT_EQ(info[0].measured, "warn");
  EXPECT_THAT(info[0].reason, HasSubstr("cudnn_library: two cuDNN"));
  auto skipped =
      q::judge(parse_one("kind = \"doctor\"\ncheck = \"nvidia_ecc\"\nmax_status = \"pass\"\n"), o);
  EXPECT_EQ(skipped[0].outcome, q::Outcome::kSkip);
  std::vector<q::Verdict> strict = skipped;
  q::apply_strict(strict);
  EXPECT_EQ(strict[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(strict[0].reason, HasSubstr("--strict"));
}

// An ignored check's FAIL decides nothing; the rest are judged as before.
TEST(QualifyJudge, DoctorIgnoresOnlyTheChecksItNames) {
  auto o = observations();
  o.checks = Json::parse(R"([
    {"id": "cpu_isa", "status": "pass", "finding": "ok", "evidence": []},
    {"id": "vulkan_loader", "status": "fail", "finding": "no loader", "evidence": [], "fix": "x"},
    {"id": "cudnn_library", "status": "warn", "finding": "two cuDNN", "evidence": [], "fix": "x"}])");
  EXPECT_EQ(q::judge(parse_one("kind = \"doctor\"\n"), o)[0].outcome, q::Outcome::kUnmet);
  auto v = q::judge(parse_one("kind = \"doctor\"\nignore = [\"vulkan_loader\"]\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(v[0].measured, "warn");
  EXPECT_THAT(v[0].requirement, HasSubstr("doctor (but vulkan_loader): no check worse than warn"));
  auto strict = q::judge(
      parse_one("kind = \"doctor\"\nmax_status = \"pass\"\nignore = [\"vulkan_loader\"]\n"), o);
  EXPECT_EQ(strict[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(strict[0].reason, HasSubstr("cudnn_library"));
}

TEST(QualifyJudge, BenchThresholdsInTheProfilesUnits) {
  auto o = observations();
  Json gemm = {{"m", 64}, {"n", 64}, {"k", 64}};
  o.results = Json::array({record("cuda0", "gemm", "f16", gemm, 0.25, "TFLOP/s")});
  const std::string cell =
      "kind = \"bench\"\ndevice = \"cuda0\"\nop = \"gemm\"\ndtype = \"f16\"\n"
      "shape = { m = 64, n = 64, k = 64 }\n";
  auto met = q::judge(parse_one(cell + "min = 200\nunit = \"GFLOP/s\"\n"), o);
  EXPECT_EQ(met[0].outcome, q::Outcome::kMet);
  EXPECT_DOUBLE_EQ(met[0].measured.get<double>(), 250);
  auto unmet = q::judge(parse_one(cell + "min = 0.3\nunit = \"TFLOP/s\"\n"), o);
  EXPECT_EQ(unmet[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(unmet[0].reason, HasSubstr("measured 0.25 TFLOP/s, required ≥ 0.3 TFLOP/s"));
  auto time = q::judge(parse_one(cell + "max = 1\nunit = \"ms\"\n"), o);
  EXPECT_EQ(time[0].outcome, q::Outcome::kUnmet);  // median 2 ms
  auto other_dtype =
      q::judge(parse_one("kind = \"bench\"\ndevice = \"cuda0\"\nop = \"gemm\"\n"
                         "shape = { m = 64, n = 64, k = 64 }\nmin = 1\nunit = \"GFLOP/s\"\n"),
               o);
  EXPECT_EQ(other_dtype[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(other_dtype[0].reason, HasSubstr("no record"));
}

TEST(QualifyJudge, MismatchIsUnmetLoudly) {
  auto o = observations();
  o.results = Json::array({record("cpu", "exp", "f32", {{"n", 8}}, 0, "", "mismatch")});
  auto v =
      q::judge(parse_one("kind = \"bench\"\ndevice = \"cpu\"\nop = \"exp\"\nshape = { n = 8 }\n"
                         "min = 0.001\nunit = \"GB/s\"\n"),
               o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("VERIFICATION FAILED (mismatch): element 17"));
}

TEST(QualifyJudge, SpeedupAndEachDevice) {
  auto o = observations();
  Json exp = {{"n", 1024}};
  Json r0 = record("cuda0", "exp", "f32", exp, 100, "GB/s");
  r0["speedup_vs_cpu"] = 12.0;
  Json r1 = record("cuda1", "exp", "f32", exp, 20, "GB/s");
  r1["speedup_vs_cpu"] = 2.0;
  o.results = Json::array({r0, r1});
  auto v =
      q::judge(parse_one("kind = \"bench\"\ndevice = \"each\"\nbackend = \"cuda\"\nop = \"exp\"\n"
                         "shape = { n = 1024 }\nspeedup_min = 5\n"),
               o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].device, "cuda0");
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(v[1].outcome, q::Outcome::kUnmet);
  auto any = q::judge(parse_one("kind = \"bench\"\nbackend = \"cuda\"\nop = \"exp\"\n"
                                "shape = { n = 1024 }\nspeedup_min = 5\n"),
                      o);
  ASSERT_EQ(any.size(), 1u);
  EXPECT_EQ(any[0].outcome, q::Outcome::kMet);
}

TEST(QualifyJudge, FractionOfReferenceByPciIdThenName) {
  auto o = observations();
  auto skus = q::parse_skus(R"(
[[sku]]
model = "Test H100"
pci_device_ids = ["0x2330"]
[[sku.reference]]
source = "measured"
op = "gemm"
dtype = "bf16"
shape = { m = 64, n = 64, k = 64 }
value = 500
unit = "TFLOP/s"
card = "Test H100"
date = "2026-11-26"
command = "gpucheck bench"
)",
                            "s.toml");
  o.skus = &skus;
  std::string asked;
  o.pci_device_id = [&](const std::string& bus) -> std::optional<std::string> {
    asked = bus;
    return std::string("0x2330");
  };
  Json gemm = {{"m", 64}, {"n", 64}, {"k", 64}};
  o.results = Json::array({record("cuda0", "gemm", "bf16", gemm, 450, "TFLOP/s"),
                           record("cuda1", "gemm", "bf16", gemm, 50, "TFLOP/s")});
  const std::string cell =
      "kind = \"bench\"\ndevice = \"cuda0\"\nop = \"gemm\"\ndtype = \"bf16\"\n"
      "shape = { m = 64, n = 64, k = 64 }\n";
  auto v = q::judge(parse_one(cell + "min_fraction_of_reference = 0.8\n"), o);
  EXPECT_EQ(asked, "0000:00:06.0");
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_DOUBLE_EQ(v[0].measured.get<double>(), 0.9);
  EXPECT_THAT(v[0].reason, HasSubstr("measured on Test H100, 2026-11-26"));
  v = q::judge(parse_one(cell + "min_fraction_of_reference = 0.95\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  v = q::judge(parse_one(cell + "min_fraction_of_reference = 0.5\nreference = \"datasheet\"\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kSkip);
  EXPECT_THAT(v[0].reason, HasSubstr("no datasheet reference for gemm bf16 64x64x64"));
  // cuda1 has no PCI bus id and a name the table does not hold.
  v = q::judge(parse_one("kind = \"bench\"\ndevice = \"cuda1\"\nop = \"gemm\"\ndtype = \"bf16\"\n"
                         "shape = { m = 64, n = 64, k = 64 }\nmin_fraction_of_reference = 0.5\n"),
               o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kSkip);
  EXPECT_EQ(v[0].reason, "no reference for Tesla T4");
}

TEST(QualifyJudge, PciDeviceIdFromSysfs) {
  const auto root =
      std::filesystem::temp_directory_path() / ("qualify_sysfs_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(root / "sys/bus/pci/devices/0000:00:06.0");
  std::ofstream(root / "sys/bus/pci/devices/0000:00:06.0/device") << "0x2335\n";
  EXPECT_EQ(q::read_pci_device_id(root.string(), "0000:00:06.0"), "0x2335");
  EXPECT_FALSE(q::read_pci_device_id(root.string(), "0000:00:07.0").has_value());
  EXPECT_FALSE(q::read_pci_device_id(root.string(), "../../../etc").has_value());
  std::filesystem::remove_all(root);
}

TEST(QualifyJudge, VersionTuples) {
  EXPECT_EQ(*q::version_tuple("580.159.04"), (std::vector<long>{580, 159, 4}));
  EXPECT_EQ(*q::version_tuple("3.1+debian"), (std::vector<long>{3, 1}));
  EXPECT_EQ(*q::version_tuple("OpenCL 3.0 PoCL"), (std::vector<long>{3, 0}));
  EXPECT_FALSE(q::version_tuple("none").has_value());
  EXPECT_EQ(q::compare_versions({8, 0}, {8}), 0);
  EXPECT_EQ(q::compare_versions({535, 104, 5}, {535, 104, 12}), -1);
  EXPECT_EQ(q::compare_versions({10}, {9, 9}), 1);
}

TEST(QualifyJudge, VerdictJson) {
  q::Verdict v;
  v.id = "x";
  v.kind = q::Kind::kBench;
  v.requirement = "r";
  v.measured = 1.5;
  v.threshold = 2;
  v.outcome = q::Outcome::kUnmet;
  v.reason = "low";
  v.device = "cuda0";
  v.line = 4;
  Json j = v.to_json();
  EXPECT_EQ(j["verdict"], "unmet");
  EXPECT_EQ(j["kind"], "bench");
  EXPECT_EQ(j["device"], "cuda0");
  EXPECT_EQ(j["line"], 4);
}

}  // namespace

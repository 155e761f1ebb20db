// On a machine with an NVIDIA GPU: probe fields against nvidia-smi (joined by UUID), every op,
// dtype and layout of the bench verified on cuda0, and a planted mismatch caught. Elsewhere
// every test skips and prints why. GPUCHECK_BIN overrides the gpucheck binary under test.
#include "device_probe.h"
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

using gpucheck::testing::have_program;
using gpucheck::testing::run_program;
using namespace gpucheck::device_testing;

TEST(CudaDevice, ProbeMatchesNvidiaSmi) {
  SKIP_WITHOUT_GPU();
  if (!have_program("nvidia-smi")) GTEST_SKIP() << "nvidia-smi not on PATH";
  const std::vector<std::string> fields = {"uuid",
                                           "name",
                                           "pci.bus_id",
                                           "memory.total",
                                           "compute_cap",
                                           "clocks.max.sm",
                                           "clocks.max.mem",
                                           "persistence_mode",
                                           "power.limit",
                                           "pcie.link.gen.max",
                                           "pcie.link.width.max",
                                           "driver_version",
                                           "ecc.mode.current",
                                           "compute_mode",
                                           "vbios_version",
                                           "serial"};
  std::string query;
  for (const auto& f : fields) query += (query.empty() ? "" : ",") + f;
  auto r = run_program("nvidia-smi", {"--query-gpu=" + query, "--format=csv,noheader,nounits"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> by_uuid;
  for (const auto& d : cuda_probe().section["devices"]) by_uuid[d["device_uuid"]] = d;
  const auto& nvml_top = cuda_probe().section["nvml"];
  std::stringstream lines(r.out);
  int gpus = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto v = split_csv(line);
    ASSERT_EQ(v.size(), fields.size()) << line;
    std::map<std::string, std::string> smi;
    for (std::size_t i = 0; i < fields.size(); ++i) smi[fields[i]] = v[i];
    auto it = by_uuid.find(smi["uuid"]);
    if (it == by_uuid.end()) continue;  // hidden from CUDA (CUDA_VISIBLE_DEVICES)
    ++gpus;
    const auto& d = it->second;
    const auto& p = d["properties"];
    ASSERT_TRUE(p.contains("nvml")) << "NVML did not join onto " << d["device"];
    const auto& n = p["nvml"];
    int compared = 0;
    auto eq = [&](const std::string& field, const std::string& ours) {
      if (not_available(smi[field])) return;
      EXPECT_EQ(ours, smi[field]) << field;
      ++compared;
    };
    eq("uuid", d["device_uuid"]);
    eq("name", d["device_name"]);
    if (!not_available(smi["pci.bus_id"])) {
      // nvidia-smi: 00000000:17:00.0; ours: 0000:17:00.0
      EXPECT_EQ(lower(smi["pci.bus_id"]).substr(4), d["pci_bus_id"].get<std::string>()) << "pci";
      ++compared;
    }
    if (!not_available(smi["memory.total"])) {
      EXPECT_EQ(std::stoull(smi["memory.total"]),
                n["memory_total_bytes"].get<std::uint64_t>() >> 20);
      double cuda_mib = p["global_memory_bytes"].get<double>() / (1 << 20);
      EXPECT_NEAR(cuda_mib, std::stod(smi["memory.total"]), 0.05 * std::stod(smi["memory.total"]));
      ++compared;
    }
    eq("compute_cap", p["compute_capability"]);
    if (!not_available(smi["clocks.max.sm"])) {
      EXPECT_EQ(std::stoul(smi["clocks.max.sm"]), n["max_sm_clock_mhz"].get<unsigned>());
      ++compared;
    }
    if (!not_available(smi["clocks.max.mem"])) {
      EXPECT_EQ(std::stoul(smi["clocks.max.mem"]), n["max_mem_clock_mhz"].get<unsigned>());
      ++compared;
    }
    eq("persistence_mode", n["persistence_mode"].get<bool>() ? "Enabled" : "Disabled");
    if (!not_available(smi["power.limit"])) {
      EXPECT_NEAR(std::stod(smi["power.limit"]), n["power_limit_mw"].get<double>() / 1000.0, 1.0);
      ++compared;
    }
    if (!not_available(smi["pcie.link.gen.max"])) {
      EXPECT_EQ(std::stoul(smi["pcie.link.gen.max"]), n["pcie_link_gen_max"].get<unsigned>());
      ++compared;
    }
    if (!not_available(smi["pcie.link.width.max"])) {
      EXPECT_EQ(std::stoul(smi["pcie.link.width.max"]), n["pcie_link_width_max"].get<unsigned>());
      ++compared;
    }
    eq("driver_version", nvml_top["driver_version"]);
    if (n.contains("ecc_mode_current"))
      eq("ecc.mode.current", n["ecc_mode_current"].get<bool>() ? "Enabled" : "Disabled");
    if (!not_available(smi["compute_mode"])) {
      EXPECT_EQ(lower(smi["compute_mode"]), n["compute_mode"].get<std::string>());
      ++compared;
    }
    if (n.contains("vbios_version")) eq("vbios_version", n["vbios_version"]);
    if (n.contains("serial")) eq("serial", n["serial"]);
    std::printf("%s (%s): %d nvidia-smi fields compared\n", d["device"].get<std::string>().c_str(),
                smi["name"].c_str(), compared);
    EXPECT_GE(compared, 12);
  }
  EXPECT_GE(gpus, 1) << "no nvidia-smi GPU joined a CUDA device by UUID:\n" << r.out;
}

// torch.cuda.get_device_properties for every device, as one JSON object per line; exit 77 when
// python3 has no torch with CUDA (the test then skips and says so).
constexpr const char* kTorchProps = R"(import json, sys
try:
    import torch
except Exception as e:
    print("no torch: %s" % e, file=sys.stderr); sys.exit(77)
if not torch.cuda.is_available():
    print("torch.cuda.is_available() is False", file=sys.stderr); sys.exit(77)
names = ["name", "major", "minor", "total_memory", "multi_processor_count", "is_integrated",
         "is_multi_gpu_board", "max_threads_per_multi_processor", "warp_size",
         "regs_per_multiprocessor", "shared_memory_per_block", "shared_memory_per_block_optin",
         "shared_memory_per_multiprocessor", "L2_cache_size", "pci_bus_id", "pci_device_id",
         "pci_domain_id", "clock_rate", "memory_clock_rate", "memory_bus_width"]
for i in range(torch.cuda.device_count()):
    p = torch.cuda.get_device_properties(i)
    d = {n: getattr(p, n) for n in names if hasattr(p, n)}
    d["uuid"] = str(getattr(p, "uuid", ""))
    print(json.dumps({k: (bool(v) if isinstance(v, bool) else v) for k, v in d.items()}))
)";

TEST(CudaDevice, ProbeMatchesTorchDeviceProperties) {
  SKIP_WITHOUT_GPU();
  if (!have_program("python3")) GTEST_SKIP() << "python3 not on PATH";
  auto r = run_program("python3", {"-c", kTorchProps});
  if (r.exit_code == 77) {
    std::printf("device test skipped: %s\n", r.err.c_str());
    GTEST_SKIP() << r.err;
  }
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::map<std::string, nlohmann::json> by_uuid;
  for (const auto& d : cuda_probe().section["devices"]) {
    std::string u = lower(d["device_uuid"].get<std::string>());
    by_uuid[u.rfind("gpu-", 0) == 0 ? u.substr(4) : u] = d;
  }
  // torch's field, ours (under "properties" unless marked top-level).
  const std::vector<std::pair<std::string, std::string>> same = {
      {"total_memory", "global_memory_bytes"},
      {"multi_processor_count", "multiprocessors"},
      {"is_integrated", "integrated"},
      {"is_multi_gpu_board", "multi_gpu_board"},
      {"max_threads_per_multi_processor", "max_threads_per_sm"},
      {"warp_size", "warp_size"},
      {"regs_per_multiprocessor", "registers_per_sm"},
      {"shared_memory_per_block", "shared_memory_per_block_bytes"},
      {"shared_memory_per_block_optin", "shared_memory_per_block_optin_bytes"},
      {"shared_memory_per_multiprocessor", "shared_memory_per_sm_bytes"},
      {"L2_cache_size", "l2_cache_bytes"},
      {"pci_bus_id", "pci_bus"},
      {"pci_device_id", "pci_device"},
      {"pci_domain_id", "pci_domain"},
      {"clock_rate", "sm_clock_khz"},
      {"memory_clock_rate", "memory_clock_khz"},
      {"memory_bus_width", "memory_bus_width_bits"}};
  std::stringstream lines(r.out);
  int joined = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    auto t = nlohmann::json::parse(line);
    auto it = by_uuid.find(lower(t["uuid"].get<std::string>()));
    ASSERT_NE(it, by_uuid.end()) << "torch's device " << t["uuid"] << " is not in the probe";
    ++joined;
    const auto& d = it->second;
    const auto& p = d["properties"];
    int compared = 0;
    EXPECT_EQ(t["name"], d["device_name"]);
    ++compared;
    if (t.contains("major") && t.contains("minor")) {
      EXPECT_EQ(std::to_string(t["major"].get<int>()) + "." + std::to_string(t["minor"].get<int>()),
                p["compute_capability"]);
      ++compared;
    }
    for (const auto& [theirs, ours] : same) {
      if (!t.contains(theirs)) continue;
      if (!p.contains(ours)) {
        ADD_FAILURE() << ours << " missing from the probe of " << d["device"];
        continue;
      }
      const auto& a = t[theirs];
      const auto& b = p[ours];
      if (a.is_boolean() || b.is_boolean())
        EXPECT_EQ(a.is_boolean() ? a.get<bool>() : a.get<long long>() != 0,
                  b.is_boolean() ? b.get<bool>() : b.get<long long>() != 0)
            << theirs << " vs " << ours;
      else
        EXPECT_EQ(a.get<long long>(), b.get<long long>()) << theirs << " vs " << ours;
      ++compared;
    }
    std::printf("%s (%s): %d torch.cuda.get_device_properties fields compared\n",
                d["device"].get<std::string>().c_str(), t["name"].get<std::string>().c_str(),
                compared);
    EXPECT_GE(compared, 12);
  }
  EXPECT_GE(joined, 1) << r.out;
}

// Every op, dtype and layout on cuda0 at one size preset: each record verified (or unsupported
// where the CUDA bench defines no such workload), and the run's exit code 0.
void bench_every_op(const std::string& size, bool baseline) {
  std::vector<std::string> args = {"bench",
                                   "--device",
                                   "cuda0",
                                   "--size",
                                   size,
                                   "--ops",
                                   "exp,gemm,conv,copy,latency,seedloop",
                                   "--dtype",
                                   "f32,tf32,f16,bf16,f64",
                                   "--layout",
                                   "nchw,nhwc",
                                   "--reps",
                                   "3",
                                   "--warmup",
                                   "1",
                                   "--json"};
  if (!baseline) args.push_back("--no-baseline");
  auto r = gpucheck_run(args);
  ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  int ok = 0;
  for (const auto& rec : doc["results"]) {
    if (rec["device"] != "cuda0") continue;
    std::string status = rec["status"];
    std::string what = rec["op"].get<std::string>() + " " + rec.value("dtype", std::string("")) +
                       " " + rec["shape"].dump() + " " + rec["transfers"].get<std::string>();
    std::printf("%-8s %s %s\n", status.c_str(), what.c_str(),
                rec.contains("throughput") ? rec["throughput"].dump().c_str()
                                           : rec.value("reason", std::string("")).c_str());
    if (status == "unsupported") {
      // Only what the CUDA bench does not define: tf32 exp, f64 conv, a non-f32 seed loop.
      bool expected = (rec["op"] == "exp" && rec["dtype"] == "tf32") ||
                      (rec["op"] == "conv" && rec["dtype"] == "f64") || rec["op"] == "seedloop";
      EXPECT_TRUE(expected) << what << ": " << rec.value("reason", std::string(""));
      continue;
    }
    EXPECT_EQ(status, "ok") << what << ": " << rec.value("reason", std::string(""));
    if (rec.contains("compute_type")) {
      EXPECT_FALSE(rec["compute_type"].get<std::string>().empty());
    }
    ok += status == "ok";
  }
  EXPECT_EQ(r.exit_code, 0) << "bench exit code";
  EXPECT_GE(ok, 40);
}

TEST(CudaDevice, BenchEveryOpDtypeLayoutVerifiesSmall) {
  SKIP_WITHOUT_GPU();
  bench_every_op("small", /*baseline=*/true);
}

// exp 2^28, GEMM 8192, conv 32,256,14,14,256, copies of 256 MiB: the sizes whose indices and
// byte counts overflow 32 bits somewhere; the CPU baseline would dominate the time, so none.
TEST(CudaDevice, BenchEveryOpDtypeLayoutVerifiesLarge) {
  SKIP_WITHOUT_GPU();
  bench_every_op("large", /*baseline=*/false);
}

TEST(CudaDevice, PlantedMismatchIsCaught) {
  SKIP_WITHOUT_GPU();
  auto r =
      gpucheck_run({"bench", "--device", "cuda0", "--ops", "exp,gemm", "--dtype", "f32", "--size",
                    "small", "--reps", "2", "--warmup", "1", "--json", "--no-baseline"},
                   {{"GPUCHECK_TEST_PLANT", "wrong"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  int mismatches = 0;
  for (const auto& rec : doc["results"])
    if (rec["device"] == "cuda0" && rec["status"] == "mismatch") ++mismatches;
  EXPECT_GE(mismatches, 2);
}

// fp8 (e4m3 in, bf16 out) through cuBLASLt: verified where the GPU has FP8 tensor cores (8.9+),
// else unsupported naming the capability; a shape whose sizes are not multiples of 16 refused;
// and the stress GEMM in fp8 passes where it runs.
TEST(CudaDevice, Fp8GemmVerifiesOrSaysWhy) {
  SKIP_WITHOUT_GPU();
  auto r = gpucheck_run({"bench", "--device", "cuda0", "--ops", "gemm", "--dtype", "fp8", "--gemm",
                         "1024,4096x2048x1024,1000", "--reps", "3", "--warmup", "1", "--json",
                         "--no-baseline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  bool runs = false;
  int seen = 0;
  const auto doc = nlohmann::json::parse(r.out);  // kept alive: the loop refers into it
  for (const auto& rec : doc["results"]) {
    if (rec["device"] != "cuda0") continue;
    ++seen;
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["dtype"], "fp8");
    const std::string reason = rec.value("reason", std::string(""));
    if (rec["shape"]["m"] == 1000) {
      EXPECT_EQ(rec["status"], "unsupported");
      continue;
    }
    if (rec["status"] == "unsupported") {
      EXPECT_THAT(reason, ::testing::HasSubstr("compute capability 8.9"));
      continue;
    }
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_EQ(rec["compute_type"], "CUBLAS_COMPUTE_32F");
    EXPECT_LE(rec["verification"]["max_rel_error"].get<double>(),
              rec["verification"]["tolerance"].get<double>());
    runs = true;
  }
  EXPECT_GE(seen, 3);
  if (!runs) return;
  auto s = gpucheck_run({"stress", "--device", "cuda0", "--tests", "gemm", "--dtype", "fp8",
                         "--duration", "10s", "--gemm", "4096", "--json"});
  ASSERT_EQ(s.exit_code, 0) << s.err << s.out;
  const auto stress = nlohmann::json::parse(s.out);
  for (const auto& d : stress["stress"]["devices"])
    if (d["device"] == "cuda0") {
      EXPECT_EQ(d["verdict"], "pass") << d.dump(2);
      EXPECT_EQ(d["records"][0]["dtype"], "fp8");
    }
}

// ---- stress: a short healthy run, and planted faults failing only their device.

namespace {

nlohmann::json stress_device(const nlohmann::json& doc, const std::string& device) {
  for (const auto& d : doc["stress"]["devices"])
    if (d["device"] == device) return d;
  return nullptr;
}

std::size_t cuda_devices() {
  return cuda_probe().section.value("devices", nlohmann::json::array()).size();
}

}  // namespace

TEST(CudaStress, AShortRunOnCuda0PassesWithTelemetryAndCoverage) {
  SKIP_WITHOUT_GPU();
  auto r = gpucheck_run(
      {"stress", "--device", "cuda0", "--duration", "15s", "--gemm", "4096", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const auto dev = stress_device(nlohmann::json::parse(r.out), "cuda0");
  EXPECT_EQ(dev["verdict"], "pass") << dev.dump(2);
  EXPECT_GT(dev["telemetry"]["samples"].get<int>(), 50);  // 100 ms for 15 s
  EXPECT_TRUE(dev["telemetry"]["counters"]["after"].contains("ecc_volatile_uncorrected") ||
              dev["telemetry"]["counters"]["after"].contains("pcie_replay"));
  ASSERT_EQ(dev["records"].size(), 3u);
  EXPECT_EQ(dev["records"][0]["dtype"], "bf16");
  EXPECT_GE(dev["records"][1]["memory"]["fraction_of_free"].get<double>(), 0.89);
  for (const auto& rec : dev["records"]) EXPECT_EQ(rec["status"], "ok") << rec.dump();
}

TEST(CudaStress, PlantedFaultsFailOnlyTheirDevice) {
  SKIP_WITHOUT_GPU();
  const std::string others = cuda_devices() > 1 ? ",cuda1" : "";
  struct Case {
    const char* fault;
    const char* tests;
    const char* words;
  };
  for (const Case c :
       {Case{"cuda0:gemm_bit@5", "gemm", "differed from the first"},
        Case{"cuda0:memory_word@2", "memory", "words read back wrong"},
        Case{"cuda0:hang@2", "gemm", "hung"}, Case{"cuda0:die@2", "gemm", "signal 9"},
        Case{"cuda0:copy_byte@5", "copy", "differed from the source"},
        Case{"cuda0:copy_skip@5", "copy", "differed from the source"}}) {
    SCOPED_TRACE(c.fault);
    auto r = gpucheck_run({"stress", "--device", "cuda0" + others, "--tests", c.tests, "--duration",
                           "6s", "--gemm", "4096", "--hang-timeout", "5", "--json"},
                          {{"GPUCHECK_TEST_STRESS_FAULT", c.fault}});
    ASSERT_EQ(r.exit_code, 1) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    const auto bad = stress_device(doc, "cuda0");
    EXPECT_EQ(bad["verdict"], "fail");
    std::string reasons;
    for (const auto& s : bad["reasons"]) reasons += s.get<std::string>() + "\n";
    EXPECT_THAT(reasons, ::testing::HasSubstr(c.words));
    if (!others.empty()) {
      EXPECT_EQ(stress_device(doc, "cuda1")["verdict"], "pass");
    }
  }
}

// The host copies run both directions at once, each with its rate; a byte flipped in a download
// is named as the download's, at its offset.
TEST(CudaStress, HostCopiesRunBothDirectionsAndNameTheBadOne) {
  SKIP_WITHOUT_GPU();
  const std::vector<std::string> args = {"stress", "--device",   "cuda0", "--tests",
                                         "copy",   "--duration", "4s",    "--json"};
  auto r = gpucheck_run(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rec = stress_device(nlohmann::json::parse(r.out), "cuda0")["records"][0];
  const auto& c = rec["copy"];
  EXPECT_EQ(c["in_flight"], 3) << c.dump();
  EXPECT_GT(c["h2d_gbps"].get<double>(), 5.0);  // PCIe 3 x8 and up
  EXPECT_GT(c["d2h_gbps"].get<double>(), 5.0);
  EXPECT_NEAR(rec["throughput"]["value"].get<double>(),
              c["h2d_gbps"].get<double>() + c["d2h_gbps"].get<double>(),
              0.25 * rec["throughput"]["value"].get<double>());
  auto planted = gpucheck_run(args, {{"GPUCHECK_TEST_STRESS_FAULT", "cuda0:copy_byte@5"}});
  ASSERT_EQ(planted.exit_code, 1) << planted.err;
  const auto bad = stress_device(nlohmann::json::parse(planted.out), "cuda0")["records"][0];
  EXPECT_EQ(bad["copy"]["mismatches"], 1) << bad.dump();
  EXPECT_EQ(bad["copy"]["direction"], "d2h");
  EXPECT_EQ(bad["copy"]["iterations"], 5);
  EXPECT_EQ(bad["copy"]["first_bad_offset"], bad["shape"]["bytes"].get<std::uint64_t>() / 2);
}

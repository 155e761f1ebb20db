// Each record's limit from fabricated probe sections, CPU facts and a SKU table: one row per kind
// of device and op, each checked against the arithmetic its source names; then qualify's
// min_fraction_of_limit, and the per-clock tables themselves.
#include "core/errors.h"
#include "core/flop_rates.h"
#include "qualify/judge.h"
#include "qualify/limits.h"
#include "qualify/profile.h"
#include "test_skus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

namespace q = gpucheck::qualify;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// An H100 the table knows (by PCI device id), a GPU it does not, an older card, pocl and the CPU.
Json backends() {
  return Json::parse(R"([
    {"name": "cpu", "status": "available", "devices": [{"device": "cpu"}]},
    {"name": "cuda", "status": "available", "devices": [
      {"device": "cuda0", "device_name": "Renamed H100", "pci_bus_id": "0000:00:06.0",
       "properties": {"compute_capability": "9.0", "multiprocessors": 132,
                      "nvml": {"max_sm_clock_mhz": 1980, "pcie_link_gen_max": 4,
                               "pcie_link_width_max": 16}}},
      {"device": "cuda1", "device_name": "Future GPU",
       "properties": {"compute_capability": "9.0", "multiprocessors": 100,
                      "memory_bus_width_bits": 5120, "memory_clock_khz": 2619000}},
      {"device": "cuda2", "device_name": "Tesla T4",
       "properties": {"compute_capability": "7.5", "multiprocessors": 40}}]},
    {"name": "opencl", "status": "available", "devices": [
      {"device": "opencl0", "device_name": "pthread-cpu",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_CPU"], "raw": 2}}},
      {"device": "opencl1", "device_name": "Some GPU",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"], "raw": 4}}}]}
  ])");
}

struct Fixture {
  std::vector<q::Sku> skus = q::parse_skus(gpucheck::testing::kTestSkus, "s.toml");
  q::LimitFacts facts;
  Fixture() {
    facts.backends = backends();
    facts.cpu = {{"arch", "x86_64"},
                 {"cores", 2},
                 {"mhz_current", 2500.0},
                 {"isa", {{"avx512f", true}, {"avx2", true}, {"fma", true}}}};
    facts.skus = &skus;
    facts.pci_device_id = [](const std::string& bus) -> std::optional<std::string> {
      if (bus == "0000:00:06.0") return std::string("0x2330");
      return std::nullopt;
    };
  }
};

Json record(const std::string& device, const std::string& backend, const std::string& op,
            const std::string& dtype, Json shape, double value, const std::string& unit) {
  return {{"device", device},
          {"backend", backend},
          {"op", op},
          {"dtype", dtype},
          {"shape", std::move(shape)},
          {"transfers", "excluded"},
          {"status", "ok"},
          {"throughput", {{"value", value}, {"unit", unit}}}};
}

const Json kGemm = {{"m", 64}, {"n", 64}, {"k", 64}};

TEST(Limits, CpuFromCoresIsaAndClock) {
  Fixture f;
  // AVX-512: 2 FMA units × 16 f32 lanes × 2 FLOP = 64 per cycle; 2 cores at 2500 MHz.
  Json r = record("cpu", "cpu", "gemm", "f32", kGemm, 0.16, "TFLOP/s");
  Json l = q::limit_of(r, f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 2 * 64 * 2500e6 / 1e12);
  EXPECT_DOUBLE_EQ(l["fraction"].get<double>(), 0.16 / 0.32);
  EXPECT_DOUBLE_EQ(l["clock_mhz"].get<double>(), 2500);
  EXPECT_THAT(l["source"].get<std::string>(), HasSubstr("AVX-512"));
  EXPECT_THAT(l["basis"].get<std::string>(), HasSubstr("/proc/cpuinfo"));
  // The base clock a model name states wins over the clock cpuinfo last saw, which moves.
  f.facts.cpu["model"] = "Intel(R) Xeon(R) Processor @ 2.00GHz";
  l = q::limit_of(r, f.facts);
  EXPECT_DOUBLE_EQ(l["clock_mhz"].get<double>(), 2000);
  EXPECT_THAT(l["basis"].get<std::string>(), HasSubstr("model name"));
  f.facts.cpu.erase("model");
  // f64 has half the lanes; one thread of two uses one core.
  r = record("cpu", "cpu", "gemm", "f64", kGemm, 0.01, "TFLOP/s");
  r["context"] = {{"threads", 1}};
  EXPECT_DOUBLE_EQ(q::limit_of(r, f.facts)["value"].get<double>(), 1 * 32 * 2500e6 / 1e12);
  // cpufreq's maximum wins over the current clock; AVX2+FMA is 32 f32 FLOP per cycle.
  f.facts.cpu["mhz_max"] = 3000.0;
  f.facts.cpu["isa"] = {{"avx2", true}, {"fma", true}};
  r = record("cpu", "cpu", "conv", "f32", kGemm, 0.1, "TFLOP/s");
  l = q::limit_of(r, f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 2 * 32 * 3000e6 / 1e12);
  EXPECT_THAT(l["basis"].get<std::string>(), HasSubstr("cpufreq"));
  // Memory bandwidth is not knowable: a reason, no figure.
  l = q::limit_of(record("cpu", "cpu", "exp", "f32", {{"n", 4}}, 9, "GB/s"), f.facts);
  EXPECT_FALSE(l.contains("value"));
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("DMI"));
  // An architecture without a rate says so.
  f.facts.cpu["arch"] = "riscv64";
  l = q::limit_of(record("cpu", "cpu", "gemm", "f32", kGemm, 0.1, "TFLOP/s"), f.facts);
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("riscv64"));
}

TEST(Limits, PoclIsTheCpu) {
  Fixture f;
  Json l =
      q::limit_of(record("opencl0", "opencl", "gemm", "f32", kGemm, 0.0032, "TFLOP/s"), f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 0.32);
  EXPECT_NEAR(l["fraction"].get<double>(), 0.01, 1e-12);
  l = q::limit_of(record("opencl0", "opencl", "copy", "", {{"direction", "h2d"}}, 13, "GB/s"),
                  f.facts);
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("memory bandwidth"));
  // An OpenCL GPU has no SM count or rate to compute from.
  l = q::limit_of(record("opencl1", "opencl", "gemm", "f32", kGemm, 1, "TFLOP/s"), f.facts);
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("Some GPU (backend opencl)"));
}

TEST(Limits, KnownGpuDatasheetCorrectedToTheRecordsClock) {
  Fixture f;
  Json r = record("cuda0", "cuda", "gemm", "bf16", kGemm, 500, "TFLOP/s");
  r["context"] = {{"sm_clock_mhz", {{"mean", 1755.0}, {"min", 1700.0}, {"max", 1800.0}}}};
  Json l = q::limit_of(r, f.facts);
  // The datasheet's clock is its peak ÷ (132 SMs × 4096 FLOP per clock).
  const double ds_clock = 989.4e6 / (132 * 4096.0);
  EXPECT_NEAR(l["datasheet"]["clock_mhz"].get<double>(), ds_clock, 1e-9);
  EXPECT_NEAR(l["value"].get<double>(), 989.4 * 1755 / ds_clock, 1e-9);
  EXPECT_DOUBLE_EQ(l["clock_mhz"].get<double>(), 1755);
  EXPECT_THAT(l["source"].get<std::string>(), HasSubstr("Test datasheet"));
  EXPECT_THAT(l["basis"].get<std::string>(), HasSubstr("mean SM clock"));
  // Without a sampled clock, NVML's maximum.
  r.erase("context");
  l = q::limit_of(r, f.facts);
  EXPECT_DOUBLE_EQ(l["clock_mhz"].get<double>(), 1980);
  EXPECT_THAT(l["basis"].get<std::string>(), HasSubstr("maximum"));
  // Memory and links from the table; the host link from NVML's Gen4 x16 before the table's Gen5.
  EXPECT_DOUBLE_EQ(
      q::limit_of(record("cuda0", "cuda", "exp", "f16", {{"n", 4}}, 3000, "GB/s"), f.facts)["value"]
          .get<double>(),
      3350);
  l = q::limit_of(record("cuda0", "cuda", "copy", "", {{"direction", "d2h"}}, 20, "GB/s"), f.facts);
  EXPECT_NEAR(l["value"].get<double>(), 16 * 16 * 128.0 / 130 / 8, 1e-9);
  EXPECT_THAT(l["source"].get<std::string>(), HasSubstr("PCIe Gen4 x16"));
  f.facts.backends[1]["devices"][0]["properties"].erase("nvml");
  l = q::limit_of(record("cuda0", "cuda", "copy", "", {{"direction", "both"}}, 100, "GB/s"),
                  f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 126.0);
}

TEST(Limits, UnknownGpuFromSmsClockAndRate) {
  Fixture f;
  Json r = record("cuda1", "cuda", "gemm", "fp8", kGemm, 100, "TFLOP/s");
  r["context"] = {{"sm_clock_mhz", {{"mean", 1500.0}}}};
  Json l = q::limit_of(r, f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 100 * 8192 * 1500e6 / 1e12);
  EXPECT_THAT(l["source"].get<std::string>(), HasSubstr("100 SMs"));
  EXPECT_FALSE(l.contains("datasheet"));
  l = q::limit_of(record("cuda1", "cuda", "copy", "", {{"direction", "d2d"}}, 1000, "GB/s"),
                  f.facts);
  EXPECT_NEAR(l["value"].get<double>(), 5120 / 8.0 * 2619e6 * 2 / 1e9, 1e-9);
  r["device"] = "cuda2";
  l = q::limit_of(r, f.facts);
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("compute capability 7.5 in fp8"));
  l = q::limit_of(record("cuda2", "cuda", "copy", "", {{"direction", "h2d"}}, 10, "GB/s"), f.facts);
  EXPECT_THAT(l["reason"].get<std::string>(), HasSubstr("PCIe link is unknown"));
}

TEST(Limits, LinksBetweenGpus) {
  Fixture f;
  Json shape = {{"bytes", 1 << 20}, {"direction", "p2p"}, {"bidirectional", true},
                {"src", "cuda0"},   {"dst", "cuda1"},     {"peer_access", true}};
  Json l = q::limit_of(record("cuda0", "cuda", "p2p", "", shape, 700, "GB/s"), f.facts);
  EXPECT_DOUBLE_EQ(l["value"].get<double>(), 900);
  EXPECT_DOUBLE_EQ(l["signalling"].get<double>(), 2 * 478.1);
  shape["bidirectional"] = false;
  shape["src"] = "all";
  shape["dst"] = "all";
  shape["direction"] = "all_to_all";
  shape["copies"] = 12;  // four GPUs
  EXPECT_DOUBLE_EQ(
      q::limit_of(record("cuda0", "cuda", "p2p", "", shape, 700, "GB/s"), f.facts)["value"]
          .get<double>(),
      4 * 450);
  shape["peer_access"] = false;
  EXPECT_THAT(q::limit_of(record("cuda0", "cuda", "p2p", "", shape, 7, "GB/s"), f.facts)["reason"]
                  .get<std::string>(),
              HasSubstr("host memory"));
  Json ar = record("group", "cuda", "allreduce", "f32",
                   {{"bytes", 1 << 20}, {"devices", {"cuda0", "cuda1"}}}, 360, "GB/s");
  EXPECT_DOUBLE_EQ(q::limit_of(ar, f.facts)["fraction"].get<double>(), 0.8);
  ar["context"] = {{"transport", "net"}};
  EXPECT_THAT(q::limit_of(ar, f.facts)["reason"].get<std::string>(), HasSubstr("network path"));
  ar.erase("context");
  f.facts.across_processes = true;
  EXPECT_THAT(q::limit_of(ar, f.facts)["reason"].get<std::string>(), HasSubstr("network path"));
  f.facts.across_processes = false;
  ar["shape"]["devices"] = {"cuda2", "cuda0"};
  EXPECT_THAT(q::limit_of(ar, f.facts)["reason"].get<std::string>(), HasSubstr("Tesla T4"));
}

TEST(Limits, RecordsWithoutALimit) {
  Fixture f;
  Json r = record("cuda0", "cuda", "gemm", "bf16", kGemm, 5, "TFLOP/s");
  r["transfers"] = "included";
  EXPECT_THAT(q::limit_of(r, f.facts)["reason"].get<std::string>(), HasSubstr("end to end"));
  r = record("cuda0", "cuda", "latency", "", {{"mode", "async"}}, 1, "GB/s");
  EXPECT_TRUE(q::limit_of(r, f.facts).is_null());
  r = record("cuda0", "cuda", "gemm", "bf16", kGemm, 5, "TFLOP/s");
  r["status"] = "failed";
  Json results = Json::array({r, record("cpu", "cpu", "gemm", "f32", kGemm, 0.16, "TFLOP/s")});
  q::add_limits(results, f.facts);
  EXPECT_FALSE(results[0].contains("limit"));
  EXPECT_DOUBLE_EQ(results[1]["limit"]["fraction"].get<double>(), 0.5);
}

// Stress records: the GEMM at the mean SM clock of its windows, memory as device memory, host
// copies both ways at once, host and peer copies together without a figure.
TEST(Limits, StressRecords) {
  Fixture f;
  Json gemm = {{"device", "cuda1"},
               {"backend", "cuda"},
               {"test", "gemm"},
               {"dtype", "bf16"},
               {"status", "ok"},
               {"throughput",
                {{"value", 500.0},
                 {"unit", "TFLOP/s"},
                 {"windows", {{{"sm_clock_mhz", 1400.0}}, {{"sm_clock_mhz", 1600.0}}}}}}};
  Json memory = {{"device", "cuda1"},
                 {"backend", "cuda"},
                 {"test", "memory"},
                 {"status", "ok"},
                 {"throughput", {{"value", 2000.0}, {"unit", "GB/s"}}}};
  Json copy = {{"device", "cuda0"},
               {"backend", "cuda"},
               {"test", "copy"},
               {"status", "ok"},
               {"throughput", {{"value", 50.0}, {"unit", "GB/s"}}},
               {"copy", Json::object()}};
  Json peer = copy;
  peer["copy"]["peer"] = {{"device", "cuda1"}};
  Json section = {{"devices",
                   {{{"device", "cuda1"}, {"records", {gemm, memory}}},
                    {{"device", "cuda0"}, {"records", {copy, peer}}}}}};
  q::add_stress_limits(section, f.facts);
  const Json& g = section["devices"][0]["records"][0]["limit"];
  EXPECT_DOUBLE_EQ(g["clock_mhz"].get<double>(), 1500);
  EXPECT_DOUBLE_EQ(g["value"].get<double>(), 100 * 4096 * 1500e6 / 1e12);
  EXPECT_NEAR(section["devices"][0]["records"][1]["limit"]["value"].get<double>(),
              5120 / 8.0 * 2619e6 * 2 / 1e9, 1e-9);
  EXPECT_NEAR(section["devices"][1]["records"][0]["limit"]["value"].get<double>(),
              2 * 16 * 16 * 128.0 / 130 / 8, 1e-9);
  EXPECT_THAT(section["devices"][1]["records"][1]["limit"]["reason"].get<std::string>(),
              HasSubstr("peer"));
}

TEST(Limits, ProfileFloorAsAFractionOfTheLimit) {
  q::Observations o;
  o.backends = backends();
  Json r = record("cpu", "cpu", "gemm", "f32", kGemm, 0.16, "TFLOP/s");
  r["time_s"] = {{"median", 0.001}};
  r["limit"] = {{"value", 0.32}, {"unit", "TFLOP/s"}, {"fraction", 0.5}};
  o.results = Json::array({r});
  const std::string cell =
      "[[require]]\nkind = \"bench\"\ndevice = \"cpu\"\nop = \"gemm\"\ndtype = \"f32\"\n"
      "shape = { m = 64, n = 64, k = 64 }\n";
  auto judge = [&](const std::string& floor) {
    return q::judge(q::parse_profile(cell + floor, "p.toml").requirements.at(0), o).at(0);
  };
  EXPECT_EQ(judge("min_fraction_of_limit = 0.4\n").outcome, q::Outcome::kMet);
  auto v = judge("min_fraction_of_limit = 0.6\n");
  EXPECT_EQ(v.outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v.reason, HasSubstr("of the hardware's limit"));
  o.results[0]["limit"] = {{"reason", "no figure"}};
  v = judge("min_fraction_of_limit = 0.4\n");
  EXPECT_EQ(v.outcome, q::Outcome::kSkip);
  EXPECT_THAT(v.reason, HasSubstr("no figure"));
  for (const char* bad : {"1.5", "0", "\"half\""}) {
    try {
      q::parse_profile(cell + "min_fraction_of_limit = " + bad + "\n", "p.toml");
      ADD_FAILURE() << bad << ": no error";
    } catch (const gpucheck::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("min_fraction_of_limit")) << bad;
    }
  }
}

TEST(Limits, PerClockTablesByDtypeName) {
  EXPECT_EQ(gpucheck::dense_flop_per_clock_per_sm(9, 0, "fp8"), 8192);
  EXPECT_EQ(gpucheck::dense_flop_per_clock_per_sm(9, 0, "bf16"), 4096);
  EXPECT_FALSE(gpucheck::dense_flop_per_clock_per_sm(8, 0, "fp8").has_value());  // A100: none
  std::string why;
  auto neon = gpucheck::cpu_flop_per_cycle_per_core({{"neon", true}}, "aarch64", "f64", &why);
  ASSERT_TRUE(neon.has_value());
  EXPECT_EQ(neon->flop_per_cycle_per_core, 8);
  EXPECT_FALSE(gpucheck::cpu_flop_per_cycle_per_core({}, "x86_64", "f32", &why).has_value());
  EXPECT_THAT(why, HasSubstr("AVX"));
}

TEST(Limits, BuiltinTableHasFp8AndNvlink) {
  for (const char* id : {"0x2330", "0x2335"}) {
    const q::Sku* sku = q::find_sku(q::builtin_skus(), std::string(id), "");
    ASSERT_NE(sku, nullptr);
    EXPECT_EQ(sku->sm_count, 132);
    const q::Reference* fp8 =
        q::find_reference(*sku, "datasheet", "gemm", "fp8", Json::object(), "excluded");
    ASSERT_NE(fp8, nullptr);
    EXPECT_DOUBLE_EQ(fp8->value, 1979);
    const q::Reference* nvlink =
        q::find_reference(*sku, "datasheet", "p2p", "", Json::object(), "excluded");
    ASSERT_NE(nvlink, nullptr);
    EXPECT_DOUBLE_EQ(nvlink->value, 450);
    EXPECT_DOUBLE_EQ(nvlink->signalling.value_or(0), 478.1);
    const q::Reference* d2h =
        q::find_reference(*sku, "datasheet", "copy", "", {{"direction", "d2h"}}, "excluded");
    ASSERT_NE(d2h, nullptr);
    EXPECT_DOUBLE_EQ(d2h->value, 63.0);
  }
}

}  // namespace

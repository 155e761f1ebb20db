// The Prometheus view: escaping, one sample per series, and the metrics of each document kind.
#include "report/prometheus.h"
#include "report/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>

namespace {

using namespace gpucheck::report;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(PrometheusEscape, LabelValuesEscapeBackslashQuoteAndNewline) {
  EXPECT_EQ(prometheus_label_value("a\\b\"c\nd"), "a\\\\b\\\"c\\nd");
  EXPECT_EQ(prometheus_help("a\\b\"c\nd"), "a\\\\b\"c\\nd");  // quotes stay in HELP
}

TEST(PrometheusMetrics, OneSamplePerSeriesFirstWins) {
  PromMetrics m;
  m.family("gpucheck_x", "X");
  m.sample("gpucheck_x", {{"a", "1"}}, 1);
  m.sample("gpucheck_x", {{"a", "1"}}, 2);
  m.sample("gpucheck_x", {{"a", "2"}, {"empty", ""}}, 3);
  EXPECT_EQ(m.text(),
            "# HELP gpucheck_x X\n# TYPE gpucheck_x gauge\n"
            "gpucheck_x{a=\"1\"} 1\ngpucheck_x{a=\"2\"} 3\n");
}

TEST(PrometheusMetrics, FamiliesWithoutSamplesAreLeftOut) {
  PromMetrics m;
  m.family("gpucheck_none", "nothing");
  EXPECT_EQ(m.text(), "");
}

nlohmann::json bench_doc() {
  nlohmann::json weird = "GPU \"q\" back\\slash\nnewline";
  return {{"schema", "gpucheck/1"},
          {"command", "bench"},
          {"provenance", {{"gpucheck_version", "0.1.0"}}},
          {"results",
           {{{"device", "cpu"},
             {"backend", "cpu"},
             {"op", "exp"},
             {"dtype", "f32"},
             {"impl", "avx2"},
             {"shape", {{"n", 1024}}},
             {"transfers", "excluded"},
             {"status", "ok"},
             {"time_s", {{"median", 0.002}}},
             {"throughput", {{"value", 4.0}, {"unit", "GB/s"}}}},
            {{"device", "cuda0"},
             {"device_uuid", "GPU-1234"},
             {"device_name", weird},
             {"backend", "cuda"},
             {"op", "gemm"},
             {"dtype", "f16"},
             {"impl", "cublaslt"},
             {"shape", {{"m", 64}, {"n", 64}, {"k", 64}}},
             {"transfers", "included"},
             {"status", "ok"},
             {"time_s", {{"median", 0.001}}},
             {"throughput", {{"value", 2.5}, {"unit", "TFLOP/s"}}},
             {"speedup_vs_cpu", 3.0}},
            {{"device", "cuda0"},
             {"backend", "cuda"},
             {"op", "conv"},
             {"shape", {{"n", 1}}},
             {"transfers", "excluded"},
             {"status", "skipped"}}}}};
}

TEST(PrometheusRender, BenchMetricsInBaseUnitsWithEscapedLabels) {
  std::string text = render(bench_doc(), Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("# TYPE gpucheck_bench_median_seconds gauge\n"));
  EXPECT_THAT(text,
              HasSubstr("gpucheck_bench_throughput_bytes_per_second{gpucheck_device=\"cpu\","
                        "op=\"exp\","
                        "dtype=\"f32\",shape=\"n=1024\",transfers=\"excluded\",impl=\"avx2\"} "
                        "4000000000\n"));
  // No NVML reading and no host in the document: no gpu, device, pci_bus_id or hostname.
  const std::string cuda0 =
      "UUID=\"GPU-1234\",modelName=\"GPU \\\"q\\\" "
      "back\\\\slash\\nnewline\",gpucheck_device=\"cuda0\"";
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_throughput_flop_per_second{" + cuda0 +
                              ",op=\"gemm\",dtype=\"f16\",shape=\"64x64x64\","
                              "transfers=\"included\",impl=\"cublaslt\"} 2500000000000\n"));
  EXPECT_THAT(text, HasSubstr("name=\"GPU \\\"q\\\" back\\\\slash\\nnewline\""));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_records{" + cuda0 + ",status=\"skipped\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_records{" + cuda0 + ",status=\"ok\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_speedup_vs_cpu{" + cuda0));
  // No raw newline inside any sample line: every line is a comment or name{labels} value.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("gpucheck_", 0) == 0) << line;
    start = end + 1;
  }
}

// A figure with a limit has its share beside it, labelled with the series the figure is; one
// whose limit is a reason has none (no number made up).
TEST(PrometheusRender, FractionOfLimitBesideEachFigureThatHasOne) {
  nlohmann::json doc = bench_doc();
  doc["results"][0]["limit"] = {{"reason", "no figure for this CPU"}};
  doc["results"][1]["limit"] = {{"value", 5.0}, {"unit", "TFLOP/s"}, {"fraction", 0.5}};
  const std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("# TYPE gpucheck_fraction_of_limit gauge\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_fraction_of_limit{UUID=\"GPU-1234\","));
  EXPECT_THAT(text, HasSubstr(",op=\"gemm\",dtype=\"f16\",shape=\"64x64x64\","
                              "transfers=\"included\",impl=\"cublaslt\","
                              "metric=\"gpucheck_bench_throughput_flop_per_second\"} 0.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpucheck_fraction_of_limit{gpucheck_device=\"cpu\"")));
  // No record with a limit: no family at all.
  EXPECT_THAT(render(bench_doc(), Format::kPrometheus),
              Not(HasSubstr("gpucheck_fraction_of_limit")));
}

// stress: the burst beside the sustained and lowest windows, and the sustained figure's share.
TEST(PrometheusRender, StressBurstWindowAndFractionOfLimit) {
  nlohmann::json record = {{"test", "gemm"},
                           {"dtype", "bf16"},
                           {"status", "ok"},
                           {"throughput",
                            {{"value", 600.0},
                             {"unit", "TFLOP/s"},
                             {"min_window", 590.0},
                             {"burst", 700.0},
                             {"burst_s", 0.51},
                             {"sustained_over_burst", 600.0 / 700},
                             {"windows", nlohmann::json::array()}}},
                           {"limit", {{"value", 989.0}, {"unit", "TFLOP/s"}, {"fraction", 0.6}}}};
  nlohmann::json memory = {{"test", "memory"},
                           {"status", "ok"},
                           {"throughput", {{"value", 3000.0}, {"unit", "GB/s"}}},
                           {"limit", {{"reason", "unknown memory clock"}}}};
  nlohmann::json doc = {{"command", "stress"},
                        {"stress",
                         {{"verdict", "pass"},
                          {"devices",
                           {{{"device", "cuda0"},
                             {"device_uuid", "GPU-1234"},
                             {"backend", "cuda"},
                             {"verdict", "pass"},
                             {"records", {record, memory}}}}}}}};
  const std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("gpucheck_stress_throughput_flop_per_second{UUID=\"GPU-1234\","
                              "gpucheck_device=\"cuda0\",test=\"gemm\",dtype=\"bf16\","
                              "window=\"burst\"} 700000000000000\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_fraction_of_limit{UUID=\"GPU-1234\","
                              "gpucheck_device=\"cuda0\",test=\"gemm\",dtype=\"bf16\","
                              "window=\"sustained\","
                              "metric=\"gpucheck_stress_throughput_flop_per_second\"} 0.6\n"));
  EXPECT_THAT(text, Not(HasSubstr("test=\"memory\",window=\"sustained\",metric")));
}

TEST(PrometheusRender, DoctorChecksAsStateSets) {
  nlohmann::json doc = {
      {"command", "doctor"},
      {"checks",
       {{{"id", "opencl_loader"}, {"status", "warn"}}, {{"id", "cpu_isa"}, {"status", "pass"}}}}};
  std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(
      text, HasSubstr("gpucheck_doctor_check_status{check=\"opencl_loader\",status=\"warn\"} 1\n"));
  EXPECT_THAT(
      text, HasSubstr("gpucheck_doctor_check_status{check=\"opencl_loader\",status=\"pass\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_doctor_checks{status=\"fail\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_doctor_checks{status=\"pass\"} 1\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpucheck_bench")));
}

// dcgm-exporter's DCGM_EXP_GPU_HEALTH_STATUS values: 0 pass, 10 warn, 20 fail.
TEST(PrometheusRender, HealthStatusPerCheckAsDcgmExporterGivesIt) {
  nlohmann::json doc = {{"command", "doctor"},
                        {"checks",
                         {{{"id", "nvidia_xid"},
                           {"status", "fail"},
                           {"code", "GC-XID-HARDWARE"},
                           {"action", "drain_and_diagnose"}},
                          {{"id", "nvidia_persistence_mode"},
                           {"status", "warn"},
                           {"code", "GC-PERSISTENCE-OFF"},
                           {"action", "fix_config"}},
                          {{"id", "cpu_isa"}, {"status", "info"}, {"code", "GC-CPU-ISA"}},
                          {{"id", "nvidia_ecc"}, {"status", "skip"}, {"code", "GC-NVIDIA-ECC"}}}}};
  const std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("gpucheck_health_status{check=\"nvidia_xid\",code=\"GC-XID-"
                              "HARDWARE\",action=\"drain_and_diagnose\",severity=\"fail\"} 20\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_health_status{check=\"nvidia_persistence_mode\",code="
                              "\"GC-PERSISTENCE-OFF\",action=\"fix_config\",severity=\"warn\"} "
                              "10\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_health_status{check=\"cpu_isa\",code=\"GC-CPU-ISA\","
                              "severity=\"info\"} 0\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_health_status{check=\"nvidia_ecc\",code=\"GC-NVIDIA-"
                              "ECC\",severity=\"skip\"} 0\n"));
  EXPECT_THAT(text, Not(HasSubstr("injected")));
  EXPECT_THAT(text, Not(HasSubstr("gpucheck_run_duration_seconds")));  // the document has none
}

TEST(PrometheusRender, RunDurationBesideTheLastRunTimestamp) {
  nlohmann::json doc = {{"command", "doctor"},
                        {"provenance", {{"time", "2026-11-30T02:00:00Z"}, {"duration_s", 1.25}}}};
  const std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("gpucheck_run_duration_seconds{command=\"doctor\"} 1.25\n"));
  EXPECT_THAT(text,
              HasSubstr("gpucheck_last_run_timestamp_seconds{command=\"doctor\"} 1796004000\n"));
}

// doctor --inject: every series of the file carries injected="true", so an alert can leave
// tests out (or match only them).
TEST(PrometheusRender, InjectedDocumentLabelsEverySeries) {
  nlohmann::json doc = {{"command", "doctor"},
                        {"injected", {"xid:79"}},
                        {"provenance", {{"time", "2026-11-30T02:00:00Z"}, {"duration_s", 3}}},
                        {"checks",
                         {{{"id", "nvidia_xid"},
                           {"status", "fail"},
                           {"code", "GC-XID-HARDWARE"},
                           {"action", "drain_and_diagnose"},
                           {"recovery_action", "DRAIN_AND_RESET"},
                           {"injected", true}}}},
                        {"health", {{"verdict", "unhealthy"}}}};
  const std::string text = render(doc, Format::kPrometheus);
  std::size_t series = 0, start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.rfind("#", 0) == 0) continue;
    ++series;
    EXPECT_THAT(line, HasSubstr("injected=\"true\"")) << line;
  }
  EXPECT_GE(series, 10u);  // info, timestamp, duration, check states, fault, health...
  EXPECT_THAT(text, HasSubstr("gpucheck_health_status{check=\"nvidia_xid\",code=\"GC-XID-"
                              "HARDWARE\",action=\"drain_and_diagnose\",severity=\"fail\","
                              "injected=\"true\"} 20\n"));
}

TEST(PrometheusRender, QualifyVerdictsAndSweepBreakEven) {
  nlohmann::json doc = {
      {"command", "qualify"},
      {"qualify",
       {{"profile", {{"name", "ci"}, {"path", "ci.toml"}}},
        {"verdict", "unmet"},
        {"summary", {{"met", 1}, {"unmet", 1}, {"skip", 0}}},
        {"verdicts",
         {{{"id", "gemm_f16"},
           {"kind", "bench"},
           {"device", "cuda0"},
           {"verdict", "unmet"},
           {"measured", 12.5},
           {"unit", "TFLOP/s"}},
          {{"id", "driver"}, {"kind", "backend"}, {"verdict", "met"}, {"measured", "550.54"}}}}}},
      {"sweep",
       {{"op", "gemm"},
        {"series",
         {{{"device", "cuda0"}, {"dtype", "f32"}, {"transfers", "excluded"}, {"break_even", 512}},
          {{"device", "cuda0"},
           {"dtype", "f32"},
           {"transfers", "included"},
           {"break_even", nullptr}}}}}}};
  std::string text = render(doc, Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("gpucheck_qualify_met{profile=\"ci\"} 0\n"));
  EXPECT_THAT(text,
              HasSubstr("gpucheck_qualify_requirements{profile=\"ci\",verdict=\"unmet\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_qualify_verdict{profile=\"ci\",requirement=\"gemm_f16\","
                              "kind=\"bench\",gpucheck_device=\"cuda0\",verdict=\"unmet\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_qualify_measured{profile=\"ci\",requirement=\"gemm_f16\","
                              "kind=\"bench\",gpucheck_device=\"cuda0\",unit=\"TFLOP/s\"} 12.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("requirement=\"driver\",kind=\"backend\",unit")));  // a string
  EXPECT_THAT(text, HasSubstr("gpucheck_sweep_break_even_size{gpucheck_device=\"cuda0\","
                              "op=\"gemm\",dtype=\"f32\",transfers=\"excluded\"} 512\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_sweep_break_even_found{gpucheck_device=\"cuda0\","
                              "op=\"gemm\",dtype=\"f32\",transfers=\"included\"} 0\n"));
}

std::string render_fixture(const std::string& path) {
  std::ifstream in(std::string(GPUCHECK_FIXTURES_DIR) + "/" + path);
  return render(nlohmann::json::parse(in), Format::kPrometheus);
}

// dcgm-exporter's labels of GPU 0 of the 2-GPU machine, as its DCGM_FI_* series carry them.
const std::string kH100Gpu0 =
    "gpu=\"0\",UUID=\"GPU-e7e58bd5-923b-52b2-4a70-e1875011ea3a\",pci_bus_id=\"00000000:00:06.0\","
    "device=\"nvidia0\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"vm\"";

// The 2-GPU machine's probe: NVML's readings as gauges in base units, and one UUID per GPU
// whether CUDA or NVIDIA's OpenCL platform saw it.
TEST(PrometheusProbe, GpuReadingsAndOneUuidPerGpu) {
  const std::string text = render_fixture("views/probe_h100x2.json");
  const std::string g0 = kH100Gpu0 + ",gpucheck_device=\"cuda0\"";
  EXPECT_THAT(text, HasSubstr(kH100Gpu0 + ",gpucheck_device=\"opencl1\""));
  EXPECT_THAT(text, Not(HasSubstr("UUID=\"e7e58bd5")));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_temperature_celsius{" + g0 + "} 34"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_power_limit_watts{gpu=\"1\""));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_memory_total_bytes{" + g0 + "} 85520809984"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_clock_max_hertz{" + g0 + ",clock=\"sm\"} 1980000000"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_pcie_link_generation{" + g0 + ",link=\"max\"} 5"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_pcie_link_width_lanes{gpu=\"1\""));
  EXPECT_THAT(text,
              HasSubstr("gpucheck_gpu_ecc_errors{" + g0 + ",counter=\"volatile_uncorrected\"} 0"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_remapped_rows{" + g0));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_power_draw_watts{" + g0 + "} 70."));
  // provenance.time 2026-11-26T11:07:22Z
  EXPECT_THAT(text,
              HasSubstr("gpucheck_last_run_timestamp_seconds{command=\"probe\"} 1795691242\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpucheck_run_duration_seconds")));
}

// The counters dcgm-exporter leaves off by default, where the probe read them: the clocks event
// reasons (NVML's bit mask and one series per reason named), each NVLink's error counters and
// the PCIe replays.
TEST(PrometheusProbe, ClocksEventReasonsAndNvlinkErrorCounters) {
  const std::string text = render_fixture("doctor/probe_h100x2.json");
  EXPECT_THAT(text, HasSubstr("# TYPE gpucheck_gpu_clocks_event_reasons gauge\n"));
  EXPECT_THAT(text, ::testing::ContainsRegex("gpucheck_gpu_clocks_event_reasons\\{gpu=\"0\",[^}]*"
                                             "gpucheck_device=\"cuda0\"\\} 1\n"));
  EXPECT_THAT(text,
              ::testing::ContainsRegex("gpucheck_gpu_clocks_event_reason\\{gpu=\"0\",[^}]*"
                                       "gpucheck_device=\"cuda0\",reason=\"gpu_idle\"\\} 1\n"));
  for (const char* counter : {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"})
    EXPECT_THAT(text, ::testing::ContainsRegex(
                          std::string("gpucheck_gpu_nvlink_errors\\{gpu=\"1\",[^}]*"
                                      "gpucheck_device=\"cuda1\",link=\"0\",counter=\"") +
                          counter + "\"\\} 0\n"))
        << counter;
  EXPECT_THAT(text, Not(HasSubstr("DCGM_FI_")));
  // PCIe replays where the probe read them (the fixture's NVML predates the read).
  std::ifstream in(std::string(GPUCHECK_FIXTURES_DIR) + "/doctor/probe_h100x2.json");
  nlohmann::json doc = nlohmann::json::parse(in);
  for (auto& b : doc["backends"])
    if (b["name"] == "cuda") b["devices"][0]["properties"]["nvml"]["pcie_replay_count"] = 3;
  EXPECT_THAT(render(doc, Format::kPrometheus),
              ::testing::ContainsRegex("gpucheck_gpu_pcie_replays\\{gpu=\"0\",[^}]*"
                                       "gpucheck_device=\"cuda0\"\\} 3\n"));
  EXPECT_THAT(text, Not(HasSubstr("gpucheck_gpu_pcie_replays")));
}

// Every series about a device joins dcgm-exporter's on its labels where the device is an NVIDIA
// GPU (CUDA's or NVIDIA's OpenCL platform's), and carries none of them where it is not (the CPU,
// pocl): a join must not match what is not that GPU.
TEST(PrometheusProbe, DcgmLabelsOnEveryNvidiaSeriesAndNoneElsewhere) {
  const std::string text = render_fixture("views/probe_h100x2.json");
  const std::string gpu1 =
      "gpu=\"1\",UUID=\"GPU-30660c06-d8fb-8471-800c-a49535995ada\",pci_bus_id=\"00000000:00:07.0\","
      "device=\"nvidia1\",modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"vm\"";
  const std::vector<std::pair<std::string, std::string>> nvidia{
      {"cuda0", kH100Gpu0}, {"opencl1", kH100Gpu0}, {"cuda1", gpu1}, {"opencl2", gpu1}};
  int per_gpu = 0, other = 0;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) {
    EXPECT_EQ(line.rfind("DCGM_", 0), std::string::npos) << line;
    if (line.rfind("gpucheck_gpu_", 0) == 0) {
      EXPECT_THAT(line, HasSubstr("gpucheck_device=\"")) << "a GPU reading without its device";
    }
    for (const auto& [id, labels] : nvidia)
      if (line.find("gpucheck_device=\"" + id + "\"") != std::string::npos) {
        ++per_gpu;
        EXPECT_THAT(line, HasSubstr("{" + labels + ",gpucheck_device=\"" + id + "\"")) << line;
      }
    for (const char* id : {"cpu", "opencl0"})
      if (line.find("gpucheck_device=\"" + std::string(id) + "\"") != std::string::npos) {
        ++other;
        for (const char* dcgm : {"gpu", "UUID", "pci_bus_id", "device", "modelName", "hostname"})
          for (const char* sep : {"{", ","})
            EXPECT_THAT(line, Not(HasSubstr(sep + std::string(dcgm) + "=\""))) << line;
      }
  }
  EXPECT_GE(per_gpu, 4 * 1 + 2 * 13);  // device_info of each, and the readings of both GPUs
  EXPECT_EQ(other, 2);                 // the CPU's and pocl's device_info
}

// The H200 seen by OpenCL alone: no NVML reading, so no NVML index to put in gpu and device;
// the rest of dcgm-exporter's labels from OpenCL's UUID, bus id and name.
TEST(PrometheusProbe, NvidiaGpuWithoutNvmlHasNoIndexLabels) {
  const std::string text = render_fixture("doctor/probe_gpu_h200.json");
  EXPECT_THAT(text,
              HasSubstr("gpucheck_device_info{UUID=\"GPU-0a3df10b-faf5-5512-4744-"
                        "8c9f8b5bb5da\",pci_bus_id=\"00000000:00:06.0\",modelName=\"NVIDIA "
                        "H200\",hostname=\"vm\",gpucheck_device=\"opencl1\",backend=\"opencl\""));
  EXPECT_THAT(text, Not(HasSubstr("gpu=\"")));
  EXPECT_THAT(text, Not(HasSubstr("nvidia0")));
}

// A broken driver: NVML still reads the GPU, and the readings are exported.
TEST(PrometheusProbe, NvmlReadingsWithoutCuda) {
  const std::string text = render_fixture("doctor/probe_cuda_fake_nvml.json");
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_temperature_celsius{gpu=\"0\","
                              "UUID=\"GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab\","
                              "pci_bus_id=\"00000000:17:00.0\",device=\"nvidia0\","
                              "modelName=\"NVIDIA H100 80GB HBM3\",hostname=\"vm\","
                              "gpucheck_device=\"nvml0\"} 34"));
}

}  // namespace

// The Prometheus view: escaping, one sample per series, and the metrics of each document kind.
#include "report/prometheus.h"
#include "report/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

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
              HasSubstr("gpucheck_bench_throughput_bytes_per_second{device=\"cpu\",op=\"exp\","
                        "dtype=\"f32\",shape=\"n=1024\",transfers=\"excluded\",impl=\"avx2\"} "
                        "4000000000\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_throughput_flop_per_second{device=\"cuda0\","
                              "uuid=\"GPU-1234\",op=\"gemm\",dtype=\"f16\",shape=\"64x64x64\","
                              "transfers=\"included\",impl=\"cublaslt\"} 2500000000000\n"));
  EXPECT_THAT(text, HasSubstr("name=\"GPU \\\"q\\\" back\\\\slash\\nnewline\""));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_records{device=\"cuda0\",status=\"skipped\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_records{device=\"cuda0\",status=\"ok\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_bench_speedup_vs_cpu{device=\"cuda0\""));
  // No raw newline inside any sample line: every line is a comment or name{labels} value.
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    std::string line = text.substr(start, end - start);
    EXPECT_TRUE(line.rfind("# ", 0) == 0 || line.rfind("gpucheck_", 0) == 0) << line;
    start = end + 1;
  }
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
                              "kind=\"bench\",device=\"cuda0\",verdict=\"unmet\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_qualify_measured{profile=\"ci\",requirement=\"gemm_f16\","
                              "kind=\"bench\",device=\"cuda0\",unit=\"TFLOP/s\"} 12.5\n"));
  EXPECT_THAT(text, Not(HasSubstr("requirement=\"driver\",kind=\"backend\",unit")));  // a string
  EXPECT_THAT(text, HasSubstr("gpucheck_sweep_break_even_size{device=\"cuda0\",op=\"gemm\","
                              "dtype=\"f32\",transfers=\"excluded\"} 512\n"));
  EXPECT_THAT(text, HasSubstr("gpucheck_sweep_break_even_found{device=\"cuda0\",op=\"gemm\","
                              "dtype=\"f32\",transfers=\"included\"} 0\n"));
}

// The 2-GPU machine's probe: NVML's readings as gauges in base units, and one uuid per GPU
// whether CUDA or NVIDIA's OpenCL platform saw it.
TEST(PrometheusProbe, GpuReadingsAndOneUuidPerGpu) {
  std::ifstream in(std::string(GPUCHECK_FIXTURES_DIR) + "/views/probe_h100x2.json");
  const std::string text = render(nlohmann::json::parse(in), Format::kPrometheus);
  const std::string u0 = "uuid=\"GPU-e7e58bd5-923b-52b2-4a70-e1875011ea3a\"";
  EXPECT_THAT(text, HasSubstr("device=\"cuda0\"," + u0));
  EXPECT_THAT(text, HasSubstr("device=\"opencl1\"," + u0));
  EXPECT_THAT(text, Not(HasSubstr("uuid=\"e7e58bd5")));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_temperature_celsius{device=\"cuda0\"," + u0 + "} 34"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_power_limit_watts{device=\"cuda1\""));
  EXPECT_THAT(
      text, HasSubstr("gpucheck_gpu_memory_total_bytes{device=\"cuda0\"," + u0 + "} 85520809984"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_clock_max_hertz{device=\"cuda0\"," + u0 +
                              ",clock=\"sm\"} 1980000000"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_pcie_link_generation{device=\"cuda0\"," + u0 +
                              ",link=\"max\"} 5"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_pcie_link_width_lanes{device=\"cuda1\""));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_ecc_errors{device=\"cuda0\"," + u0 +
                              ",counter=\"volatile_uncorrected\"} 0"));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_remapped_rows{device=\"cuda0\""));
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_power_draw_watts{device=\"cuda0\"," + u0 + "} 70."));
}

// A broken driver: NVML still reads the GPU, and the readings are exported.
TEST(PrometheusProbe, NvmlReadingsWithoutCuda) {
  std::ifstream in(std::string(GPUCHECK_FIXTURES_DIR) + "/doctor/probe_cuda_fake_nvml.json");
  const std::string text = render(nlohmann::json::parse(in), Format::kPrometheus);
  EXPECT_THAT(text, HasSubstr("gpucheck_gpu_temperature_celsius{device=\"nvml0\","
                              "uuid=\"GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab\"} 34"));
}

}  // namespace

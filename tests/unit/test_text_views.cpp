// Golden outputs of the table views at 80 and 120 columns, for saved documents of each command
// (tests/fixtures/views/README.md says where each came from), and the promises every view keeps:
// no line longer than the width, the closing summary line, and a first screen that holds the
// GPU names, the driver version and every FAIL.
//
// GPUCHECK_UPDATE_GOLDEN=1 rewrites the golden files from the current code (then read the diff).
#include "report/render.h"
#include "report/units.h"
#include "report/views.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace gpucheck::report;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kViews = std::string(GPUCHECK_FIXTURES_DIR) + "/views/";
const std::string kDoctor = std::string(GPUCHECK_FIXTURES_DIR) + "/doctor/";
constexpr std::size_t kScreen = 24;  // lines of a terminal's first screen

nlohmann::json load(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << path;
  return nlohmann::json::parse(in);
}

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

struct Golden {
  const char* name;                       // golden files: <name>.w80.txt, <name>.w120.txt
  std::string document;                   // the saved document
  std::vector<std::string> first_screen;  // text the first screen must hold
  std::string last_line;                  // the closing summary line starts with this
};

std::vector<Golden> goldens() {
  return {
      {"probe_h200",
       kDoctor + "probe_gpu_h200.json",
       {"NVIDIA H200", "driver 580.159.04"},
       "probe: 2 of 4 backends available, 3 devices (1 GPU)"},
      {"probe_pocl",
       kDoctor + "base_probe.json",
       {"opencl0", "pocl", "no GPU found"},
       "probe: 2 of 4 backends available, 2 devices (0 GPUs), 0 problems"},
      {"doctor_findings",
       kViews + "doctor_findings.json",
       {"FAIL: opencl_enumeration"},
       "42 checks:"},
      {"bench_pocl", kViews + "bench_pocl.json", {"opencl0", "cpu"}, "bench: "},
      {"qualify_cpu", kViews + "qualify_cpu.json", {"MET", "cpu_backend"}, "qualify: met"},
      {"compare_pocl", kViews + "compare_pocl.json", {"base", "new"}, "compare: "},
      // The 2-GPU machine (2x H100 80GB HBM3, driver 580.159.04).
      {"probe_h100x2",
       kViews + "probe_h100x2.json",
       {"2\xC3\x97 NVIDIA H100 80GB HBM3", "driver 580.159.04", "cuDNN 9.14.0"},
       "probe: 3 of 4 backends available, 6 devices (2 GPUs)"},
      {"doctor_h100x2",
       kViews + "doctor_h100x2.json",
       {"2\xC3\x97 NVIDIA H100 80GB HBM3", "driver 580.159.04",
        "WARN: opencl_loader_copies, opencl_vendor_registration"},
       "42 checks: 31 passed, 7 info, 2 warnings, 0 failed, 2 skipped"},
      {"bench_h100x2",
       kViews + "bench_h100x2.json",
       {"2\xC3\x97 NVIDIA H100 80GB HBM3", "cuda0", "cuda1"},
       "bench: 152 records: 152 ok"},
      // The multi-GPU facts of the same machine: NVLink, the GPU pairs and their topology matrix.
      {"probe_h100x2_nvlink",
       kDoctor + "probe_h100x2.json",
       {"2\xC3\x97 NVIDIA H100 80GB HBM3", "driver 580.159.04"},
       "probe: 3 of 4 backends available"},
      {"qualify_h100x2",
       kViews + "qualify_h100x2.json",
       {"2\xC3\x97 NVIDIA H100 80GB HBM3", "driver 580.159.04", "MET"},
       "qualify: met (19 met, 0 unmet, 0 skipped)"},
  };
}

class Views : public ::testing::TestWithParam<std::size_t> {};

TEST_P(Views, MatchGoldenAndKeepTheirPromises) {
  const std::size_t width = GetParam();
  const bool update = std::getenv("GPUCHECK_UPDATE_GOLDEN") != nullptr;
  for (const auto& g : goldens()) {
    SCOPED_TRACE(g.name);
    RenderOptions o;
    o.width = width;
    const std::string text = render(load(g.document), Format::kTable, o);
    const std::string golden = kViews + g.name + ".w" + std::to_string(width) + ".txt";
    if (update) std::ofstream(golden, std::ios::binary) << text;
    EXPECT_EQ(text, read(golden)) << "rendered differently from " << golden;
    const auto lines = lines_of(text);
    ASSERT_FALSE(lines.empty());
    for (const auto& l : lines) EXPECT_LE(columns(l), width) << l;
    std::string screen;
    for (std::size_t i = 0; i < std::min(kScreen, lines.size()); ++i) screen += lines[i] + "\n";
    for (const auto& want : g.first_screen) EXPECT_THAT(screen, HasSubstr(want));
    // The closing summary line is the last, or followed only by doctor's recap of its problems
    // (one line each, so they are on the screen when the command returns).
    const auto summary = std::find_if(lines.rbegin(), lines.rend(), [&](const std::string& l) {
      return l.rfind(g.last_line, 0) == 0;
    });
    ASSERT_NE(summary, lines.rend()) << "no line starts with " << g.last_line;
    for (auto it = lines.rbegin(); it != summary; ++it)
      EXPECT_THAT(*it, ::testing::MatchesRegex("(  (FAIL|WARN)  .*)?")) << "after the summary";
    EXPECT_EQ(text.find('\x1b'), std::string::npos) << "colour without --color";
  }
}

INSTANTIATE_TEST_SUITE_P(Widths, Views, ::testing::Values(80, 120));

// Every FAIL of a doctor document is named on the first screen, however long the list.
TEST(Views, DoctorNamesEveryFailOnTheFirstScreen) {
  auto doc = load(kViews + "doctor_findings.json");
  for (auto& c : doc["checks"]) c["status"] = "fail";
  RenderOptions o;
  o.width = 80;
  auto lines = lines_of(render(doc, Format::kTable, o));
  std::string screen;
  for (std::size_t i = 0; i < kScreen; ++i) screen += lines[i] + "\n";
  for (const auto& c : doc["checks"]) EXPECT_THAT(screen, HasSubstr(c["id"].get<std::string>()));
}

// The markdown view of every document: titles are headings, tables name their columns and
// leave out the ones empty in every row, and no list item has an empty bold label.
TEST(Views, MarkdownHasHeadingsNamedColumnsAndNoEmptyLabels) {
  for (const auto& g : goldens()) {
    SCOPED_TRACE(g.name);
    const std::string md = render(load(g.document), Format::kMarkdown, RenderOptions{});
    EXPECT_EQ(md.find("****"), std::string::npos);
    const auto lines = lines_of(md);
    for (std::size_t i = 0; i + 1 < lines.size(); ++i) {
      if (lines[i + 1].rfind("|---", 0) != 0) continue;
      // The header row above a delimiter row: every column named.
      EXPECT_EQ(lines[i].find("|  |"), std::string::npos) << lines[i];
      // Each column has a cell somewhere below.
      const auto columns_of = [](const std::string& row) {
        std::vector<std::string> cells;
        for (std::size_t at = 1; at < row.size();) {
          const std::size_t end = row.find(" |", at);
          if (end == std::string::npos) break;
          cells.push_back(row.substr(at, end - at));
          at = end + 2;
        }
        return cells;
      };
      const auto header = columns_of(lines[i]);
      std::vector<bool> filled(header.size(), false);
      for (std::size_t j = i + 2; j < lines.size() && lines[j].rfind("|", 0) == 0; ++j) {
        const auto cells = columns_of(lines[j]);
        for (std::size_t c = 0; c < cells.size() && c < filled.size(); ++c)
          filled[c] = filled[c] || cells[c].find_first_not_of(' ') != std::string::npos;
      }
      for (std::size_t c = 0; c < filled.size(); ++c) EXPECT_TRUE(filled[c]) << lines[i];
    }
  }
  const std::string bench =
      render(load(kViews + "bench_pocl.json"), Format::kMarkdown, RenderOptions{});
  EXPECT_THAT(bench, ::testing::ContainsRegex("\n### exp \\("));
}

// doctor's text view ends on its count and then each FAIL and WARN with its fix, one line each.
TEST(Views, DoctorEndsOnEachProblemWithItsFix) {
  const auto doc = load(kViews + "doctor_h100x2.json");
  RenderOptions o;
  o.width = 80;
  const auto lines = lines_of(render(doc, Format::kTable, o));
  ASSERT_GE(lines.size(), 3u);
  EXPECT_THAT(lines[lines.size() - 3], ::testing::StartsWith("42 checks: "));
  EXPECT_THAT(lines[lines.size() - 2],
              ::testing::MatchesRegex("  WARN  opencl_loader_copies +fix: .*"));
  EXPECT_THAT(lines[lines.size() - 1],
              ::testing::MatchesRegex("  WARN  opencl_vendor_registration +fix: .*"));
}

// probe's problem list agrees with doctor: what has nothing to serve on this machine's PCI bus
// (CUDA without an NVIDIA GPU, Mesa's OpenCL without an AMD or Intel one) is no problem; where
// the document did not see the bus, every such finding stays.
TEST(Views, ProbeProblemsLeaveOutWhatHasNothingToServe) {
  auto doc = load(kDoctor + "base_probe.json");
  doc["backends"][2] = {{"name", "cuda"},
                        {"status", "unavailable"},
                        {"reason", "no NVIDIA driver: libcuda.so.1: cannot open shared object"}};
  doc["backends"][1]["platforms"].push_back(
      {{"name", "rusticl"}, {"family", "mesa_rusticl"}, {"devices", nlohmann::json::array()}});
  RenderOptions o;
  o.width = 120;
  const auto problems_of = [&](const nlohmann::json& d) {
    const std::string text = render(d, Format::kTable, o);
    return text.substr(text.find("\nproblems"));
  };
  const std::string unseen = problems_of(doc);
  EXPECT_THAT(unseen, HasSubstr("cuda unavailable: no NVIDIA driver"));
  EXPECT_THAT(unseen, HasSubstr("opencl platform rusticl has no devices"));
  doc["host"]["display_devices"] = {{{"pci_bus_id", "0000:00:02.0"}, {"vendor", "other"}}};
  const std::string none = problems_of(doc);
  EXPECT_THAT(none, HasSubstr("problems: none found"));
  EXPECT_THAT(none, HasSubstr(", 0 problems"));
  doc["host"]["display_devices"].push_back({{"pci_bus_id", "0000:17:00.0"}, {"vendor", "nvidia"}});
  const std::string nvidia = problems_of(doc);
  EXPECT_THAT(nvidia, HasSubstr("cuda unavailable: no NVIDIA driver"));
  EXPECT_THAT(nvidia, ::testing::Not(HasSubstr("rusticl")));
  doc["host"]["display_devices"].push_back({{"pci_bus_id", "0000:65:00.0"}, {"vendor", "intel"}});
  EXPECT_THAT(problems_of(doc), HasSubstr("opencl platform rusticl has no devices"));
}

// pocl's and lavapipe's devices are the CPU under another API: no GPU words, no card hints.
TEST(Views, CpuImplementationsAreNotCalledGpus) {
  const std::string text =
      render(load(kViews + "bench_pocl.json"), Format::kTable, RenderOptions{});
  EXPECT_THAT(text, HasSubstr("Devices versus the CPU"));
  for (const char* gpu_words : {"GPU versus CPU", "keep a GPU busy", "measures the card"})
    EXPECT_THAT(text, ::testing::Not(HasSubstr(gpu_words)));
  for (const char* name :
       {"pthread-skylake-avx512-AMD EPYC 7B13", "llvmpipe (LLVM 15.0.6, 256 bits)",
        "Intel(R) Xeon(R) Processor @ 2.50GHz"})
    for (const char* backend : {"opencl", "vulkan"})
      EXPECT_FALSE(is_gpu_record({{"backend", backend}, {"device_name", name}})) << name;
  for (const char* name :
       {"NVIDIA H200", "AMD Radeon RX 7900 XTX", "gfx1030", "Intel(R) Arc(TM) A770 Graphics"})
    EXPECT_TRUE(is_gpu_record({{"backend", "vulkan"}, {"device_name", name}})) << name;
}

// The share of the limit sits beside the throughput; a small record that reaches 70 % of its
// limit is no longer marked too small to keep the GPU busy.
TEST(Views, BenchTablePrintsTheShareOfTheLimit) {
  nlohmann::json doc = load(kViews + "bench_h100x2.json");
  nlohmann::json one = nlohmann::json::array();
  for (const auto& r : doc["results"])
    if (r["device"] == "cuda0" && r["op"] == "gemm" && r["dtype"] == "bf16" &&
        r["transfers"] == "excluded")
      one.push_back(r);
  ASSERT_EQ(one.size(), 1u);
  doc["results"] = one;
  RenderOptions o;
  o.width = 120;
  EXPECT_THAT(render(doc, Format::kTable, o), HasSubstr("too small to keep a GPU busy"));
  doc["results"][0]["limit"] = {{"value", 28.0}, {"unit", "TFLOP/s"}, {"fraction", 0.78}};
  const std::string text = render(doc, Format::kTable, o);
  EXPECT_THAT(text, HasSubstr("of limit"));
  EXPECT_THAT(text, HasSubstr(" 78%"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("too small to keep a GPU busy")));
}

// A conv table whose shapes differ only in batch and layout says the rest once and each row its
// N; shapes that differ in more keep their full text on each row.
TEST(Views, ConvTablesSayTheCommonShapeOnce) {
  nlohmann::json doc = load(kViews + "bench_h100x2.json");
  nlohmann::json conv = nlohmann::json::array();
  for (const auto& r : doc["results"])
    if (r["op"] == "conv" && r["dtype"] == "f32") conv.push_back(r);
  ASSERT_GE(conv.size(), 2u);
  doc["results"] = conv;
  RenderOptions o;
  o.width = 100;
  std::string text = render(doc, Format::kTable, o);
  EXPECT_THAT(text, HasSubstr("an N×64×56×56 input, 64 filters 3×3, stride 1, pad 1"));
  EXPECT_THAT(text, HasSubstr("N=8 nchw"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("f32    8,64,56,56,64,3,3,1,1")));
  doc["results"][0]["shape"]["c"] = 32;
  text = render(doc, Format::kTable, o);
  EXPECT_THAT(text, ::testing::Not(HasSubstr("filters")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("N=8")));
  EXPECT_THAT(text, HasSubstr("f32    8,32,56,56,64,3,3,1,1 nchw"));
}

// HTML's results table and CSV carry the share of the limit where the record has one; a record
// whose limit is a reason shows none (CSV: the reason in its own column).
TEST(Views, HtmlAndCsvCarryTheShareOfTheLimitAndNoneForAReason) {
  const auto doc = load(kViews + "bench_pocl.json");
  const std::string html = render(doc, Format::kHtml, {});
  EXPECT_THAT(html, HasSubstr("<th>of limit</th>"));
  EXPECT_THAT(html, HasSubstr(">27%<"));  // cpu gemm f32: 0.2706 of its limit
  EXPECT_THAT(html, HasSubstr(">33%<"));  // cpu gemm f64
  const std::string csv = render(doc, Format::kCsv, {});
  EXPECT_THAT(csv, HasSubstr(",throughput,throughput_unit,limit,limit_unit,fraction_of_limit,"
                             "limit_reason,speedup_vs_cpu,"));
  std::istringstream rows(csv);
  std::size_t exp_rows = 0;
  for (std::string row; std::getline(rows, row);) {
    if (row.rfind("cpu,", 0) != 0) continue;
    if (row.find(",exp,") != std::string::npos && row.find(",excluded,ok,") != std::string::npos) {
      ++exp_rows;
      EXPECT_THAT(row, HasSubstr(",GB/s,,,,\"the CPU's memory bandwidth is not knowable")) << row;
    }
    if (row.find(",gemm,") != std::string::npos && row.find(",f32,") != std::string::npos &&
        row.find(",excluded,ok,") != std::string::npos) {
      EXPECT_THAT(row, HasSubstr(",TFLOP/s,0.26829209600000004,TFLOP/s,0.27064986007764313,,"));
    }
  }
  EXPECT_EQ(exp_rows, 2u);
}

// A record reads the same in every view for people: the terminal's table and HTML both write
// its throughput and time in report/units.h's units.
TEST(Views, ARecordReadsTheSameInTheTableAndInHtml) {
  const auto doc = load(kViews + "bench_pocl.json");
  RenderOptions o;
  o.width = 200;
  const std::string table = render(doc, Format::kTable, o);
  const std::string html = render(doc, Format::kHtml, o);
  std::size_t seen = 0;
  for (const auto& r : doc["results"]) {
    // The table's throughput column is the device-time record's (a +copies record shows its
    // time beside it).
    if (r["status"] != "ok" || r.value("transfers", "") != "excluded" ||
        !r.contains("throughput") || !r["time_s"].is_object())
      continue;
    const std::string rate = format_rate(r["throughput"]["value"].get<double>(),
                                         r["throughput"]["unit"].get<std::string>());
    EXPECT_THAT(table, HasSubstr(rate));
    EXPECT_THAT(html, HasSubstr(">" + rate + "<")) << rate;
    EXPECT_THAT(html, HasSubstr(">" + format_seconds(r["time_s"]["median"].get<double>()) + "<"));
    ++seen;
  }
  EXPECT_GT(seen, 5u);
  EXPECT_THAT(html, ::testing::Not(HasSubstr("median_ms")));
}

// HTML pages answer first: doctor's and compare's verdict (the counts, each problem or regression
// by name) before any table, compare's regressions at the top of its table in their own colour.
TEST(Views, HtmlPagesAnswerFirst) {
  const std::string doctor =
      render(load(kViews + "doctor_findings.json"), Format::kHtml, RenderOptions{});
  const auto banner = doctor.find("<div class=\"verdict bad\">");
  ASSERT_NE(banner, std::string::npos);
  EXPECT_LT(banner, doctor.find("<table"));
  EXPECT_LT(doctor.find("<li class=\"fail\">FAIL opencl_enumeration: "), doctor.find("<table"));
  EXPECT_THAT(doctor, HasSubstr("td.fail,td.failed,td.mismatch,td.unmet,td.regression{"));
  EXPECT_THAT(doctor, HasSubstr("td.skip,td.skipped"));  // SKIP no longer shares WARN's colour
  const std::string compare =
      render(load(kViews + "compare_pocl.json"), Format::kHtml, RenderOptions{});
  const auto table = compare.find("<table class=\"comparison\">");
  ASSERT_NE(table, std::string::npos);
  EXPECT_LT(compare.find("<li class=\"regression\">REGRESSION gemm f64 on "), table);
  // The first data row of the comparison is a regression, marked for its colour.
  const auto first_row = compare.find("<tr><td", table);
  EXPECT_EQ(compare.find("<tr><td class=\"regression\">REGRESSION</td>", table), first_row);
  // The probe page reads like the terminal: its count line first, then the backends and the
  // devices by name, and the document's raw keys folded below.
  const std::string probe =
      render(load(kViews + "probe_h100x2.json"), Format::kHtml, RenderOptions{});
  const auto verdict = probe.find(
      "<div class=\"verdict warn\">\n<p>probe: 3 of 4 backends available, 6 devices (2 GPUs), 2 "
      "problems</p>");
  ASSERT_NE(verdict, std::string::npos) << probe.substr(0, 3000);
  EXPECT_LT(verdict, probe.find("<h2>backends</h2>"));
  EXPECT_LT(probe.find("<h2>backends</h2>"), probe.find("<h2>devices</h2>"));
  EXPECT_THAT(probe, HasSubstr("<tr><th>cuda0</th><td><strong>NVIDIA H100 80GB HBM3</strong><br>"
                               "GPU-e7e58bd5-923b-52b2-4a70-e1875011ea3a"));
  EXPECT_LT(probe.find("<h2>devices</h2>"), probe.find("<details"));
  EXPECT_THAT(probe, Not(HasSubstr("<details open>")));
  EXPECT_THAT(probe, Not(HasSubstr("Every field: --full")));  // the terminal's hint
}

TEST(Views, ColourOnlyWhenAsked) {
  RenderOptions o;
  o.color = true;
  const std::string text = render(load(kViews + "doctor_findings.json"), Format::kTable, o);
  EXPECT_THAT(text, HasSubstr("\x1b[32mPASS\x1b[0m"));
  EXPECT_THAT(text, HasSubstr("\x1b[1;31mFAIL\x1b[0m"));
}

TEST(Views, DoctorDetailsShowEveryChecksEvidence) {
  auto doc = load(kViews + "doctor_findings.json");
  RenderOptions o;
  o.details = true;
  const std::string text = render(doc, Format::kTable, o);
  for (const auto& c : doc["checks"])
    for (const auto& e : c["evidence"]) {
      // Long evidence wraps (a long word is split); its first word's start is on one line.
      std::string head = e.get<std::string>();
      head = head.substr(0, std::min<std::size_t>(head.find(' '), 20));
      EXPECT_THAT(text, HasSubstr(head)) << c["id"];
    }
}

// The machine line names every backend's GPUs, each GPU once by its earliest face: an AMD card
// only Vulkan reaches is named beside a CUDA GPU, whose OpenCL and Vulkan faces are not; CPU
// implementations (pocl, lavapipe) are no GPU.
TEST(Views, MachineLineNamesEveryBackendsGpusOnce) {
  const nlohmann::json doc = nlohmann::json::parse(R"js({"backends": [
    {"name": "cuda", "status": "available", "devices": [
      {"device": "cuda0", "device_name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0"}]},
    {"name": "opencl", "status": "available", "devices": [
      {"device": "opencl0", "device_name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}}},
      {"device": "opencl1", "device_name": "pthread-cpu",
       "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_CPU"]}}}]},
    {"name": "vulkan", "status": "available", "devices": [
      {"device": "vulkan0", "device_name": "NVIDIA H200", "pci_bus_id": "0000:19:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan1", "device_name": "AMD Radeon RX 7900 XTX", "pci_bus_id": "0000:c3:00.0",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU"}},
      {"device": "vulkan2", "device_name": "llvmpipe",
       "properties": {"device_type": "VK_PHYSICAL_DEVICE_TYPE_CPU"}}]}]})js");
  const std::vector<std::string> both{"NVIDIA H200", "AMD Radeon RX 7900 XTX"};
  EXPECT_EQ(machine_items(doc), both);
  nlohmann::json vulkan_only = doc;
  vulkan_only["backends"].erase(0);
  vulkan_only["backends"].erase(0);
  EXPECT_EQ(machine_items(vulkan_only), both);
  vulkan_only["backends"][0]["devices"].erase(0);
  vulkan_only["backends"][0]["devices"].erase(0);
  EXPECT_EQ(machine_items(vulkan_only), std::vector<std::string>{"no GPU found"});
}

// A saved 2-GPU probe document: its summary fits one screen and a half (45 lines at the width
// of a pipe), names both GPUs with their UUIDs and pairs each with its OpenCL device.
TEST(Views, TwoGpuProbeSummaryFitsFortyFiveLines) {
  RenderOptions o;  // width 100, as when stdout is not a terminal
  const std::string text = render(load(kViews + "probe_h100x2.json"), Format::kTable, o);
  const auto lines = lines_of(text);
  EXPECT_LE(lines.size(), 45u) << text;
  for (const char* want :
       {"GPU-e7e58bd5-923b-52b2-4a70-e1875011ea3a", "GPU-30660c06-d8fb-8471-800c-a49535995ada",
        "same GPU as opencl1", "opencl2  NVIDIA H100 80GB HBM3: same GPU as cuda1", "cuDNN 9.14.0",
        "NVML 13.580.159.04", "PCIe Gen5 x16"})
    EXPECT_THAT(text, HasSubstr(want));
}

}  // namespace

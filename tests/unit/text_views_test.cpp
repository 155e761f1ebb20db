// Golden outputs of the table views at 80 and 120 columns, for saved documents of each command
// (tests/fixtures/views/README.md says where each came from), and the promises every view keeps:
// no line longer than the width, the closing summary line, and a first screen that holds the
// GPU names, the driver version and every FAIL.
//
// GPUCHECK_UPDATE_GOLDEN=1 rewrites the golden files from the current code (then read the diff).
#include "report/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace {

using namespace gpucheck::report;
using ::testing::HasSubstr;

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
    std::string last = lines.back();
    for (auto it = lines.rbegin(); it != lines.rend() && last.empty(); ++it) last = *it;
    EXPECT_EQ(last.rfind(g.last_line, 0), 0u) << "last line: " << last;
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

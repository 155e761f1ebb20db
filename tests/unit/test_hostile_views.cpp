// Hostile documents and runs through the views and verdicts: control characters in a loaded
// document never reach the terminal raw, a fleet's zero MAD and repeated hostnames hide no slow
// node, a stress child stopped alone fails, the stress document's CSV and Prometheus views carry
// the verdict, and an .icd FIFO is named and kept from the loader.
#include "../fixtures/fleet/make_fleet.h"
#include "core/outliers.h"
#include "report/fleet.h"
#include "report/render.h"
#include "report/text_layout.h"
#include "stress/verdict.h"
#if GPUCHECK_HAVE_OPENCL
#include "backends/opencl/icd_guard.h"
#include "backends/opencl/icd_inventory.h"
#endif

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace gpucheck {
namespace {

using ::testing::HasSubstr;
using Json = nlohmann::json;
namespace fs = std::filesystem;

// Bytes a terminal acts on: C0 controls but the line feed, DEL, C1 controls (UTF-8 C2 80-9F),
// bidi overrides and isolates, line and paragraph separators.
std::string raw_controls(const std::string& text) {
  std::string found;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = i + 1 < text.size() ? static_cast<unsigned char>(text[i + 1]) : 0;
    const auto third = i + 2 < text.size() ? static_cast<unsigned char>(text[i + 2]) : 0;
    if ((c < 0x20 && c != '\n') || c == 0x7F || (c == 0xC2 && next >= 0x80 && next <= 0x9F) ||
        (c == 0xE2 && next == 0x80 &&
         (third == 0x8E || third == 0x8F || (third >= 0xA8 && third <= 0xAE))) ||
        (c == 0xE2 && next == 0x81 && third >= 0xA6 && third <= 0xA9))
      found += fmt::format("{:02x}@{} ", c, i);
  }
  return found;
}

// Lines that start with `text`: a forged line of the report.
std::size_t lines_starting(const std::string& out, const std::string& text) {
  std::istringstream lines(out);
  std::size_t n = 0;
  for (std::string l; std::getline(lines, l);) n += l.starts_with(text) ? 1 : 0;
  return n;
}

const std::string kClearAndRetitle = "evil\x1b[2J\x1b]0;pwned\x07";
const std::string kForgedLine = "ok\nfleet: 0 outliers, 99 nodes";
const std::string kBidiAndC1 =
    "left\xE2\x80\xAEright|pipe\xC2\x9B"
    "31m\xE2\x80\xA8sep";

TEST(HostileViews, PrintableEscapesWhatATerminalActsOnAndKeepsText) {
  using report::printable;
  EXPECT_EQ(printable(kClearAndRetitle), "evil\\x1b[2J\\x1b]0;pwned\\x07");
  EXPECT_EQ(printable(kForgedLine), "ok\\x0afleet: 0 outliers, 99 nodes");
  EXPECT_EQ(printable(kBidiAndC1), "left\\u202eright|pipe\\u009b31m\\u2028sep");
  EXPECT_EQ(printable("\x7f\t\r"), "\\x7f\\x09\\x0d");
  EXPECT_EQ(printable("\xE2\x81\xA6iso\xE2\x81\xA9 \xE2\x80\x8F \xD8\x9C"),
            "\\u2066iso\\u2069 \\u200f \\u061c");
  EXPECT_EQ(printable("\xC2\x85"), "\\u0085");  // NEL
  // Printable text of the views stays as it is: ×, µ, …, –, →, é.
  const std::string kept =
      "2\xC3\x97 H100, 3 \xC2\xB5s\xE2\x80\xA6 a\xE2\x80\x93z \xE2\x86\x92 caf\xC3\xA9";
  EXPECT_EQ(printable(kept), kept);
  EXPECT_EQ(printable("bad \xFF byte"), "bad \xEF\xBF\xBD byte");
}

Json hostile_bench(const std::string& host, const std::string& device_name) {
  Json doc = testing::real_bench_document();
  doc["host"]["hostname"] = host;
  for (auto& r : doc["results"]) r["device_name"] = device_name;
  return doc;
}

void expect_safe(const std::string& out, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(raw_controls(out), "");
  EXPECT_EQ(lines_starting(out, "fleet: 0 outliers, 99 nodes"), 0u);
}

TEST(HostileViews, TableAndMarkdownOfABenchDocumentEscapeItsStrings) {
  const Json doc = hostile_bench(kClearAndRetitle + kForgedLine, kBidiAndC1);
  report::RenderOptions o;
  o.width = 160;
  o.details = true;
  const std::string table = report::render(doc, report::Format::kTable, o);
  expect_safe(table, "table");
  EXPECT_THAT(table, HasSubstr("\\x1b[2J"));
  const std::string md = report::render(doc, report::Format::kMarkdown, o);
  expect_safe(md, "markdown");
  // A pipe in a cell does not split the markdown table's row.
  EXPECT_THAT(md, HasSubstr("right\\|pipe"));
}

TEST(HostileViews, TableAndMarkdownOfAFleetEscapeHostnames) {
  std::vector<report::FleetDocument> docs;
  const std::vector<std::string> hosts{kClearAndRetitle, kForgedLine, kBidiAndC1, "node4"};
  auto fleet = testing::make_fleet(4, [](int node, const std::string&, std::size_t) {
    return node == 1 ? 0.5 : 1.0;  // the first (hostile) node is an outlier: in every table
  });
  for (std::size_t i = 0; i < fleet.size(); ++i) {
    fleet[i]["host"]["hostname"] = hosts[i];
    docs.push_back({fmt::format("doc{}.json", i), fleet[i]});
  }
  Json doc{{"schema", "gpucheck/1"}, {"command", "report"}};
  doc["fleet"] = report::fleet_section(docs, report::FleetRules{});
  report::RenderOptions o;
  o.width = 200;
  o.details = true;
  const std::string table = report::render(doc, report::Format::kTable, o);
  expect_safe(table, "table");
  EXPECT_THAT(table, HasSubstr("evil\\x1b[2J"));
  EXPECT_EQ(lines_starting(table, "fleet: 1 outlier, 4 nodes"), 1u) << table;
  expect_safe(report::render(doc, report::Format::kMarkdown, o), "markdown");
}

// Twelve nodes, seven of them identical: the MAD is 0, the z-score undefined, and 12 nodes are
// past the small-fleet rule; a node at a third of the others' speed is still an outlier.
TEST(HostileViews, AFleetWithAZeroMadStillFlagsAThreeTimesSlowNode) {
  const auto docs = testing::make_fleet(12, [](int node, const std::string&, std::size_t) {
    if (node <= 7) return 1.0;
    if (node == 12) return 1.0 / 3;
    return 1.0 + 0.01 * (node - 9);  // 0.99 .. 1.02
  });
  std::vector<report::FleetDocument> in;
  for (std::size_t i = 0; i < docs.size(); ++i)
    in.push_back({fmt::format("doc{:02}.json", i), docs[i]});
  const Json fleet = report::fleet_section(in, report::FleetRules{});
  std::set<std::string> flagged;
  for (const auto& o : fleet["outliers"]) {
    flagged.insert(o["hostname"].get<std::string>());
    EXPECT_NEAR(o["deviation"].get<double>(), -2.0 / 3, 1e-9) << o.dump();
  }
  EXPECT_EQ(flagged, std::set<std::string>{"node12"});
  for (const auto& g : fleet["groups"]) EXPECT_EQ(g["mad"], 0.0) << g["description"];
}

TEST(HostileViews, OutliersJudgeAZeroMadByTheRelativeFallback) {
  std::vector<double> v(11, 5.0);
  v.push_back(5.0 / 3);
  OutlierThresholds t;
  t.z_fail = 3.5;
  EXPECT_EQ(judge_outliers(v, {}, t).points.back().level, OutlierLevel::kNone);
  t.relative_fail_without_mad = 0.07;
  const auto r = judge_outliers(v, {}, t);
  EXPECT_EQ(r.mad, 0);
  EXPECT_EQ(r.points.back().level, OutlierLevel::kFail);
  EXPECT_EQ(r.points.front().level, OutlierLevel::kNone);
  // A drop within the fallback's limit is not flagged.
  v.back() = 4.8;
  EXPECT_EQ(judge_outliers(v, {}, t).points.back().level, OutlierLevel::kNone);
}

// node03 ran twice (doc2.json, then doc5.json at a third of the speed): both are judged.
TEST(HostileViews, AFleetJudgesEveryDocumentOfARepeatedHostname) {
  const double pattern[5] = {1.02, 0.98, 1.0, 1.01, 0.99};
  auto docs = testing::make_fleet(
      5, [&](int node, const std::string&, std::size_t) { return pattern[node - 1]; });
  Json again =
      testing::make_fleet(3, [](int, const std::string&, std::size_t) { return 1.0 / 3; })[2];
  docs.push_back(again);
  std::vector<report::FleetDocument> in;
  for (std::size_t i = 0; i < docs.size(); ++i)
    in.push_back({fmt::format("doc{}.json", i), docs[i]});
  const Json fleet = report::fleet_section(in, report::FleetRules{});
  EXPECT_EQ(fleet["summary"]["nodes"], 6);
  ASSERT_EQ(fleet["duplicate_hosts"].size(), 1u);
  EXPECT_EQ(fleet["duplicate_hosts"][0]["hostname"], "node03");
  EXPECT_EQ(fleet["duplicate_hosts"][0]["paths"], Json::array({"doc2.json", "doc5.json"}));
  std::set<std::string> flagged;
  for (const auto& o : fleet["outliers"])
    flagged.insert(o["hostname"].get<std::string>() + " " + o["path"].get<std::string>());
  EXPECT_EQ(flagged, std::set<std::string>{"node03 doc5.json"});

  Json doc{{"schema", "gpucheck/1"}, {"command", "report"}, {"fleet", fleet}};
  report::RenderOptions o;
  o.width = 160;
  const std::string table = report::render(doc, report::Format::kTable, o);
  EXPECT_THAT(table, HasSubstr("node03 (doc5.json)"));
  EXPECT_THAT(table, HasSubstr("node03: 2 documents name this host (doc2.json, doc5.json)"));
}

Json stress_record(const std::string& test) {
  return {{"test", test}, {"status", "ok"}, {"device", "cpu"}, {"backend", "cpu"}};
}

TEST(HostileViews, AStressChildStoppedAloneFailsNamingTheTestsThatDidNotRun) {
  stress::VerdictInput in;
  in.device = "cpu";
  in.records = {stress_record("gemm")};
  in.expected_records = 3;
  in.planned_tests = {"gemm", "memory", "copy"};
  in.stopped_alone = "SIGTERM";
  in.xid_readable = true;
  const auto v = stress::judge_device(in, {});
  EXPECT_FALSE(v.pass);
  ASSERT_FALSE(v.reasons.empty());
  EXPECT_THAT(v.reasons[0], HasSubstr("started: the stress child was stopped by SIGTERM while "
                                      "gpucheck was not"));
  EXPECT_THAT(v.reasons[0], HasSubstr("memory, copy did not run"));
  // Stopped with the whole run instead (no stopped_alone): the same records pass.
  in.stopped_alone.reset();
  in.expected_records = 1;
  EXPECT_TRUE(stress::judge_device(in, {}).pass);
}

Json stress_document() {
  Json gemm = stress_record("gemm");
  gemm["dtype"] = "f32";
  gemm["throughput"] = {
      {"value", 1.5}, {"unit", "TFLOP/s"}, {"min_window", 1.25}, {"windows", Json::array()}};
  Json memory = stress_record("memory");
  memory["status"] = "mismatch";
  memory["reason"] = "1 bad word";
  memory["throughput"] = {{"value", 20.5}, {"unit", "GB/s"}, {"windows", Json::array()}};
  Json device{{"device", "cpu"},
              {"device_name", "Test CPU"},
              {"backend", "cpu"},
              {"verdict", "fail"},
              {"reasons", Json::array({"results: memory: 1 bad word"})},
              {"checks",
               {{{"id", "started"}, {"status", "pass"}, {"detail", "ran"}},
                {{"id", "results"}, {"status", "fail"}, {"detail", "memory: 1 bad word"}}}},
              {"records", Json::array({gemm, memory})}};
  return {{"schema", "gpucheck/1"},
          {"command", "stress"},
          {"stress", {{"verdict", "fail"}, {"devices", Json::array({device})}}}};
}

TEST(HostileViews, StressCsvCarriesEachRecordWithTheVerdicts) {
  const std::string csv = report::render(stress_document(), report::Format::kCsv);
  EXPECT_THAT(csv, HasSubstr("device,device_name,uuid,pci_bus_id,backend,verdict,run_verdict,test,"
                             "dtype,status,sustained,min_window,unit,burst,sustained_over_burst,"
                             "fraction_of_limit,reason,device_reasons\r\n"));
  EXPECT_THAT(csv, HasSubstr("cpu,Test CPU,,,cpu,fail,fail,gemm,f32,ok,1.5,1.25,TFLOP/s,,,,,"
                             "results: memory: 1 bad word\r\n"));
  EXPECT_THAT(csv, HasSubstr("cpu,Test CPU,,,cpu,fail,fail,memory,,mismatch,20.5,,GB/s,,,,"
                             "1 bad word,"));
}

// The burst, its ratio and the share of the limit: exact where the record has them; a limit
// that is a reason leaves the share empty.
TEST(HostileViews, StressCsvAndTableCarryBurstAndShareOfTheLimit) {
  Json doc = stress_document();
  Json& gemm = doc["stress"]["devices"][0]["records"][0];
  gemm["throughput"]["burst"] = 2.0;
  gemm["throughput"]["burst_s"] = 0.52;
  gemm["throughput"]["sustained_over_burst"] = 0.75;
  gemm["limit"] = {{"value", 3.0}, {"unit", "TFLOP/s"}, {"fraction", 0.5}};
  doc["stress"]["devices"][0]["records"][1]["limit"] = {{"reason", "no figure for this CPU"}};
  const std::string csv = report::render(doc, report::Format::kCsv);
  EXPECT_THAT(csv, HasSubstr("gemm,f32,ok,1.5,1.25,TFLOP/s,2,0.75,0.5,,results"));
  EXPECT_THAT(csv, HasSubstr("memory,,mismatch,20.5,,GB/s,,,,1 bad word,"));
  report::RenderOptions o;
  o.width = 120;
  const std::string table = report::render(doc, report::Format::kTable, o);
  EXPECT_THAT(table, HasSubstr("of limit"));
  EXPECT_THAT(table, HasSubstr(" 50%"));
  EXPECT_THAT(table, HasSubstr("gemm: burst 2.00 TFLOP/s (first 0.5 s), sustained/burst 0.75"));
  std::istringstream lines(table);
  std::size_t memory_rows = 0;
  for (std::string l; std::getline(lines, l);)
    if (l.find("memory") != std::string::npos && l.find("GB/s") != std::string::npos) {
      ++memory_rows;
      EXPECT_EQ(l.find('%'), std::string::npos) << l;
    }
  EXPECT_EQ(memory_rows, 1u);
  const std::string html = report::render(doc, report::Format::kHtml, o);
  EXPECT_THAT(html, HasSubstr("<th>of limit</th>"));
  EXPECT_THAT(html, HasSubstr(">50%<"));
  EXPECT_THAT(html, HasSubstr("<th>sustained/burst</th>"));
  EXPECT_THAT(html, HasSubstr(">0.75<"));
  // At 80 columns every figure stays whole.
  o.width = 80;
  EXPECT_THAT(report::render(doc, report::Format::kTable, o), HasSubstr("1.50 TFLOP/s"));
}

TEST(HostileViews, StressPrometheusCarriesTheVerdictsAndThroughput) {
  Json doc = stress_document();
  doc["host"] = {{"hostname", "node1"}};
  doc["stress"]["devices"].push_back({{"device", "cuda0"},
                                      {"device_name", "NVIDIA H200"},
                                      {"device_uuid", "GPU-0a3df10b-faf5-5512-4744-8c9f8b5bb5da"},
                                      {"pci_bus_id", "0000:1b:00.0"},
                                      {"backend", "cuda"},
                                      {"verdict", "pass"}});
  const std::string prom = report::render(doc, report::Format::kPrometheus);
  // dcgm-exporter's labels on the GPU; no NVML index in a stress document, so no gpu or device.
  EXPECT_THAT(prom, HasSubstr("gpucheck_stress_device_verdict{UUID=\"GPU-0a3df10b-faf5-5512-4744-"
                              "8c9f8b5bb5da\",pci_bus_id=\"00000000:1B:00.0\",modelName=\"NVIDIA "
                              "H200\",hostname=\"node1\",gpucheck_device=\"cuda0\",name=\"NVIDIA "
                              "H200\",verdict=\"pass\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("gpucheck_stress_verdict{verdict=\"fail\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("gpucheck_stress_verdict{verdict=\"pass\"} 0\n"));
  EXPECT_THAT(prom,
              HasSubstr("gpucheck_stress_device_verdict{gpucheck_device=\"cpu\",name=\"Test CPU\","
                        "verdict=\"fail\"} 1\n"));
  EXPECT_THAT(prom,
              HasSubstr("gpucheck_stress_check_status{gpucheck_device=\"cpu\",check=\"results\","
                        "status=\"fail\"} 1\n"));
  EXPECT_THAT(prom, HasSubstr("gpucheck_stress_test_status{gpucheck_device=\"cpu\",test=\"memory\","
                              "status=\"mismatch\"} 1\n"));
  EXPECT_THAT(prom,
              HasSubstr("gpucheck_stress_throughput_flop_per_second{gpucheck_device=\"cpu\",test="
                        "\"gemm\",dtype=\"f32\",window=\"lowest\"} 1250000000000\n"));
  EXPECT_THAT(prom,
              HasSubstr("gpucheck_stress_throughput_bytes_per_second{gpucheck_device=\"cpu\",test="
                        "\"memory\",window=\"sustained\"} 20500000000\n"));
}

#if GPUCHECK_HAVE_OPENCL

// A vendors directory with a good .icd and a FIFO named evil.icd, removed at the end.
class FifoIcd : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "gpucheck-fifo-icd-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    root_ = tmpl;
    fs::create_directories(root_ + "/etc/OpenCL/vendors");
    std::ofstream(root_ + "/etc/OpenCL/vendors/good.icd") << "libgood.so\n";
    ASSERT_EQ(::mkfifo((root_ + "/etc/OpenCL/vendors/evil.icd").c_str(), 0600), 0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  std::string root_;
};

TEST_F(FifoIcd, TheInventoryNamesItWithoutOpeningIt) {
  const opencl::SystemFacts facts{root_, {}};
  const auto inv = opencl::icd_inventory(facts, opencl::LoaderKind::kOclIcd,
                                         [](const std::string&) { return opencl::LibraryCheck{}; });
  ASSERT_EQ(inv.files.size(), 2u) << inv.files.dump(1);
  EXPECT_EQ(inv.files[0]["path"], "/etc/OpenCL/vendors/evil.icd");
  EXPECT_THAT(inv.files[0]["error"].get<std::string>(),
              HasSubstr("it is a FIFO, not a regular file"));
  EXPECT_EQ(inv.files[0]["loads"], false);
  EXPECT_EQ(inv.files[1]["library"], "libgood.so");
  const auto irregular = opencl::irregular_icds(facts, opencl::LoaderKind::kOclIcd);
  ASSERT_EQ(irregular.size(), 1u);
  EXPECT_EQ(irregular[0].path, "/etc/OpenCL/vendors/evil.icd");
  EXPECT_EQ(irregular[0].what, "a FIFO");
}

// The guard points this process's loader at a private directory holding the good .icd alone.
TEST_F(FifoIcd, TheGuardKeepsTheLoaderFromIt) {
  const std::string vendors = root_ + "/etc/OpenCL/vendors";
  ASSERT_EQ(::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1), 0);
  std::string private_dir;
  {
    const auto guard = opencl::IcdGuard::protect_this_process();
    ASSERT_EQ(guard->skipped().size(), 1u);
    EXPECT_EQ(guard->skipped()[0].path, vendors + "/evil.icd");
    private_dir = std::getenv("OCL_ICD_VENDORS");
    EXPECT_NE(private_dir, vendors);
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(private_dir))
      names.insert(e.path().filename().string());
    EXPECT_EQ(names, std::set<std::string>{"good.icd"});
    EXPECT_EQ(fs::read_symlink(private_dir + "/good.icd").string(), vendors + "/good.icd");
  }
  EXPECT_FALSE(fs::exists(private_dir));  // removed with the guard
  ::unsetenv("OCL_ICD_VENDORS");
  // Nothing irregular: nothing changes.
  ::unlink((vendors + "/evil.icd").c_str());
  ASSERT_EQ(::setenv("OCL_ICD_VENDORS", vendors.c_str(), 1), 0);
  EXPECT_TRUE(opencl::IcdGuard::protect_this_process()->skipped().empty());
  EXPECT_EQ(std::string(std::getenv("OCL_ICD_VENDORS")), vendors);
  ::unsetenv("OCL_ICD_VENDORS");
}

#endif

}  // namespace
}  // namespace gpucheck

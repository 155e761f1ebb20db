// The HTML view: escaping of every string, a page with no external reference, and the charts'
// data marks counted against the document.
#include "report/html_escape.h"
#include "report/render.h"
#include "report/svg_charts.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using namespace gpucheck::report;
using ::testing::HasSubstr;
using ::testing::Not;

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

const char* kHostile = "<img src=x onerror=alert(1)> & \"q\" 'a'\n\x01";

TEST(HtmlEscape, MarkupQuotesAndControlBytes) {
  EXPECT_EQ(html_escape(kHostile),
            "&lt;img src=x onerror=alert(1)&gt; &amp; &quot;q&quot; &#39;a&#39;\\x0a\\x01");
  EXPECT_EQ(html_escape("bad \xff utf8"), "bad \xEF\xBF\xBD utf8");
}

nlohmann::json record(const std::string& device, const std::string& transfers, double median,
                      std::uint64_t n) {
  nlohmann::json r = {{"device", device},
                      {"device_name", device == "cpu" ? "CPU" : kHostile},
                      {"backend", device == "cpu" ? "cpu" : "opencl"},
                      {"op", "exp"},
                      {"impl", kHostile},
                      {"dtype", "f32"},
                      {"shape", {{"n", n}}},
                      {"transfers", transfers},
                      {"status", "ok"},
                      {"time_s", {{"median", median}, {"min", median}, {"max", median}}},
                      {"throughput", {{"value", 8.0 * n / median / 1e9}, {"unit", "GB/s"}}}};
  if (device != "cpu") r["speedup_vs_cpu"] = 2.0;
  return r;
}

nlohmann::json sweep_doc() {
  nlohmann::json results = nlohmann::json::array();
  for (std::uint64_t n : {1024, 2048}) {
    results.push_back(record("cpu", "excluded", 1e-6 * static_cast<double>(n), n));
    results.push_back(record("opencl0", "excluded", 0.5e-6 * static_cast<double>(n), n));
    results.push_back(record("opencl0", "included", 0.5e-6 * static_cast<double>(n), n));
  }
  auto point = [](std::uint64_t n, bool beats) {
    double t = 1e-6 * static_cast<double>(n);
    return nlohmann::json{{"size", n},
                          {"status", "ok"},
                          {"median", t / 2},
                          {"min", t / 2},
                          {"max", t / 2},
                          {"beats_cpu", beats},
                          {"cpu", {{"dtype", "f32"}, {"median", t}, {"min", t}, {"max", t}}}};
  };
  nlohmann::json series = nlohmann::json::array();
  for (const char* tr : {"excluded", "included"})
    series.push_back(
        {{"device", "opencl0"},
         {"device_name", kHostile},
         {"backend", "opencl"},
         {"dtype", "f32"},
         {"transfers", tr},
         {"points", {point(1024, true), point(2048, true)}},
         {"break_even", std::string(tr) == "excluded" ? nlohmann::json(2048) : nullptr}});
  return {
      {"schema", "gpucheck/1"},
      {"command", "bench"},
      {"provenance", {{"argv", {"gpucheck", kHostile}}, {"time", "2026-01-01T00:00:00Z"}}},
      {"host", {{"hostname", kHostile}}},
      {"results", results},
      {"sweep",
       {{"op", "exp"}, {"parameter", "elements"}, {"sizes", {1024, 2048}}, {"series", series}}}};
}

TEST(HtmlRender, EveryDocumentStringIsEscaped) {
  std::string page = render(sweep_doc(), Format::kHtml);
  EXPECT_THAT(page, Not(HasSubstr("<img")));
  EXPECT_THAT(page, Not(HasSubstr("\x01")));
  EXPECT_THAT(page, HasSubstr("&lt;img src=x onerror=alert(1)&gt;"));
}

TEST(HtmlRender, SelfContainedWithoutScriptsOrExternalReferences) {
  std::string page = render(sweep_doc(), Format::kHtml);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  for (const char* banned :
       {"<script", "<link", "<iframe", "http:", "https:", "url(", "@import", " src=\"", " href=\""})
    EXPECT_THAT(page, Not(HasSubstr(banned))) << banned;
}

TEST(HtmlRender, ChartsAndMarksMatchTheDocument) {
  std::string page = render(sweep_doc(), Format::kHtml);
  // A sweep chart, the exp throughput chart and the speedup chart.
  EXPECT_EQ(count(page, "<svg "), 3u);
  EXPECT_EQ(count(page, "data-kind=\"throughput\""), 4u);  // 2 CPU + 2 device-time records
  EXPECT_EQ(count(page, "data-kind=\"speedup\""), 4u);     // both transfers, 2 sizes
  EXPECT_EQ(count(page, "data-kind=\"sweep\""), 6u);       // CPU, device, end to end × 2 sizes
  EXPECT_THAT(page, HasSubstr("break-even, device time: 2^11"));
  EXPECT_THAT(page, HasSubstr("end to end: none in range"));
}

TEST(HtmlRender, QualifyVerdictsAreDrawnOneMarkEach) {
  nlohmann::json doc = {
      {"command", "qualify"},
      {"qualify",
       {{"profile", {{"name", "ci"}, {"path", "p.toml"}}},
        {"verdict", "unmet"},
        {"verdicts",
         {{{"id", "a"}, {"requirement", "r<1>"}, {"verdict", "met"}},
          {{"id", "b"}, {"requirement", "r2"}, {"verdict", "unmet"}, {"reason", "slow"}},
          {{"id", "c"}, {"requirement", "r3"}, {"verdict", "skip"}, {"reason", "n/a"}}}}}}};
  std::string page = render(doc, Format::kHtml);
  EXPECT_EQ(count(page, "data-kind=\"verdict\""), 3u);
  EXPECT_THAT(page, HasSubstr("r&lt;1&gt;"));
}

TEST(HtmlRender, DoctorChecksTableWithStatusClasses) {
  nlohmann::json doc = {
      {"command", "doctor"},
      {"checks", {{{"id", "x"}, {"status", "fail"}, {"finding", "<b>broken</b>"}, {"fix", "f"}}}}};
  std::string page = render(doc, Format::kHtml);
  EXPECT_THAT(page, HasSubstr("<td class=\"fail\">FAIL</td>"));
  EXPECT_THAT(page, HasSubstr("&lt;b&gt;broken&lt;/b&gt;"));
  EXPECT_EQ(count(page, "<svg"), 0u);
}

TEST(SvgLabels, SizesAndSeconds) {
  EXPECT_EQ(size_label(1024), "2^10");
  EXPECT_EQ(size_label(768), "768");
  EXPECT_EQ(size_label(64), "64");
  EXPECT_EQ(seconds_label(2.5e-6), "2.5 \xC2\xB5s");
  EXPECT_EQ(seconds_label(0.25), "250 ms");
  EXPECT_EQ(seconds_label(3), "3 s");
}

}  // namespace

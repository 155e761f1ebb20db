// JUnit XML of a qualify document: one testcase per verdict, <failure> for unmet, <skipped/>
// for skip, text escaped. (xmllint against the XSD: tests/cli/test_qualify_cli.cpp.)
#include "report/junit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

Json document() {
  return Json::parse(R"({
    "schema": "gpucheck/1", "command": "qualify",
    "provenance": {"time": "2026-11-26T06:00:00Z", "gpucheck_version": "0.1.0"},
    "host": {"hostname": "ci-runner-3"},
    "qualify": {"profile": {"path": "p.toml", "name": "p"}, "strict": false, "verdict": "unmet",
      "summary": {"met": 1, "unmet": 1, "skip": 1},
      "verdicts": [
        {"id": "a", "kind": "backend", "requirement": "backend cuda", "measured": true,
         "threshold": true, "verdict": "met"},
        {"id": "b", "kind": "bench", "requirement": "gemm <f16> & more", "measured": 1.5,
         "threshold": 2, "unit": "TFLOP/s", "verdict": "unmet", "device": "cuda0",
         "reason": "measured 1.5 < 2 \"low\""},
        {"id": "c", "kind": "bench", "requirement": "fraction", "measured": null,
         "threshold": 0.8, "verdict": "skip", "device": "cuda0", "reason": "no reference for X"}]}})");
}

TEST(Junit, OneTestcasePerVerdict) {
  std::string xml = gpucheck::report::render_junit(document());
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"gpucheck qualify p\" tests=\"3\" failures=\"1\" "
                             "errors=\"0\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("timestamp=\"2026-11-26T06:00:00\" hostname=\"ci-runner-3\""));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"b [cuda0]\" classname=\"gpucheck.qualify.bench\""));
  EXPECT_THAT(
      xml, HasSubstr("<failure message=\"measured 1.5 &lt; 2 &quot;low&quot;\" type=\"unmet\">"));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"no reference for X\"/>"));
  EXPECT_THAT(
      xml, HasSubstr("gemm &lt;f16&gt; &amp; more\nmeasured: 1.5 TFLOP/s\nthreshold: 2 TFLOP/s"));
  EXPECT_THAT(xml, Not(HasSubstr("<f16>")));
  EXPECT_THROW(gpucheck::report::render_junit(Json{{"schema", "gpucheck/1"}}),
               std::invalid_argument);
}

}  // namespace

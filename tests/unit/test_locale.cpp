// Numbers print with a dot in every format, whatever LC_NUMERIC says.
#include "core/json_keys.h"
#include "report/render.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <clocale>
#include <locale>

namespace {

nlohmann::json document_with_numbers() {
  nlohmann::json record = {
      {"device", "cpu"},
      {"backend", "cpu"},
      {"op", "gemm"},
      {"impl", "openblas"},
      {"dtype", "f32"},
      {"shape", {{"m", 64}, {"n", 64}, {"k", 64}}},
      {"transfers", "excluded"},
      {"status", "ok"},
      {"time_s",
       {{"median", 0.0012345},
        {"min", 0.001},
        {"max", 0.002},
        {"stddev", 0.0001},
        {"reps", 3},
        {"truncated", false}}},
      {"throughput", {{"value", 12.5}, {"unit", "GB/s"}}},
      {"speedup_vs_cpu", 2.5},
      {"verification", {{"max_rel_error", 1.5e-7}, {"tolerance", 2e-6}, {"method", "x"}}}};
  return {{"schema", "gpucheck/1"},
          {"command", "bench"},
          {"cpu", {{"mhz_current", 2345.75}}},
          {"results", {record}}};
}

class GermanLocale : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* got = std::setlocale(LC_ALL, "de_DE.UTF-8");
    ASSERT_NE(got, nullptr) << "de_DE.UTF-8 is not installed: the README's setup enables it";
    previous_ = std::locale::global(std::locale("de_DE.UTF-8"));
    // The locale really uses a comma: otherwise this test could not fail.
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f", 1.5);
    ASSERT_STREQ(buf, "1,5");
  }
  void TearDown() override {
    std::setlocale(LC_ALL, "C");
    std::locale::global(std::locale::classic());
  }
  std::locale previous_;
};

}  // namespace

TEST_F(GermanLocale, EveryFormatPrintsDecimalPoints) {
  auto doc = document_with_numbers();
  using gpucheck::report::Format;
  for (auto f : {Format::kTable, Format::kJson, Format::kCsv, Format::kMarkdown}) {
    std::string text = gpucheck::report::render(doc, f);
    SCOPED_TRACE(std::string(gpucheck::report::to_string(f)));
    EXPECT_THAT(text, ::testing::HasSubstr("12.5"));
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("12,5")));
  }
  // The machine-readable formats keep every number at full precision; the views for people
  // round them to 3-4 significant digits and leave the verification evidence to JSON.
  for (auto f : {Format::kJson, Format::kCsv}) {
    std::string text = gpucheck::report::render(doc, f);
    SCOPED_TRACE(std::string(gpucheck::report::to_string(f)));
    EXPECT_THAT(text, ::testing::HasSubstr("1.5e-07"));
  }
  std::string json = gpucheck::report::render(doc, Format::kJson);
  EXPECT_THAT(json, ::testing::HasSubstr("2345.75"));
  EXPECT_THAT(json, ::testing::HasSubstr("0.0012345"));
  for (auto f : {Format::kTable, Format::kMarkdown}) {
    std::string text = gpucheck::report::render(doc, f);
    SCOPED_TRACE(std::string(gpucheck::report::to_string(f)));
    EXPECT_THAT(text, ::testing::HasSubstr("1.23 ms"));  // the median, 3 significant digits
    EXPECT_THAT(text, ::testing::HasSubstr("2.50×"));
    EXPECT_THAT(text, ::testing::Not(::testing::HasSubstr("2,50")));
  }
}

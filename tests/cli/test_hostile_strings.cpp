// A device name with quotes, control characters and invalid UTF-8 goes safely through every view.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    std::size_t len = c < 0x80         ? 1
                      : (c >> 5) == 6  ? 2
                      : (c >> 4) == 14 ? 3
                      : (c >> 3) == 30 ? 4
                                       : 0;
    if (len == 0 || i + len > s.size()) return false;
    for (std::size_t k = 1; k < len; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += len;
  }
  return true;
}

// Control bytes other than line endings: an escape sequence from a driver would reach the terminal.
bool has_raw_control(const std::string& s) {
  for (char ch : s) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\n' && c != '\r') || c == 0x7f) return true;
  }
  return false;
}

std::map<std::string, std::optional<std::string>> weird_env() {
  return {{"GPUCHECK_TEST_BACKENDS", "weird"}, {"NO_COLOR", "1"}};
}

}  // namespace

TEST(HostileStrings, JsonCarriesTheSanitisedName) {
  auto r = run_gpucheck({"probe", "--json"}, weird_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  std::string name;
  for (const auto& b : doc["backends"])
    if (b["name"] == "test_weird") name = b["devices"][0]["device_name"];
  EXPECT_EQ(name,
            "GPU \"quoted\", comma\\x09tab\\x0anewline\\x1b[31m \xEF\xBF\xBD\xEF\xBF\xBD end");
}

TEST(HostileStrings, EveryFormatIsValidUtf8WithoutRawControlBytes) {
  for (std::string format : {"table", "json", "csv", "markdown"}) {
    SCOPED_TRACE(format);
    auto r = run_gpucheck({"probe", "--format", format}, weird_env());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(valid_utf8(r.out));
    EXPECT_FALSE(has_raw_control(r.out));
    // JSON escapes the backslash of the sanitiser's "\x1b" once more.
    EXPECT_THAT(r.out, HasSubstr(format == "json" ? "newline\\\\x1b[31m" : "newline\\x1b[31m"));
  }
}

TEST(HostileStrings, CsvQuotesFieldsWithQuotesAndCommas) {
  auto r = run_gpucheck({"probe", "--format", "csv"}, weird_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"GPU \"\"quoted\"\", comma"));
}

TEST(HostileStrings, OutputFileGetsTheSameBytesAsStdout) {
  auto path = gpucheck::testing::write_temp_file("probe.md", "");
  auto r = run_gpucheck({"probe", "--format", "markdown", "-o", path}, weird_env());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream f(path);
  std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("- **test_weird0** GPU \"quoted\", comma"));
}

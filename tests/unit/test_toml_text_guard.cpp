// The text toml++ 3.3 must not see (core/toml_text_guard.h): non-ASCII outside strings and
// comments, or after a backslash in a multi-line basic string; everything else, non-ASCII in
// strings and comments included, passes to the parser.
#include "core/toml_text_guard.h"

#include "core/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

using gpucheck::refuse_text_toml_parser_mishandles;
using gpucheck::UsageError;
using ::testing::HasSubstr;

std::string refusal(std::string_view text) {
  try {
    refuse_text_toml_parser_mishandles(text, "p.toml");
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

TEST(TomlTextGuard, TheFuzzersInputsAreRefusedWithTheirPlace) {
  EXPECT_THAT(refusal("\xcc\xaa"), HasSubstr("p.toml:1:1: a non-ASCII character outside"));
  EXPECT_THAT(refusal("s = \"\"\"\\\n\xc2\xa7\"\"\"\n"),
              HasSubstr("p.toml:2:1: a non-ASCII character right after a line-ending backslash"));
  EXPECT_THAT(refusal("s = \"\"\"a \\  \n\n   \xc2\xa7\"\"\""), HasSubstr("p.toml:3:4:"));
  // Any backslash in a multi-line basic string: toml++ classifies what follows it.
  EXPECT_THAT(refusal("s = \"\"\"\\\xc2\xa7\"\"\""),
              HasSubstr("p.toml:1:9: a non-ASCII character after a backslash"));
  EXPECT_THAT(refusal("s = \"\"\"\\ \t\xc2\xa7\"\"\""), HasSubstr("p.toml:1:11:"));
  EXPECT_THAT(refusal("[t]\nk\xc3\xa9 = 1"), HasSubstr("p.toml:2:2:"));
  EXPECT_THAT(refusal("a = [1, \xe2\x80\x94 2]"), HasSubstr("p.toml:1:9:"));
  // A quote after a bare value opens no string: toml++ reads on through the value.
  EXPECT_THAT(refusal("s =0\"min\xcf\xb3\""), HasSubstr("p.toml:1:9:"));
  EXPECT_THAT(refusal("s = 1 \"\"\"\xcf\xb3\"\"\""), HasSubstr("p.toml:1:10:"));
  // Brackets and quotes inside a bare value are part of it, not an array or a string.
  EXPECT_THAT(refusal("s =0[\"min\\_\xcf\xb3\"]"),
              HasSubstr("p.toml:1:12: a non-ASCII character in a bare value"));
  EXPECT_THAT(refusal("a = [1, 2x{\"\xcf\xb3\"}]"), HasSubstr("p.toml:1:13:"));
}

TEST(TomlTextGuard, NonAsciiInStringsAndCommentsPasses) {
  for (const char* ok : {
           "# gemm \"MxNxK\" (C[M\xc3\x97N] = A\xc2\xb7"
           "B)\nk = 1\n",  // default.toml's comment
           "name = \"H100 \xc2\xb5s\"\n",
           "name = 'C:\\\xc2\xa7'\n",
           "a = \"x\\\"\xc2\xa7\"  # escaped quote, then \xc2\xa7\n",
           "s = \"\"\"\n\xc2\xa7 \"\" \xc2\xa7\"\"\"\n",
           "s = '''\\\n\xc2\xa7'''\n",           // a literal string has no line-ending backslash
           "s = \"\"\"a\\\\\n\xc2\xa7\"\"\"\n",  // an escaped backslash ends no line
           "s = \"\\\xc2\xa7\"\n",  // a one-line string: an invalid escape, toml++'s to report
           "s = \"\"\"x\"\"\"\"\" # two quotes inside the close\n",
           "a = [\n  \"\xc2\xa7\",  # comment\n  '\xc2\xa7' ]\nt = { \"k\xc2\xa7\" = 1, "
           "b.\"\xc2\xa7\" = 2 }\n",
           "[\"t\xc2\xa7\".'u\xc2\xa7']\n\"k\xc2\xa7\" = \"v\"\n",
           "a = [1, \"\xc2\xa7\", [2,\"\xc2\xa7\"]]\nb = [\n  3,\n  \"\xc2\xa7\",\n]\n",
           "t = { k = 1, b.\"\xc2\xa7\" = 2, c = [true,\"\xc2\xa7\"] }\n",
           "d = 1979-05-27 # \xc2\xa7\ne = 1.5e3\n",
       })
    EXPECT_EQ(refusal(ok), "") << ok;
}

TEST(TomlTextGuard, AnUnterminatedStringIsLeftToTheParser) {
  EXPECT_EQ(refusal("a = \"\xc2\xa7\nb = 1\n"), "");
  EXPECT_EQ(refusal("a = \"\"\"\xc2\xa7"), "");
}

}  // namespace

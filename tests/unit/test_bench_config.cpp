// Size presets and size flags: what parses, and what each bad value says.
#include "bench/config.h"
#include "core/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace gpucheck::bench;
using gpucheck::UsageError;

TEST(BenchConfig, EmbeddedPresetsMatchTheDesign) {
  auto p = default_presets();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(p["small"].exp.at(0).n, 1u << 20);
  EXPECT_EQ(p["medium"].exp.at(0).n, 1u << 24);
  EXPECT_EQ(p["large"].exp.at(0).n, 1u << 28);
  EXPECT_EQ(p["large"].gemm.at(0).m, 8192u);
  EXPECT_EQ(p["medium"].conv.at(0).n, 32u);
  EXPECT_EQ(p["large"].conv.at(0).c, 256u);
  EXPECT_EQ(p["small"].copy.at(0), 1u << 20);
  EXPECT_EQ(p["large"].copy.at(0), 256u << 20);
}

TEST(BenchConfig, FlagForms) {
  auto e = parse_exp_sizes("1024, 2^24", "--exp");
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].n, 1u << 24);
  auto g = parse_gemm_shapes("96x80x72,512", "--gemm");
  EXPECT_EQ(g[0].m, 96u);
  EXPECT_EQ(g[0].n, 80u);
  EXPECT_EQ(g[0].k, 72u);
  EXPECT_EQ(g[1].k, 512u);
  auto c = parse_conv_shapes("8,64,56,56,64,3,3,1,1;1,3,224,224,64,7,7,2,3", "--conv");
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].p(), 112u);
  EXPECT_EQ(c[1].q(), 112u);
  auto b = parse_byte_sizes("4096,64MiB,1GiB", "--copy");
  EXPECT_EQ(b[1], 64u << 20);
  EXPECT_EQ(b[2], 1u << 30);
}

TEST(BenchConfig, BadFlagValuesNameTheFlag) {
  EXPECT_THAT([] { parse_exp_sizes("2^99", "--exp"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("--exp: '2^99'")));
  EXPECT_THAT([] { parse_gemm_shapes("1x2", "--gemm"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("MxNxK")));
  EXPECT_THAT([] { parse_byte_sizes("18446744073709551615GiB", "--copy"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("too large")));
  EXPECT_THROW(parse_conv_shapes("1,1,1,1,1,1,1,0,0", "--conv"), UsageError);  // stride 0
  EXPECT_THROW(parse_exp_sizes(",", "--exp"), UsageError);
}

TEST(BenchConfig, PresetErrorsNameKeyAndLine) {
  EXPECT_THAT([] { parse_presets("[small]\nexp = [1]\nbogus = 2\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("f.toml:3: unknown key 'small.bogus'")));
  EXPECT_THAT([] { parse_presets("exp = [1]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("'exp' must be a table")));
  EXPECT_THAT([] { parse_presets("[small]\nconv = [\"1,2,3\"]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("f.toml:2: small.conv")));
  EXPECT_THAT([] { parse_presets("[small\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("f.toml:1:")));
}

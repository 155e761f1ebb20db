// Size presets and size flags: what parses, and what each bad value says.
#include "bench/config.h"
#include "core/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <stdexcept>
#include <string>
#include <vector>

using namespace gpucheck;
using namespace gpucheck::bench;
using gpucheck::UsageError;

namespace {

// The sizes of one op as its shapes.
template <typename S>
std::vector<S> as(const std::vector<gpucheck::bench::Shape>& sizes) {
  std::vector<S> out;
  for (const auto& s : sizes) out.push_back(std::get<S>(s));
  return out;
}

}  // namespace

TEST(BenchConfig, EmbeddedPresetsMatchTheDesign) {
  auto p = default_presets();
  ASSERT_EQ(p.size(), 3u);
  EXPECT_EQ(as<ExpShape>(p["small"].of(Op::kExp)).at(0).n, 1u << 20);
  EXPECT_EQ(as<ExpShape>(p["medium"].of(Op::kExp)).at(0).n, 1u << 24);
  EXPECT_EQ(as<ExpShape>(p["large"].of(Op::kExp)).at(0).n, 1u << 28);
  EXPECT_EQ(as<GemmShape>(p["large"].of(Op::kGemm)).at(0).m, 8192u);
  EXPECT_EQ(as<ConvShape>(p["medium"].of(Op::kConv)).at(0).n, 32u);
  EXPECT_EQ(as<ConvShape>(p["large"].of(Op::kConv)).at(0).c, 256u);
  EXPECT_EQ(as<CopyShape>(p["small"].of(Op::kCopy)).at(0).bytes, 1u << 20);
  EXPECT_EQ(as<CopyShape>(p["large"].of(Op::kCopy)).at(0).bytes, 256u << 20);
  EXPECT_EQ(as<P2pShape>(p["small"].of(Op::kP2p)).at(0).bytes, 256u << 20);
  EXPECT_EQ(p["small"].of(Op::kAllreduce).size(), 6u);
  EXPECT_TRUE(p["small"].of(Op::kSeedloop).empty());  // fixed sizes: no preset key
  EXPECT_TRUE(p["small"].given.empty());
}

TEST(BenchConfig, FlagForms) {
  auto e = as<ExpShape>(parse_sizes(Op::kExp, "1024, 2^24", "--exp"));
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[1].n, 1u << 24);
  auto g = as<GemmShape>(parse_sizes(Op::kGemm, "96x80x72,512", "--gemm"));
  EXPECT_EQ(g[0].m, 96u);
  EXPECT_EQ(g[0].n, 80u);
  EXPECT_EQ(g[0].k, 72u);
  EXPECT_EQ(g[1].k, 512u);
  auto c = as<ConvShape>(
      parse_sizes(Op::kConv, "8,64,56,56,64,3,3,1,1;1,3,224,224,64,7,7,2,3", "--conv"));
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[1].p(), 112u);
  EXPECT_EQ(c[1].q(), 112u);
  auto b = as<CopyShape>(parse_sizes(Op::kCopy, "4096,64MiB,1GiB", "--copy"));
  EXPECT_EQ(b[1].bytes, 64u << 20);
  EXPECT_EQ(b[2].bytes, 1u << 30);
  EXPECT_THROW(parse_sizes(Op::kSeedloop, "1", "--seedloop"), std::logic_error);  // no sizes
}

TEST(BenchConfig, BadFlagValuesNameTheFlag) {
  EXPECT_THAT([] { parse_sizes(Op::kExp, "2^99", "--exp"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("--exp: '2^99'")));
  EXPECT_THAT([] { parse_sizes(Op::kGemm, "1x2", "--gemm"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("MxNxK")));
  EXPECT_THAT([] { parse_sizes(Op::kCopy, "18446744073709551615GiB", "--copy"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("too large")));
  EXPECT_THROW(parse_sizes(Op::kConv, "1,1,1,1,1,1,1,0,0", "--conv"), UsageError);  // stride 0
  EXPECT_THROW(parse_sizes(Op::kExp, ",", "--exp"), UsageError);
  EXPECT_THAT([] { parse_sizes(Op::kAllreduce, "6", "--allreduce"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("--allreduce: 6 bytes")));
}

// The flags come from the units: one per flag, p2p sharing copy's.
TEST(BenchConfig, SizeFlagsComeFromTheUnits) {
  EXPECT_EQ(size_flags(), (std::vector<std::string>{"exp", "gemm", "conv", "copy", "allreduce"}));
  const SizeSet preset = default_presets().at("small");
  const SizeSet s = with_size_flags(preset, {{"copy", "4KiB,8KiB"}, {"gemm", ""}});
  EXPECT_EQ(s.given, (std::set<Op>{Op::kCopy, Op::kP2p}));
  ASSERT_EQ(s.of(Op::kCopy).size(), 2u);
  EXPECT_EQ(as<CopyShape>(s.of(Op::kCopy))[1].bytes, 8192u);
  EXPECT_EQ(as<P2pShape>(s.of(Op::kP2p))[0].bytes, 4096u);
  EXPECT_EQ(shape_to_json(s.of(Op::kGemm).at(0)), shape_to_json(preset.of(Op::kGemm).at(0)));
  // A config without p2p or allreduce sizes gets the units' fallbacks.
  const SizeSet bare = with_size_flags(parse_presets("[t]\nexp = [4]\n", "t.toml").at("t"), {});
  EXPECT_EQ(as<P2pShape>(bare.of(Op::kP2p)).at(0).bytes, 256u << 20);
  ASSERT_EQ(bare.of(Op::kAllreduce).size(), 2u);
  EXPECT_EQ(as<AllreduceShape>(bare.of(Op::kAllreduce))[1].bytes, 1u << 30);
  EXPECT_TRUE(bare.of(Op::kGemm).empty());
  EXPECT_THAT(
      [] {
        with_size_flags({}, {{"allreduce", "1MiB,10"}});
      },
      ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("--allreduce: 10 bytes")));
}

TEST(BenchConfig, PresetErrorsNameKeyAndLine) {
  EXPECT_THAT([] { parse_presets("[small]\nexp = [1]\nbogus = 2\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(
                  ::testing::HasSubstr("f.toml:3: unknown key 'small.bogus'")));
  EXPECT_THAT([] { parse_presets("exp = [1]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("'exp' must be a table")));
  EXPECT_THAT([] { parse_presets("[small]\nconv = [\"1,2,3\"]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("f.toml:2: small.conv")));
  EXPECT_THAT([] { parse_presets("[small]\nallreduce = [6]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(
                  ::testing::HasSubstr("f.toml:2: small.allreduce: 6 bytes")));
  EXPECT_THAT([] { parse_presets("[small]\nlatency = [1]\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(
                  ::testing::HasSubstr("(a preset holds exp, gemm, conv, copy, p2p, allreduce)")));
  EXPECT_THAT([] { parse_presets("[small\n", "f.toml"); },
              ::testing::ThrowsMessage<UsageError>(::testing::HasSubstr("f.toml:1:")));
}

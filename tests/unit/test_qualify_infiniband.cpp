// qualify's infiniband requirement: parsed strictly, judged on the probe's section as read from
// the mlx5 sysroots (tests/fixtures/sysroots/infiniband).
#include "core/errors.h"
#include "host/infiniband.h"
#include "qualify/judge.h"
#include "qualify/profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

namespace {

namespace q = gpucheck::qualify;
using ::testing::HasSubstr;
using Json = nlohmann::json;

q::Requirement requirement(const std::string& body) {
  const auto p = q::parse_profile("[[require]]\nkind = \"infiniband\"\n" + body, "ib.toml");
  return p.requirements.at(0);
}

q::Observations observed(const char* tree) {
  q::Observations obs;
  obs.infiniband = gpucheck::host::to_json(gpucheck::host::read_infiniband_facts(
      std::filesystem::path(GPUCHECK_FIXTURES_DIR) / "sysroots" / "infiniband" / tree));
  return obs;
}

}  // namespace

TEST(QualifyInfiniband, ParsesItsKeysAndRefusesOthers) {
  auto r = requirement("rate_gbps_min = 400\nports_min = 2\nlink_layer = \"InfiniBand\"\n");
  EXPECT_EQ(r.kind, q::Kind::kInfiniband);
  EXPECT_EQ(r.value, 400);
  EXPECT_EQ(r.devices_min, 2);
  EXPECT_EQ(r.link_layer, "InfiniBand");
  r = requirement("");
  EXPECT_EQ(r.value, 0);
  EXPECT_EQ(r.devices_min, 1);
  EXPECT_TRUE(r.link_layer.empty());
  EXPECT_THROW(requirement("rate = 400\n"), gpucheck::UsageError);
  EXPECT_THROW(requirement("link_layer = \"Omni-Path\"\n"), gpucheck::UsageError);
  EXPECT_THROW(requirement("ports_min = 0\n"), gpucheck::UsageError);
  EXPECT_THROW(requirement("rate_gbps_min = -1\n"), gpucheck::UsageError);
}

TEST(QualifyInfiniband, ShippedProfileLoads) {
  const auto p =
      q::load_profile(std::string(GPUCHECK_SOURCE_DIR) + "/configs/qualify/infiniband-ndr.toml");
  ASSERT_FALSE(p.requirements.empty());
  EXPECT_EQ(p.requirements[0].kind, q::Kind::kInfiniband);
  EXPECT_EQ(p.requirements[0].value, 400);
}

TEST(QualifyInfiniband, EveryPortAtTheRateAndEnoughOfThem) {
  const auto r = requirement("rate_gbps_min = 400\nports_min = 2\nlink_layer = \"InfiniBand\"\n");
  auto v = q::judge(r, observed("healthy"));
  ASSERT_EQ(v.size(), 3u);  // the count, then mlx5_0/1 and mlx5_1/1 (the RoCE port is left out)
  for (const auto& x : v) EXPECT_EQ(x.outcome, q::Outcome::kMet) << x.to_json().dump();
  EXPECT_EQ(v[0].measured, 2);
  EXPECT_EQ(v[1].device, "mlx5_0/1");

  v = q::judge(r, observed("rate_low"));
  ASSERT_EQ(v.size(), 3u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_EQ(v[2].device, "mlx5_1/1");
  EXPECT_EQ(v[2].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[2].reason, HasSubstr("200 Gb/sec (4X HDR)"));
  EXPECT_EQ(v[2].measured, 200.0);

  v = q::judge(r, observed("port_down"));
  EXPECT_EQ(v[2].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[2].reason, HasSubstr("DOWN (Polling)"));

  v = q::judge(r, observed("disabled"));
  EXPECT_EQ(v[2].outcome, q::Outcome::kSkip);   // an administrator's choice, not a fault
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);  // but only one port counts
}

TEST(QualifyInfiniband, NoAdapterIsUnmetAndSaysWhy) {
  const auto v = q::judge(requirement(""), observed("does-not-exist"));
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("no RDMA adapter"));
}

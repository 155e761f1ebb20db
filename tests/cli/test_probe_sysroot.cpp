// `probe --sysroot` reads /proc, /sys and /etc of a fabricated machine.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

using gpucheck::testing::run_gpucheck;

TEST(ProbeSysroot, ArmFixtureShowsNeonAndSve) {
  auto r = run_gpucheck({"probe", "--json", "--sysroot",
                         std::string(GPUCHECK_FIXTURES_DIR) + "/sysroots/arm64-graviton3"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["cpu"]["arch"], "aarch64");
  EXPECT_EQ(doc["cpu"]["isa"]["neon"], true);
  EXPECT_EQ(doc["cpu"]["isa"]["sve"], true);
  EXPECT_FALSE(doc["cpu"]["isa"].contains("avx2"));
  EXPECT_EQ(doc["cpu"]["threads"], 8);
  EXPECT_EQ(doc["host"]["arch"], "aarch64");
}

TEST(ProbeSysroot, TwoSocketFixtureCountsSocketsAndCores) {
  auto r = run_gpucheck({"probe", "--json", "--sysroot",
                         std::string(GPUCHECK_FIXTURES_DIR) + "/sysroots/x86_64-xeon-2socket"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["cpu"]["sockets"], 2);
  EXPECT_EQ(doc["cpu"]["cores"], 4);
  EXPECT_EQ(doc["cpu"]["threads"], 8);
  EXPECT_EQ(doc["cpu"]["isa"]["amx_tile"], true);
}

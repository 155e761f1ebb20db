// `bench --sweep` from the command line: bad flags exit 2, the CPU-only sweep's document, and the
// new formats written to a file.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

#include <unistd.h>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

TEST(SweepCli, BadSweepFlagsAreUsageErrors) {
  const std::vector<std::vector<std::string>> cases = {
      {"--sweep", "copy"},
      {"--sweep", "exp", "--sweep-max", "512"},
      {"--sweep", "gemm", "--sweep-max", "big"},
      {"--sweep-max", "2^12"},
      {"--sweep", "exp", "--exp", "4096"},
      {"--sweep", "gemm", "--ops", "gemm"},
      {"--sweep", "conv", "--no-baseline"},
  };
  for (auto args : cases) {
    args.insert(args.begin(), {"bench", "--device", "cpu"});
    auto r = run_gpucheck(args);
    EXPECT_EQ(r.exit_code, 2) << ::testing::PrintToString(args) << r.err;
    EXPECT_THAT(r.err, HasSubstr("--sweep")) << ::testing::PrintToString(args);
  }
}

TEST(SweepCli, CpuOnlySweepListsTheSizesAndRunsFiveRepsEach) {
  auto r =
      run_gpucheck({"bench", "--device", "cpu", "--sweep", "gemm", "--sweep-max", "128", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["sweep"]["op"], "gemm");
  EXPECT_EQ(doc["sweep"]["sizes"], nlohmann::json({64, 128}));
  EXPECT_TRUE(doc["sweep"]["series"].empty());  // no device beside the CPU: nothing to judge
  ASSERT_EQ(doc["results"].size(), 2u);
  for (const auto& rec : doc["results"]) {
    EXPECT_EQ(rec["dtype"], "f32");
    EXPECT_EQ(rec["time_s"]["reps"], 5);
  }
}

TEST(SweepCli, GivenRepsWinOverTheSweepDefault) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--sweep", "exp", "--sweep-max", "1024",
                         "--reps", "2", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 1u);
  EXPECT_EQ(doc["results"][0]["time_s"]["reps"], 2);
}

TEST(SweepCli, HtmlAndPrometheusGoToTheOutputFile) {
  auto dir =
      std::filesystem::temp_directory_path() / ("gpucheck-sweep-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  for (const char* format : {"html", "prometheus"}) {
    auto path = (dir / (std::string("out.") + format)).string();
    auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--exp", "4096", "--reps",
                           "2", "--warmup", "0", "--format", format, "-o", path});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (std::string(format) == "html") {
      EXPECT_THAT(text.str(), HasSubstr("<!DOCTYPE html>"));
      EXPECT_THAT(text.str(), HasSubstr("data-kind=\"throughput\""));
    } else {
      EXPECT_THAT(text.str(), HasSubstr("# TYPE gpucheck_bench_median_seconds gauge"));
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace

// report compare's matching and verdicts on hand-made records: a planted 3x slowdown, a document
// against itself, the spread widening the threshold, latency lower-better, MISSING and NEW, and
// devices matched by UUID or by name.
#include "report/compare.h"

#include <gtest/gtest.h>

#include <cmath>

namespace {

namespace r = gpucheck::report;
using Json = nlohmann::json;

Json rec(const std::string& op, double value, double rel_sd = 0.01,
         const std::string& uuid = "GPU-a") {
  Json j = {{"device", "cuda0"},
            {"backend", "cuda"},
            {"device_uuid", uuid},
            {"device_name", "H100"},
            {"op", op},
            {"impl", "k"},
            {"dtype", "f32"},
            {"shape", {{"n", 1024}}},
            {"transfers", "excluded"},
            {"status", "ok"}};
  double median = op == "latency" ? value : 1e-3;
  j["time_s"] = {{"median", median}, {"stddev", median * rel_sd * 2}, {"reps", 4}};  // /√4
  if (op != "latency") j["throughput"] = {{"value", value}, {"unit", "GB/s"}};
  return j;
}

std::string verdict(const Json& c, std::size_t i = 0) {
  return c["rows"][i]["verdict"];
}

TEST(Compare, Tolerance) {
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("10 %"), 0.10);
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("0.2"), 0.2);
  EXPECT_FALSE(r::parse_tolerance("five").has_value());
  EXPECT_FALSE(r::parse_tolerance("-1%").has_value());
  EXPECT_FALSE(r::parse_tolerance("").has_value());
}

TEST(Compare, PlantedSlowdownIsARegression) {
  Json c = r::compare_results(Json::array({rec("exp", 300)}), Json::array({rec("exp", 100)}), {});
  EXPECT_EQ(verdict(c), "regression");
  EXPECT_NEAR(c["rows"][0]["change"].get<double>(), -2.0 / 3, 1e-12);
  EXPECT_EQ(c["verdict"], "regression");
  EXPECT_TRUE(r::comparison_failed(c));
  Json faster =
      r::compare_results(Json::array({rec("exp", 100)}), Json::array({rec("exp", 300)}), {});
  EXPECT_EQ(verdict(faster), "improvement");
  EXPECT_FALSE(r::comparison_failed(faster));
}

TEST(Compare, SelfIsSame) {
  Json base = Json::array({rec("exp", 300), rec("latency", 4e-6)});
  Json c = r::compare_results(base, base, {});
  EXPECT_EQ(verdict(c, 0), "same");
  EXPECT_EQ(verdict(c, 1), "same");
  EXPECT_EQ(c["summary"]["same"], 2);
  EXPECT_EQ(c["verdict"], "ok");
}

TEST(Compare, SpreadWidensTheThreshold) {
  // 8 % slower: beyond 5 %, but within 2 x hypot(5 %, 5 %) = 14 % of two noisy runs.
  Json quiet =
      r::compare_results(Json::array({rec("exp", 100)}), Json::array({rec("exp", 92)}), {});
  EXPECT_EQ(verdict(quiet), "regression");
  Json noisy = r::compare_results(Json::array({rec("exp", 100, 0.05)}),
                                  Json::array({rec("exp", 92, 0.05)}), {});
  EXPECT_EQ(verdict(noisy), "same");
  EXPECT_NEAR(noisy["rows"][0]["threshold"].get<double>(), 2 * std::hypot(0.05, 0.05), 1e-12);
}

TEST(Compare, OneOutlierRepetitionDoesNotHideASlowdown) {
  // 10000 repetitions whose stddev is 20x the median (one preempted run): per repetition the
  // threshold would be 2800 %; the median's own stddev is 0.2 x, the threshold 57 %.
  Json base = rec("exp", 300), slow = rec("exp", 100);
  for (Json* r : {&base, &slow})
    r->at("time_s") = {{"median", 1e-3}, {"stddev", 2e-2}, {"reps", 10000}};
  Json c = r::compare_results(Json::array({base}), Json::array({slow}), {});
  EXPECT_NEAR(c["rows"][0]["threshold"].get<double>(), 2 * std::hypot(0.2, 0.2), 1e-12);
  EXPECT_EQ(verdict(c), "regression");
}

TEST(Compare, LatencyIsLowerBetter) {
  Json c = r::compare_results(Json::array({rec("latency", 4e-6)}),
                              Json::array({rec("latency", 8e-6)}), {});
  EXPECT_EQ(c["rows"][0]["metric"], "time");
  EXPECT_EQ(verdict(c), "regression");
}

TEST(Compare, MissingAndNew) {
  Json gemm = rec("gemm", 50);
  gemm["shape"] = {{"m", 8}, {"n", 8}, {"k", 8}};
  Json c = r::compare_results(Json::array({rec("exp", 300), gemm}),
                              Json::array({rec("exp", 300), rec("copy", 9)}), {});
  EXPECT_EQ(c["summary"]["missing"], 1);
  EXPECT_EQ(c["summary"]["new"], 1);
  EXPECT_EQ(verdict(c, 1), "missing");
  EXPECT_EQ(verdict(c, 2), "new");
  EXPECT_FALSE(r::comparison_failed(c));
  r::CompareOptions strict;
  strict.fail_on_missing = true;
  EXPECT_TRUE(r::comparison_failed(r::compare_results(Json::array({gemm}), Json::array(), strict)));
}

TEST(Compare, StatusChanges) {
  Json broken = rec("exp", 300);
  broken["status"] = "mismatch";
  broken.erase("throughput");
  Json c = r::compare_results(Json::array({rec("exp", 300)}), Json::array({broken}), {});
  EXPECT_EQ(verdict(c), "regression");
  EXPECT_EQ(c["rows"][0]["reason"], "status ok -> mismatch");
}

TEST(Compare, DevicesByIdOrByName) {
  Json base = Json::array({rec("exp", 300, 0.01, "GPU-a")});
  Json other_machine = Json::array({rec("exp", 300, 0.01, "GPU-b")});
  Json by_id = r::compare_results(base, other_machine, {});
  EXPECT_EQ(by_id["summary"]["missing"], 1);
  EXPECT_EQ(by_id["summary"]["new"], 1);
  r::CompareOptions by_name;
  by_name.match_by_name = true;
  Json c = r::compare_results(base, other_machine, by_name);
  EXPECT_EQ(c["summary"]["same"], 1);
  EXPECT_EQ(c["rows"][0]["device"], "H100");
  EXPECT_EQ(c["match"], "name");
}

}  // namespace

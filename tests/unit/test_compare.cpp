// report compare's matching and verdicts on hand-made records: a planted 3x slowdown, a document
// against itself, older documents' stddev ranges, rounds and NOISY, several bases and their band,
// the rank test's veto, latency lower-better, MISSING and NEW, devices by UUID or by name,
// CHANGED library choices, and the absolute allowance of launch-bound GPU records.
#include "report/compare.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

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

// A record of a rounds-aware document: its median the middle round median, throughput
// 1e-3 / median (GB/s), round medians and kept samples in seconds.
Json rounds_rec(std::vector<double> round_medians, std::vector<double> samples) {
  Json j = rec("exp", 1);
  std::vector<double> sorted = samples, rounds = round_medians;
  std::sort(sorted.begin(), sorted.end());
  std::sort(rounds.begin(), rounds.end());
  const double median = rounds[rounds.size() / 2];
  j["time_s"] = {{"median", median},   {"min", sorted.front()},         {"max", sorted.back()},
                 {"stddev", 0.0},      {"reps", samples.size()},        {"truncated", false},
                 {"samples", samples}, {"round_medians", round_medians}};
  j["throughput"]["value"] = 1e-3 / median;
  return j;
}

// n samples around t (seconds), spread ±jitter evenly, in round order.
std::vector<double> around(double t, double jitter, int n = 30) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(t * (1 + jitter * ((i * 7 % n) / double(n - 1) * 2 - 1)));
  return v;
}

TEST(Compare, Tolerance) {
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("5%"), 0.05);
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("10 %"), 0.10);
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("0.2"), 0.2);
  EXPECT_DOUBLE_EQ(*r::parse_tolerance("150%"), 1.5);
  EXPECT_FALSE(r::parse_tolerance("five").has_value());
  EXPECT_FALSE(r::parse_tolerance("-1%").has_value());
  EXPECT_FALSE(r::parse_tolerance("").has_value());
  // A bare 5 would be 500 %, under which a 3x slowdown passes: a percentage needs its %.
  EXPECT_FALSE(r::parse_tolerance("5").has_value());
  EXPECT_FALSE(r::parse_tolerance("1").has_value());
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

// A row carries each side's share of the hardware's limit, where the records have one.
TEST(Compare, RowsCarryTheShareOfTheLimit) {
  Json base = rec("exp", 300), fresh = rec("exp", 100);
  base["limit"] = {{"value", 3000}, {"unit", "GB/s"}, {"fraction", 0.1}};
  fresh["limit"] = {{"value", 3000}, {"unit", "GB/s"}, {"fraction", 100.0 / 3000}};
  Json c = r::compare_results(Json::array({base}), Json::array({fresh}), {});
  EXPECT_DOUBLE_EQ(c["rows"][0]["base_fraction_of_limit"].get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(c["rows"][0]["new_fraction_of_limit"].get<double>(), 100.0 / 3000);
  fresh["limit"] = {{"reason", "none known"}};
  c = r::compare_results(Json::array({base}), Json::array({fresh}), {});
  EXPECT_FALSE(c["rows"][0].contains("new_fraction_of_limit"));
}

TEST(Compare, SelfIsSame) {
  Json base = Json::array({rec("exp", 300), rec("latency", 4e-6)});
  Json c = r::compare_results(base, base, {});
  EXPECT_EQ(verdict(c, 0), "same");
  EXPECT_EQ(verdict(c, 1), "same");
  EXPECT_EQ(c["summary"]["same"], 2);
  EXPECT_EQ(c["summary"]["noisy"], 0);
  EXPECT_EQ(c["verdict"], "ok");
}

TEST(Compare, OlderDocumentsUseTheirStddevAsTheirRange) {
  // No rounds, no samples: each run's range is its median ± stddev (no division by √reps: the
  // repetitions of one run are not independent of its moment). 2 % each: 10 % slower is beyond
  // the 5 % tolerance and both ranges (4 % wide each).
  Json quiet =
      r::compare_results(Json::array({rec("exp", 100)}), Json::array({rec("exp", 90)}), {});
  EXPECT_EQ(verdict(quiet), "regression");
  EXPECT_TRUE(quiet["rows"][0]["p_value"].is_null());
  // 10 % each: the ranges overlap, and the new run alone spreads 20 %: NOISY, not a failure.
  Json noisy = r::compare_results(Json::array({rec("exp", 100, 0.05)}),
                                  Json::array({rec("exp", 92, 0.05)}), {});
  EXPECT_EQ(verdict(noisy), "noisy");
  EXPECT_NEAR(noisy["rows"][0]["threshold"].get<double>(), (1 / 0.9 - 1 / 1.1) * (1 + 0.92), 1e-12);
  EXPECT_FALSE(r::comparison_failed(noisy));
  r::CompareOptions strict;
  strict.strict = true;
  Json failed = r::compare_results(Json::array({rec("exp", 100, 0.05)}),
                                   Json::array({rec("exp", 92, 0.05)}), strict);
  EXPECT_EQ(failed["verdict"], "noisy");
  EXPECT_TRUE(r::comparison_failed(failed));
}

TEST(Compare, OneOutlierRepetitionDoesNotHideASlowdown) {
  // 10000 repetitions whose stddev is 20x the median (one preempted run): the range is capped
  // at median - min (5 %), since a stalled repetition only adds time.
  Json base = rec("exp", 300), slow = rec("exp", 100);
  base["time_s"] = {{"median", 1e-3}, {"min", 0.95e-3}, {"stddev", 2e-2}, {"reps", 10000}};
  slow["time_s"] = {{"median", 3e-3}, {"min", 2.85e-3}, {"stddev", 6e-2}, {"reps", 10000}};
  Json c = r::compare_results(Json::array({base}), Json::array({slow}), {});
  EXPECT_EQ(verdict(c), "regression");
  EXPECT_LT(c["rows"][0]["threshold"].get<double>(), 0.15);
}

TEST(Compare, RoundsWithinTheToleranceAreSame) {
  Json a = rounds_rec({1.00e-3, 1.01e-3, 0.99e-3}, around(1e-3, 0.02));
  Json b = rounds_rec({1.02e-3, 1.01e-3, 1.03e-3}, around(1.02e-3, 0.02));
  Json c = r::compare_results(Json::array({a}), Json::array({b}), {});
  EXPECT_EQ(verdict(c), "same");
  EXPECT_TRUE(c["rows"][0]["p_value"].is_number());
  EXPECT_NEAR(c["rows"][0]["spread"].get<double>(), 1.02 / 1.01 - 1.02 / 1.03, 1e-9);
}

TEST(Compare, NoisyRoundsAreNoisyNotRegressions) {
  // The new run's rounds drift 30 %: its median moved 10 %, but its own range covers the base.
  Json a = rounds_rec({1.00e-3, 1.00e-3, 1.01e-3}, around(1e-3, 0.01));
  Json b = rounds_rec({1.00e-3, 1.10e-3, 1.30e-3}, around(1.1e-3, 0.2));
  Json c = r::compare_results(Json::array({a}), Json::array({b}), {});
  EXPECT_EQ(verdict(c), "noisy");
  EXPECT_GT(c["rows"][0]["spread"].get<double>(), 0.05);
  EXPECT_EQ(c["summary"]["noisy"], 1);
  EXPECT_EQ(c["verdict"], "ok");
}

TEST(Compare, ThreeBasesCatchA25PercentSlowdown) {
  std::vector<Json> bases;
  for (double t : {1.00e-3, 1.03e-3, 0.98e-3})
    bases.push_back(Json::array({rounds_rec({t, t * 1.01, t * 0.99}, around(t, 0.02))}));
  Json slow = Json::array({rounds_rec({1.25e-3, 1.26e-3, 1.24e-3}, around(1.25e-3, 0.02))});
  Json c = r::compare_results(bases, slow, {});
  EXPECT_EQ(verdict(c), "regression");
  EXPECT_EQ(c["rows"][0]["base_records"], 3);
  EXPECT_LT(c["rows"][0]["p_value"].get<double>(), 0.01);
  // The base median is the middle of the three, the band their full range.
  EXPECT_NEAR(c["rows"][0]["base"].get<double>(), 1.0, 1e-9);
  EXPECT_NEAR(c["rows"][0]["band"].get<double>(), 1 / (0.98 * 0.99) - 1 / (1.03 * 1.01), 1e-9);
}

TEST(Compare, TheBandOfTheBasesWidensTheThreshold) {
  // Three history runs 0.8 … 1.2 ms: a new run at 1.1 ms lies inside their band.
  std::vector<Json> bases;
  for (double t : {0.8e-3, 1.0e-3, 1.2e-3})
    bases.push_back(Json::array({rounds_rec({t, t, t * 1.001}, around(t, 0.01))}));
  Json c = r::compare_results(
      bases, Json::array({rounds_rec({1.1e-3, 1.1e-3, 1.101e-3}, around(1.1e-3, 0.01))}), {});
  EXPECT_EQ(verdict(c), "same");
  EXPECT_GT(c["rows"][0]["threshold"].get<double>(), 0.2);
}

TEST(Compare, TheRankTestMustAgree) {
  // Medians 12 % apart, rounds consistent, but the repetitions overlap almost entirely.
  std::vector<double> base_samples, new_samples;
  for (int i = 0; i < 20; ++i) {
    base_samples.push_back(1e-3 * (0.5 + i * 0.05));
    new_samples.push_back(1e-3 * (0.55 + i * 0.05));
  }
  Json a = rounds_rec({1.0e-3, 1.0e-3, 1.0e-3}, base_samples);
  Json b = rounds_rec({1.12e-3, 1.12e-3, 1.12e-3}, new_samples);
  Json c = r::compare_results(Json::array({a}), Json::array({b}), {});
  EXPECT_EQ(verdict(c), "same");
  EXPECT_GT(c["rows"][0]["p_value"].get<double>(), 0.01);
  EXPECT_NE(c["rows"][0]["reason"].get<std::string>().find("rank test does not agree"),
            std::string::npos);
}

TEST(Compare, TooFewSamplesForTheRankTestDoNotVeto) {
  // Three repetitions each cannot reach p < 0.01 (at best 0.1): a 3x slowdown still fails.
  Json a = rounds_rec({1.0e-3, 1.01e-3, 0.99e-3}, {1.0e-3, 1.01e-3, 0.99e-3});
  Json b = rounds_rec({3.0e-3, 3.03e-3, 2.97e-3}, {3.0e-3, 3.03e-3, 2.97e-3});
  Json c = r::compare_results(Json::array({a}), Json::array({b}), {});
  EXPECT_EQ(verdict(c), "regression");
  EXPECT_NEAR(c["rows"][0]["p_value"].get<double>(), 0.1, 1e-12);
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

Json with_choice(Json r, const std::string& id) {
  r["choice"] = {{"library", "cudnn"}, {"version", "9.14.0"}, {"id", id}, {"source", "cached"}};
  return r;
}

TEST(Compare, AnotherLibraryChoiceIsChangedBothWays) {
  const Json a = with_choice(rec("conv", 300), "engine 7 knobs TILE_SIZE=2");
  const Json b = with_choice(rec("conv", 300), "engine 9 knobs TILE_SIZE=1");
  for (const auto& [base, fresh] : {std::pair{a, b}, std::pair{b, a}}) {
    Json c = r::compare_results(Json::array({base}), Json::array({fresh}), {});
    ASSERT_EQ(c["rows"].size(), 1u);  // matched, not MISSING and NEW: choice is not in the key
    const Json& row = c["rows"][0];
    EXPECT_EQ(row["verdict"], "changed");
    EXPECT_EQ(row["base_choice"], "cudnn " + base["choice"]["id"].get<std::string>());
    EXPECT_EQ(row["new_choice"], "cudnn " + fresh["choice"]["id"].get<std::string>());
    EXPECT_NE(row["reason"].get<std::string>().find("figures within the threshold"),
              std::string::npos);
    EXPECT_EQ(c["summary"]["changed"], 1);
    EXPECT_EQ(c["verdict"], "ok");
    EXPECT_FALSE(r::comparison_failed(c));
    r::CompareOptions fail;
    fail.fail_on_changed = true;
    Json failed = r::compare_results(Json::array({base}), Json::array({fresh}), fail);
    EXPECT_EQ(failed["verdict"], "changed");
    EXPECT_TRUE(failed["fail_on_changed"].get<bool>());
    EXPECT_TRUE(r::comparison_failed(failed));
  }
}

TEST(Compare, ASlowdownUnderAnotherChoiceIsStillARegression) {
  // 3x slower under another engine: a CI gate must fail it whatever the library chose; the row
  // names both choices.
  Json c = r::compare_results(Json::array({with_choice(rec("conv", 300), "engine 7")}),
                              Json::array({with_choice(rec("conv", 100), "engine 9")}), {});
  const Json& row = c["rows"][0];
  EXPECT_EQ(row["verdict"], "regression");
  EXPECT_DOUBLE_EQ(row["base"].get<double>(), 300);
  EXPECT_DOUBLE_EQ(row["new"].get<double>(), 100);
  EXPECT_EQ(row["base_choice"], "cudnn engine 7");
  EXPECT_EQ(row["new_choice"], "cudnn engine 9");
  EXPECT_NE(row["reason"].get<std::string>().find("the library chose cudnn engine 9"),
            std::string::npos);
  EXPECT_EQ(c["summary"]["regression"], 1);
  EXPECT_EQ(c["summary"]["changed"], 0);
  EXPECT_TRUE(r::comparison_failed(c));

  // 3x faster under another engine: CHANGED, which fails only with --fail-on-changed.
  Json faster = r::compare_results(Json::array({with_choice(rec("conv", 100), "engine 7")}),
                                   Json::array({with_choice(rec("conv", 300), "engine 9")}), {});
  EXPECT_EQ(faster["rows"][0]["verdict"], "changed");
  EXPECT_NE(faster["rows"][0]["reason"].get<std::string>().find("improvement"), std::string::npos);
  EXPECT_FALSE(r::comparison_failed(faster));
}

TEST(Compare, SameChoiceOrNoneIsJudgedAsBefore) {
  Json same = r::compare_results(Json::array({with_choice(rec("conv", 300), "engine 7")}),
                                 Json::array({with_choice(rec("conv", 100), "engine 7")}), {});
  EXPECT_EQ(verdict(same), "regression");
  EXPECT_EQ(same["rows"][0]["choice"], "cudnn engine 7");
  // An older document names no choice: nothing to say it changed.
  Json older = r::compare_results(Json::array({rec("conv", 300)}),
                                  Json::array({with_choice(rec("conv", 300), "engine 7")}), {});
  EXPECT_EQ(verdict(older), "same");
  EXPECT_EQ(older["summary"]["changed"], 0);
}

// A record of `t` seconds median time (exp throughput 1e-3 / t GB/s), rounds ±0.5 %.
Json timed(double t, const std::string& backend = "cuda") {
  Json j = rounds_rec({t * 0.995, t, t * 1.005}, around(t, 0.005));
  j["backend"] = backend;
  return j;
}

TEST(Compare, LaunchBoundRecordsGetAnAbsoluteAllowance) {
  // 5 µs → 7 µs is 29 % slower, but 2 µs: inside the 2.5 µs allowance under the 20 µs floor.
  Json c = r::compare_results(Json::array({timed(5e-6)}), Json::array({timed(7e-6)}), {});
  EXPECT_EQ(verdict(c), "same");
  EXPECT_DOUBLE_EQ(c["rows"][0]["allowance_s"].get<double>(), r::kLaunchBoundAllowanceS);
  // Throughput 5/7 of the base's: the allowance is 2.5 µs of the new 7 µs.
  EXPECT_NEAR(c["rows"][0]["threshold"].get<double>(), 2.5 / 7, 1e-3);
  // 3 µs slower is beyond it, in either direction.
  EXPECT_EQ(verdict(r::compare_results(Json::array({timed(5e-6)}), Json::array({timed(8e-6)}), {})),
            "regression");
  EXPECT_EQ(verdict(r::compare_results(Json::array({timed(8e-6)}), Json::array({timed(5e-6)}), {})),
            "improvement");
  // Latency (time is the metric) the same way.
  EXPECT_EQ(verdict(r::compare_results(Json::array({rec("latency", 4e-6)}),
                                       Json::array({rec("latency", 4.8e-6)}), {})),
            "same");
  // Above the floor, 11 % is a regression; on the CPU nothing is launch-bound.
  EXPECT_EQ(
      verdict(r::compare_results(Json::array({timed(50e-6)}), Json::array({timed(56e-6)}), {})),
      "regression");
  Json cpu =
      r::compare_results(Json::array({timed(5e-6, "cpu")}), Json::array({timed(7e-6, "cpu")}), {});
  EXPECT_EQ(verdict(cpu), "regression");
  EXPECT_FALSE(cpu["rows"][0].contains("allowance_s"));
}

TEST(Compare, OneBaseAllowsTheMeasuredShiftBetweenRunsOfItsKind) {
  // A cuDNN convolution moved up to 15.7 % between identical runs; a single base cannot show
  // that, so 12 % slower is not a regression against one base, but is beyond two close ones.
  auto conv = [](double t) {
    Json j = timed(t);
    j["op"] = "conv";
    return j;
  };
  Json one = r::compare_results(Json::array({conv(100e-6)}), Json::array({conv(112e-6)}), {});
  EXPECT_EQ(verdict(one), "same");
  EXPECT_DOUBLE_EQ(one["rows"][0]["allowance"].get<double>(), 0.16);
  Json two = r::compare_results(
      std::vector<Json>{Json::array({conv(100e-6)}), Json::array({conv(101e-6)})},
      Json::array({conv(112e-6)}), {});
  EXPECT_EQ(verdict(two), "regression");
  EXPECT_FALSE(two["rows"][0].contains("allowance"));
  // Kinds that stayed inside the tolerance get none: exp on resident data.
  EXPECT_EQ(
      verdict(r::compare_results(Json::array({timed(100e-6)}), Json::array({timed(112e-6)}), {})),
      "regression");
}

TEST(Compare, SeveralBasesReportTheirSpreadBetweenRuns) {
  Json c = r::compare_results(
      std::vector<Json>{Json::array({timed(1e-3)}), Json::array({timed(1.04e-3)})},
      Json::array({timed(1.02e-3)}), {});
  ASSERT_TRUE(c["rows"][0].contains("between_runs"));
  EXPECT_NEAR(c["rows"][0]["between_runs"].get<double>(), 0.04 / 1.02, 2e-3);
  EXPECT_GE(c["rows"][0]["threshold"].get<double>(), c["rows"][0]["between_runs"].get<double>());
  EXPECT_EQ(verdict(c), "same");
}

}  // namespace

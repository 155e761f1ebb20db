// Timing statistics with exact numbers, and the repetition policy against a scripted timer.
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <vector>

#include "bench/reps.h"
#include "bench/stats.h"
#include "core/errors.h"

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;

TEST(Stats, OddCount) {
  const std::vector<double> s = {3, 1, 2, 5, 4};
  const TimeStats t = summarize(s, false);
  EXPECT_EQ(t.median, 3);
  EXPECT_EQ(t.min, 1);
  EXPECT_EQ(t.max, 5);
  EXPECT_DOUBLE_EQ(t.stddev, std::sqrt(2.5));  // Σ(x−3)² = 10, / (5−1)
  EXPECT_EQ(t.reps, 5u);
  EXPECT_FALSE(t.truncated);
}

TEST(Stats, EvenCountTakesTheMeanOfTheMiddleTwo) {
  const std::vector<double> s = {4, 1, 3, 2};
  const TimeStats t = summarize(s, true);
  EXPECT_EQ(t.median, 2.5);
  EXPECT_EQ(t.min, 1);
  EXPECT_EQ(t.max, 4);
  EXPECT_DOUBLE_EQ(t.stddev, std::sqrt(5.0 / 3.0));  // Σ(x−2.5)² = 5, / 3
  EXPECT_EQ(t.reps, 4u);
  EXPECT_TRUE(t.truncated);
}

TEST(Stats, OneSampleHasNoSpread) {
  const std::vector<double> s = {0.125};
  const TimeStats t = summarize(s, false);
  EXPECT_EQ(t.median, 0.125);
  EXPECT_EQ(t.min, 0.125);
  EXPECT_EQ(t.max, 0.125);
  EXPECT_EQ(t.stddev, 0);
  EXPECT_EQ(t.reps, 1u);
}

TEST(Stats, ExactForSmallTimesAndNoCancellation) {
  // Equal samples: stddev exactly 0 however large the values.
  const std::vector<double> same(7, 1e9 + 0.1);
  EXPECT_EQ(summarize(same, false).stddev, 0);
  const std::vector<double> s = {2e-6, 4e-6};
  const TimeStats t = summarize(s, false);
  EXPECT_DOUBLE_EQ(t.median, 3e-6);
  EXPECT_DOUBLE_EQ(t.stddev, std::sqrt(2e-12));
}

TEST(Stats, NoSamplesIsAnError) {
  EXPECT_THROW(summarize(std::vector<double>{}, false), std::invalid_argument);
}

// A timer that returns scripted durations (the last one repeated) and counts its calls.
struct ScriptedTimer {
  std::vector<double> script;
  std::size_t calls = 0;
  double operator()() {
    const double t = script[std::min(calls, script.size() - 1)];
    ++calls;
    return t;
  }
};

std::vector<double> run(const RepPolicy& p, ScriptedTimer& timer, bool& truncated) {
  return run_reps(
      p, [&] { return timer(); }, &truncated);
}

TEST(Reps, PlannedCount) {
  RepPolicy p;  // min_time 0.5
  EXPECT_EQ(planned_reps(p, 0.1), 5);
  EXPECT_EQ(planned_reps(p, 0.11), 5);  // ⌈4.54⌉
  EXPECT_EQ(planned_reps(p, 0.3), 3);   // ⌈1.67⌉ = 2, at least 3
  EXPECT_EQ(planned_reps(p, 10), 3);
  EXPECT_EQ(planned_reps(p, 0.001), 500);
  EXPECT_EQ(planned_reps(p, 0), kMaxAutoReps);
  EXPECT_EQ(planned_reps(p, 1e-12), kMaxAutoReps);
  p.reps = 7;
  EXPECT_EQ(planned_reps(p, 0.001), 7);
  EXPECT_EQ(planned_reps(p, 100), 7);
}

TEST(Reps, WarmupThenTimeDerivedCount) {
  // Warm-ups 1 s and 0.5 s are discarded; t1 = 0.1 → ⌈0.5/0.1⌉ = 5 timed runs.
  ScriptedTimer timer{{1.0, 0.5, 0.1, 0.11, 0.12, 0.13, 0.14, 9}};
  bool truncated = true;
  const auto s = run(RepPolicy{}, timer, truncated);
  EXPECT_EQ(s, (std::vector<double>{0.1, 0.11, 0.12, 0.13, 0.14}));
  EXPECT_EQ(timer.calls, 7u);
  EXPECT_FALSE(truncated);
}

TEST(Reps, AtLeastThree) {
  ScriptedTimer timer{{0.4}};
  bool truncated = true;
  RepPolicy p;
  p.warmup = 0;
  const auto s = run(p, timer, truncated);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_EQ(timer.calls, 3u);
  EXPECT_FALSE(truncated);
}

TEST(Reps, ExactlyRepsWhenGiven) {
  ScriptedTimer timer{{0.001}};
  bool truncated = true;
  RepPolicy p;
  p.warmup = 1;
  p.reps = 2;
  const auto s = run(p, timer, truncated);
  EXPECT_EQ(s.size(), 2u);
  EXPECT_EQ(timer.calls, 3u);
  EXPECT_FALSE(truncated);
}

TEST(Reps, MaxTimeTruncatesCountingWarmup) {
  // Warm-ups 4 + 4 s, then 3 s each, budget 20 s: after t1 spent = 11; run 2 → 14; run 3 → 17;
  // run 4 → 20 (not yet over); run 5 → 23; then over the budget: stop with 5 of 10 samples.
  ScriptedTimer timer{{4, 4, 3}};
  bool truncated = false;
  RepPolicy p;
  p.reps = 10;
  const auto s = run(p, timer, truncated);
  EXPECT_EQ(s.size(), 5u);
  EXPECT_EQ(timer.calls, 7u);
  EXPECT_TRUE(truncated);
}

TEST(Reps, AlwaysOneTimedSample) {
  // A warm-up alone blows the budget: the second warm-up is skipped, one timed run is made.
  ScriptedTimer timer{{30, 1}};
  bool truncated = false;
  RepPolicy p;
  p.max_time_s = 20;
  const auto s = run(p, timer, truncated);
  EXPECT_EQ(s, std::vector<double>{1});
  EXPECT_EQ(timer.calls, 2u);
  EXPECT_TRUE(truncated);
  // A first timed run over budget is kept, and nothing follows it.
  ScriptedTimer slow{{25}};
  p.warmup = 0;
  EXPECT_EQ(run(p, slow, truncated), std::vector<double>{25});
  EXPECT_TRUE(truncated);
}

TEST(Reps, ZeroDurationsStopAtTheCap) {
  // A timer that reports nothing must not spin forever; the cap ends it. The count is planned
  // from the first run's wall time when that is larger than the reported zero: min_time asks for
  // far more than the cap at any wall time below 1000 s a call (with the default 0.5 s, a call
  // slower than 0.5 µs, as under ASan or on a busy machine, planned fewer runs than the cap), and
  // the budget is wide enough that only the cap can end the runs.
  ScriptedTimer timer{{0.0}};
  bool truncated = true;
  RepPolicy p;
  p.warmup = 0;
  p.min_time_s = 1e9;
  p.max_time_s = 600;
  const auto s = run(p, timer, truncated);
  EXPECT_EQ(s.size(), static_cast<std::size_t>(kMaxAutoReps));
  EXPECT_FALSE(truncated);
}

TEST(Reps, TruncatedPointerMayBeNull) {
  ScriptedTimer timer{{0.2}};
  RepPolicy p;
  p.reps = 2;
  EXPECT_EQ(run_reps(
                p, [&] { return timer(); }, nullptr)
                .size(),
            2u);
}

// A device whose clocks rise slowly asks for seconds of warm-up: 10 ms runs and 0.05 s of it
// are 5 untimed runs before the 3 timed ones, whatever --warmup's count; --warmup 0 still means
// none, and the budget still cuts it.
TEST(Reps, TheLeastWarmUpAddsRunsUntilItIsSpent) {
  RepPolicy p;
  p.warmup = 1;
  p.reps = 3;
  p.min_warmup_s = 0.05;
  int calls = 0;
  auto ten_ms = [&] {
    ++calls;
    return 0.01;
  };
  EXPECT_EQ(run_reps(p, ten_ms, nullptr).size(), 3u);
  EXPECT_EQ(calls, 5 + 3);
  calls = 0;
  p.warmup = 0;
  EXPECT_EQ(run_reps(p, ten_ms, nullptr).size(), 3u);
  EXPECT_EQ(calls, 3);
  calls = 0;
  p.warmup = 1;
  p.min_warmup_s = 100;
  p.max_time_s = 0.2;
  bool cut = false;
  run_reps(p, ten_ms, &cut);
  EXPECT_TRUE(cut);
  EXPECT_LE(calls, 22);
}

TEST(Reps, StableMedianEndsTheRunsEarlyOnlyWhenAsked) {
  // Steady 10 ms runs: min_time 0.5 s plans 50 of them; a stable median needs only 5.
  RepPolicy p;
  p.warmup = 0;
  int calls = 0;
  auto steady = [&] {
    ++calls;
    return std::vector<double>{0.010, 0.020};
  };
  p.stable_within = 0.01;
  bool cut = true, stable = false;
  auto s = run_reps_multi(p, 2, steady, &cut, &stable);
  EXPECT_TRUE(stable);
  EXPECT_FALSE(cut);
  EXPECT_EQ(calls, kMinStableReps);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].size(), static_cast<std::size_t>(kMinStableReps));
  // Off (the default) plans from the slowest series (20 ms: 25 runs).
  calls = 0;
  p.stable_within = 0;
  s = run_reps_multi(p, 2, steady, &cut, &stable);
  EXPECT_FALSE(stable);
  EXPECT_EQ(calls, 25);
  // --reps is exact whatever the median does.
  calls = 0;
  p.stable_within = 0.01;
  p.reps = 12;
  s = run_reps_multi(p, 2, steady, &cut, &stable);
  EXPECT_EQ(calls, 12);
}

TEST(Reps, AMovingMedianKeepsRunning) {
  // Every run 10 % slower than the one before: the median never settles, min_time ends it.
  RepPolicy p;
  p.warmup = 0;
  p.stable_within = 0.01;
  double t = 0.01;
  int calls = 0;
  bool stable = true;
  auto s = run_reps_multi(
      p, 1,
      [&] {
        ++calls;
        t *= 1.1;
        return std::vector<double>{t};
      },
      nullptr, &stable);
  EXPECT_FALSE(stable);
  EXPECT_GT(calls, kMinStableReps + 10);
  EXPECT_FALSE(median_is_stable({1, 2, 3, 4, 5}, 0.01));
  EXPECT_TRUE(median_is_stable({1, 1, 1, 1, 1.001}, 0.01));
  EXPECT_FALSE(median_is_stable({1, 1}, 0.5));  // too few to say
  EXPECT_THROW(run_reps_multi(
                   p, 2, [] { return std::vector<double>{1}; }, nullptr),
               std::logic_error);
}

TEST(Reps, InvalidPolicyIsAUsageErrorNamingTheFlag) {
  auto message = [](const RepPolicy& p) {
    try {
      validate(p);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  RepPolicy p;
  EXPECT_EQ(message(p), "");
  p.warmup = -1;
  EXPECT_NE(message(p).find("--warmup"), std::string::npos);
  p = {};
  p.reps = 0;
  EXPECT_NE(message(p).find("--reps"), std::string::npos);
  p = {};
  p.min_time_s = -1;
  EXPECT_NE(message(p).find("--min-time"), std::string::npos);
  p = {};
  p.max_time_s = 0;
  EXPECT_NE(message(p).find("--max-time"), std::string::npos);
  p.max_time_s = std::nan("");
  EXPECT_NE(message(p).find("--max-time"), std::string::npos);
  ScriptedTimer timer{{1}};
  EXPECT_THROW(run_reps(
                   p, [&] { return timer(); }, nullptr),
               UsageError);
  EXPECT_EQ(timer.calls, 0u);
}

}  // namespace

// Rounds and kept samples.
namespace {

TEST(Rounds, PooledStatisticsRoundMediansAndKeptSamples) {
  const std::vector<std::vector<double>> rounds = {{1, 2, 3}, {}, {10, 20}};
  const TimeStats t = summarize_rounds(rounds, false);
  EXPECT_EQ(t.reps, 5u);
  EXPECT_EQ(t.median, 3);
  EXPECT_EQ(t.min, 1);
  EXPECT_EQ(t.max, 20);
  EXPECT_EQ(t.round_medians, (std::vector<double>{2, 15}));  // the empty round is no round
  EXPECT_EQ(t.samples, (std::vector<double>{1, 2, 3, 10, 20}));
  // One round: no round medians (nothing to spread), samples still kept.
  const TimeStats one = summarize_rounds({{5, 6}}, false);
  EXPECT_TRUE(one.round_medians.empty());
  EXPECT_EQ(one.samples.size(), 2u);
}

TEST(Rounds, AtMost64SamplesEvenlySpaced) {
  std::vector<double> many(1000);
  for (std::size_t i = 0; i < many.size(); ++i) many[i] = static_cast<double>(i);
  const TimeStats t = summarize(many, false);
  ASSERT_EQ(t.samples.size(), kMaxKeptSamples);
  EXPECT_EQ(t.samples.front(), 0);
  EXPECT_EQ(t.samples[1], 15);       // floor(1 * 1000 / 64)
  EXPECT_EQ(t.samples.back(), 984);  // floor(63 * 1000 / 64)
  EXPECT_EQ(evenly_spaced(std::vector<double>{1, 2}, 64), (std::vector<double>{1, 2}));
}

TEST(Rounds, RoundPoliciesSplitRepsTimeAndWarmup) {
  RepPolicy p;
  p.rounds = 3;
  p.reps = 10;
  p.warmup = 2;
  p.min_time_s = 0.6;
  p.max_time_s = 30;
  EXPECT_EQ(effective_rounds(p), 3);
  EXPECT_EQ(*round_policy(p, 0).reps, 4);  // 10 = 4 + 3 + 3
  EXPECT_EQ(*round_policy(p, 1).reps, 3);
  EXPECT_EQ(*round_policy(p, 2).reps, 3);
  EXPECT_EQ(round_policy(p, 0).warmup, 2);
  EXPECT_EQ(round_policy(p, 1).warmup, 1);  // the other cells ran in between
  EXPECT_DOUBLE_EQ(round_policy(p, 1).max_time_s, 10);
  EXPECT_DOUBLE_EQ(round_policy(p, 1).min_time_s, 0.2);
  EXPECT_EQ(round_policy(p, 1).rounds, 1);
  p.reps = 2;  // fewer reps than rounds: one rep a round, two rounds
  EXPECT_EQ(effective_rounds(p), 2);
  EXPECT_EQ(*round_policy(p, 1).reps, 1);
  p.reps.reset();
  p.warmup = 0;
  EXPECT_EQ(round_policy(p, 2).warmup, 0);
  EXPECT_EQ(round_policy(p, 0).min_auto_reps, 1);  // ⌈3 / 3⌉: three rounds give three runs
  EXPECT_EQ(planned_reps(round_policy(p, 0), 1.0), 1);
}

TEST(Rounds, RoundsOutsideTheRangeAreAUsageError) {
  RepPolicy p;
  p.rounds = 0;
  EXPECT_THROW(validate(p), UsageError);
  p.rounds = kMaxRounds + 1;
  EXPECT_THROW(validate(p), UsageError);
  p.rounds = kMaxRounds;
  EXPECT_NO_THROW(validate(p));
}

}  // namespace

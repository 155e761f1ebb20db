// bench's time-left estimate (app/run_estimate.h): on the event traces of two real default runs
// on the 2-core VM (GPUCHECK_PROGRESS_TRACE: the CPU, pocl and lavapipe; one with pocl's
// kernels and GEMM winners cached, one with neither), how far elapsed + left is from the run's
// real length from a fifth of the run on, beside the count of units the line used before; and
// the model's rules on small made-up runs.
#include "app/run_estimate.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {
namespace {

using Json = nlohmann::json;

struct Trace {
  std::vector<RunEstimate::Device> devices;
  std::vector<Json> events;  // in time order, "plan" left out
  double end = 0;            // the "done" event's time
};

Trace load_trace(const std::string& name) {
  std::ifstream in(std::string(GPUCHECK_FIXTURES_DIR) + "/progress/" + name);
  Trace t;
  std::string line;
  while (std::getline(in, line)) {
    Json e = Json::parse(line);
    if (e["event"] == "plan") {
      for (const auto& d : e["devices"])
        t.devices.push_back(
            {d["device"].get<std::string>(), d["cells"].size(), d["rounds"].get<int>(),
             d.value("search_keys", Json::array()).get<std::vector<std::string>>()});
    } else if (e["event"] == "done") {
      t.end = e["t"].get<double>();
    } else {
      t.events.push_back(e);
    }
  }
  return t;
}

void apply(RunEstimate& est, const Json& e) {
  const std::string device = e.value("device", "");
  const double t = e["t"].get<double>();
  if (e["event"] == "planned")
    est.planned(device, e["units"].get<std::size_t>(),
                e.value("runs", Json::array()).get<std::vector<bool>>());
  if (e["event"] == "start") est.started(device, e["cell"].get<std::size_t>(), t);
  if (e["event"] == "end") est.ended(device, t);
  if (e["event"] == "once") est.once(device, e.value("budget_s", 0.0));
}

struct Errors {
  double worst = 0, mean = 0, within = 0;  // |elapsed + left - length| / length; share <= 25 %
};

// Samples every 0.25 s from a fifth of the run to its end, of the model (count_only false) or
// of what the progress line said before it: units done over units planned, where a device not
// yet started counts its cells once (not per round), as the line had it.
Errors errors(const Trace& t, bool count_only) {
  RunEstimate est(t.devices);
  std::map<std::string, std::size_t> totals;
  for (const auto& d : t.devices) totals[d.name] = d.cells;
  std::map<std::string, bool> open;
  std::size_t next = 0, done = 0, samples = 0;
  Errors e;
  for (double now = 0; now < t.end; now += 0.25) {
    for (; next < t.events.size() && t.events[next]["t"].get<double>() <= now; ++next) {
      const Json& ev = t.events[next];
      apply(est, ev);
      const std::string device = ev.value("device", "");
      if (ev["event"] == "planned") totals[device] = ev["units"].get<std::size_t>();
      if ((ev["event"] == "start" || ev["event"] == "end") && open[device]) ++done;
      if (ev["event"] == "start") open[device] = true;
      if (ev["event"] == "end") open[device] = false;
    }
    if (now < t.end / 5) continue;
    std::optional<double> left;
    if (count_only) {
      std::size_t total = 0;
      for (const auto& [d, n] : totals) total += n;
      if (done > 0 && total > done)
        left = now / static_cast<double>(done) * static_cast<double>(total - done);
    } else {
      left = est.remaining(now);
      EXPECT_TRUE(left.has_value()) << "no estimate at " << now << " s";
    }
    if (!left) continue;
    const double err = std::fabs(now + *left - t.end) / t.end;
    if (std::getenv("GPUCHECK_TRACE_ESTIMATE") && !count_only)
      std::fprintf(stderr, "%6.2f  total %6.2f  (%+.0f%%)\n", now, now + *left,
                   (now + *left - t.end) / t.end * 100);
    e.worst = std::max(e.worst, err);
    e.mean += err;
    e.within += err <= 0.25 ? 1 : 0;
    ++samples;
  }
  if (samples) e.mean /= static_cast<double>(samples), e.within /= static_cast<double>(samples);
  return e;
}

TEST(RunEstimate, RealRunsAreEstimatedCloserThanTheCountOfUnits) {
  for (const char* name : {"bench_vm_cached.jsonl", "bench_vm_first_run.jsonl"}) {
    SCOPED_TRACE(name);
    const Trace t = load_trace(name);
    ASSERT_GT(t.end, 10) << "a trace of a whole run";
    ASSERT_GE(t.devices.size(), 3u);
    const Errors model = errors(t, false), count = errors(t, true);
    std::printf(
        "%s: model worst %.0f %%, mean %.0f %%, within 25 %% %.0f %% of the time; the count "
        "of units: %.0f %%, %.0f %%, %.0f %%\n",
        name, model.worst * 100, model.mean * 100, model.within * 100, count.worst * 100,
        count.mean * 100, count.within * 100);
    // The goal was ±25 % from a fifth of the run on. It is missed for moments: a device's first
    // units (kernel builds) and a device not yet opened (which cells it drops) are unknown.
    EXPECT_LE(model.worst, 0.45);
    EXPECT_LE(model.mean, 0.15);
    EXPECT_GE(model.within, 0.8);
    // With caches (every run after the first) the model is closer throughout; on a first run the
    // two are alike (worst 43 % and 42 %, mean 13 % both, when this was written).
    if (std::string(name) == "bench_vm_cached.jsonl") {
      EXPECT_LT(model.worst, count.worst);
      EXPECT_LT(model.mean, count.mean);
    }
  }
}

TEST(RunEstimate, NothingBeforeTheFirstUnitEnds) {
  RunEstimate est({{"cpu", 1, 3, {}}});
  EXPECT_FALSE(est.remaining(0).has_value());
  est.started("cpu", 0, 0);
  EXPECT_FALSE(est.remaining(1).has_value());
  est.started("cpu", 0, 2);  // round 2: the first took 2 s
  ASSERT_TRUE(est.remaining(2).has_value());
  EXPECT_DOUBLE_EQ(*est.remaining(2), 2 + 2);  // this round and the third
  EXPECT_DOUBLE_EQ(*est.remaining(3), 1 + 2);
  EXPECT_DOUBLE_EQ(*est.remaining(9), 0 + 2);  // a slow round: never less than nothing
}

TEST(RunEstimate, ADeviceNotYetStartedIsPredictedAtTheMeanUnitThenAtItsOwn) {
  // The CPU ran a 1 s exp and a 3 s gemm; the GPU, not started, runs two units at that mean.
  RunEstimate est({{"cpu", 2, 1, {}}, {"gpu", 2, 1, {}}});
  est.started("cpu", 0, 0);
  est.started("cpu", 1, 1);
  est.ended("cpu", 4);
  EXPECT_DOUBLE_EQ(*est.remaining(4), 2 * 2);
  // Once it has run its exp in 0.5 s, its gemm is predicted at its own mean.
  est.started("gpu", 0, 4);
  est.started("gpu", 1, 4.5);
  EXPECT_DOUBLE_EQ(*est.remaining(4.5), 0.5);
}

TEST(RunEstimate, ADeviceNotYetStartedKeepsTheShareTheStartedOnesKept) {
  // The CPU's child ran 2 of its 4 cells; the GPU's 4 cells are expected to be 2 units.
  RunEstimate est({{"cpu", 4, 1, {}}, {"gpu", 4, 1, {}}});
  est.planned("cpu", 2, {true, false, true, false});
  est.started("cpu", 0, 0);
  est.started("cpu", 2, 1);
  est.ended("cpu", 2);
  EXPECT_DOUBLE_EQ(*est.remaining(2), 2 * 1);
}

TEST(RunEstimate, TheChildsUnitCountWins) {
  // Four cells of two rounds planned; the child drops two (the device cannot run them).
  RunEstimate est({{"gpu", 4, 2, {}}});
  est.planned("gpu", 4);
  est.started("gpu", 0, 0);
  est.started("gpu", 1, 1);  // cell a: 1 s
  // Three units left, each predicted at the device's mean (1 s), less the 0 s of b so far.
  EXPECT_DOUBLE_EQ(*est.remaining(1), 2 + 1);
}

TEST(RunEstimate, SearchesArePredictedFromTheirBudgetThenFromTheOnesThatEnded) {
  // A GEMM search per dtype before its first GEMM; the exp never searches.
  RunEstimate est({{"gpu", 3, 1, {"", "f32", "f64"}}});
  est.started("gpu", 0, 0);
  est.started("gpu", 1, 1);  // exp: 1 s
  est.once("gpu", 5);        // gemm f32 searches first, within 5 s
  // The search in progress at twice its budget (9 s of 10 left), f64's to come as long, and
  // f64's own round at the device's mean.
  EXPECT_DOUBLE_EQ(*est.remaining(2), 9 + 10 + 1);
  est.started("gpu", 2, 13);  // the f32 search and round took 12 s
  est.once("gpu", 5);
  // Now a search is predicted as the one that ended took.
  EXPECT_DOUBLE_EQ(*est.remaining(13), 12);
  est.ended("gpu", 25);
  EXPECT_DOUBLE_EQ(*est.remaining(25), 0);
}

TEST(RunEstimate, ADeviceThatHasNotSearchedIsTakenToHaveItsWinnersCached) {
  RunEstimate est({{"gpu", 2, 1, {"", "f32"}}});
  est.started("gpu", 0, 0);
  est.started("gpu", 1, 1);
  EXPECT_DOUBLE_EQ(*est.remaining(1), 1);  // the gemm at the device's mean, no search
}

}  // namespace
}  // namespace gpucheck::app

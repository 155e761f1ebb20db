// The repetition policy (DESIGN.md "Repetitions"): warm-up runs, then a fixed or time-derived
// number of timed runs, cut short by a time budget.
#pragma once

#include <functional>
#include <optional>
#include <vector>

namespace gpucheck::bench {

struct RepPolicy {
  int warmup = 2;           // --warmup: untimed runs first
  std::optional<int> reps;  // --reps: exactly this many timed runs (budget permitting)
  double min_time_s = 0.5;  // --min-time: without --reps, aim for this much timed work
  double max_time_s = 20;   // --max-time: stop once this much has been spent, warm-up included
};

// Without --reps the count is never more than this, so a zero or tiny first time cannot ask for
// an unbounded number of runs.
inline constexpr int kMaxAutoReps = 1000000;

// Throws UsageError naming the flag for warmup < 0, reps < 1, min_time < 0, max_time <= 0 or a
// non-finite value.
void validate(const RepPolicy& policy);

// How many timed runs the policy asks for, given t1, the first timed run's seconds:
// *reps when given, else max(3, ⌈min_time / t1⌉) capped at kMaxAutoReps.
int planned_reps(const RepPolicy& policy, double t1);

// Runs timed_once (which does one repetition and returns its seconds) policy.warmup times
// discarding the results, then the planned timed repetitions (planned from the larger of the
// first run's returned and wall-clock seconds), and returns their times. Before every other run,
// stops if the seconds spent so far exceed max_time — the larger of the sum of every returned
// time (warm-up included) and the wall clock since the start; *truncated (when not null) says
// whether that cut the warm-up or the timed runs short. One timed sample is always taken.
// Exceptions from timed_once propagate.
std::vector<double> run_reps(const RepPolicy& policy, const std::function<double()>& timed_once,
                             bool* truncated);

}  // namespace gpucheck::bench

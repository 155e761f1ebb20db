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
  // --rounds: the cell's repetitions are spread over this many rounds, each round running every
  // cell once (bench/engine.cpp), so a record carries the spread between moments of the run.
  int rounds = 1;
  int min_auto_reps = 3;  // without --reps, at least this many timed runs
  // Without --reps: stop as soon as the median is stable to this fraction (0: never early).
  // Copies between GPUs are steady to about 1 %, so their cells need far fewer runs than
  // --min-time asks; min_time then only caps the count.
  double stable_within = 0;
  // Warm-up runs continue, past `warmup`, until they add up to this many seconds (never when
  // warmup is 0): set from Device::min_warmup_seconds for a device whose clocks rise slowly.
  double min_warmup_s = 0;
};

// Runs a stable median needs before it may end the repetitions early.
inline constexpr int kMinStableReps = 5;
// bench's and qualify's stable_within for work between GPUs: copies and all-reduces are steady
// to about 1 % on the machines measured. doctor's load leaves it off: its copies load the links
// for a time, they do not measure them.
inline constexpr double kSteadyWithin = 0.01;

// Most rounds --rounds accepts: each is a full set-up, run and verification of every cell.
inline constexpr int kMaxRounds = 100;

// The rounds a cell gets: policy.rounds, but never more than an exact --reps count.
int effective_rounds(const RepPolicy& policy);

// The policy of one of the rounds (0-based) of effective_rounds(policy): --reps split evenly
// (earlier rounds take the remainder), min_time and max_time divided by the round count, at
// least ⌈3 / rounds⌉ runs without --reps, and after the first round a single warm-up run (the
// other cells ran in between), none when --warmup is 0. The result has rounds = 1.
RepPolicy round_policy(const RepPolicy& policy, int round);

// Without --reps the count is never more than this, so a zero or tiny first time cannot ask for
// an unbounded number of runs.
inline constexpr int kMaxAutoReps = 1000000;

// Throws UsageError naming the flag for warmup < 0, reps < 1, min_time < 0, max_time <= 0, a
// non-finite value or rounds outside 1…kMaxRounds.
void validate(const RepPolicy& policy);

// How many timed runs the policy asks for, given t1, the first timed run's seconds:
// *reps when given, else max(min_auto_reps, ⌈min_time / t1⌉) capped at kMaxAutoReps.
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

// run_reps for `series` measurements taken together (pairs of GPUs copying at once): timed_once
// returns each one's seconds for one repetition, the plan and budget follow the slowest, and with
// policy.stable_within > 0 (and no --reps) the runs end once, after at least kMinStableReps of
// them, neither of the last two runs moved any series' median by more than stable_within of it.
// *stable (when not null) says whether that ended them. Returns the samples of each series.
std::vector<std::vector<double>> run_reps_multi(
    const RepPolicy& policy, std::size_t series,
    const std::function<std::vector<double>()>& timed_once, bool* truncated,
    bool* stable = nullptr);

// Whether samples' median moved by at most `within` of it when each of the last two was added.
bool median_is_stable(const std::vector<double>& samples, double within);

}  // namespace gpucheck::bench

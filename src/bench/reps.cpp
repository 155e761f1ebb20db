// The repetition policy as a pure count function and a small runner over a timing callback.
#include "bench/reps.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>
#include <stdexcept>

#include "bench/stats.h"
#include "core/errors.h"

namespace gpucheck::bench {

void validate(const RepPolicy& policy) {
  if (policy.warmup < 0)
    throw UsageError(fmt::format("--warmup must be 0 or more, not {}", policy.warmup));
  if (policy.reps && *policy.reps < 1)
    throw UsageError(fmt::format("--reps must be 1 or more, not {}", *policy.reps));
  if (!std::isfinite(policy.min_time_s) || policy.min_time_s < 0)
    throw UsageError(
        fmt::format("--min-time must be 0 or more seconds, not {}", policy.min_time_s));
  if (!std::isfinite(policy.max_time_s) || policy.max_time_s <= 0)
    throw UsageError(
        fmt::format("--max-time must be more than 0 seconds, not {}", policy.max_time_s));
  if (!std::isfinite(policy.stable_within) || policy.stable_within < 0 || policy.stable_within >= 1)
    throw UsageError(fmt::format("a stable median is within a fraction of 0 to 1, not {}",
                                 policy.stable_within));
  if (policy.rounds < 1 || policy.rounds > kMaxRounds)
    throw UsageError(
        fmt::format("--rounds must be between 1 and {}, not {}", kMaxRounds, policy.rounds));
}

int effective_rounds(const RepPolicy& policy) {
  return policy.reps ? std::min(policy.rounds, *policy.reps) : policy.rounds;
}

RepPolicy round_policy(const RepPolicy& policy, int round) {
  const int rounds = effective_rounds(policy);
  RepPolicy p = policy;
  p.rounds = 1;
  if (round > 0) p.warmup = std::min(policy.warmup, 1);
  if (policy.reps) p.reps = *policy.reps / rounds + (round < *policy.reps % rounds ? 1 : 0);
  p.min_time_s = policy.min_time_s / rounds;
  p.max_time_s = policy.max_time_s / rounds;
  p.min_auto_reps = (policy.min_auto_reps + rounds - 1) / rounds;
  return p;
}

int planned_reps(const RepPolicy& policy, double t1) {
  if (policy.reps) return *policy.reps;
  if (!(t1 > 0)) return kMaxAutoReps;  // a zero (or broken) time: only the budget can stop us
  const double wanted = std::ceil(policy.min_time_s / t1);
  if (!(wanted < kMaxAutoReps)) return kMaxAutoReps;
  return std::max(std::max(1, policy.min_auto_reps), static_cast<int>(wanted));
}

bool median_is_stable(const std::vector<double>& samples, double within) {
  if (samples.size() < 3 || !(within > 0)) return false;
  const double now = median_of(samples);
  if (!(now > 0)) return false;
  for (std::size_t drop : {1u, 2u}) {
    const double before = median_of(std::span<const double>(samples).first(samples.size() - drop));
    if (!(std::abs(now - before) <= within * now)) return false;
  }
  return true;
}

std::vector<std::vector<double>> run_reps_multi(
    const RepPolicy& policy, std::size_t series,
    const std::function<std::vector<double>()>& timed_once, bool* truncated, bool* stable) {
  validate(policy);
  // The budget counts what the runs report and, as well, the wall clock: a callback that
  // reports device time or a per-call share can take far longer on the host than it says.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double reported = 0;
  auto spent = [&] {
    return std::max(reported, std::chrono::duration<double>(Clock::now() - start).count());
  };
  // One run of every series: its seconds, checked for count; the slowest is what the run cost.
  auto once = [&] {
    std::vector<double> t = timed_once();
    if (t.size() != series) throw std::logic_error("run_reps_multi: one time per series");
    double slowest = 0;
    for (double x : t) slowest = std::max(slowest, x);
    reported += slowest;
    return std::make_pair(t, slowest);
  };
  bool cut = false, settled = false;
  double warm = 0;
  for (int i = 0; i < policy.warmup || (policy.warmup > 0 && warm < policy.min_warmup_s &&
                                        i < kMaxAutoReps);
       ++i) {
    if (spent() > policy.max_time_s) {
      cut = true;
      break;
    }
    warm += once().second;
  }
  std::vector<std::vector<double>> samples(series);
  const auto first_start = Clock::now();
  auto [t1, slowest1] = once();
  const double t1_wall = std::chrono::duration<double>(Clock::now() - first_start).count();
  for (std::size_t s = 0; s < series; ++s) samples[s].push_back(t1[s]);
  const auto planned = static_cast<std::size_t>(planned_reps(policy, std::max(slowest1, t1_wall)));
  const bool may_settle = !policy.reps && policy.stable_within > 0;
  while (samples.front().size() < planned) {
    if (may_settle &&
        samples.front().size() >=
            static_cast<std::size_t>(std::max(kMinStableReps, policy.min_auto_reps)) &&
        std::all_of(samples.begin(), samples.end(), [&](const std::vector<double>& s) {
          return median_is_stable(s, policy.stable_within);
        })) {
      settled = true;
      break;
    }
    if (spent() > policy.max_time_s) {
      cut = true;
      break;
    }
    auto [t, slowest] = once();
    (void)slowest;
    for (std::size_t s = 0; s < series; ++s) samples[s].push_back(t[s]);
  }
  if (truncated != nullptr) *truncated = cut;
  if (stable != nullptr) *stable = settled;
  return samples;
}

std::vector<double> run_reps(const RepPolicy& policy, const std::function<double()>& timed_once,
                             bool* truncated) {
  return run_reps_multi(
             policy, 1, [&] { return std::vector<double>{timed_once()}; }, truncated)
      .front();
}

}  // namespace gpucheck::bench

// The repetition policy as a pure count function and a small runner over a timing callback.
#include "bench/reps.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

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

std::vector<double> run_reps(const RepPolicy& policy, const std::function<double()>& timed_once,
                             bool* truncated) {
  validate(policy);
  // The budget counts what the runs report and, as well, the wall clock: a callback that
  // reports device time or a per-call share can take far longer on the host than it says.
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  double reported = 0;
  auto spent = [&] {
    return std::max(reported, std::chrono::duration<double>(Clock::now() - start).count());
  };
  bool cut = false;
  for (int i = 0; i < policy.warmup; ++i) {
    if (spent() > policy.max_time_s) {
      cut = true;
      break;
    }
    reported += timed_once();
  }
  std::vector<double> samples;
  const auto first_start = Clock::now();
  const double t1 = timed_once();
  const double t1_wall = std::chrono::duration<double>(Clock::now() - first_start).count();
  samples.push_back(t1);
  reported += t1;
  const auto planned = static_cast<std::size_t>(planned_reps(policy, std::max(t1, t1_wall)));
  while (samples.size() < planned) {
    if (spent() > policy.max_time_s) {
      cut = true;
      break;
    }
    const double t = timed_once();
    samples.push_back(t);
    reported += t;
  }
  if (truncated != nullptr) *truncated = cut;
  return samples;
}

}  // namespace gpucheck::bench

// Screening with few repetitions, confirmation of the leaders with more, the reference timed
// again in the same round so that a clock that drifted during the search favours no one.
#include "backends/opencl/gemm_tuner.h"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <limits>
#include <random>

namespace gpucheck::opencl {

namespace {

constexpr int kScreenReps = 3;
constexpr int kConfirmReps = 5;
constexpr std::size_t kLeaders = 3;
// A reference slower than this share of the budget per GEMM gets a smaller tuning shape.
constexpr double kMaxRunShareOfBudget = 1.0 / 40;
constexpr std::uint64_t kSmallestShape = 256;
// Attempts to find an untried candidate before the space counts as exhausted.
constexpr int kMaxDraws = 200;

struct Timed {
  GemmCandidate candidate;
  double seconds = 0;      // one GEMM
  double wall = 0;         // the whole trial: build, upload, repetitions, verification
  double first_run_s = 0;  // its first, untimed run, which built the kernel
};

// What running a candidate again with `reps` repetitions will take, from a trial of it with
// `timed_reps`: the fixed part (uploads, the verification; on pocl a second each) and the GEMMs,
// without the build its first trial paid (the device keeps built kernels).
double rerun_cost(const Timed& t, int timed_reps, int reps) {
  const double first = t.first_run_s > 0 ? t.first_run_s : t.seconds;
  const double fixed = std::max(0.0, t.wall - first - t.seconds * timed_reps);
  return fixed + t.seconds * (reps + 1);
}

class Search {
 public:
  Search(const TunerSetup& s, const TunerHooks& h) : setup_(s), hooks_(h), rng_(s.seed) {
    result_.shape = s.shape;
  }

  TunerResult run() {
    const double start = hooks_.clock();
    std::optional<double> ref = time_reference();
    // The budget is the user's: everything after the library's first call is spent from it,
    // the reference's timed runs included.
    const double deadline = start + result_.library_first_call_s + setup_.budget_s;
    screen(deadline);
    confirm(ref);
    result_.search_s = hooks_.clock() - start;
    return std::move(result_);
  }

 private:
  // One trial, with what it cost; a failure or a wrong result is a rejection. corrupt: the planted
  // bad candidate, whose time is divided so that it would win were its result not checked first.
  std::optional<Timed> try_one(const GemmCandidate& c, int reps, bool corrupt = false) {
    tried_.push_back(c);
    const double t0 = hooks_.clock();
    GemmTrialResult r;
    try {
      r = hooks_.trial(c, result_.shape, reps, corrupt);
    } catch (const std::exception& e) {
      result_.rejected.push_back({c, e.what()});
      return std::nullopt;
    }
    if (corrupt) r.seconds /= 1000;
    if (!r.verified) {
      result_.rejected.push_back({c, "verification failed: " + r.detail});
      return std::nullopt;
    }
    if (!(r.seconds > 0)) {
      result_.rejected.push_back({c, fmt::format("no device time ({} s)", r.seconds)});
      return std::nullopt;
    }
    return Timed{c, r.seconds, hooks_.clock() - t0, r.first_run_s};
  }

  bool tried(const GemmCandidate& c) const {
    return std::find(tried_.begin(), tried_.end(), c) != tried_.end();
  }

  // The tuning shape and the reference's time on it. One run of the smallest shape first: the
  // shape is the largest of the setup's halvings on which the reference (scaled by the cube of
  // the side) takes at most its share of the budget, so a slow device (the library's defaults
  // on a CPU) is not made to run minutes of GEMMs before the search.
  std::optional<double> time_reference() {
    const GemmShape top = setup_.shape;
    GemmShape small = top;
    while (small.m > kSmallestShape && small.n > kSmallestShape && small.k > kSmallestShape)
      small = {small.m / 2, small.n / 2, small.k / 2};
    result_.shape = small;
    const double first = hooks_.clock();
    std::optional<Timed> t = try_one(setup_.reference, 1);
    result_.library_first_call_s = hooks_.clock() - first;
    if (t) {
      GemmShape s = small;
      while (s.m * 2 <= top.m && s.n * 2 <= top.n && s.k * 2 <= top.k &&
             t->seconds * static_cast<double>(s.m * 2) / small.m * (s.n * 2.0 / small.n) *
                     (s.k * 2.0 / small.k) <=
                 setup_.budget_s * kMaxRunShareOfBudget)
        s = {s.m * 2, s.n * 2, s.k * 2};
      result_.shape = s;
    } else {
      result_.shape = top;  // no reference to scale by: the device's own size
    }
    tried_.clear();
    reference_ = try_one(setup_.reference, kConfirmReps);
    if (!reference_) return std::nullopt;
    result_.reference_s = reference_->seconds;
    return reference_->seconds;
  }

  // The next candidate: seeds first, then two neighbours of the best for each random point.
  GemmCandidate next() {
    while (seed_index_ < seeds_.size()) {
      const GemmParams& p = seeds_[seed_index_++];
      if (!tried(p)) return p;
    }
    for (int draw = 0; draw < kMaxDraws; ++draw) {
      ++picks_;
      if (picks_ % 3 != 0 && best_screened()) {
        if (neighbours_of_ != best_screened()->candidate) {
          neighbours_of_ = *best_screened()->candidate;  // screened ones are kernel parameters
          neighbours_ = neighbours(*neighbours_of_, setup_.limits, setup_.dtype);
          std::shuffle(neighbours_.begin(), neighbours_.end(), rng_);
        }
        while (!neighbours_.empty()) {
          GemmParams p = neighbours_.back();
          neighbours_.pop_back();
          if (!tried(p)) return p;
        }
      }
      if (auto p = sample(rng_, setup_.limits, setup_.dtype); p && !tried(*p)) return *p;
    }
    return std::nullopt;  // nothing new: the space (as the device allows it) is exhausted
  }

  const Timed* best_screened() const {
    if (screened_.empty()) return nullptr;
    return &*std::min_element(screened_.begin(), screened_.end(),
                              [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
  }

  // Time left for screening: the leaders' and the reference's confirmation must fit after it,
  // each at what its own trial cost, build and verification included; `next_cost` is what the
  // candidate about to be screened may add as one more leader.
  double confirmation_estimate(double next_cost) const {
    double cost = reference_ ? rerun_cost(*reference_, kConfirmReps, kConfirmReps) : 0;
    std::vector<Timed> s = screened_;
    std::sort(s.begin(), s.end(),
              [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
    for (std::size_t i = 0; i < std::min(kLeaders, s.size()); ++i)
      cost += rerun_cost(s[i], kScreenReps, kConfirmReps);
    if (s.size() < kLeaders) cost += next_cost;
    return cost;
  }

  // Screens candidates while one more and the confirmation still fit before the deadline. One
  // candidate is always tried (unless the reference alone spent the budget), so that a budget
  // smaller than one trial still compares something with the reference.
  void screen(double deadline) {
    seeds_ = seeds(setup_.limits, setup_.dtype);
    bool planted = !setup_.plant_bad_candidate;
    double cost_sum = 0;
    int costs = 0;
    // Before any candidate, the reference's trial is the best guess of what one costs.
    const double first_guess = reference_ ? reference_->wall : 0;
    for (;;) {
      const double now = hooks_.clock();
      const double estimate = costs > 0 ? cost_sum / costs : first_guess;
      if (now >= deadline) break;
      if (costs > 0 && now + estimate + confirmation_estimate(estimate) > deadline) break;
      GemmCandidate c = next();
      if (!c) break;
      const double t0 = hooks_.clock();
      const bool corrupt = !planted;
      planted = true;
      std::optional<Timed> s = try_one(c, kScreenReps, corrupt);
      cost_sum += hooks_.clock() - t0;  // a rejected candidate's cost counts as well
      ++costs;
      if (s) screened_.push_back(*s);
    }
  }

  void confirm(const std::optional<double>& ref) {
    std::vector<Timed> leaders = screened_;
    std::sort(leaders.begin(), leaders.end(),
              [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
    if (leaders.size() > kLeaders) leaders.resize(kLeaders);
    std::vector<Timed> confirmed;
    if (ref) {
      // Timed again beside the leaders, and the better of its two times kept.
      std::optional<Timed> again = try_one(setup_.reference, kConfirmReps);
      confirmed.push_back({setup_.reference, again ? std::min(again->seconds, *ref) : *ref, 0, 0});
      result_.reference_s = confirmed.back().seconds;
    }
    for (const auto& l : leaders)
      if (std::optional<Timed> s = try_one(l.candidate, kConfirmReps))
        confirmed.push_back({l.candidate, std::min(s->seconds, l.seconds), 0, 0});
    result_.timed = static_cast<int>(screened_.size()) + (ref ? 1 : 0);
    if (confirmed.empty()) {
      result_.best = setup_.reference;
      result_.found = false;
      return;
    }
    const auto best =
        std::min_element(confirmed.begin(), confirmed.end(),
                         [](const Timed& a, const Timed& b) { return a.seconds < b.seconds; });
    result_.best = best->candidate;
    result_.best_s = best->seconds;
    result_.found = true;
  }

  const TunerSetup& setup_;
  const TunerHooks& hooks_;
  std::mt19937_64 rng_;
  TunerResult result_;
  std::vector<GemmCandidate> tried_;
  std::vector<GemmParams> seeds_;
  std::size_t seed_index_ = 0;
  std::vector<Timed> screened_;
  std::optional<Timed> reference_;  // its confirmed trial, for the cost estimates
  GemmCandidate neighbours_of_;
  std::vector<GemmParams> neighbours_;
  std::uint64_t picks_ = 0;
};

}  // namespace

TunerResult tune_gemm_parameters(const TunerSetup& setup, const TunerHooks& hooks) {
  return Search(setup, hooks).run();
}

}  // namespace gpucheck::opencl

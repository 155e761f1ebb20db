// Where a cell round's wall time goes, for finding what makes a run slow.
//
// GPUCHECK_TRACE_FILE=PATH: each cell round appends one line to PATH, e.g.
//   t=812.401 pid=4242 device=cuda0 cell="exp f32 n=67108864" round=1/3 total=0.702
//   setup=0.081 reps=0.512 back=0.041 verify=0.038 ... rest=0.030
// (t: CLOCK_MONOTONIC seconds at the round's start, comparable across the bench children, so the
// gaps between lines show the children's start-up, probing and tuning). Phases of the same name
// add up; `rest` is what came after the last mark (freeing buffers). Off by default: the records
// say nothing of it, and one write per round costs nothing measurable.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck::bench {

class PhaseTrace {
 public:
  // Reads GPUCHECK_TRACE_FILE; an unset or empty one leaves the trace off.
  PhaseTrace();

  bool on() const { return !path_.empty(); }
  // Starts a round: `label` names the device, cell and round.
  void start(std::string label);
  // The time since the previous mark (or the start) was spent on `phase`.
  void mark(std::string_view phase);
  // Appends the round's line (one write(2), O_APPEND: lines from children do not interleave).
  void finish();

 private:
  using Clock = std::chrono::steady_clock;
  std::string path_;
  std::string label_;
  Clock::time_point started_{};
  Clock::time_point last_{};
  double start_monotonic_ = 0;
  std::vector<std::pair<std::string, double>> phases_;
  bool running_ = false;
};

}  // namespace gpucheck::bench

// Progress of long work on stderr: on a terminal one line rewritten in place (what runs, its
// number out of the units that will really run, the time elapsed and an estimate of what is
// left); elsewhere (a CI log) the same as a line every 10 s, so a long bench shows it is alive.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

namespace gpucheck::app {

struct ProgressState {
  std::string position;   // "cpu 1/4": the unit's place among those that will run
  std::string what;       // "exp f32 n=4096"
  std::size_t done = 0;   // units finished, over everything this progress covers
  std::size_t total = 0;  // units that will run in all (0: unknown)
  // Seconds left, asked again at every redraw, where a model of the units' costs knows better
  // than done/total (bench: RunEstimate); nullopt: no estimate yet.
  std::function<std::optional<double>()> left;
};

// "[cpu 1/4] 1.2 s elapsed · about 3 s left · exp f32 n=4096": the estimate from s.left, else
// from the units done so far (none before the first unit finished).
std::string progress_text(const ProgressState& s, double elapsed_s);

class Progress {
 public:
  enum class Mode { kOff, kTerminal, kLog };
  using Sink = std::function<void(const std::string&)>;

  // The mode for stderr: off with --quiet, kTerminal on a terminal, else kLog every
  // GPUCHECK_PROGRESS_SECONDS (a test hook; default 10 s).
  static Progress for_stderr(std::string task, bool quiet);
  // sink receives terminal updates ("\r\x1b[K..." without newline) or log lines (with one).
  Progress(std::string task, Mode mode, double log_every_s, Sink sink);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;
  Progress(Progress&&) = delete;

  void update(ProgressState s);
  // Ends the display (the terminal line is erased); the object may be updated again.
  void clear();
  Mode mode() const { return mode_; }

 private:
  void run();
  std::string line(const ProgressState& s) const;

  std::string task_;
  Mode mode_;
  double log_every_s_;
  Sink sink_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mu_;
  std::condition_variable cv_;
  ProgressState state_;
  bool active_ = false, stop_ = false, shown_ = false;
  std::thread thread_;
};

}  // namespace gpucheck::app

#include "bench/phase_trace.h"

#include <fmt/format.h>

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>

namespace gpucheck::bench {

PhaseTrace::PhaseTrace() {
  if (const char* p = std::getenv("GPUCHECK_TRACE_FILE"); p != nullptr) path_ = p;
}

void PhaseTrace::start(std::string label) {
  if (!on()) return;
  label_ = std::move(label);
  phases_.clear();
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  start_monotonic_ = static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
  started_ = last_ = Clock::now();
  running_ = true;
}

void PhaseTrace::mark(std::string_view phase) {
  if (!running_) return;
  const auto now = Clock::now();
  const double s = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  for (auto& [name, seconds] : phases_)
    if (name == phase) {
      seconds += s;
      return;
    }
  phases_.emplace_back(std::string(phase), s);
}

void PhaseTrace::finish() {
  if (!running_) return;
  mark("rest");
  running_ = false;
  const double total = std::chrono::duration<double>(Clock::now() - started_).count();
  std::string line = fmt::format("t={:.3f} pid={} {} total={:.3f}", start_monotonic_,
                                 static_cast<long>(getpid()), label_, total);
  for (const auto& [name, seconds] : phases_) line += fmt::format(" {}={:.3f}", name, seconds);
  line += '\n';
  // A trace that cannot be written is dropped: it is a developer's aid, never a run's failure.
  // O_NONBLOCK: a FIFO nobody reads fails to open (ENXIO) instead of holding the run.
  const int fd = open(path_.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
  if (fd < 0) return;
  [[maybe_unused]] const ssize_t n = write(fd, line.data(), line.size());
  close(fd);
}

}  // namespace gpucheck::bench

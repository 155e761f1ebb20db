// The progress line and its ticker thread (so a child that is quiet for a minute still shows
// the time moving on a terminal and a line every 10 s in a log).
#include "app/progress.h"

#include "core/duration.h"
#include "report/text_layout.h"
#include "report/units.h"

#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

namespace gpucheck::app {

namespace {

std::size_t stderr_width() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) return ws.ws_col;
  return 80;
}

}  // namespace

std::string progress_text(const ProgressState& s, double elapsed_s) {
  // The times before the unit's words: a narrow terminal cuts the end of the line, and the
  // estimate is what a person waits for.
  std::string out = fmt::format("[{}] {} elapsed", s.position, elapsed_text(elapsed_s));
  std::optional<double> left;
  if (s.left)
    left = s.left();
  else if (s.done > 0 && s.total > s.done)
    left = elapsed_s / static_cast<double>(s.done) * static_cast<double>(s.total - s.done);
  if (left) out += fmt::format(" \xC2\xB7 about {} left", elapsed_text(*left));
  return out + " \xC2\xB7 " + s.what;
}

Progress Progress::for_stderr(std::string task, bool quiet) {
  Mode mode = quiet ? Mode::kOff : ::isatty(STDERR_FILENO) != 0 ? Mode::kTerminal : Mode::kLog;
  double every = 10;
  if (const char* v = std::getenv("GPUCHECK_PROGRESS_SECONDS"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    double x = std::strtod(v, &end);
    if (end != v && *end == '\0' && x > 0) every = x;
  }
  return Progress(std::move(task), mode, every, [](const std::string& text) {
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  });
}

Progress::Progress(std::string task, Mode mode, double log_every_s, Sink sink)
    : task_(std::move(task)),
      mode_(mode),
      log_every_s_(log_every_s),
      sink_(std::move(sink)),
      start_(std::chrono::steady_clock::now()) {
  if (mode_ != Mode::kOff) thread_ = std::thread([this] { run(); });
}

Progress::~Progress() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  clear();
}

std::string Progress::line(const ProgressState& s) const {
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return progress_text(s, elapsed);
}

void Progress::update(ProgressState s) {
  if (mode_ == Mode::kOff) return;
  std::lock_guard lock(mu_);
  state_ = std::move(s);
  active_ = true;
  // A terminal shows each unit as it starts; the ticker only moves the clock on.
  if (mode_ == Mode::kTerminal) {
    sink_("\r\x1b[K" + report::shorten(line(state_), stderr_width() - 1));
    shown_ = true;
  }
}

void Progress::clear() {
  std::lock_guard lock(mu_);
  active_ = false;
  if (mode_ == Mode::kTerminal && shown_) sink_("\r\x1b[K");
  shown_ = false;
}

void Progress::run() {
  using namespace std::chrono;
  auto last_log = steady_clock::now();
  std::unique_lock lock(mu_);
  while (!stop_) {
    // A terminal line moves with the clock once a second; a log line waits its interval.
    cv_.wait_for(lock, mode_ == Mode::kTerminal ? milliseconds(1000) : milliseconds(100));
    if (stop_ || !active_) continue;
    if (mode_ == Mode::kTerminal) {
      sink_("\r\x1b[K" + report::shorten(line(state_), stderr_width() - 1));
      shown_ = true;
    } else if (duration<double>(steady_clock::now() - last_log).count() >= log_every_s_) {
      sink_(fmt::format("gpucheck: {}: {}\n", task_, line(state_)));
      last_log = steady_clock::now();
    }
  }
}

}  // namespace gpucheck::app

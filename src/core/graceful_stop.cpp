// The handler only stores the signal number: async-signal-safe, and poll()/sleep loops see it
// within their next wake-up (stress's loops wake at least once a second).
#include "core/graceful_stop.h"

#include "core/errors.h"

#include <fmt/format.h>

#include <cstring>

namespace gpucheck {

namespace {

constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
volatile std::sig_atomic_t g_stop_signal = 0;

extern "C" void record_stop_signal(int signal) {
  if (g_stop_signal == 0) g_stop_signal = signal;
}

}  // namespace

GracefulStop::GracefulStop() {
  struct sigaction sa {};
  sa.sa_handler = record_stop_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // no SA_RESTART: a blocking poll() or read() returns EINTR and looks again
  for (int i = 0; i < 3; ++i)
    if (::sigaction(kSignals[i], &sa, &saved_[i]) != 0)
      throw_errno(fmt::format("sigaction({})", signal_name(kSignals[i])).c_str(), __FILE__,
                  __LINE__);
}

GracefulStop::~GracefulStop() {
  for (int i = 0; i < 3; ++i) ::sigaction(kSignals[i], &saved_[i], nullptr);
}

int GracefulStop::stop_signal() {
  return g_stop_signal;
}

void GracefulStop::reset() {
  g_stop_signal = 0;
}

std::string signal_name(int signal) {
  const char* abbrev = sigabbrev_np(signal);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", signal);
}

}  // namespace gpucheck

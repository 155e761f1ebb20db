// SIGINT, SIGTERM and SIGHUP as a request to stop soon rather than at once: while a GracefulStop
// lives, the signals only record which one came, and the code that runs long (stress's
// children and their parent) polls stop_signal() and ends its work early, so what it measured
// still reaches a complete document. The previous handlers come back when it ends.
#pragma once

#include <csignal>
#include <string>

namespace gpucheck {

class GracefulStop {
 public:
  GracefulStop();
  ~GracefulStop();
  GracefulStop(const GracefulStop&) = delete;
  GracefulStop& operator=(const GracefulStop&) = delete;

  // The first stop signal received while a GracefulStop lived; 0 when none came.
  static int stop_signal();
  // Forgets a received signal (a test's next run).
  static void reset();

 private:
  struct sigaction saved_[3];
};

// "SIGINT", "SIGTERM", ... (the abbreviation with its SIG prefix).
std::string signal_name(int signal);

}  // namespace gpucheck

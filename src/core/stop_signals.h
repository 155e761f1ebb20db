// SIGINT, SIGTERM and SIGHUP: stop every child gpucheck started (its whole process group),
// remove a temporary output file not yet renamed into place, and exit 128 + the signal's number,
// as shells report it. Nothing half-written stays behind and no child outlives gpucheck.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <string>

namespace gpucheck {

// Installs the handlers (once, from main). Until then the signals keep their default action.
void install_stop_handlers();

// The exit status gpucheck ends with when stopped by `signal` (128 + signal).
constexpr int stopped_exit_status(int signal) {
  return 128 + signal;
}

// The signals the handlers catch, blocked while this object lives: a child spawned in this
// window is registered before a signal can be handled, so none escapes the handler.
class StopSignalsBlocked {
 public:
  StopSignalsBlocked();
  ~StopSignalsBlocked();
  StopSignalsBlocked(const StopSignalsBlocked&) = delete;
  StopSignalsBlocked& operator=(const StopSignalsBlocked&) = delete;

 private:
  sigset_t saved_;
};

// A running child whose process group (pgid = pid) the handler kills. Deregister before the
// child is reaped, so a reused pid is never signalled.
class StoppableChild {
 public:
  explicit StoppableChild(pid_t pid);
  ~StoppableChild();
  StoppableChild(const StoppableChild&) = delete;
  StoppableChild& operator=(const StoppableChild&) = delete;
  void release();

 private:
  int slot_ = -1;
};

// A temporary file the handler unlinks: an output being written that is not yet in place.
class StoppableTempFile {
 public:
  explicit StoppableTempFile(const std::string& path);
  ~StoppableTempFile();
  StoppableTempFile(const StoppableTempFile&) = delete;
  StoppableTempFile& operator=(const StoppableTempFile&) = delete;
  void release();

 private:
  int slot_ = -1;
};

}  // namespace gpucheck

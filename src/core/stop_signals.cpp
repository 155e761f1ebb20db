// The stop handlers and their registries. The handler runs async-signal-safe calls only (kill,
// waitpid, nanosleep, clock_gettime, unlink, write, _exit); the registries are fixed arrays of
// lock-free atomics for that reason.
#include "core/stop_signals.h"

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstring>

namespace gpucheck {

namespace {

constexpr std::array kStopSignals{SIGINT, SIGTERM, SIGHUP};

// Slots are process-wide by nature: a signal handler has no other way to find what to stop.
constexpr std::size_t kChildSlots = 256;
std::array<std::atomic<pid_t>, kChildSlots> g_children{};

enum TempState : int { kFree = 0, kFilling = 1, kSet = 2 };
constexpr std::size_t kTempSlots = 8;
std::array<std::atomic<int>, kTempSlots> g_temp_state{};
std::array<std::array<char, PATH_MAX>, kTempSlots> g_temp_path{};

static_assert(std::atomic<pid_t>::is_always_lock_free && std::atomic<int>::is_always_lock_free,
              "the signal handler reads these atomics");

void say(const char* text) {
  ssize_t ignored = ::write(STDERR_FILENO, text, std::strlen(text));
  (void)ignored;
}

// How long the handler waits for the killed children to be gone: SIGKILL ends a process at
// once unless it is stuck in the kernel (a wedged driver), and then gpucheck must still exit.
constexpr long kReapBudgetMs = 2000;

// Waits (bounded) for every registered child to end and reaps it, so that none is left behind
// as a zombie under an init that does not reap (a container's sleep or shell as PID 1).
// waitpid, nanosleep and clock_gettime are async-signal-safe.
void reap_children() {
  timespec start{};
  ::clock_gettime(CLOCK_MONOTONIC, &start);
  for (auto& child : g_children) {
    const pid_t pid = child.load();
    if (pid <= 0) continue;
    while (true) {
      const pid_t got = ::waitpid(pid, nullptr, WNOHANG);
      if (got == pid || (got < 0 && errno != EINTR)) break;  // reaped, or not ours to wait for
      timespec now{};
      ::clock_gettime(CLOCK_MONOTONIC, &now);
      const long waited_ms =
          (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1000000;
      if (waited_ms >= kReapBudgetMs) return;
      const timespec pause{0, 1000000};  // 1 ms
      ::nanosleep(&pause, nullptr);
    }
  }
}

extern "C" void on_stop_signal(int sig) {
  const int saved_errno = errno;
  for (auto& child : g_children)
    if (pid_t pid = child.load(); pid > 0) ::kill(-pid, SIGKILL);
  reap_children();
  errno = saved_errno;
  for (std::size_t i = 0; i < kTempSlots; ++i)
    if (g_temp_state[i].load() == kSet) ::unlink(g_temp_path[i].data());
  say(sig == SIGINT    ? "gpucheck: stopped by SIGINT\n"
      : sig == SIGTERM ? "gpucheck: stopped by SIGTERM\n"
                       : "gpucheck: stopped by SIGHUP\n");
  ::_exit(stopped_exit_status(sig));
}

sigset_t stop_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kStopSignals) sigaddset(&set, s);
  return set;
}

}  // namespace

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_mask = stop_set();  // one stop at a time
  for (int s : kStopSignals) ::sigaction(s, &sa, nullptr);
}

StopSignalsBlocked::StopSignalsBlocked() {
  sigset_t set = stop_set();
  ::pthread_sigmask(SIG_BLOCK, &set, &saved_);
}

StopSignalsBlocked::~StopSignalsBlocked() {
  ::pthread_sigmask(SIG_SETMASK, &saved_, nullptr);
}

StoppableChild::StoppableChild(pid_t pid) {
  for (std::size_t i = 0; i < kChildSlots; ++i) {
    pid_t expected = 0;
    if (g_children[i].compare_exchange_strong(expected, pid)) {
      slot_ = static_cast<int>(i);
      return;
    }
  }
}

StoppableChild::~StoppableChild() {
  release();
}

void StoppableChild::release() {
  if (slot_ >= 0) g_children[static_cast<std::size_t>(slot_)].store(0);
  slot_ = -1;
}

StoppableTempFile::StoppableTempFile(const std::string& path) {
  if (path.size() >= PATH_MAX) return;
  for (std::size_t i = 0; i < kTempSlots; ++i) {
    int expected = kFree;
    if (g_temp_state[i].compare_exchange_strong(expected, kFilling)) {
      std::memcpy(g_temp_path[i].data(), path.c_str(), path.size() + 1);
      g_temp_state[i].store(kSet);
      slot_ = static_cast<int>(i);
      return;
    }
  }
}

StoppableTempFile::~StoppableTempFile() {
  release();
}

void StoppableTempFile::release() {
  if (slot_ >= 0) g_temp_state[static_cast<std::size_t>(slot_)].store(kFree);
  slot_ = -1;
}

}  // namespace gpucheck

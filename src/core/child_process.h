// Runs copies of gpucheck itself (posix_spawn of /proc/self/exe), or another program, as isolated
// children and collects their output with poll, so a crashing, hanging or flooding driver costs
// one child.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

struct ChildSpec {
  using Env = std::map<std::string, std::optional<std::string>>;
  ChildSpec(std::vector<std::string> a, Env e = {}, std::string in = {})
      : args(std::move(a)), env(std::move(e)), stdin_data(std::move(in)) {}
  std::vector<std::string> args;  // argv[1..]; argv[0] is gpucheck (or `program`)
  Env env;                        // value set, or nullopt to unset
  // The executable to start; empty: gpucheck itself. A framework's Python interpreter is one.
  std::string program;
  // false: the child gets only env's set values, nothing of this process's environment (a
  // program that is not gpucheck is given no more than it needs).
  bool inherit_environment = true;
  // The child's stdin (an anonymous in-memory file holding it); /dev/null when empty. Input
  // too large for argv (ARG_MAX, 128 KiB a string) goes here.
  std::string stdin_data;
};

struct ChildResult {
  enum class End {
    kExited,
    kSignaled,
    kTimedOut,
    kOutputTooLarge,
    kSpawnFailed,
    kNotReaped,
    kSilent,   // wrote nothing on stdout for longer than ChildLimits::max_silence: killed
    kStopped,  // sent SIGTERM on a stop request and still running after stop_grace: killed
  };
  End end = End::kSpawnFailed;
  int exit_code = -1;  // valid when end == kExited
  int signal = 0;      // valid when end == kSignaled
  std::string out;     // everything the child wrote to stdout (up to the limit)
  std::string err;     // the last part of what it wrote to stderr
  double seconds = 0;  // wall time from spawn to end
  std::string spawn_error;
  double silence_limit = 0;  // seconds, when end == kSilent (kStopped: the grace it had)

  bool exited_ok() const { return end == End::kExited && exit_code == 0; }
  // One line for a report: "killed by signal 11 (SIGSEGV)", "timed out after 60 s", ...
  std::string describe(std::chrono::duration<double> timeout, std::size_t max_output) const;
};

struct ChildLimits {
  std::chrono::duration<double> timeout{60.0};
  std::size_t max_output = 16u << 20;  // bytes of stdout; a child that writes more is killed
  std::size_t max_err = 16u << 10;     // bytes of stderr kept (the tail)
  // A child that streams progress (stress) and then says nothing on stdout for this long is
  // hung: it is killed, End::kSilent. Before its first output, startup_silence applies instead
  // (opening a device can take long). Unset: no silence limit.
  std::optional<std::chrono::duration<double>> max_silence, startup_silence;
  // Polled about once a second: a non-zero signal number asks every running child to stop. It
  // is sent SIGTERM once (a child that stops gracefully finishes its output) and killed when
  // still running stop_grace later, End::kStopped.
  std::function<int()> stop_signal;
  std::chrono::duration<double> stop_grace{15.0};
};

// Called with each piece of a child's stdout as it arrives (for progress from long children).
using OutputObserver = std::function<void(std::size_t child, std::string_view chunk)>;

// Starts every child at once and waits for all of them; never throws for a child's failure.
std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs,
                                      const ChildLimits& limits,
                                      const OutputObserver& observer = {});

// What a child said (its stderr, an error it sent), made fit for a document as the environment
// is: sanitized, URL user information stripped and secrets found by their shape redacted.
std::string redact_child_words(std::string_view words);

// Inside a child: keeps the real stdout for the result and points fd 1 at stderr, so that a
// library printing to stdout cannot corrupt the JSON the parent reads. Returns the result fd.
int reserve_stdout_for_result();

// Writes all of data to fd (retrying on short writes and EINTR).
void write_all(int fd, const std::string& data);

}  // namespace gpucheck

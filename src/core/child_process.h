// Runs copies of gpucheck itself as isolated children (posix_spawn of /proc/self/exe) and
// collects their output with poll, so a crashing, hanging or flooding driver costs one child.
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
  std::vector<std::string> args;  // argv[1..]; argv[0] is gpucheck
  Env env;                        // value set, or nullopt to unset
  // The child's stdin (an anonymous in-memory file holding it); /dev/null when empty. Input
  // too large for argv (ARG_MAX, 128 KiB a string) goes here.
  std::string stdin_data;
};

struct ChildResult {
  enum class End { kExited, kSignaled, kTimedOut, kOutputTooLarge, kSpawnFailed, kNotReaped };
  End end = End::kSpawnFailed;
  int exit_code = -1;  // valid when end == kExited
  int signal = 0;      // valid when end == kSignaled
  std::string out;     // everything the child wrote to stdout (up to the limit)
  std::string err;     // the last part of what it wrote to stderr
  double seconds = 0;  // wall time from spawn to end
  std::string spawn_error;

  bool exited_ok() const { return end == End::kExited && exit_code == 0; }
  // One line for a report: "killed by signal 11 (SIGSEGV)", "timed out after 60 s", ...
  std::string describe(std::chrono::duration<double> timeout, std::size_t max_output) const;
};

struct ChildLimits {
  std::chrono::duration<double> timeout{60.0};
  std::size_t max_output = 16u << 20;  // bytes of stdout; a child that writes more is killed
  std::size_t max_err = 16u << 10;     // bytes of stderr kept (the tail)
};

// Called with each piece of a child's stdout as it arrives (for progress from long children).
using OutputObserver = std::function<void(std::size_t child, std::string_view chunk)>;

// Starts every child at once and waits for all of them; never throws for a child's failure.
std::vector<ChildResult> run_children(const std::vector<ChildSpec>& specs,
                                      const ChildLimits& limits,
                                      const OutputObserver& observer = {});

// Inside a child: keeps the real stdout for the result and points fd 1 at stderr, so that a
// library printing to stdout cannot corrupt the JSON the parent reads. Returns the result fd.
int reserve_stdout_for_result();

// Writes all of data to fd (retrying on short writes and EINTR).
void write_all(int fd, const std::string& data);

}  // namespace gpucheck

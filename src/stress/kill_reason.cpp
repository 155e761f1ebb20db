// Reading the kernel's out-of-memory lines and wording a SIGKILL's likely cause.
#include "stress/kill_reason.h"

#include <fmt/format.h>

namespace gpucheck::stress {

namespace {

double gib(std::uint64_t bytes) {
  return static_cast<double>(bytes) / (1024.0 * 1024 * 1024);
}

}  // namespace

std::optional<std::string> oom_kill_line(std::string_view kernel_log) {
  std::optional<std::string> found;
  while (!kernel_log.empty()) {
    const std::size_t nl = kernel_log.find('\n');
    std::string_view line = kernel_log.substr(0, nl);
    kernel_log.remove_prefix(nl == std::string_view::npos ? kernel_log.size() : nl + 1);
    // A /dev/kmsg record is "PRIORITY,SEQ,USEC,FLAGS;TEXT".
    if (const std::size_t semi = line.find(';');
        semi != std::string_view::npos && line.substr(0, semi).find(',') != std::string_view::npos)
      line.remove_prefix(semi + 1);
    if (line.find("Killed process") != std::string_view::npos ||
        line.find("Out of memory") != std::string_view::npos ||
        line.find("out of memory") != std::string_view::npos)
      found = std::string(line);
  }
  return found;
}

std::string sigkill_explanation(std::string_view kernel_log, bool log_readable,
                                std::uint64_t asked_bytes, std::uint64_t available_bytes) {
  if (auto line = oom_kill_line(kernel_log))
    return fmt::format(
        "the kernel's out-of-memory killer ended it, not a device fault (kernel log: \"{}\"): "
        "give the run less memory (--memory-fraction)",
        *line);
  std::string why =
      "SIGKILL came from outside gpucheck: the out-of-memory killer or another "
      "process";
  if (asked_bytes != 0 && available_bytes != 0)
    why += fmt::format(
        " (the run asked for {:.1f} GiB of host memory with {:.1f} GiB available when it "
        "started{})",
        gib(asked_bytes), gib(available_bytes),
        asked_bytes * 10 >= available_bytes * 9 ? ": likely the out-of-memory killer" : "");
  why += log_readable ? "; the kernel log has no out-of-memory line for the run"
                      : "; the kernel log could not be read to tell";
  return why;
}

}  // namespace gpucheck::stress

// What a stress child killed by SIGKILL from outside died of. The VM's or cgroup's
// out-of-memory killer sends SIGKILL when a run asks for more host memory than there is; that
// is the run's configuration, not the device, and the verdict's reason has to say so.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::stress {

// The kernel log's last out-of-memory kill line in `kernel_log` (the text logged during the
// run: "Out of memory: Killed process 4242 (gpucheck) ...", a memory cgroup's, "oom-kill:..."),
// without the /dev/kmsg record prefix; nullopt when there is none.
std::optional<std::string> oom_kill_line(std::string_view kernel_log);

// The sentence added to a SIGKILLed child's failure: the OOM line where the log has one, else
// the host memory the run asked for against what was available when it started (asked_bytes 0:
// not known, a GPU's run), and where the log could not be read, that it could not.
std::string sigkill_explanation(std::string_view kernel_log, bool log_readable,
                                std::uint64_t asked_bytes, std::uint64_t available_bytes);

}  // namespace gpucheck::stress

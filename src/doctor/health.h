// doctor as a node health check (`doctor --quick`): which checks run, the verdict with the exit
// codes Slurm and node-problem-detector expect (0 healthy, 1 unhealthy, 2 could not decide) and
// the one line of at most 80 characters that a drain reason or a node condition carries.
#pragma once

#include "core/errors.h"
#include "doctor/check.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// The checks that read without loading a GPU or running a benchmark: the driver, device nodes,
// library loads, ECC and remaps, Xid errors, persistence, MIG, the OpenCL loader and ICDs. Those
// whose entry says kQuick (check_defs.h), in the registry's order, so a new check (which may
// need a load run) joins quick mode deliberately.
const std::vector<std::string_view>& quick_check_ids();

enum class Health { kHealthy, kUnhealthy, kUnknown };

// Health's exit codes; "could not decide" shares 2 with usage errors, as node-problem-detector's
// Unknown covers both.
ExitCode health_exit_code(Health h);
std::string_view to_string(Health h);

struct HealthVerdict {
  Health health = Health::kHealthy;
  std::vector<std::string> failing;     // ids of FAIL checks (and WARN ones with fail_on_warn)
  std::vector<std::string> unanswered;  // ids that gave no answer before the deadline
  std::string first_finding;            // of the first failing check
  std::string first_code;               // its fault code (GC-...)
};

// A check answered when it ran to its end and its SKIP is not "its probe child timed out".
bool answered(const CheckResult& r);

// Any FAIL makes the node unhealthy even when other checks could not decide (unhealthy outranks
// unknown); else an unanswered check makes it unknown; else healthy. SKIP, INFO and WARN (unless
// fail_on_warn) never make a node unhealthy.
HealthVerdict judge_health(const std::vector<CheckResult>& results,
                           const std::vector<std::string>& not_run, bool fail_on_warn);

constexpr std::size_t kOnelineMax = 80;

// "FAIL GC-ECC-REMAP-PENDING: nvidia_ecc,nvidia_xid: cuda0 0000:9b:00.0: a row remap is ..." or
// "UNKNOWN no answer within 30 s: nvidia_xid,cublas_library"; "OK 27 checks" when healthy.
// Exactly one line (no newline), at most kOnelineMax bytes, printable ASCII.
std::string oneline(const HealthVerdict& v, std::size_t checks_run, double timeout_s);

// The text shortened to fit max bytes: control characters and non-ASCII become spaces or '?',
// a device's "(name, PCI bus id)" becomes its bus id, and a cut ends in "...".
std::string fit_line(std::string_view text, std::size_t max);

}  // namespace gpucheck::doctor

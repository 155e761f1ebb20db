// Running every stress child at once and gathering what each reported: the smallest runner
// over core/child_process's run_children (all children started together, read with poll), with
// a silence limit that turns a hung child into a finding. (bench's concurrent children
// run over the same run_children in bench_run.cpp, with their own reading of what each says.)
#pragma once

#include "app/stress_status.h"
#include "host/kernel_log.h"
#include "stress/plan.h"
#include "stress/verdict.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucheck::app {

struct StressChildReport {
  std::optional<nlohmann::json> started;  // identity and memory, once the device opened
  std::vector<nlohmann::json> records;
  std::optional<nlohmann::json> telemetry;
  bool done = false;
  std::optional<std::string> stopped_by;  // the child ended its tests early on this signal
  std::optional<std::string> failure;     // how the child ended when it did not finish
};

struct StressRunLimits {
  double hang_timeout_s = 60;      // no status line for this long after the first: hung
  double startup_timeout_s = 180;  // opening the device (a first CUDA init can take a minute)
  double stop_grace_s = 20;        // after a stop signal: the batch in flight and the last checks
};

std::vector<StressChildReport> run_stress_children(const std::vector<stress::StressPlan>& plans,
                                                   const StressRunLimits& limits,
                                                   StatusBoard& board);

// The document's stress section (the schema's `stress`): every device's verdict, records,
// telemetry and Xid lines, judged by stress/verdict; `missing` (name, why) are devices that were
// named but are not there: FAIL, never skipped. `base` is the plan every device's was made from.
// stop_signal (0: none) stopped the run early: the section says so, tests a child did not begin
// are not counted against it, and the section's verdict is "stopped" unless a device failed.
nlohmann::json stress_section(const stress::StressPlan& base,
                              const std::vector<stress::StressPlan>& plans,
                              const std::vector<StressChildReport>& reports,
                              const host::KernelLogWatch& watch, const std::string& new_log,
                              const std::vector<std::pair<std::string, std::string>>& missing,
                              const stress::VerdictLimits& limits, int stop_signal);

}  // namespace gpucheck::app

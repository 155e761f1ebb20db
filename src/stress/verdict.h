// One verdict per device from what its child reported, the kernel log and the telemetry: PASS,
// or FAIL with every reason. Pure functions of their inputs (no device, no files), so each rule
// is unit-tested on fabricated records.
#pragma once

#include "host/kernel_log.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::stress {

// The Xid numbers fleets act on (drain, reset, RMA): a new one during the run fails the device.
inline constexpr int kFleetXids[] = {48, 56, 57, 58, 62, 63, 64, 65, 68,  69,
                                     73, 74, 79, 80, 81, 92, 94, 95, 119, 120};

struct VerdictLimits {
  double clock_floor = 0.5;   // a GEMM window's mean SM clock below this × the maximum fails
  double window_drop = 0.10;  // a window more than this fraction below the first fails
};

struct VerdictInput {
  std::string device;
  // Set when the child did not run to its end: could not start, died, hung, exited non-zero.
  std::optional<std::string> child_failure;
  // The child ended its tests early on this signal while gpucheck itself was not stopped: someone
  // signalled the child alone. The run was cut short, so the device cannot pass.
  std::optional<std::string> stopped_alone;
  std::vector<std::string> planned_tests;   // the plan's tests (gemm, memory, copy), in its order
  std::vector<nlohmann::json> records;      // the child's test records
  std::size_t expected_records = 0;         // tests × GEMM dtypes the plan asked for
  std::optional<nlohmann::json> telemetry;  // the child's telemetry summary, if it sent one
  bool telemetry_expected = false;          // the device has NVML telemetry (CUDA)
  bool xid_readable = false;
  std::string xid_unreadable_why;
  std::vector<host::XidEvent> xids;  // new Xid lines naming this device's PCI address
};

struct RuleResult {
  std::string id;      // started, results, xid, ecc, row_remap, thermal, power_brake, clock_floor,
                       // throughput_windows
  std::string status;  // pass | fail | skip
  std::string detail;
};

struct DeviceVerdict {
  bool pass = false;
  std::vector<RuleResult> rules;
  std::vector<std::string> reasons;  // the detail of every failed rule
  std::vector<std::string> notes;    // facts that do not fail a device (power cap, PCIe replays)
};

DeviceVerdict judge_device(const VerdictInput& in, const VerdictLimits& limits);

// {"verdict": "pass"|"fail", "reasons": [...], "checks": [{id, status, detail}], "notes": [...]}
nlohmann::json to_json(const DeviceVerdict& v);

}  // namespace gpucheck::stress

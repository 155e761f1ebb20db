// The interface every backend (cpu, cuda, opencl, test-only ones) implements for probing.
#pragma once

#include "backends/device.h"

#include <nlohmann/json.hpp>

#include <memory>
#include <string>
#include <string_view>

namespace gpucheck {

// A backend's probe section, as it appears under "backends" in the document:
//   {"name": "opencl", "status": "available"|"unavailable"|"failed", "reason": "...",
//    "devices": [{"device": "opencl0", "stable_id": "opencl:0000:17:00.0",
//                 "device_name": "...", "device_uuid": "...", "pci_bus_id": "...",
//                 "properties": {...}}], ...backend-specific keys...}
// "unavailable" means the backend's library or driver is missing: a finding, not an error.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual std::string_view name() const = 0;
  // Runs inside an isolated child process (see core/child_process.h): it may crash or hang
  // without taking gpucheck down. Every string from a driver goes through sanitize().
  virtual nlohmann::json probe() = 0;
  // Opens one device for benchmarking, inside a bench child; nullptr when there is no such
  // device. device_id is the flat id ("cuda0") that probe() reported.
  virtual std::unique_ptr<Device> open_device(const std::string& device_id,
                                              const DeviceOptions& options) {
    (void)device_id;
    (void)options;
    return nullptr;
  }
};

}  // namespace gpucheck

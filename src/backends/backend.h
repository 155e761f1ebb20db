// The interface every backend (cpu, cuda, opencl, test-only ones) implements for probing.
#pragma once

#include "backends/device.h"
#include "backends/peer_group.h"

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
  // Counters that only grow (NVLink error counters), read on their own so a check can take
  // their deltas around a load; an empty object when the backend has none. Runs in a child.
  virtual nlohmann::json read_counters() { return nlohmann::json::object(); }
  // Opens several devices together in one process (peer copies, all-reduce), inside a bench
  // child; nullptr when the backend has no such group. Throws naming a device that is not there.
  virtual std::unique_ptr<PeerGroup> open_group(const std::vector<std::string>& device_ids) {
    (void)device_ids;
    return nullptr;
  }
  // Starts the meeting point of an all-reduce spanning processes, in this process (rank 0's
  // parent; NCCL's unique id: the address of a bootstrap root that listens here until every rank
  // has joined) and returns its bytes; empty with *error saying why where there is none.
  virtual std::string start_collective(std::string* error) {
    *error = std::string(name()) + " has no all-reduce between processes";
    return {};
  }
};

}  // namespace gpucheck

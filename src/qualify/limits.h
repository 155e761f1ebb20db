// Every bench record against what its hardware can do at most: the record's `limit` is {value,
// unit, fraction, source, basis, clock_mhz where corrected to a clock}, or {reason} when none is
// known. Figures come from configs/skus.toml's datasheet peaks (corrected to the record's clock),
// else from the device's own facts (SMs × clock × FLOP per clock, bus width × memory clock, the
// PCIe link), and for the CPU and its implementations of GPU APIs (pocl, lavapipe) from the CPU's
// cores, ISA and clock.
// It lives beside the SKU table it reads; bench may not use qualify, so the bench parent (app)
// adds limits after every child finished, as it adds speedups.
#pragma once

#include "qualify/skus.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::qualify {

struct LimitFacts {
  nlohmann::json backends = nlohmann::json::array();  // the probe's sections (devices)
  nlohmann::json cpu = nlohmann::json::object();      // the document's `cpu` (host/cpu_info.h)
  const std::vector<Sku>* skus = nullptr;
  // The PCI device id ("0x2330") of a PCI bus id; nullopt when unknown.
  std::function<std::optional<std::string>(const std::string&)> pci_device_id;
  // The records come from a multi-process run (bench --rendezvous): its all-reduce crosses
  // processes, and perhaps nodes, by a path no figure here describes.
  bool across_processes = false;
};

// The record's limit; null for a record with no throughput to compare (latency, a failed cell)
// and for ops without a physical bound (seedloop).
nlohmann::json limit_of(const nlohmann::json& record, const LimitFacts& facts);

// Whether the device (its flat id and backend) is the CPU or runs on its cores (pocl,
// lavapipe): its limits are the CPU's.
bool runs_on_host_cpu(const LimitFacts& facts, const std::string& device,
                      const std::string& backend);

// Sets every record's `limit` (keys: core/json_keys_limits.h).
void add_limits(nlohmann::json& results, const LimitFacts& facts);

// The same for a stress section's records (section.devices[].records[]): the GEMM test against
// the compute limit at the mean SM clock of its windows, the memory test against device memory
// (it counts bytes read and written), host copies against the PCIe link both ways at once.
void add_stress_limits(nlohmann::json& section, const LimitFacts& facts);

}  // namespace gpucheck::qualify

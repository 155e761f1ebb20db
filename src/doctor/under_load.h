// The readings doctor takes while the GPUs work: a short pinned host-to-device copy and an f16
// GEMM on every CUDA device at once, each in the bench child (`__child bench`), whose NVML
// sampler records the PCIe link and the clocks-event reasons during each timed region.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>

namespace gpucheck::doctor {

// Told when a device's load child starts a cell: the device, what runs, the cells started so
// far and the cells of the whole load (two a device).
using LoadObserver = std::function<void(const std::string& device, const std::string& what,
                                        std::size_t started, std::size_t total)>;

// One entry per device of an available CUDA section: {device, status ok|failed, reason,
// workload, seconds, nvml_samples, clocks_event_reasons, pcie_link_gen {min,max},
// pcie_link_width {min,max}}. Empty when CUDA has no device. `seconds` is the load per device.
nlohmann::json run_cuda_load(const nlohmann::json& cuda_section, double seconds,
                             const LoadObserver& observer = {});

// Folds records' NVML contexts into one entry (reasons united, link min/max over regions), with
// each ok record's figure for gpu_siblings: {"name", "value", "unit", "spread"} where spread is
// the relative stddev of its repetitions.
nlohmann::json summarise_load_records(const nlohmann::json& records);

// Peer copies under load: with two or more CUDA devices, a copy-engine copy of 256 MiB
// with peer access for every ordered pair, in one group child after the per-device load.
// Entries {"src", "dst", "status", "reason", "gbps", "workload"}; empty with fewer devices.
nlohmann::json run_cuda_p2p_load(const nlohmann::json& cuda_section, double seconds);

// The backend's counters that only grow (NVLink error counters), read again in a child after the
// load: its section as the child wrote it, {"loaded", "error", "devices": [...]}, or
// {"loaded": false, "error": "<the child's fate>"}.
nlohmann::json read_counters_after(const std::string& backend);

}  // namespace gpucheck::doctor

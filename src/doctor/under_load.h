// The readings doctor takes while the GPUs work: a short pinned host-to-device copy and an f16
// GEMM on every CUDA device at once, each in the bench child (`__child bench`), whose NVML
// sampler records the PCIe link and the clocks-event reasons during each timed region.
#pragma once

#include "bench/cell.h"
#include "core/child_process.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// What doctor's load step runs for the checks selected (their ids): the per-device load where a
// check judges readings under load, then the peer copies where p2p_access or nvlink_errors (whose
// NVLink traffic they are) is among them. --quick and --no-load load nothing: --quick reads only
// (nvlink_errors there judges growth against the state file).
struct LoadSteps {
  bool devices = false;
  bool peer_copies = false;
};
LoadSteps load_steps(const std::vector<std::string_view>& check_ids, bool quick, bool no_load);

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

// The environment of a device's load child: CUDA_VISIBLE_DEVICES naming only that GPU by its
// UUID, so the driver in each of N children initialises one GPU instead of all N. Empty (the
// whole view kept) where the UUID is not one NVML gave the same GPU (a MIG instance, no NVML).
ChildSpec::Env load_child_env(const nlohmann::json& cuda_device);

// The peer copies' plan: a copy-engine copy of 256 MiB with peer access for every ordered pair,
// ordered by directed_pair_rounds so that copies sharing no GPU are neighbours. Each pair aims at
// `seconds` / 2 over the rounds (at least 0.05 s), so all rounds together take about `seconds`
// / 2 of timed copies whatever the GPU count, where the group engine runs a round's pairs at once.
bench::BenchPlan cuda_p2p_load_plan(const std::vector<std::string>& devices, double seconds);

// Peer copies under load: with two or more CUDA devices, cuda_p2p_load_plan in one group child
// after the per-device load. Entries {"src", "dst", "status", "reason", "gbps", "workload"};
// empty with fewer devices.
nlohmann::json run_cuda_p2p_load(const nlohmann::json& cuda_section, double seconds);

// The backend's counters that only grow (NVLink error counters), read again in a child after the
// load: its section as the child wrote it, {"loaded", "error", "devices": [...]}, or
// {"loaded": false, "error": "<the child's fate>"}.
nlohmann::json read_counters_after(const std::string& backend);

}  // namespace gpucheck::doctor

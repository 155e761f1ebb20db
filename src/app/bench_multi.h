// bench on several devices: which children may run at the same time (distinct physical GPUs),
// and the group plan of the work between CUDA devices (peer copies, their latency, all-reduce).
#pragma once

#include "app/bench_devices.h"
#include "bench/cell.h"
#include "bench/config.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpucheck::app {

// The names of the physical device a target is, from the probe's sections: "pci:0000:17:00.0"
// and "uuid:5d3e0b7a-..." (CUDA's "GPU-" prefix dropped, so OpenCL's cl_device_uuid_khr
// matches); {"cpu"} for every device on the host's cores (the CPU, pocl, lavapipe:
// device_on_host_cpu); empty when unknown. Two targets are one device when they share a name.
std::vector<std::string> physical_keys(const BenchTarget& target, const nlohmann::json& backends);

// Targets (by index) in waves run one after another; a wave's children run at the same time.
// The CPU (and every device on its cores) and devices of unknown identity run alone; two targets of
// one physical GPU never share a wave. serial: every target alone, in order.
std::vector<std::vector<std::size_t>> concurrency_waves(const std::vector<BenchTarget>& targets,
                                                        const nlohmann::json& backends,
                                                        bool serial);

// What --ops asks of the work between devices.
struct GroupRequest {
  // The group ops it names (bench::OpUnit::group), in the order of Op.
  std::set<Op> ops;
  // Devices of other backends named one by one get a record saying why not; with --device all
  // they were not asked for by name and are passed over.
  bool refuse_other_backends = true;
  // The ops' sizes (bench/config.h); those the command line gave are marked explicit.
  bench::SizeSet sizes;
};

struct GroupPlanning {
  std::optional<bench::BenchPlan> plan;  // the CUDA devices' group child, when two or more
  std::vector<nlohmann::json> refused;   // unsupported records made here: why not (one device,
                                         // a device of another backend)
};

// Cells for every ordered pair of the selected CUDA devices: copy-engine copies with peer access
// on and off (staged through the host), bidirectional (each unordered pair once), the SM copy
// kernel, the small-copy latency with peer access on and off; and one all-reduce per size over
// all of them. Fewer than two CUDA devices, or other backends' devices: records that say why.
GroupPlanning plan_group(const GroupRequest& request, const std::vector<BenchTarget>& targets,
                         const bench::RepPolicy& policy, std::uint64_t seed);

// One rank's share of a multi-process all-reduce: one cell per size over this process's CUDA
// devices. Sizes are never scaled down to fit: every rank must run the same sizes, or the others
// would wait on a collective this one skipped.
bench::BenchPlan plan_rank(const GroupRequest& request, const std::vector<std::string>& devices,
                           const bench::RepPolicy& policy, std::uint64_t seed);

}  // namespace gpucheck::app

// People's views of the work between GPUs: peer copies as a GPU×GPU matrix per kind of copy
// (as nvbandwidth prints them), their latency likewise, all-reduce as a size table (as
// nccl-tests prints it), and the probe's topology as nvidia-smi topo -m shows it.
#pragma once

#include "report/view_model.h"

#include <nlohmann/json.hpp>

#include <vector>

namespace gpucheck::report {

// Tables for the results' p2p, p2p latency, all-reduce and net (host network) records; none
// when there are none.
std::vector<TableSection> multigpu_tables(const nlohmann::json& results);

// The CUDA section's GPU pairs as a matrix (NV18, PIX, SYS, ...) with each GPU's CPU and NUMA
// affinity; nullopt-like empty rows when NVML listed no pairs.
std::vector<TableSection> topology_tables(const nlohmann::json& backends);

}  // namespace gpucheck::report

// The CUDA peer group: several GPUs of one process for peer copies (copy engines or an SM kernel,
// with peer access on or off) and NCCL all-reduce.
#pragma once

#include "backends/peer_group.h"

#include <memory>
#include <string>
#include <vector>

namespace gpucheck::cuda {

// Throws std::runtime_error naming a device that is not a CUDA device here (or the unusable
// driver); UsageError for a name of another form.
std::unique_ptr<PeerGroup> make_cuda_peer_group(const std::vector<std::string>& device_ids);

// NCCL_NVLS_ENABLE as gpucheck leaves it before NCCL starts: gpucheck never uses NVLink
// multicast, so the value becomes "0" (kept when already "0"); the words say what was found.
std::string pin_nccl_nvls_off();

// ncclGetUniqueId in this process: its bootstrap root listens here until every rank has joined,
// so the library stays loaded for the life of the process. The id's bytes, or empty with *error
// (NCCL missing, or the call's error).
std::string start_nccl_root(std::string* error);

}  // namespace gpucheck::cuda

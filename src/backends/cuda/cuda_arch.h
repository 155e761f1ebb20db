// Facts per GPU architecture (compute capability), from one table: CUDA cores per SM, name.
#pragma once

#include <optional>
#include <string>

namespace gpucheck::cuda {

struct ArchFacts {
  int fp32_cores_per_sm = 0;  // what deviceQuery calls "CUDA Cores/MP"
  const char* name = "";      // "Hopper"
};

// nullopt for a compute capability the table does not know (newer than this build).
std::optional<ArchFacts> arch_facts(int major, int minor);

}  // namespace gpucheck::cuda

// The GPU stack's versions as a probe found them (NVIDIA driver, CUDA driver API and runtime,
// cuBLAS, cuDNN, NVML, OpenCL loader): `--version -v`, bench's provenance and probe's summary.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::report {

struct StackVersion {
  std::string key;      // provenance.versions key: nvidia_driver, cuda_runtime, ...
  std::string label;    // "NVIDIA driver", "cuBLAS", ...
  std::string version;  // empty: not found
  std::string path;     // the library it was read from, where known
  std::string missing;  // why there is no version (the backend's reason), when empty
};

// One entry per component, in a fixed order, from a probe's backend sections.
std::vector<StackVersion> stack_versions(const nlohmann::json& backends);

// {key: version} of the components found: provenance.versions of bench documents.
nlohmann::json stack_versions_json(const std::vector<StackVersion>& versions);

}  // namespace gpucheck::report

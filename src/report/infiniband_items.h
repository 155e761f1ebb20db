// The probe summary's "rdma" line: each InfiniBand/RoCE port in a few words, GPUDirect's module
// and the adapter nearest each GPU, from the document's infiniband section.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::report {

// Empty when the section lists no adapter.
std::vector<std::string> infiniband_items(const nlohmann::json& infiniband);

}  // namespace gpucheck::report

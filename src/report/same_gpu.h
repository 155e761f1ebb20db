// Which devices of different backends are one GPU (a CUDA device and the device of NVIDIA's
// OpenCL platform), and the one UUID label they share in every view.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::report {

class GpuMap {
 public:
  // From a probe's backend sections, or from bench records (device, uuid, bus id, name).
  static GpuMap from_backends(const nlohmann::json& backends);
  static GpuMap from_results(const nlohmann::json& results);

  // The other devices (flat ids) that are the same GPU as device, in the order first seen.
  std::vector<std::string> same_as(const std::string& device) const;

  // The GPU's UUID in NVIDIA's "GPU-…" form wherever the GPU is NVIDIA's (a CUDA peer's UUID, or
  // OpenCL's bare UUID prefixed); other vendors' UUIDs as given; empty when unknown.
  std::string uuid(const std::string& device) const;

 private:
  struct Entry {
    std::string device, backend, name, uuid, pci_bus_id;
    bool nvidia = false;
    std::size_t gpu = 0;  // index of the physical GPU: equal for the same GPU
  };
  void add(Entry e);
  const Entry* find(const std::string& device) const;
  std::vector<Entry> entries_;
  std::size_t gpus_ = 0;
};

}  // namespace gpucheck::report

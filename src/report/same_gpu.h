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

  bool contains(const std::string& device) const { return find(device) != nullptr; }

  // The other devices (flat ids) that are the same GPU as device, in the order first seen.
  std::vector<std::string> same_as(const std::string& device) const;

  // Whether a device listed in `seen` is the same GPU as device; device joins `seen`. Walking the
  // devices in order with it names or counts each GPU once, by its first face.
  bool seen_before(const std::string& device, std::vector<std::string>& seen) const;

  // The GPU's UUID in NVIDIA's "GPU-…" form wherever the GPU is NVIDIA's (a CUDA peer's UUID, or
  // OpenCL's bare UUID prefixed); other vendors' UUIDs as given; empty when unknown.
  std::string uuid(const std::string& device) const;

  // Whether the device is an NVIDIA GPU, itself or through a device of another backend that is
  // the same GPU (a Vulkan device on the bus of a CUDA device).
  bool nvidia(const std::string& device) const;

  // The PCI bus id and name as the device's backend (else a same-GPU device's) gave them; empty
  // when unknown.
  std::string pci_bus_id(const std::string& device) const;
  std::string name(const std::string& device) const;

 private:
  struct Entry {
    std::string device, backend, name, uuid, pci_bus_id;
    bool nvidia = false;
    std::size_t gpu = 0;  // index of the physical GPU: equal for the same GPU
  };
  void add(Entry e);
  const Entry* find(const std::string& device) const;
  // The first non-empty field of the device, else of a device that is the same GPU.
  std::string field(const std::string& device, std::string Entry::*member) const;
  std::vector<Entry> entries_;
  std::size_t gpus_ = 0;
};

}  // namespace gpucheck::report

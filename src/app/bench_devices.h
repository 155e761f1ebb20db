// Turning --device names into the devices a bench runs on.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::app {

struct BenchTarget {
  std::string device;   // flat id: "cpu", "cuda0", "opencl1"
  std::string backend;  // "cpu", "cuda", "opencl"
};

struct DeviceResolution {
  std::vector<BenchTarget> targets;        // in the order named, without repeats
  std::vector<std::string> missing;        // named but not there: one message each (exit 3)
  std::vector<std::string> missing_names;  // the names as given, one per message
};

// True when a --device list needs the backends probed (anything but "cpu").
bool needs_probe(const std::vector<std::string>& names);

// A --device list that names one thing twice ("all,all", "cpu,cpu") is a UsageError, in bench
// and stress alike; "all" beside a device it covers is not (it overlaps by design).
void refuse_repeated_device_names(const std::vector<std::string>& names);

// names: the --device list ("all" = every device found plus the CPU). backends: the probe's
// sections (may be empty when only "cpu" is named). Throws UsageError, listing the valid
// devices, for a name of no known form or of a backend not built into this binary, or one
// named twice (refuse_repeated_device_names).
DeviceResolution resolve_devices(const std::vector<std::string>& names,
                                 const nlohmann::json& backends);

// Every GPU once, for `stress --device all`: each backend's GPUs in probe order, as its GpuFace
// (core/backend_descriptors.h) takes them, so a GPU two APIs reach (NVIDIA's OpenCL lists the
// CUDA cards) is taken by its first. Empty when there is none.
std::vector<BenchTarget> gpu_targets(const nlohmann::json& backends);

}  // namespace gpucheck::app

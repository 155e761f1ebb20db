// What the CUDA and NVML checks share: the CUDA section of the probe's facts and its NVML part,
// the driver's CUDA version, NVIDIA devices on the PCI bus (sysfs), the loaded kernel modules
// (/proc/modules) and the NVIDIA kernel module's version (/proc/driver/nvidia/version).
#pragma once

#include "doctor/check.h"
#include "doctor/system_view.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpucheck::doctor {

// The CUDA backend section; NotObservable when the probe has none or CUDA was not built.
const nlohmann::json& cuda_section(const SystemView& view);

// One GPU as NVML describes it, wherever the probe put it (joined onto a CUDA device, left in
// nvml.devices when the driver was unusable, or nvml.unmatched when CUDA does not see it).
struct NvmlGpu {
  std::string label;  // "cuda0 NVIDIA H100 80GB HBM3 (0000:17:00.0)" or "NVML GPU 1 ..."
  const nlohmann::json* fields = nullptr;
  const nlohmann::json* cuda_device = nullptr;  // the CUDA device it was joined onto
};

// Every NVML GPU; NotObservable naming libnvidia-ml.so.1 and its error when NVML did not load
// or init, or reported no GPU.
std::vector<NvmlGpu> nvml_gpus(const SystemView& view);

// "580.82.07 (nvml)" style evidence line of where NVML came from.
std::string nvml_origin(const SystemView& view);

// The CUDA version the driver supports (13000 = 13.0), from cuDriverGetVersion, else NVML.
struct DriverCuda {
  int encoded = 0;
  std::string source;  // "cuDriverGetVersion" or "nvmlSystemGetCudaDriverVersion_v2"
};
std::optional<DriverCuda> driver_cuda_version(const SystemView& view);

// "13.0" <-> 13000. nullopt when the text is not MAJOR.MINOR[.PATCH...].
std::optional<int> parse_cuda_version(const std::string& text);
std::string cuda_version_text(int encoded);

// A PCI function of vendor NVIDIA, from /sys/bus/pci/devices/<addr>/{vendor,class,device}.
struct NvidiaPciDevice {
  std::string address;         // 0000:17:00.0
  unsigned int pci_class = 0;  // 0x030200
  unsigned int device_id = 0;  // 0x2330 (H100 SXM5); 0 when unread
  bool is_gpu() const { return (pci_class >> 16) == 0x03; }
  bool is_nvswitch() const { return (pci_class >> 8) == 0x0680; }
};
// NotObservable when /sys/bus/pci/devices cannot be listed.
std::vector<NvidiaPciDevice> nvidia_pci_devices(const SystemView& view);
std::vector<NvidiaPciDevice> nvidia_pci_gpus(const SystemView& view);

// Module names from /proc/modules; NotObservable naming the file when it cannot be read.
std::set<std::string> loaded_modules(const SystemView& view);

// "580.82.07" from /proc/driver/nvidia/version ("NVRM version: NVIDIA UNIX ... Kernel Module
// 580.82.07  ..."); nullopt when the file is absent or says no version.
std::optional<std::string> kernel_module_version(const SystemView& view);

// "580.82.07" from ".../libcuda.so.580.82.07"; empty when the name carries no such version.
std::string libcuda_file_version(const std::string& path);

// Whether this system is set up for an NVIDIA GPU, with the evidence: an NVIDIA GPU on the PCI
// bus, the nvidia module, /dev/nvidia* nodes, libcuda.so.1, NVIDIA_VISIBLE_DEVICES.
struct NvidiaExpectation {
  bool expected = false;
  std::vector<std::string> evidence;
};
NvidiaExpectation nvidia_expected(const SystemView& view);

// "major.minor" of a version text, for comparing a library's version with a header's.
std::string major_minor(const std::string& version);
// "major.minor.patch" of a version text ("13.0.2.14" -> "13.0.2": a file name carries a build too).
std::string major_minor_patch(const std::string& version);

}  // namespace gpucheck::doctor

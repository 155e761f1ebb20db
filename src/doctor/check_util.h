// Small helpers the checks share: reading probe facts safely, joining text, and what GPU
// drivers this system looks like it expects (from files, environment and facts).
#pragma once

#include "doctor/check.h"
#include "doctor/system_view.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// obj[key] as text ("" when absent or not a string).
std::string text(const nlohmann::json& obj, std::string_view key);
// obj[key] when it is an array, else an empty array.
const nlohmann::json& array_at(const nlohmann::json& obj, std::string_view key);

std::string join(const std::vector<std::string>& parts, std::string_view sep);

// A check result that does not apply to this system (not in a container, no OpenCL platform):
// SKIP "does not apply here: <why>"; it never changes the exit code.
CheckResult not_applicable(std::string why, std::vector<std::string> evidence = {});

// One problem a check found, with its code (WARN and FAIL; INFO leaves it empty) and its fix
// (may be empty).
struct Finding {
  CheckStatus status;
  Code code;
  std::string text;
  std::string fix;
};
// The worst finding decides the status, and the first of the worst its code; texts and
// (distinct) fixes are joined with "; "; `all_clear` is the PASS line when there is no finding
// (PASS findings: a PASS that says what it saw).
CheckResult combine(const std::vector<Finding>& findings, std::vector<std::string> evidence,
                    const std::string& all_clear);

// The OpenCL backend section; NotObservable when the probe has none or it was not built.
const nlohmann::json& opencl_section(const SystemView& view);
// A key of the OpenCL section that the probe writes whenever its child got as far as the
// loader; NotObservable (naming the section's reason) when the child failed before that.
const nlohmann::json& opencl_field(const SystemView& view, std::string_view key);

// GPU vendors ("nvidia", "amd", "intel") this system is set up for, judged by what would be
// pointless without a GPU: driver libraries, vendor OpenCL libraries, NVIDIA_VISIBLE_DEVICES
// (set by CUDA container images), ROCm, and device nodes. Each with the evidence that says so.
struct GpuExpectation {
  std::set<std::string> vendors;
  std::vector<std::string> evidence;
};
GpuExpectation expected_gpu_vendors(const SystemView& view);

// "NVIDIA", "AMD", "Intel", "Mesa Clover", "Mesa rusticl", "pocl" for a vendor or family id.
std::string vendor_display_name(std::string_view vendor);
// The display names of a set of vendor ids, joined with ", ".
std::string vendor_display_names(const std::set<std::string>& vendors);

// The Debian package that installed `path`, from the dpkg database under the view's root
// (/var/lib/dpkg/info/*.list, what `dpkg -S` reads; /lib and /usr/lib are the same directory on
// merged-/usr systems); nullopt when no package lists it or there is no dpkg database. A file a
// package owns is never to be removed with rm: the package manager puts it back.
std::optional<std::string> dpkg_owner(const SystemView& view, std::string_view path);

// Known locations of the NVIDIA user-space driver library (libcuda.so.1) that exist here.
std::vector<std::string> libcuda_locations(const SystemView& view);

// /dev nodes that exist, matching a glob ("/dev/nvidia[0-9]*").
std::vector<std::string> device_nodes(const SystemView& view, std::string_view pattern);

struct PciGpu {
  std::string address;
  std::string vendor;  // nvidia | amd | intel
};

// Display-class PCI functions of NVIDIA, AMD and Intel, from /sys/bus/pci/devices; throws
// NotObservable where that folder cannot be listed.
std::vector<PciGpu> pci_gpus(const SystemView& view);

// "NVIDIA 0000:17:00.0, AMD 0000:65:00.0"
std::string gpu_list(const std::vector<PciGpu>& gpus);

}  // namespace gpucheck::doctor

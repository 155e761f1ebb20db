// Host facts for `gpucheck probe` and provenance: hostname, OS, kernel, architecture and whether
// we run in a container, under WSL or on bare metal; read under a root prefix for tests.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucheck::host {

enum class Virtualization { kBareMetal, kContainer, kWsl };

// "bare_metal" | "container" | "wsl", as in JSON.
std::string_view to_string(Virtualization v);

// A display-class PCI function (class 0x03xxxx): a GPU on the bus, whether or not a driver
// serves it. vendor: nvidia | amd | intel | other.
struct DisplayDevice {
  std::string pci_bus_id;
  std::string vendor;
};

// A field is absent when the file it comes from is missing, unreadable or malformed.
struct HostFacts {
  std::optional<std::string> hostname;    // proc/sys/kernel/hostname, else etc/hostname
  std::optional<std::string> os;          // os-release PRETTY_NAME (else NAME)
  std::optional<std::string> os_id;       // os-release ID
  std::optional<std::string> os_version;  // os-release VERSION_ID
  std::optional<std::string> kernel;      // proc/sys/kernel/osrelease
  std::optional<std::string> arch;        // uname() for the live root, else from cpuinfo
  // WSL wins over container: Docker Desktop's containers run on the WSL2 kernel, and what
  // matters for the GPU stack there is WSL's driver passthrough.
  Virtualization virtualization = Virtualization::kBareMetal;
  // docker | podman | kubernetes | lxc | containerd, or the raw container= value; set whenever
  // container markers are found (also under WSL), absent when the runtime is not known.
  std::optional<std::string> container_runtime;
  // x86 cpuinfo "hypervisor" flag: true inside a virtual machine, which virtualization does
  // not tell (a VM's guest reads bare_metal); absent where cpuinfo cannot say (no flags, Arm).
  std::optional<bool> hypervisor;
  // sys/bus/pci/devices' display functions; absent where that folder cannot be listed (a
  // container without /sys), so "no GPU on the bus" is only said where the bus was seen.
  std::optional<std::vector<DisplayDevice>> display_devices;
};

// Never throws for missing, unreadable or malformed files: the affected fields stay absent.
HostFacts read_host_facts(const std::filesystem::path& root);

// The "host" object of the JSON document; absent fields have no key.
nlohmann::json to_json(const HostFacts& facts);

}  // namespace gpucheck::host

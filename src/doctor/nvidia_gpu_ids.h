// What the PCI device id of an NVIDIA GPU tells doctor before any driver answers: whether it is
// a Blackwell GPU (which only NVIDIA's open kernel module drives), and the size of its BAR1
// aperture against the sizes the card offers (Resizable BAR).
#pragma once

#include "doctor/system_view.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::doctor {

// The product name of a Blackwell GPU's PCI device id (vendor 10de), from the "Compatible GPUs"
// table of NVIDIA/open-gpu-kernel-modules' README (595.45.04); nullopt for any other id.
std::optional<std::string_view> blackwell_name(unsigned int device_id);

// Which kernel module /proc/driver/nvidia/version names: "open" ("NVIDIA UNIX Open Kernel Module
// for x86_64"), "proprietary" ("NVIDIA UNIX x86_64 Kernel Module"); nullopt when unread.
std::optional<std::string> kernel_module_flavor(const SystemView& view);

// A GPU's BAR1 (the frame-buffer aperture: line 1 of /sys/bus/pci/devices/<addr>/resource) and
// the largest size its Resizable BAR capability offers (resource1_resize, kernel 6.1 and later;
// 0 when the file is absent).
struct Bar1 {
  std::uint64_t bytes = 0;
  std::uint64_t largest_offered = 0;
};
std::optional<Bar1> read_bar1(const SystemView& view, const std::string& pci_address);

}  // namespace gpucheck::doctor

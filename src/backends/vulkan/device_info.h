// One physical device as vulkaninfo shows it: identity, driver, versions, UUIDs and PCI address,
// memory heaps and types, queue families, subgroups, 16/8-bit storage and arithmetic,
// cooperative matrices and the compute limits; keys in lower_snake (json_keys.h).
#pragma once

#include "backends/vulkan/vulkan_library.h"

#include <nlohmann/json.hpp>

#include <string>

namespace gpucheck::vulkan {

// The probe's device entry ({"device", "stable_id", "device_name", "device_uuid",
// "pci_bus_id", "properties"}) for vulkan<index>. A failed query is recorded in
// properties.errors naming the call and its VkResult; it never throws for a driver's answer.
nlohmann::json describe_device(const InstanceFunctions& fns, VkPhysicalDevice device, int index);

}  // namespace gpucheck::vulkan

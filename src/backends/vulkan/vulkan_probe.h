// The Vulkan probe: loader and its instance version, layers, the variables the loader reads,
// the driver manifests in its search order (each library loaded and initialised alone), and
// every physical device, as one JSON section. Facts come in as arguments so tests fabricate them.
#pragma once

#include "backends/vulkan/icd_manifests.h"
#include "backends/vulkan/vulkan_library.h"

#include <nlohmann/json.hpp>

#include <string>

namespace gpucheck::vulkan {

struct ProbeOptions {
  ManifestFacts facts = ManifestFacts::of_this_process();
  std::string loader = kLoaderSoname;  // what dlopen is asked for
  IcdChecker check_icd = check_icd_here;
};

// The "vulkan" backend section (see backends/backend.h). Status "unavailable" with reason
// "libvulkan.so.1: <dlerror>" without a loader (the manifests are still listed: a driver
// without a loader is the finding); "available" with "0 physical devices" when the loader
// finds no driver that initialises; "failed" when vkCreateInstance or the enumeration fails.
// Never throws for a driver's failure.
nlohmann::json probe_vulkan(const ProbeOptions& options);

}  // namespace gpucheck::vulkan

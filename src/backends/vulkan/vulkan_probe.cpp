// Loader, instance and enumeration; the per-device fields are in device_info.cpp.
#include "backends/vulkan/vulkan_probe.h"

#include "backends/vulkan/device_info.h"
#include "backends/vulkan/vk_names.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

namespace gpucheck::vulkan {

namespace {

namespace k = keys;
using Json = nlohmann::json;

Json layers_of(const VulkanLibrary& lib, Json* errors) {
  Json out = Json::array();
  std::uint32_t count = 0;
  VkResult r = lib.vkEnumerateInstanceLayerProperties(&count, nullptr);
  std::vector<VkLayerProperties> layers(count);
  if (r == VK_SUCCESS && count > 0)
    r = lib.vkEnumerateInstanceLayerProperties(&count, layers.data());
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    errors->push_back("vkEnumerateInstanceLayerProperties: " + vk_result_text(r));
    return out;
  }
  layers.resize(std::min<std::size_t>(count, layers.size()));
  for (const auto& l : layers)
    out.push_back({{k::kName, sanitize_c_buffer(l.layerName, sizeof l.layerName)},
                   {k::kDescription, sanitize_c_buffer(l.description, sizeof l.description)},
                   {k::kSpecVersion, api_version_text(l.specVersion)},
                   {k::kImplementationVersion, l.implementationVersion}});
  return out;
}

std::vector<std::string> instance_extensions(const VulkanLibrary& lib, Json* errors) {
  std::uint32_t count = 0;
  VkResult r = lib.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr);
  std::vector<VkExtensionProperties> ext(count);
  if (r == VK_SUCCESS && count > 0)
    r = lib.vkEnumerateInstanceExtensionProperties(nullptr, &count, ext.data());
  std::vector<std::string> out;
  if (r != VK_SUCCESS && r != VK_INCOMPLETE) {
    errors->push_back("vkEnumerateInstanceExtensionProperties: " + vk_result_text(r));
    return out;
  }
  ext.resize(std::min<std::size_t>(count, ext.size()));
  for (const auto& e : ext)
    out.push_back(sanitize_c_buffer(e.extensionName, sizeof e.extensionName));
  return out;
}

void enumerate(const VulkanLibrary& lib, std::uint32_t instance_version, Json* out) {
  Json errors = Json::array();
  const auto ext = instance_extensions(lib, &errors);
  const auto instance = create_instance(lib, instance_version, ext);
  const auto& fns = instance->fns();
  const std::vector<VkPhysicalDevice> devices = physical_devices(*instance);
  int index = 0;
  for (VkPhysicalDevice d : devices)
    (*out)[k::kDevices].push_back(describe_device(fns, d, index++));
  (*out)[k::kStatus] = "available";
  if (devices.empty()) (*out)[k::kReason] = "0 physical devices";
  if (!errors.empty()) (*out)[k::kErrors] = std::move(errors);
}

}  // namespace

Json probe_vulkan(const ProbeOptions& options) {
  Json out{{k::kName, "vulkan"}};
  std::string error;
  auto lib = VulkanLibrary::open(options.loader, &error);
  Json loader = Json::object();
  std::uint32_t instance_version = VK_API_VERSION_1_0;
  Json errors = Json::array();
  if (lib) {
    loader[k::kPath] = lib->path();
    loader[k::kRealPath] = lib->real_path();
    if (lib->vkEnumerateInstanceVersion != nullptr) {
      const VkResult r = lib->vkEnumerateInstanceVersion(&instance_version);
      if (r != VK_SUCCESS) {
        errors.push_back("vkEnumerateInstanceVersion: " + vk_result_text(r));
        instance_version = VK_API_VERSION_1_0;
      }
    }
    loader[k::kInstanceVersion] = api_version_text(instance_version);
    loader[k::kLayers] = layers_of(*lib, &errors);
  }
  out[k::kLoader] = std::move(loader);
  out[k::kEnv] = describe_environment(options.facts);
  out[k::kElevated] = options.facts.elevated;
  out[k::kDevices] = Json::array();

  if (!lib) {
    out[k::kStatus] = "unavailable";
    // dlerror() usually starts with the name already ("libvulkan.so.1: cannot open ...").
    out[k::kReason] =
        error.starts_with(options.loader + ":") ? error : options.loader + ": " + error;
  } else {
    try {
      enumerate(*lib, instance_version, &out);
    } catch (const ApiError& e) {
      out[k::kStatus] = "failed";
      out[k::kReason] = fmt::format("{}: {} ({})", e.call(), e.code_name(), e.code());
    }
  }
  if (!errors.empty())
    for (auto& e : errors) out[k::kErrors].push_back(std::move(e));
  // The drivers alone, after the loader has had its turn: a driver that crashes here has
  // already been seen (or not) by the loader above.
  ManifestInventory inv = manifest_inventory(options.facts, options.check_icd);
  out[k::kIcdSource] = std::move(inv.source);
  out[k::kIcdFiles] = std::move(inv.files);
  if (!inv.overridden_by.empty()) out[k::kOverriddenBy] = inv.overridden_by;
  return out;
}

}  // namespace gpucheck::vulkan

// The Vulkan loader (libvulkan.so.1), opened at run time: only vkGetInstanceProcAddr is looked
// up with dlsym; every other entry point comes from it, as the loader's interface documents, so
// that the gpucheck binary starts on machines without a loader.
#pragma once

#include "backends/vulkan/vk_headers.h"
#include "core/dynamic_library.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpucheck::vulkan {

inline constexpr const char* kLoaderSoname = "libvulkan.so.1";

class VulkanLibrary {
 public:
  // dlopen(soname) and its global entry points. On failure returns nullptr and sets *error to
  // the dlerror() text or the name of a missing entry point.
  static std::unique_ptr<VulkanLibrary> open(const std::string& soname, std::string* error);

  const std::string& path() const { return lib_.path; }
  const std::string& real_path() const { return lib_.real_path; }

  PFN_vkGetInstanceProcAddr vkGetInstanceProcAddr = nullptr;
  // nullptr for a Vulkan 1.0 loader (its instance version is then 1.0.0).
  PFN_vkEnumerateInstanceVersion vkEnumerateInstanceVersion = nullptr;
  PFN_vkEnumerateInstanceLayerProperties vkEnumerateInstanceLayerProperties = nullptr;
  PFN_vkEnumerateInstanceExtensionProperties vkEnumerateInstanceExtensionProperties = nullptr;
  PFN_vkCreateInstance vkCreateInstance = nullptr;

 private:
  OpenedLibrary lib_;
};

// The instance-level entry points the probe uses, from vkGetInstanceProcAddr(instance, ...).
// The optional ones stay nullptr when the loader or no driver has them.
struct InstanceFunctions {
  PFN_vkDestroyInstance vkDestroyInstance = nullptr;
  PFN_vkEnumeratePhysicalDevices vkEnumeratePhysicalDevices = nullptr;
  PFN_vkGetPhysicalDeviceProperties vkGetPhysicalDeviceProperties = nullptr;
  PFN_vkGetPhysicalDeviceMemoryProperties vkGetPhysicalDeviceMemoryProperties = nullptr;
  PFN_vkGetPhysicalDeviceQueueFamilyProperties vkGetPhysicalDeviceQueueFamilyProperties = nullptr;
  PFN_vkEnumerateDeviceExtensionProperties vkEnumerateDeviceExtensionProperties = nullptr;
  // Vulkan 1.1 instances (or VK_KHR_get_physical_device_properties2: the same functions).
  PFN_vkGetPhysicalDeviceProperties2 vkGetPhysicalDeviceProperties2 = nullptr;
  PFN_vkGetPhysicalDeviceFeatures2 vkGetPhysicalDeviceFeatures2 = nullptr;
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV
      vkGetPhysicalDeviceCooperativeMatrixPropertiesNV = nullptr;
#ifdef VK_KHR_cooperative_matrix
  PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR
      vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR = nullptr;
#endif

  // Throws ApiError naming the first required entry point the loader does not return.
  static InstanceFunctions load(const VulkanLibrary& lib, VkInstance instance,
                                bool properties2_from_khr);
};

// One VkInstance, destroyed with the object.
class Instance {
 public:
  Instance(VkInstance handle, InstanceFunctions fns) : handle_(handle), fns_(fns) {}
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;
  ~Instance() {
    if (handle_ != VK_NULL_HANDLE && fns_.vkDestroyInstance != nullptr)
      fns_.vkDestroyInstance(handle_, nullptr);
  }
  VkInstance handle() const { return handle_; }
  const InstanceFunctions& fns() const { return fns_; }

 private:
  VkInstance handle_;
  InstanceFunctions fns_;
};

// The instance probe and bench enumerate with, so that both number the devices alike: the
// loader's version up to 1.3, and the extensions that widen what it sees (properties2 on a 1.0
// loader, portability drivers) where `extensions` (the loader's) has them. Throws ApiError.
std::unique_ptr<Instance> create_instance(const VulkanLibrary& lib, std::uint32_t instance_version,
                                          const std::vector<std::string>& extensions);

// vkEnumeratePhysicalDevices, in the loader's order (vulkan0, vulkan1, ...). Throws ApiError.
std::vector<VkPhysicalDevice> physical_devices(const Instance& instance);

}  // namespace gpucheck::vulkan

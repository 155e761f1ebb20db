// dlopen of libvulkan.so.1 and the entry points the probe needs, all through
// vkGetInstanceProcAddr.
#include "backends/vulkan/vulkan_library.h"

#include "backends/vulkan/vk_names.h"
#include "core/errors.h"
#include "core/sanitize.h"

#include <algorithm>
#include <string>
#include <vector>

namespace gpucheck::vulkan {

namespace {

// vkGetInstanceProcAddr(instance, name) as a typed pointer; *missing names it when absent.
template <typename Fn>
void instance_proc(const VulkanLibrary& lib, VkInstance instance, const char* name, Fn* out,
                   std::string* missing) {
  *out = reinterpret_cast<Fn>(lib.vkGetInstanceProcAddr(instance, name));
  if (*out == nullptr && missing != nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += name;
  }
}

}  // namespace

std::unique_ptr<VulkanLibrary> VulkanLibrary::open(const std::string& soname, std::string* error) {
  std::unique_ptr<VulkanLibrary> lib(new VulkanLibrary());
  std::vector<std::string> errors;
  if (!open_library(soname, "dlopen", &lib->lib_, &errors)) {
    *error = join_errors(errors);
    return nullptr;
  }
  std::string missing;
  if (!resolve_symbol(lib->lib_.handle, "vkGetInstanceProcAddr", &lib->vkGetInstanceProcAddr,
                      &missing)) {
    *error = lib->path() + ": missing symbols: " + missing;
    return nullptr;
  }
  // The global commands are asked for with a null instance.
  instance_proc(*lib, VK_NULL_HANDLE, "vkEnumerateInstanceVersion",
                &lib->vkEnumerateInstanceVersion, nullptr);
  instance_proc(*lib, VK_NULL_HANDLE, "vkEnumerateInstanceLayerProperties",
                &lib->vkEnumerateInstanceLayerProperties, &missing);
  instance_proc(*lib, VK_NULL_HANDLE, "vkEnumerateInstanceExtensionProperties",
                &lib->vkEnumerateInstanceExtensionProperties, &missing);
  instance_proc(*lib, VK_NULL_HANDLE, "vkCreateInstance", &lib->vkCreateInstance, &missing);
  if (!missing.empty()) {
    *error = lib->path() + ": vkGetInstanceProcAddr returns no " + missing;
    return nullptr;
  }
  return lib;
}

InstanceFunctions InstanceFunctions::load(const VulkanLibrary& lib, VkInstance instance,
                                          bool properties2_from_khr) {
  InstanceFunctions f;
  std::string missing;
  instance_proc(lib, instance, "vkDestroyInstance", &f.vkDestroyInstance, &missing);
  instance_proc(lib, instance, "vkEnumeratePhysicalDevices", &f.vkEnumeratePhysicalDevices,
                &missing);
  instance_proc(lib, instance, "vkGetPhysicalDeviceProperties", &f.vkGetPhysicalDeviceProperties,
                &missing);
  instance_proc(lib, instance, "vkGetPhysicalDeviceMemoryProperties",
                &f.vkGetPhysicalDeviceMemoryProperties, &missing);
  instance_proc(lib, instance, "vkGetPhysicalDeviceQueueFamilyProperties",
                &f.vkGetPhysicalDeviceQueueFamilyProperties, &missing);
  instance_proc(lib, instance, "vkEnumerateDeviceExtensionProperties",
                &f.vkEnumerateDeviceExtensionProperties, &missing);
  if (!missing.empty())
    throw ApiError("Vulkan", 0, "missing entry point", "vkGetInstanceProcAddr(" + missing + ")",
                   __FILE__, __LINE__);
  instance_proc(
      lib, instance,
      properties2_from_khr ? "vkGetPhysicalDeviceProperties2KHR" : "vkGetPhysicalDeviceProperties2",
      &f.vkGetPhysicalDeviceProperties2, nullptr);
  instance_proc(
      lib, instance,
      properties2_from_khr ? "vkGetPhysicalDeviceFeatures2KHR" : "vkGetPhysicalDeviceFeatures2",
      &f.vkGetPhysicalDeviceFeatures2, nullptr);
  instance_proc(lib, instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV",
                &f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV, nullptr);
#ifdef VK_KHR_cooperative_matrix
  instance_proc(lib, instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR",
                &f.vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR, nullptr);
#endif
  return f;
}

std::unique_ptr<Instance> create_instance(const VulkanLibrary& lib, std::uint32_t instance_version,
                                          const std::vector<std::string>& extensions) {
  auto has = [&](const char* e) {
    return std::find(extensions.begin(), extensions.end(), e) != extensions.end();
  };
  std::vector<const char*> enable;
  const bool khr_props2 = instance_version < VK_API_VERSION_1_1 &&
                          has(VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);
  if (khr_props2) enable.push_back(VK_KHR_GET_PHYSICAL_DEVICE_PROPERTIES_2_EXTENSION_NAME);
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  if (has(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME)) {
    enable.push_back(VK_KHR_PORTABILITY_ENUMERATION_EXTENSION_NAME);
    info.flags |= VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR;
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "gpucheck";
  app.apiVersion = std::min<std::uint32_t>(instance_version, VK_API_VERSION_1_3);
  info.pApplicationInfo = &app;
  info.enabledExtensionCount = static_cast<std::uint32_t>(enable.size());
  info.ppEnabledExtensionNames = enable.data();
  VkInstance handle = VK_NULL_HANDLE;
  GC_VK_CHECK(lib.vkCreateInstance(&info, nullptr, &handle));
  // Destroyed by the Instance even when loading an entry point throws.
  PFN_vkDestroyInstance destroy = nullptr;
  instance_proc(lib, handle, "vkDestroyInstance", &destroy, nullptr);
  try {
    return std::make_unique<Instance>(handle, InstanceFunctions::load(lib, handle, khr_props2));
  } catch (...) {
    if (destroy != nullptr) destroy(handle, nullptr);
    throw;
  }
}

std::vector<VkPhysicalDevice> physical_devices(const Instance& instance) {
  std::uint32_t count = 0;
  GC_VK_CHECK(instance.fns().vkEnumeratePhysicalDevices(instance.handle(), &count, nullptr));
  std::vector<VkPhysicalDevice> devices(count);
  if (count > 0)
    GC_VK_CHECK(
        instance.fns().vkEnumeratePhysicalDevices(instance.handle(), &count, devices.data()));
  devices.resize(std::min<std::size_t>(count, devices.size()));
  return devices;
}

}  // namespace gpucheck::vulkan

// Opening vulkan<N> for compute: the same instance and enumeration as the probe, one compute
// queue (one with timestamps where the device has one), 16-bit storage and float16 enabled
// where offered, and buffers in device-local or host-visible memory.
#include "backends/vulkan/vulkan_context.h"

#include "backends/device_index.h"
#include "backends/vulkan/device_info.h"
#include "backends/vulkan/vk_names.h"
#include "core/errors.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <vector>

namespace gpucheck::vulkan {

namespace {

namespace k = keys;

template <typename Fn>
Fn instance_fn(const VulkanLibrary& lib, VkInstance instance, const char* name) {
  auto f = reinterpret_cast<Fn>(lib.vkGetInstanceProcAddr(instance, name));
  if (f == nullptr)
    throw ApiError("Vulkan", 0, "missing entry point",
                   fmt::format("vkGetInstanceProcAddr({})", name), __FILE__, __LINE__);
  return f;
}

std::vector<std::string> loader_extensions(const VulkanLibrary& lib) {
  std::uint32_t count = 0;
  GC_VK_CHECK(lib.vkEnumerateInstanceExtensionProperties(nullptr, &count, nullptr));
  std::vector<VkExtensionProperties> ext(count);
  if (count > 0) {
    const VkResult r = lib.vkEnumerateInstanceExtensionProperties(nullptr, &count, ext.data());
    if (r != VK_INCOMPLETE) GC_VK_CHECK(r);
  }
  std::vector<std::string> out;
  for (std::size_t i = 0; i < std::min<std::size_t>(count, ext.size()); ++i)
    out.emplace_back(ext[i].extensionName);
  return out;
}

bool feature(const nlohmann::json& description, const char* name) {
  const auto& p = description.value(k::kProperties, nlohmann::json::object());
  const auto& sf = p.value("shader_features", nlohmann::json::object());
  return sf.value(name, false);
}

bool has_extension(const nlohmann::json& description, const char* name) {
  const auto& p = description.value(k::kProperties, nlohmann::json::object());
  return p.value("extensions", nlohmann::json::object()).contains(name);
}

// The compute family with timestamps, else the first compute family.
std::uint32_t compute_family(const std::vector<VkQueueFamilyProperties>& families,
                             const std::string& device_id) {
  std::optional<std::uint32_t> first;
  for (std::uint32_t i = 0; i < families.size(); ++i) {
    if ((families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) == 0 || families[i].queueCount == 0)
      continue;
    if (families[i].timestampValidBits > 0) return i;
    if (!first) first = i;
  }
  if (!first)
    throw std::runtime_error(
        fmt::format("{} has no queue family with VK_QUEUE_COMPUTE_BIT", device_id));
  return *first;
}

}  // namespace

std::unique_ptr<Context> Context::open(std::size_t index, bool hide_float16) {
  std::string error;
  auto lib = VulkanLibrary::open(kLoaderSoname, &error);
  if (!lib) throw std::runtime_error(loader_error(kLoaderSoname, error));
  std::uint32_t instance_version = VK_API_VERSION_1_0;
  if (lib->vkEnumerateInstanceVersion != nullptr)
    GC_VK_CHECK(lib->vkEnumerateInstanceVersion(&instance_version));
  auto instance = create_instance(*lib, instance_version, loader_extensions(*lib));
  const auto devices = physical_devices(*instance);
  if (index >= devices.size()) return nullptr;

  std::unique_ptr<Context> c(new Context());
  c->lib_ = std::move(lib);
  c->instance_ = std::move(instance);
  c->physical_ = devices[index];
  const VulkanLibrary& L = *c->lib_;
  const VkInstance inst = c->instance_->handle();
  const InstanceFunctions& ifn = c->instance_->fns();
  const std::string device_id = fmt::format("vulkan{}", index);
  c->description_ = describe_device(ifn, c->physical_, static_cast<int>(index));

  VkPhysicalDeviceProperties props{};
  ifn.vkGetPhysicalDeviceProperties(c->physical_, &props);
  // The shaders are SPIR-V 1.3, which Vulkan 1.1 consumes.
  if (instance_version < VK_API_VERSION_1_1 || props.apiVersion < VK_API_VERSION_1_1 ||
      ifn.vkGetPhysicalDeviceProperties2 == nullptr)
    throw std::runtime_error(fmt::format(
        "{} offers Vulkan {} through a {} loader; bench's shaders need Vulkan 1.1", device_id,
        api_version_text(props.apiVersion), api_version_text(instance_version)));
  VkPhysicalDeviceMaintenance3Properties m3{};
  m3.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES;
  VkPhysicalDeviceProperties2 props2{};
  props2.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2;
  props2.pNext = &m3;
  ifn.vkGetPhysicalDeviceProperties2(c->physical_, &props2);
  ifn.vkGetPhysicalDeviceMemoryProperties(c->physical_, &c->memory_);
  std::uint32_t nfam = 0;
  ifn.vkGetPhysicalDeviceQueueFamilyProperties(c->physical_, &nfam, nullptr);
  std::vector<VkQueueFamilyProperties> families(nfam);
  ifn.vkGetPhysicalDeviceQueueFamilyProperties(c->physical_, &nfam, families.data());
  c->family_ = compute_family(families, device_id);

  Capabilities& caps = c->caps_;
  const bool f16 = feature(c->description_, "shader_float16") && !hide_float16;
  const bool s16 = feature(c->description_, "storage_buffer_16bit_access");
  caps.float16 = f16 && s16;
  if (!f16) caps.float16_missing = "shaderFloat16";
  if (!s16)
    caps.float16_missing +=
        std::string(caps.float16_missing.empty() ? "" : " and ") + "storageBuffer16BitAccess";
  caps.cpu = props.deviceType == VK_PHYSICAL_DEVICE_TYPE_CPU;
  caps.int64 = feature(c->description_, "shader_int64");
  caps.timestamp_bits = families[c->family_].timestampValidBits;
  caps.timestamp_period_ns = props.limits.timestampPeriod;
  for (std::uint32_t h = 0; h < c->memory_.memoryHeapCount; ++h)
    if (c->memory_.memoryHeaps[h].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT)
      caps.device_local_heap =
          std::max<std::uint64_t>(caps.device_local_heap, c->memory_.memoryHeaps[h].size);
  caps.max_allocation =
      std::min<std::uint64_t>(props.limits.maxStorageBufferRange, m3.maxMemoryAllocationSize);
  caps.max_group_x = props.limits.maxComputeWorkGroupSize[0];
  caps.max_group_invocations = props.limits.maxComputeWorkGroupInvocations;
  caps.max_group_count_x = props.limits.maxComputeWorkGroupCount[0];
  caps.max_shared_bytes = props.limits.maxComputeSharedMemorySize;
  caps.vendor_id = props.vendorID;
  if (caps.float16)
    caps.coopmat_nv =
        choose_coopmat_nv(c->description_.at(k::kProperties), CoopmatTile{}, &caps.coopmat_why);
  else
    caps.coopmat_why = "the device lacks " + caps.float16_missing;

  const float priority = 1.0f;
  VkDeviceQueueCreateInfo qi{};
  qi.sType = VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO;
  qi.queueFamilyIndex = c->family_;
  qi.queueCount = 1;
  qi.pQueuePriorities = &priority;
  VkPhysicalDevice16BitStorageFeatures storage16{};
  storage16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_16BIT_STORAGE_FEATURES;
  storage16.storageBuffer16BitAccess = VK_TRUE;
  VkPhysicalDeviceShaderFloat16Int8Features float16{};
  float16.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_FLOAT16_INT8_FEATURES;
  float16.shaderFloat16 = VK_TRUE;
  float16.pNext = &storage16;
  std::vector<const char*> extensions;
  if (caps.float16 && props.apiVersion < VK_API_VERSION_1_2 &&
      has_extension(c->description_, VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME))
    extensions.push_back(VK_KHR_SHADER_FLOAT16_INT8_EXTENSION_NAME);
  VkPhysicalDeviceCooperativeMatrixFeaturesNV coopmat{};
  coopmat.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV;
  coopmat.cooperativeMatrix = VK_TRUE;
  coopmat.pNext = &float16;
  if (caps.coopmat_nv) extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  VkDeviceCreateInfo di{};
  di.sType = VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO;
  di.queueCreateInfoCount = 1;
  di.pQueueCreateInfos = &qi;
  di.enabledExtensionCount = static_cast<std::uint32_t>(extensions.size());
  di.ppEnabledExtensionNames = extensions.data();
  VkPhysicalDeviceFeatures base_features{};
  base_features.shaderInt64 = caps.int64 ? VK_TRUE : VK_FALSE;
  di.pEnabledFeatures = &base_features;
  if (caps.float16) di.pNext = caps.coopmat_nv ? static_cast<void*>(&coopmat) : &float16;
  auto create_device = instance_fn<PFN_vkCreateDevice>(L, inst, "vkCreateDevice");
  GC_VK_CHECK(create_device(c->physical_, &di, nullptr, &c->device_));

  auto device_proc = instance_fn<PFN_vkGetDeviceProcAddr>(L, inst, "vkGetDeviceProcAddr");
  std::string missing;
#define GC_VK_LOAD(name)                                                      \
  c->fn_.name = reinterpret_cast<PFN_##name>(device_proc(c->device_, #name)); \
  if (c->fn_.name == nullptr) missing += std::string(missing.empty() ? "" : ", ") + #name;
  GC_VK_DEVICE_FUNCTIONS(GC_VK_LOAD)
#undef GC_VK_LOAD
  if (!missing.empty())
    throw ApiError("Vulkan", 0, "missing entry point", "vkGetDeviceProcAddr(" + missing + ")",
                   __FILE__, __LINE__);
  c->fn_.vkGetDeviceQueue(c->device_, c->family_, 0, &c->queue_);
  VkCommandPoolCreateInfo pi{};
  pi.sType = VK_STRUCTURE_TYPE_COMMAND_POOL_CREATE_INFO;
  pi.flags = VK_COMMAND_POOL_CREATE_RESET_COMMAND_BUFFER_BIT;
  pi.queueFamilyIndex = c->family_;
  GC_VK_CHECK(c->fn_.vkCreateCommandPool(c->device_, &pi, nullptr, &c->pool_));
  return c;
}

Context::~Context() {
  if (device_ == VK_NULL_HANDLE) return;
  if (fn_.vkDeviceWaitIdle != nullptr) fn_.vkDeviceWaitIdle(device_);
  if (pool_ != VK_NULL_HANDLE) fn_.vkDestroyCommandPool(device_, pool_, nullptr);
  if (fn_.vkDestroyDevice != nullptr) {
    fn_.vkDestroyDevice(device_, nullptr);
  } else {
    // Entry points failed to load: the instance's own pointer still destroys the device.
    auto destroy = reinterpret_cast<PFN_vkDestroyDevice>(
        lib_->vkGetInstanceProcAddr(instance_->handle(), "vkDestroyDevice"));
    if (destroy != nullptr) destroy(device_, nullptr);
  }
}

std::uint32_t Context::memory_type(std::uint32_t allowed, MemoryKind kind) const {
  const VkMemoryPropertyFlags need =
      kind == MemoryKind::kDeviceLocal
          ? VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT
          : VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Host-visible memory is read back by the CPU: cached where offered.
  const VkMemoryPropertyFlags nice =
      kind == MemoryKind::kDeviceLocal ? 0 : VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
  std::optional<std::uint32_t> fallback;
  for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i) {
    if ((allowed & (1u << i)) == 0) continue;
    const VkMemoryPropertyFlags f = memory_.memoryTypes[i].propertyFlags;
    if ((f & need) != need) continue;
    if ((f & nice) == nice) return i;
    if (!fallback) fallback = i;
  }
  if (fallback) return *fallback;
  // A device without DEVICE_LOCAL memory for buffers (rare): any type the buffer allows.
  if (kind == MemoryKind::kDeviceLocal)
    for (std::uint32_t i = 0; i < memory_.memoryTypeCount; ++i)
      if (allowed & (1u << i)) return i;
  throw std::runtime_error(
      "no host-visible, host-coherent memory type for a storage buffer on this device");
}

Allocation Context::allocate(std::size_t bytes, MemoryKind kind) {
  Allocation a;
  a.bytes = bytes;
  VkBufferCreateInfo bi{};
  bi.sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO;
  bi.size = std::max<std::size_t>(bytes, 16);
  bi.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT |
             VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bi.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  GC_VK_CHECK(fn_.vkCreateBuffer(device_, &bi, nullptr, &a.buffer));
  try {
    VkMemoryRequirements req{};
    fn_.vkGetBufferMemoryRequirements(device_, a.buffer, &req);
    VkMemoryAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO;
    ai.allocationSize = req.size;
    ai.memoryTypeIndex = memory_type(req.memoryTypeBits, kind);
    GC_VK_CHECK(fn_.vkAllocateMemory(device_, &ai, nullptr, &a.memory));
    GC_VK_CHECK(fn_.vkBindBufferMemory(device_, a.buffer, a.memory, 0));
    if (kind == MemoryKind::kHostVisible)
      GC_VK_CHECK(fn_.vkMapMemory(device_, a.memory, 0, VK_WHOLE_SIZE, 0, &a.mapped));
  } catch (...) {
    release(a);
    throw;
  }
  return a;
}

void Context::release(Allocation& a) noexcept {
  if (a.mapped != nullptr) fn_.vkUnmapMemory(device_, a.memory);
  if (a.buffer != VK_NULL_HANDLE) fn_.vkDestroyBuffer(device_, a.buffer, nullptr);
  if (a.memory != VK_NULL_HANDLE) fn_.vkFreeMemory(device_, a.memory, nullptr);
  a = Allocation{};
}

}  // namespace gpucheck::vulkan

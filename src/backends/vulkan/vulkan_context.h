// One Vulkan device opened for compute: instance, physical device, logical device with one
// compute queue, its command pool, and buffers with their memory. Everything the bench device
// needs below shaders and timing; entry points come from the loader at run time.
#pragma once

#include "backends/vulkan/coopmat_choice.h"
#include "backends/vulkan/vulkan_library.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gpucheck::vulkan {

// The device-level entry points bench uses, from vkGetDeviceProcAddr.
#define GC_VK_DEVICE_FUNCTIONS(X)  \
  X(vkDestroyDevice)               \
  X(vkGetDeviceQueue)              \
  X(vkDeviceWaitIdle)              \
  X(vkCreateBuffer)                \
  X(vkDestroyBuffer)               \
  X(vkGetBufferMemoryRequirements) \
  X(vkAllocateMemory)              \
  X(vkFreeMemory)                  \
  X(vkBindBufferMemory)            \
  X(vkMapMemory)                   \
  X(vkUnmapMemory)                 \
  X(vkCreateCommandPool)           \
  X(vkDestroyCommandPool)          \
  X(vkAllocateCommandBuffers)      \
  X(vkBeginCommandBuffer)          \
  X(vkEndCommandBuffer)            \
  X(vkResetCommandBuffer)          \
  X(vkCmdCopyBuffer)               \
  X(vkCmdPipelineBarrier)          \
  X(vkCmdBindPipeline)             \
  X(vkCmdBindDescriptorSets)       \
  X(vkCmdPushConstants)            \
  X(vkCmdDispatch)                 \
  X(vkCmdWriteTimestamp)           \
  X(vkCmdResetQueryPool)           \
  X(vkCreateQueryPool)             \
  X(vkDestroyQueryPool)            \
  X(vkGetQueryPoolResults)         \
  X(vkQueueSubmit)                 \
  X(vkCreateFence)                 \
  X(vkDestroyFence)                \
  X(vkWaitForFences)               \
  X(vkGetFenceStatus)              \
  X(vkResetFences)                 \
  X(vkCreateShaderModule)          \
  X(vkDestroyShaderModule)         \
  X(vkCreateComputePipelines)      \
  X(vkDestroyPipeline)             \
  X(vkCreatePipelineLayout)        \
  X(vkDestroyPipelineLayout)       \
  X(vkCreateDescriptorSetLayout)   \
  X(vkDestroyDescriptorSetLayout)  \
  X(vkCreateDescriptorPool)        \
  X(vkDestroyDescriptorPool)       \
  X(vkAllocateDescriptorSets)      \
  X(vkUpdateDescriptorSets)

struct DeviceFunctions {
#define GC_VK_MEMBER(name) PFN_##name name = nullptr;
  GC_VK_DEVICE_FUNCTIONS(GC_VK_MEMBER)
#undef GC_VK_MEMBER
};

// What the device offers bench, read once when it is opened.
struct Capabilities {
  bool float16 = false;              // shaderFloat16 and storageBuffer16BitAccess, both enabled
  std::string float16_missing;       // which of them the device lacks
  bool cpu = false;                  // VK_PHYSICAL_DEVICE_TYPE_CPU (lavapipe, SwiftShader)
  bool int64 = false;                // shaderInt64, enabled: the stress shaders need it
  std::uint32_t timestamp_bits = 0;  // of the queue family; 0: no timestamps there
  double timestamp_period_ns = 0;
  std::uint64_t device_local_heap = 0;  // the largest DEVICE_LOCAL heap's size
  std::uint64_t max_allocation = 0;     // largest buffer a shader can bind and memory allows
  std::uint32_t max_group_x = 1;        // maxComputeWorkGroupSize[0]
  std::uint32_t max_group_invocations = 1;
  std::uint32_t max_group_count_x = 1;
  std::uint32_t max_shared_bytes = 0;
  std::uint32_t vendor_id = 0;
  // VK_NV_cooperative_matrix's f16 shape, enabled, for the default tile; else why not.
  std::optional<CoopmatShape> coopmat_nv;
  std::string coopmat_why;
};

// A VkBuffer and its own memory; mapped for as long as it lives when host-visible.
struct Allocation {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceMemory memory = VK_NULL_HANDLE;
  void* mapped = nullptr;
  std::size_t bytes = 0;
};

enum class MemoryKind { kDeviceLocal, kHostVisible };

class Context {
 public:
  // vulkan<index> in the probe's numbering; nullptr when there is no such device. Throws
  // ApiError when the loader, the instance or the device fails. hide_float16 is a test hook:
  // the device is treated as lacking shaderFloat16.
  static std::unique_ptr<Context> open(std::size_t index, bool hide_float16);
  ~Context();
  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

  const DeviceFunctions& fn() const { return fn_; }
  VkDevice device() const { return device_; }
  VkQueue queue() const { return queue_; }
  VkCommandPool command_pool() const { return pool_; }
  const Capabilities& caps() const { return caps_; }
  // The probe's description of the device (device_info.h): identity and properties.
  const nlohmann::json& description() const { return description_; }

  // A storage buffer usable as copy source and destination; kHostVisible memory is mapped.
  Allocation allocate(std::size_t bytes, MemoryKind kind);
  void release(Allocation& a) noexcept;

 private:
  Context() = default;
  std::uint32_t memory_type(std::uint32_t allowed, MemoryKind kind) const;

  std::unique_ptr<VulkanLibrary> lib_;
  std::unique_ptr<Instance> instance_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkPhysicalDeviceMemoryProperties memory_{};
  DeviceFunctions fn_;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  std::uint32_t family_ = 0;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  Capabilities caps_;
  nlohmann::json description_;
};

}  // namespace gpucheck::vulkan

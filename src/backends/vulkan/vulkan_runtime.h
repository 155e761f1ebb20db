// Work on one Vulkan device as an in-order stream: commands are recorded into one command
// buffer, each after a barrier on everything before it, and submitted when the caller waits
// (finish) or times them (timed). Transfers from or to host memory that is not one of this
// runtime's host-visible buffers go through host-visible staging, copied by the CPU.
#pragma once

#include "backends/vulkan/vulkan_context.h"
#include "backends/vulkan/vulkan_shaders.h"

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

namespace gpucheck::vulkan {

// Up to three storage buffers bound at bindings 0, 1, 2 (VK_NULL_HANDLE: unused).
using Bindings = std::array<VkBuffer, 3>;

// How timed() measured its last region.
enum class TimingSource { kTimestamps, kHostClock };

class Runtime {
 public:
  explicit Runtime(std::unique_ptr<Context> context);
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  Context& context() { return *ctx_; }
  const Capabilities& caps() const { return ctx_->caps(); }

  Allocation allocate(std::size_t bytes, MemoryKind kind);
  // Waits for recorded work first (it may use the buffer) and forgets its descriptor sets.
  void release(Allocation& a) noexcept;
  // Host-visible memory handed out as host memory (pinned): transfers from or to it are copied
  // by the device directly, with no staging. Released with release().
  Allocation allocate_host_visible(std::size_t bytes);

  // Enqueued; see the class comment for host memory.
  void copy(VkBuffer dst, std::size_t dst_offset, VkBuffer src, std::size_t src_offset,
            std::size_t bytes);
  void upload(VkBuffer dst, std::size_t dst_offset, const void* src, std::size_t bytes);
  void download(void* dst, VkBuffer src, std::size_t src_offset, std::size_t bytes);
  // The shader with its specialization constants (ids 0, 1, ... in order), push constants
  // and buffers, on groups[0] × groups[1] × groups[2] work groups.
  void dispatch(Shader shader, const std::vector<std::uint32_t>& constants,
                const Bindings& bindings, const void* push, std::size_t push_bytes,
                std::array<std::uint32_t, 3> groups);

  // Submits what is recorded, waits for it, then finishes the staged downloads.
  void finish();
  // Seconds that enqueue's commands took: between timestamps written before and after them
  // where the queue has timestamps and no transfer in them was staged through the CPU (whose
  // copies the GPU's clock does not see); else on the host clock around recording,
  // submission and the wait. *source says which.
  double timed(const std::function<void()>& enqueue, TimingSource* source);

 private:
  struct Slab {
    Allocation a;
    std::size_t used = 0;
  };
  struct Deferred {
    void* dst;
    const void* src;
    std::size_t bytes;
  };

  void wait_for_fence();      // the submission's, polled briefly before blocking
  VkCommandBuffer command();  // the recording buffer, with a barrier after earlier commands
  std::pair<VkBuffer, std::size_t> staging(std::size_t bytes);
  std::optional<std::pair<VkBuffer, std::size_t>> host_visible(const void* p,
                                                               std::size_t bytes) const;
  VkPipeline pipeline(Shader shader, const std::vector<std::uint32_t>& constants);
  VkDescriptorSet descriptor_set(const Bindings& bindings);
  void barrier(VkCommandBuffer cmd, VkPipelineStageFlags dst_stage, VkAccessFlags dst_access);

  std::unique_ptr<Context> ctx_;
  VkCommandBuffer cmd_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  bool recording_ = false;
  bool commands_ = false;    // a command is recorded since the last barrier point
  bool staged_ = false;      // a transfer was staged through the CPU since timed() began
  bool host_reads_ = false;  // a download is recorded: the batch ends with a host-read barrier
  std::vector<Slab> slabs_;
  std::vector<Deferred> deferred_;
  std::map<const void*, Allocation> host_buffers_;  // host-visible buffers by mapped address
  VkDescriptorSetLayout set_layout_ = VK_NULL_HANDLE;
  VkPipelineLayout layout_ = VK_NULL_HANDLE;
  std::map<Shader, VkShaderModule> modules_;
  std::map<std::pair<Shader, std::vector<std::uint32_t>>, VkPipeline> pipelines_;
  std::vector<VkDescriptorPool> pools_;
  std::map<Bindings, VkDescriptorSet> sets_;
  std::vector<VkDescriptorSet> free_sets_;
  // Bound to every binding a dispatch leaves empty: a recycled set would otherwise still name a
  // freed buffer there (lavapipe reads every binding of a set it binds, and crashed on one).
  Allocation filler_;
};

}  // namespace gpucheck::vulkan

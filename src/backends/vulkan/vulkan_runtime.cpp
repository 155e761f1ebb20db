// The in-order stream over one command buffer (see vulkan_runtime.h): recording, barriers,
// staging, pipelines by shader and specialization constants, descriptor sets by the buffers
// they bind, submission and timing.
#include "backends/vulkan/vulkan_runtime.h"

#include "backends/vulkan/vk_names.h"
#include "core/errors.h"
#include "core/parallel_copy.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <stdexcept>

namespace gpucheck::vulkan {

namespace {

constexpr std::size_t kSlabBytes = std::size_t{16} << 20;
constexpr std::size_t kStagingAlign = 256;
constexpr std::uint32_t kSetsPerPool = 256;
// Within the 128 bytes every device offers; the stress shader takes 40.
constexpr std::uint32_t kPushBytes = 64;
// How long finish() polls the fence before it blocks. NVIDIA's blocking wait returns tens of
// microseconds after the work is done; CUDA's synchronize spins too (with polling, an empty
// shader's round trip on an H200 is 1.65× CUDA's, docs/PERFORMANCE.md). Past this the work is
// long enough that a late wake-up does not matter, and the core is given back.
constexpr std::chrono::microseconds kFenceSpin{1000};

std::size_t align_up(std::size_t v, std::size_t to) {
  return (v + to - 1) / to * to;
}

}  // namespace

Runtime::Runtime(std::unique_ptr<Context> context) : ctx_(std::move(context)) {
  const auto& f = ctx_->fn();
  const VkDevice dev = ctx_->device();
  VkCommandBufferAllocateInfo ai{};
  ai.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_ALLOCATE_INFO;
  ai.commandPool = ctx_->command_pool();
  ai.level = VK_COMMAND_BUFFER_LEVEL_PRIMARY;
  ai.commandBufferCount = 1;
  GC_VK_CHECK(f.vkAllocateCommandBuffers(dev, &ai, &cmd_));
  VkFenceCreateInfo fi{};
  fi.sType = VK_STRUCTURE_TYPE_FENCE_CREATE_INFO;
  GC_VK_CHECK(f.vkCreateFence(dev, &fi, nullptr, &fence_));
  if (caps().timestamp_bits > 0) {
    VkQueryPoolCreateInfo qi{};
    qi.sType = VK_STRUCTURE_TYPE_QUERY_POOL_CREATE_INFO;
    qi.queryType = VK_QUERY_TYPE_TIMESTAMP;
    qi.queryCount = 2;
    GC_VK_CHECK(f.vkCreateQueryPool(dev, &qi, nullptr, &queries_));
  }
  std::array<VkDescriptorSetLayoutBinding, 3> b{};
  for (std::uint32_t i = 0; i < b.size(); ++i) {
    b[i].binding = i;
    b[i].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    b[i].descriptorCount = 1;
    b[i].stageFlags = VK_SHADER_STAGE_COMPUTE_BIT;
  }
  VkDescriptorSetLayoutCreateInfo li{};
  li.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO;
  li.bindingCount = static_cast<std::uint32_t>(b.size());
  li.pBindings = b.data();
  GC_VK_CHECK(f.vkCreateDescriptorSetLayout(dev, &li, nullptr, &set_layout_));
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, kPushBytes};
  VkPipelineLayoutCreateInfo pl{};
  pl.sType = VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO;
  pl.setLayoutCount = 1;
  pl.pSetLayouts = &set_layout_;
  pl.pushConstantRangeCount = 1;
  pl.pPushConstantRanges = &push;
  GC_VK_CHECK(f.vkCreatePipelineLayout(dev, &pl, nullptr, &layout_));
}

Runtime::~Runtime() {
  const auto& f = ctx_->fn();
  const VkDevice dev = ctx_->device();
  f.vkDeviceWaitIdle(dev);
  for (auto& s : slabs_) ctx_->release(s.a);
  ctx_->release(filler_);
  for (auto& [p, a] : host_buffers_) ctx_->release(a);
  for (auto& [key, p] : pipelines_) f.vkDestroyPipeline(dev, p, nullptr);
  for (auto& [key, m] : modules_) f.vkDestroyShaderModule(dev, m, nullptr);
  for (auto pool : pools_) f.vkDestroyDescriptorPool(dev, pool, nullptr);
  if (layout_ != VK_NULL_HANDLE) f.vkDestroyPipelineLayout(dev, layout_, nullptr);
  if (set_layout_ != VK_NULL_HANDLE) f.vkDestroyDescriptorSetLayout(dev, set_layout_, nullptr);
  if (queries_ != VK_NULL_HANDLE) f.vkDestroyQueryPool(dev, queries_, nullptr);
  if (fence_ != VK_NULL_HANDLE) f.vkDestroyFence(dev, fence_, nullptr);
  // The command buffer goes with the context's pool.
}

Allocation Runtime::allocate(std::size_t bytes, MemoryKind kind) {
  return ctx_->allocate(bytes, kind);
}

Allocation Runtime::allocate_host_visible(std::size_t bytes) {
  Allocation a = ctx_->allocate(bytes, MemoryKind::kHostVisible);
  host_buffers_[a.mapped] = a;
  return a;
}

void Runtime::release(Allocation& a) noexcept {
  if (a.buffer == VK_NULL_HANDLE) return;
  if (recording_) {
    try {
      finish();
    } catch (...) {
      // The device failed the work: nothing uses the buffer any more, it goes all the same.
      ctx_->fn().vkDeviceWaitIdle(ctx_->device());
    }
  }
  for (auto it = sets_.begin(); it != sets_.end();) {
    if (std::find(it->first.begin(), it->first.end(), a.buffer) != it->first.end()) {
      free_sets_.push_back(it->second);
      it = sets_.erase(it);
    } else {
      ++it;
    }
  }
  if (a.mapped != nullptr) host_buffers_.erase(a.mapped);
  ctx_->release(a);
}

void Runtime::barrier(VkCommandBuffer cmd, VkPipelineStageFlags dst_stage,
                      VkAccessFlags dst_access) {
  VkMemoryBarrier mb{};
  mb.sType = VK_STRUCTURE_TYPE_MEMORY_BARRIER;
  mb.srcAccessMask = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
  mb.dstAccessMask = dst_access;
  ctx_->fn().vkCmdPipelineBarrier(
      cmd, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT, dst_stage, 0, 1,
      &mb, 0, nullptr, 0, nullptr);
}

VkCommandBuffer Runtime::command() {
  if (!recording_) {
    VkCommandBufferBeginInfo bi{};
    bi.sType = VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO;
    bi.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
    GC_VK_CHECK(ctx_->fn().vkBeginCommandBuffer(cmd_, &bi));
    recording_ = true;
    commands_ = false;
  }
  if (commands_)
    barrier(cmd_, VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT,
            VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT |
                VK_ACCESS_TRANSFER_WRITE_BIT);
  commands_ = true;
  return cmd_;
}

void Runtime::finish() {
  if (!recording_) return;
  const auto& f = ctx_->fn();
  recording_ = false;
  // What the device wrote becomes visible to the host reads after the fence, where the host
  // reads any: a batch without a download (the empty launch's round trip, a timed GEMM) ends
  // without the barrier, which cost 2.4 µs of a 16.6 µs round trip on an H200
  // (docs/PERFORMANCE.md).
  if (host_reads_) barrier(cmd_, VK_PIPELINE_STAGE_HOST_BIT, VK_ACCESS_HOST_READ_BIT);
  host_reads_ = false;
  GC_VK_CHECK(f.vkEndCommandBuffer(cmd_));
  VkSubmitInfo si{};
  si.sType = VK_STRUCTURE_TYPE_SUBMIT_INFO;
  si.commandBufferCount = 1;
  si.pCommandBuffers = &cmd_;
  struct Reset {
    Runtime* r;
    ~Reset() {
      r->ctx_->fn().vkResetCommandBuffer(r->cmd_, 0);
      for (auto& s : r->slabs_) s.used = 0;
      r->deferred_.clear();
    }
  } reset{this};
  GC_VK_CHECK(f.vkQueueSubmit(ctx_->queue(), 1, &si, fence_));
  wait_for_fence();
  GC_VK_CHECK(f.vkResetFences(ctx_->device(), 1, &fence_));
  // On several threads: one core's memcpy out of the staging buffer held pageable downloads on
  // an H200 at 0.56 of CUDA's pageable copies.
  for (const auto& d : deferred_) parallel_copy(d.dst, d.src, d.bytes);
}

void Runtime::wait_for_fence() {
  const auto& f = ctx_->fn();
  VkResult r = VK_NOT_READY;
  // Not on a CPU implementation: there the spinning core is one its workers need.
  if (!caps().cpu) {
    const auto until = std::chrono::steady_clock::now() + kFenceSpin;
    do {
      r = f.vkGetFenceStatus(ctx_->device(), fence_);
    } while (r == VK_NOT_READY && std::chrono::steady_clock::now() < until);
  }
  if (r == VK_NOT_READY) r = f.vkWaitForFences(ctx_->device(), 1, &fence_, VK_TRUE, UINT64_MAX);
  if (r != VK_SUCCESS)
    throw_vk_error(r, "vkGetFenceStatus or vkWaitForFences (the submitted commands)", __FILE__,
                   __LINE__);
}

std::pair<VkBuffer, std::size_t> Runtime::staging(std::size_t bytes) {
  staged_ = true;
  for (auto& s : slabs_) {
    const std::size_t at = align_up(s.used, kStagingAlign);
    if (at <= s.a.bytes && s.a.bytes - at >= bytes) {
      s.used = at + bytes;
      return {s.a.buffer, at};
    }
  }
  Slab s;
  s.a = ctx_->allocate(std::max(bytes, kSlabBytes), MemoryKind::kHostVisible);
  s.used = bytes;
  slabs_.push_back(s);
  return {s.a.buffer, 0};
}

std::optional<std::pair<VkBuffer, std::size_t>> Runtime::host_visible(const void* p,
                                                                      std::size_t bytes) const {
  auto it = host_buffers_.upper_bound(p);
  if (it == host_buffers_.begin()) return std::nullopt;
  --it;
  const auto* base = static_cast<const unsigned char*>(it->first);
  const auto* q = static_cast<const unsigned char*>(p);
  if (q < base || static_cast<std::size_t>(q - base) + bytes > it->second.bytes)
    return std::nullopt;
  return std::make_pair(it->second.buffer, static_cast<std::size_t>(q - base));
}

void Runtime::copy(VkBuffer dst, std::size_t dst_offset, VkBuffer src, std::size_t src_offset,
                   std::size_t bytes) {
  if (bytes == 0) return;
  VkBufferCopy region{src_offset, dst_offset, bytes};
  ctx_->fn().vkCmdCopyBuffer(command(), src, dst, 1, &region);
}

void Runtime::upload(VkBuffer dst, std::size_t dst_offset, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (auto h = host_visible(src, bytes)) {
    copy(dst, dst_offset, h->first, h->second, bytes);
    return;
  }
  const auto [buf, at] = staging(bytes);
  for (const auto& s : slabs_)
    if (s.a.buffer == buf) parallel_copy(static_cast<unsigned char*>(s.a.mapped) + at, src, bytes);
  copy(dst, dst_offset, buf, at, bytes);
}

void Runtime::download(void* dst, VkBuffer src, std::size_t src_offset, std::size_t bytes) {
  if (bytes == 0) return;
  host_reads_ = true;
  if (auto h = host_visible(dst, bytes)) {
    copy(h->first, h->second, src, src_offset, bytes);
    return;
  }
  const auto [buf, at] = staging(bytes);
  copy(buf, at, src, src_offset, bytes);
  for (const auto& s : slabs_)
    if (s.a.buffer == buf)
      deferred_.push_back({dst, static_cast<const unsigned char*>(s.a.mapped) + at, bytes});
}

VkPipeline Runtime::pipeline(Shader shader, const std::vector<std::uint32_t>& constants) {
  auto key = std::make_pair(shader, constants);
  if (auto it = pipelines_.find(key); it != pipelines_.end()) return it->second;
  const auto& f = ctx_->fn();
  const VkDevice dev = ctx_->device();
  auto mod = modules_.find(shader);
  if (mod == modules_.end()) {
    const SpirV code = spirv(shader);
    VkShaderModuleCreateInfo mi{};
    mi.sType = VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO;
    mi.codeSize = code.count * sizeof(std::uint32_t);
    mi.pCode = code.words;
    VkShaderModule m = VK_NULL_HANDLE;
    GC_VK_CHECK(f.vkCreateShaderModule(dev, &mi, nullptr, &m));
    mod = modules_.emplace(shader, m).first;
  }
  std::vector<VkSpecializationMapEntry> entries(constants.size());
  for (std::uint32_t i = 0; i < entries.size(); ++i)
    entries[i] = {i, static_cast<std::uint32_t>(i * sizeof(std::uint32_t)), sizeof(std::uint32_t)};
  VkSpecializationInfo spec{};
  spec.mapEntryCount = static_cast<std::uint32_t>(entries.size());
  spec.pMapEntries = entries.data();
  spec.dataSize = constants.size() * sizeof(std::uint32_t);
  spec.pData = constants.data();
  VkComputePipelineCreateInfo ci{};
  ci.sType = VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO;
  ci.stage.sType = VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO;
  ci.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  ci.stage.module = mod->second;
  ci.stage.pName = "main";
  ci.stage.pSpecializationInfo = constants.empty() ? nullptr : &spec;
  ci.layout = layout_;
  VkPipeline p = VK_NULL_HANDLE;
  const VkResult r = f.vkCreateComputePipelines(dev, VK_NULL_HANDLE, 1, &ci, nullptr, &p);
  if (r != VK_SUCCESS)
    throw ApiError("Vulkan", r, std::string(vk_result_name(r)),
                   fmt::format("vkCreateComputePipelines({})", shader_name(shader)), __FILE__,
                   __LINE__);
  pipelines_.emplace(std::move(key), p);
  return p;
}

VkDescriptorSet Runtime::descriptor_set(const Bindings& bindings) {
  if (auto it = sets_.find(bindings); it != sets_.end()) return it->second;
  const auto& f = ctx_->fn();
  const VkDevice dev = ctx_->device();
  VkDescriptorSet set = VK_NULL_HANDLE;
  if (!free_sets_.empty()) {
    set = free_sets_.back();
    free_sets_.pop_back();
  } else {
    VkDescriptorSetAllocateInfo ai{};
    ai.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO;
    ai.descriptorSetCount = 1;
    ai.pSetLayouts = &set_layout_;
    VkResult r = VK_ERROR_OUT_OF_POOL_MEMORY;
    if (!pools_.empty()) {
      ai.descriptorPool = pools_.back();
      r = f.vkAllocateDescriptorSets(dev, &ai, &set);
    }
    if (r == VK_ERROR_OUT_OF_POOL_MEMORY || r == VK_ERROR_FRAGMENTED_POOL) {
      VkDescriptorPoolSize size{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kSetsPerPool * 3};
      VkDescriptorPoolCreateInfo pi{};
      pi.sType = VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO;
      pi.maxSets = kSetsPerPool;
      pi.poolSizeCount = 1;
      pi.pPoolSizes = &size;
      VkDescriptorPool pool = VK_NULL_HANDLE;
      GC_VK_CHECK(f.vkCreateDescriptorPool(dev, &pi, nullptr, &pool));
      pools_.push_back(pool);
      ai.descriptorPool = pool;
      r = f.vkAllocateDescriptorSets(dev, &ai, &set);
    }
    GC_VK_CHECK(r);
  }
  if (filler_.buffer == VK_NULL_HANDLE) filler_ = ctx_->allocate(256, MemoryKind::kDeviceLocal);
  std::array<VkDescriptorBufferInfo, 3> infos{};
  std::array<VkWriteDescriptorSet, 3> writes{};
  std::uint32_t n = 0;
  // Every binding is written, the unused ones with the filler: a set from free_sets_ still holds
  // the buffers of its last use, which may be freed by now.
  for (std::uint32_t i = 0; i < bindings.size(); ++i) {
    infos[n] = {bindings[i] == VK_NULL_HANDLE ? filler_.buffer : bindings[i], 0, VK_WHOLE_SIZE};
    writes[n].sType = VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET;
    writes[n].dstSet = set;
    writes[n].dstBinding = i;
    writes[n].descriptorCount = 1;
    writes[n].descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
    writes[n].pBufferInfo = &infos[n];
    ++n;
  }
  f.vkUpdateDescriptorSets(dev, n, writes.data(), 0, nullptr);
  sets_.emplace(bindings, set);
  return set;
}

void Runtime::dispatch(Shader shader, const std::vector<std::uint32_t>& constants,
                       const Bindings& bindings, const void* push, std::size_t push_bytes,
                       std::array<std::uint32_t, 3> groups) {
  if (push_bytes > kPushBytes)
    throw std::logic_error("push constants beyond the pipeline layout's range");
  const auto& f = ctx_->fn();
  const VkPipeline p = pipeline(shader, constants);
  const bool any =
      std::any_of(bindings.begin(), bindings.end(), [](VkBuffer b) { return b != VK_NULL_HANDLE; });
  const VkDescriptorSet set = any ? descriptor_set(bindings) : VK_NULL_HANDLE;
  VkCommandBuffer cmd = command();
  f.vkCmdBindPipeline(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, p);
  if (any)
    f.vkCmdBindDescriptorSets(cmd, VK_PIPELINE_BIND_POINT_COMPUTE, layout_, 0, 1, &set, 0, nullptr);
  if (push_bytes > 0)
    f.vkCmdPushConstants(cmd, layout_, VK_SHADER_STAGE_COMPUTE_BIT, 0,
                         static_cast<std::uint32_t>(push_bytes), push);
  f.vkCmdDispatch(cmd, groups[0], groups[1], groups[2]);
}

double Runtime::timed(const std::function<void()>& enqueue, TimingSource* source) {
  using Clock = std::chrono::steady_clock;
  finish();
  const auto& f = ctx_->fn();
  const bool stamps = queries_ != VK_NULL_HANDLE;
  if (stamps) {
    VkCommandBuffer cmd = command();
    f.vkCmdResetQueryPool(cmd, queries_, 0, 2);
    f.vkCmdWriteTimestamp(cmd, VK_PIPELINE_STAGE_TOP_OF_PIPE_BIT, queries_, 0);
    commands_ = false;  // the first timed command needs no barrier after these
  }
  staged_ = false;
  const auto t0 = Clock::now();
  enqueue();
  if (stamps) f.vkCmdWriteTimestamp(command(), VK_PIPELINE_STAGE_BOTTOM_OF_PIPE_BIT, queries_, 1);
  finish();
  const double host_s = std::chrono::duration<double>(Clock::now() - t0).count();
  if (!stamps || staged_) {
    *source = TimingSource::kHostClock;
    return host_s;
  }
  std::array<std::uint64_t, 2> ticks{};
  GC_VK_CHECK(f.vkGetQueryPoolResults(ctx_->device(), queries_, 0, 2, sizeof ticks, ticks.data(),
                                      sizeof(std::uint64_t),
                                      VK_QUERY_RESULT_64_BIT | VK_QUERY_RESULT_WAIT_BIT));
  const std::uint32_t bits = caps().timestamp_bits;
  const std::uint64_t mask = bits >= 64 ? ~std::uint64_t{0} : (std::uint64_t{1} << bits) - 1;
  const std::uint64_t delta = ((ticks[1] & mask) - (ticks[0] & mask)) & mask;
  *source = TimingSource::kTimestamps;
  return static_cast<double>(delta) * caps().timestamp_period_ns * 1e-9;
}

}  // namespace gpucheck::vulkan

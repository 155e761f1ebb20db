// Per-device attributes, named once in a table, and the peer-access matrix.
#include "backends/cuda/cuda_probe.h"

#include "backends/cuda/cuda_arch.h"
#include "backends/cuda/cuda_errors.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <vector>

namespace gpucheck::cuda {

namespace k = keys;

namespace {

enum class Kind { kInt, kBool, kBytes };

struct Attribute {
  const char* key;
  cudaDeviceAttr attr;
  Kind kind;
};

// What deviceQuery prints, plus the capability flags a diagnosis needs. Units are in the keys.
constexpr Attribute kAttributes[] = {
    {"multiprocessors", cudaDevAttrMultiProcessorCount, Kind::kInt},
    {"constant_memory_bytes", cudaDevAttrTotalConstantMemory, Kind::kBytes},
    {"shared_memory_per_block_bytes", cudaDevAttrMaxSharedMemoryPerBlock, Kind::kBytes},
    {"shared_memory_per_sm_bytes", cudaDevAttrMaxSharedMemoryPerMultiprocessor, Kind::kBytes},
    {"shared_memory_per_block_optin_bytes", cudaDevAttrMaxSharedMemoryPerBlockOptin, Kind::kBytes},
    {"registers_per_block", cudaDevAttrMaxRegistersPerBlock, Kind::kInt},
    {"registers_per_sm", cudaDevAttrMaxRegistersPerMultiprocessor, Kind::kInt},
    {"warp_size", cudaDevAttrWarpSize, Kind::kInt},
    {"max_threads_per_sm", cudaDevAttrMaxThreadsPerMultiProcessor, Kind::kInt},
    {"max_threads_per_block", cudaDevAttrMaxThreadsPerBlock, Kind::kInt},
    {"max_blocks_per_sm", cudaDevAttrMaxBlocksPerMultiprocessor, Kind::kInt},
    {"sm_clock_khz", cudaDevAttrClockRate, Kind::kInt},
    {"memory_clock_khz", cudaDevAttrMemoryClockRate, Kind::kInt},
    {"memory_bus_width_bits", cudaDevAttrGlobalMemoryBusWidth, Kind::kInt},
    {"l2_cache_bytes", cudaDevAttrL2CacheSize, Kind::kBytes},
    {"max_persisting_l2_bytes", cudaDevAttrMaxPersistingL2CacheSize, Kind::kBytes},
    {"max_pitch_bytes", cudaDevAttrMaxPitch, Kind::kBytes},
    {"texture_alignment_bytes", cudaDevAttrTextureAlignment, Kind::kBytes},
    {"max_texture_1d", cudaDevAttrMaxTexture1DWidth, Kind::kInt},
    {"async_engine_count", cudaDevAttrAsyncEngineCount, Kind::kInt},
    {"concurrent_kernels", cudaDevAttrConcurrentKernels, Kind::kBool},
    {"unified_addressing", cudaDevAttrUnifiedAddressing, Kind::kBool},
    {"managed_memory", cudaDevAttrManagedMemory, Kind::kBool},
    {"concurrent_managed_access", cudaDevAttrConcurrentManagedAccess, Kind::kBool},
    {"pageable_memory_access", cudaDevAttrPageableMemoryAccess, Kind::kBool},
    {"pageable_memory_access_uses_host_page_tables",
     cudaDevAttrPageableMemoryAccessUsesHostPageTables, Kind::kBool},
    {"host_native_atomics", cudaDevAttrHostNativeAtomicSupported, Kind::kBool},
    {"can_map_host_memory", cudaDevAttrCanMapHostMemory, Kind::kBool},
    {"cooperative_launch", cudaDevAttrCooperativeLaunch, Kind::kBool},
    {"compute_preemption", cudaDevAttrComputePreemptionSupported, Kind::kBool},
    {"ecc_enabled", cudaDevAttrEccEnabled, Kind::kBool},
    {"integrated", cudaDevAttrIntegrated, Kind::kBool},
    {"multi_gpu_board", cudaDevAttrIsMultiGpuBoard, Kind::kBool},
    {"multi_gpu_board_group_id", cudaDevAttrMultiGpuBoardGroupID, Kind::kInt},
    {"kernel_exec_timeout", cudaDevAttrKernelExecTimeout, Kind::kBool},
    {"stream_priorities", cudaDevAttrStreamPrioritiesSupported, Kind::kBool},
    {"global_l1_cache", cudaDevAttrGlobalL1CacheSupported, Kind::kBool},
    {"local_l1_cache", cudaDevAttrLocalL1CacheSupported, Kind::kBool},
    {"memory_pools", cudaDevAttrMemoryPoolsSupported, Kind::kBool},
    {"gpu_direct_rdma", cudaDevAttrGPUDirectRDMASupported, Kind::kBool},
    {"cluster_launch", cudaDevAttrClusterLaunch, Kind::kBool},
    {"mps_enabled", cudaDevAttrMpsEnabled, Kind::kBool},
    {"single_to_double_perf_ratio", cudaDevAttrSingleToDoublePrecisionPerfRatio, Kind::kInt},
    {"pci_domain", cudaDevAttrPciDomainId, Kind::kInt},
    {"pci_bus", cudaDevAttrPciBusId, Kind::kInt},
    {"pci_device", cudaDevAttrPciDeviceId, Kind::kInt},
};

struct Triple {
  const char* key;
  std::array<cudaDeviceAttr, 3> attrs;
  int count;
};

constexpr Triple kTriples[] = {
    {"max_block_dim",
     {cudaDevAttrMaxBlockDimX, cudaDevAttrMaxBlockDimY, cudaDevAttrMaxBlockDimZ},
     3},
    {"max_grid_dim", {cudaDevAttrMaxGridDimX, cudaDevAttrMaxGridDimY, cudaDevAttrMaxGridDimZ}, 3},
    {"max_texture_2d",
     {cudaDevAttrMaxTexture2DWidth, cudaDevAttrMaxTexture2DHeight, cudaDevAttrMaxTexture2DWidth},
     2},
    {"max_texture_3d",
     {cudaDevAttrMaxTexture3DWidth, cudaDevAttrMaxTexture3DHeight, cudaDevAttrMaxTexture3DDepth},
     3},
    {"max_texture_1d_layered",
     {cudaDevAttrMaxTexture1DLayeredWidth, cudaDevAttrMaxTexture1DLayeredLayers,
      cudaDevAttrMaxTexture1DLayeredWidth},
     2},
    {"max_texture_2d_layered",
     {cudaDevAttrMaxTexture2DLayeredWidth, cudaDevAttrMaxTexture2DLayeredHeight,
      cudaDevAttrMaxTexture2DLayeredLayers},
     3},
};

const char* compute_mode_name(int mode) {
  switch (mode) {
    case cudaComputeModeDefault:
      return "default";
    case cudaComputeModeProhibited:
      return "prohibited";
    case cudaComputeModeExclusiveProcess:
      return "exclusive_process";
    default:
      return "unknown";
  }
}

}  // namespace

std::string format_gpu_uuid(const std::array<unsigned char, 16>& b) {
  std::string hex;
  for (unsigned char c : b) hex += fmt::format("{:02x}", c);
  return fmt::format("GPU-{}-{}-{}-{}-{}", hex.substr(0, 8), hex.substr(8, 4), hex.substr(12, 4),
                     hex.substr(16, 4), hex.substr(20, 12));
}

std::optional<std::string> normalize_pci_bus_id(std::string_view text) {
  // domain:bus:device.function, all hex.
  auto parse = [](std::string_view s, unsigned* out) {
    if (s.empty()) return false;
    auto r = std::from_chars(s.data(), s.data() + s.size(), *out, 16);
    return r.ec == std::errc() && r.ptr == s.data() + s.size();
  };
  auto c1 = text.find(':');
  auto c2 = text.find(':', c1 == std::string_view::npos ? 0 : c1 + 1);
  auto dot = text.find('.', c2 == std::string_view::npos ? 0 : c2 + 1);
  if (c1 == std::string_view::npos || c2 == std::string_view::npos || dot == std::string_view::npos)
    return std::nullopt;
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  if (!parse(text.substr(0, c1), &domain) || !parse(text.substr(c1 + 1, c2 - c1 - 1), &bus) ||
      !parse(text.substr(c2 + 1, dot - c2 - 1), &dev) || !parse(text.substr(dot + 1), &fn))
    return std::nullopt;
  if (bus > 0xff || dev > 0x1f || fn > 7) return std::nullopt;
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, dev, fn);
}

nlohmann::json probe_device(int index) {
  nlohmann::json props = nlohmann::json::object();
  nlohmann::json errors = nlohmann::json::array();
  auto get = [&](cudaDeviceAttr attr, const char* key) -> std::optional<int> {
    int v = 0;
    cudaError_t e = cudaDeviceGetAttribute(&v, attr, index);
    if (e != cudaSuccess) {
      errors.push_back(fmt::format("{}: {}", key, cuda_error_text(e)));
      cudaGetLastError();  // not sticky: clear it so later calls are not blamed
      return std::nullopt;
    }
    return v;
  };

  cudaDeviceProp p{};
  GC_CUDA_CHECK(cudaGetDeviceProperties(&p, index));
  std::string name = sanitize_c_buffer(p.name, sizeof(p.name));
  std::array<unsigned char, 16> uuid_bytes{};
  for (std::size_t i = 0; i < 16; ++i) uuid_bytes[i] = static_cast<unsigned char>(p.uuid.bytes[i]);
  std::string uuid = format_gpu_uuid(uuid_bytes);
  char bus_id[32] = {};
  std::string pci;
  if (cudaDeviceGetPCIBusId(bus_id, sizeof(bus_id), index) == cudaSuccess)
    pci = normalize_pci_bus_id(sanitize_c_buffer(bus_id, sizeof(bus_id))).value_or("");
  else
    cudaGetLastError();

  auto major = get(cudaDevAttrComputeCapabilityMajor, "compute_capability_major");
  auto minor = get(cudaDevAttrComputeCapabilityMinor, "compute_capability_minor");
  if (major && minor) {
    props["compute_capability"] = fmt::format("{}.{}", *major, *minor);
    if (auto arch = arch_facts(*major, *minor)) {
      props["architecture"] = arch->name;
      props["cuda_cores_per_sm"] = arch->fp32_cores_per_sm;
    }
  }
  props["global_memory_bytes"] = static_cast<std::uint64_t>(p.totalGlobalMem);
  for (const auto& a : kAttributes) {
    auto v = get(a.attr, a.key);
    if (!v) continue;
    if (a.kind == Kind::kBool)
      props[a.key] = *v != 0;
    else
      props[a.key] = *v;
  }
  if (props.contains("cuda_cores_per_sm") && props.contains("multiprocessors"))
    props["cuda_cores"] =
        props["cuda_cores_per_sm"].get<int>() * props["multiprocessors"].get<int>();
  for (const auto& t : kTriples) {
    nlohmann::json dims = nlohmann::json::array();
    for (int i = 0; i < t.count; ++i)
      if (auto v = get(t.attrs[static_cast<std::size_t>(i)], t.key)) dims.push_back(*v);
    if (static_cast<int>(dims.size()) == t.count) props[t.key] = dims;
  }
  if (auto mode = get(cudaDevAttrComputeMode, "compute_mode"))
    props["compute_mode"] = compute_mode_name(*mode);
  if (!errors.empty()) props[k::kErrors] = errors;

  nlohmann::json d = {{k::kDevice, fmt::format("cuda{}", index)},
                      {k::kStableId, "cuda:" + uuid},
                      {k::kDeviceName, name},
                      {k::kDeviceUuid, uuid},
                      {k::kProperties, props}};
  if (!pci.empty()) d[k::kPciBusId] = pci;
  return d;
}

nlohmann::json peer_access_matrix(int count) {
  nlohmann::json m = nlohmann::json::array();
  if (count < 2) return m;
  for (int i = 0; i < count; ++i) {
    nlohmann::json row = nlohmann::json::array();
    for (int j = 0; j < count; ++j) {
      int can = 0;
      if (i != j && cudaDeviceCanAccessPeer(&can, i, j) != cudaSuccess) {
        cudaGetLastError();
        can = 0;
      }
      row.push_back(can != 0);
    }
    m.push_back(row);
  }
  return m;
}

}  // namespace gpucheck::cuda

// Names of Vulkan codes and bits, from the 1.3 specification's enums (values, so that older and
// newer headers both compile), and the vendor-specific driver version encodings.
#include "backends/vulkan/vk_names.h"

#include "core/errors.h"

#include <fmt/format.h>

#include <array>
#include <utility>

namespace gpucheck::vulkan {

namespace {

struct Named {
  std::int64_t value;
  std::string_view name;
};

constexpr std::array kResults{
    Named{0, "VK_SUCCESS"},
    Named{1, "VK_NOT_READY"},
    Named{2, "VK_TIMEOUT"},
    Named{3, "VK_EVENT_SET"},
    Named{4, "VK_EVENT_RESET"},
    Named{5, "VK_INCOMPLETE"},
    Named{-1, "VK_ERROR_OUT_OF_HOST_MEMORY"},
    Named{-2, "VK_ERROR_OUT_OF_DEVICE_MEMORY"},
    Named{-3, "VK_ERROR_INITIALIZATION_FAILED"},
    Named{-4, "VK_ERROR_DEVICE_LOST"},
    Named{-5, "VK_ERROR_MEMORY_MAP_FAILED"},
    Named{-6, "VK_ERROR_LAYER_NOT_PRESENT"},
    Named{-7, "VK_ERROR_EXTENSION_NOT_PRESENT"},
    Named{-8, "VK_ERROR_FEATURE_NOT_PRESENT"},
    Named{-9, "VK_ERROR_INCOMPATIBLE_DRIVER"},
    Named{-10, "VK_ERROR_TOO_MANY_OBJECTS"},
    Named{-11, "VK_ERROR_FORMAT_NOT_SUPPORTED"},
    Named{-12, "VK_ERROR_FRAGMENTED_POOL"},
    Named{-13, "VK_ERROR_UNKNOWN"},
    Named{-1000069000, "VK_ERROR_OUT_OF_POOL_MEMORY"},
    Named{-1000072003, "VK_ERROR_INVALID_EXTERNAL_HANDLE"},
    Named{-1000161000, "VK_ERROR_FRAGMENTATION"},
    Named{-1000257000, "VK_ERROR_INVALID_OPAQUE_CAPTURE_ADDRESS"},
    Named{1000297000, "VK_PIPELINE_COMPILE_REQUIRED"},
    Named{-1000000000, "VK_ERROR_SURFACE_LOST_KHR"},
    Named{-1000000001, "VK_ERROR_NATIVE_WINDOW_IN_USE_KHR"},
    Named{1000001003, "VK_SUBOPTIMAL_KHR"},
    Named{-1000001004, "VK_ERROR_OUT_OF_DATE_KHR"},
    Named{-1000003001, "VK_ERROR_INCOMPATIBLE_DISPLAY_KHR"},
    Named{-1000011001, "VK_ERROR_VALIDATION_FAILED_EXT"},
    Named{-1000012000, "VK_ERROR_INVALID_SHADER_NV"},
    Named{-1000158000, "VK_ERROR_INVALID_DRM_FORMAT_MODIFIER_PLANE_LAYOUT_EXT"},
    Named{-1000174001, "VK_ERROR_NOT_PERMITTED_KHR"},
    Named{-1000255000, "VK_ERROR_FULL_SCREEN_EXCLUSIVE_MODE_LOST_EXT"},
    Named{1000268000, "VK_THREAD_IDLE_KHR"},
    Named{1000268001, "VK_THREAD_DONE_KHR"},
    Named{1000268002, "VK_OPERATION_DEFERRED_KHR"},
    Named{1000268003, "VK_OPERATION_NOT_DEFERRED_KHR"},
    Named{-1000338000, "VK_ERROR_COMPRESSION_EXHAUSTED_EXT"},
};

// VkDriverId 1..26, in order.
constexpr std::array<std::string_view, 26> kDriverIds{
    "AMD_PROPRIETARY",
    "AMD_OPEN_SOURCE",
    "MESA_RADV",
    "NVIDIA_PROPRIETARY",
    "INTEL_PROPRIETARY_WINDOWS",
    "INTEL_OPEN_SOURCE_MESA",
    "IMAGINATION_PROPRIETARY",
    "QUALCOMM_PROPRIETARY",
    "ARM_PROPRIETARY",
    "GOOGLE_SWIFTSHADER",
    "GGP_PROPRIETARY",
    "BROADCOM_PROPRIETARY",
    "MESA_LLVMPIPE",
    "MOLTENVK",
    "COREAVI_PROPRIETARY",
    "JUICE_PROPRIETARY",
    "VERISILICON_PROPRIETARY",
    "MESA_TURNIP",
    "MESA_V3DV",
    "MESA_PANVK",
    "SAMSUNG_PROPRIETARY",
    "MESA_VENUS",
    "MESA_DOZEN",
    "MESA_NVK",
    "IMAGINATION_OPEN_SOURCE_MESA",
    "MESA_AGXV",
};

constexpr std::array<std::string_view, 5> kDeviceTypes{
    "VK_PHYSICAL_DEVICE_TYPE_OTHER", "VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU",
    "VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU", "VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU",
    "VK_PHYSICAL_DEVICE_TYPE_CPU"};

template <std::size_t N>
std::vector<std::string> bit_names(
    std::uint32_t flags, const std::array<std::pair<std::uint32_t, std::string_view>, N>& table) {
  std::vector<std::string> out;
  for (int bit = 0; bit < 32; ++bit) {
    const std::uint32_t b = 1u << bit;
    if ((flags & b) == 0) continue;
    std::string name = fmt::format("0x{:x}", b);
    for (const auto& [value, n] : table)
      if (value == b) name = std::string(n);
    out.push_back(std::move(name));
  }
  return out;
}

using Bit = std::pair<std::uint32_t, std::string_view>;

}  // namespace

std::string_view vk_result_name(std::int64_t code) {
  for (const auto& r : kResults)
    if (r.value == code) return r.name;
  return "VK_RESULT_UNKNOWN";
}

std::string vk_result_text(std::int64_t code) {
  return fmt::format("{} ({})", vk_result_name(code), code);
}

void throw_vk_error(std::int64_t code, const char* call, const char* file, int line) {
  // A lost device stays lost: bench ends the device's child instead of failing every cell.
  if (code == VK_ERROR_DEVICE_LOST)
    throw DeviceLostError("Vulkan", code, std::string(vk_result_name(code)), call, file, line);
  throw ApiError("Vulkan", code, std::string(vk_result_name(code)), call, file, line);
}

std::string driver_id_name(std::uint32_t id) {
  if (id >= 1 && id <= kDriverIds.size()) return "VK_DRIVER_ID_" + std::string(kDriverIds[id - 1]);
  return fmt::format("VK_DRIVER_ID_UNKNOWN_{}", id);
}

std::string device_type_name(std::uint32_t type) {
  if (type < kDeviceTypes.size()) return std::string(kDeviceTypes[type]);
  return fmt::format("VK_PHYSICAL_DEVICE_TYPE_UNKNOWN_{}", type);
}

std::string api_version_text(std::uint32_t v) {
  std::string out = fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                                VK_API_VERSION_PATCH(v));
  if (VK_API_VERSION_VARIANT(v) != 0) out += fmt::format(" variant {}", VK_API_VERSION_VARIANT(v));
  return out;
}

std::string driver_version_text(std::uint32_t vendor_id, std::uint32_t driver_id, std::uint32_t v) {
  constexpr std::uint32_t kNvidia = 0x10de;
  constexpr std::uint32_t kIntelWindows = 5;  // VK_DRIVER_ID_INTEL_PROPRIETARY_WINDOWS
  if (vendor_id == kNvidia)
    return fmt::format("{}.{}.{}.{}", (v >> 22) & 0x3ff, (v >> 14) & 0xff, (v >> 6) & 0xff,
                       v & 0x3f);
  if (driver_id == kIntelWindows) return fmt::format("{}.{}", v >> 14, v & 0x3fff);
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v),
                     VK_API_VERSION_PATCH(v));
}

std::string vendor_name(std::uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x1002:
      return "AMD";
    case 0x1010:
      return "Imagination";
    case 0x106b:
      return "Apple";
    case 0x10de:
      return "NVIDIA";
    case 0x13b5:
      return "ARM";
    case 0x1ae0:
      return "Google";
    case 0x5143:
      return "Qualcomm";
    case 0x8086:
      return "Intel";
    case 0x10001:
      return "Codeplay";
    case 0x10002:
      return "Vivante";
    case 0x10003:
      return "VeriSilicon";
    case 0x10004:
      return "Kazan";
    case 0x10005:
      return "Mesa";
    case 0x10006:
      return "PoCL";
    default:
      return {};
  }
}

std::string uuid_text(const std::uint8_t* b) {
  return fmt::format(
      "{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}{:02x}{:02x}{:"
      "02x}{:02x}",
      b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14],
      b[15]);
}

std::vector<std::string> queue_flag_names(std::uint32_t flags) {
  static constexpr std::array kBits{
      Bit{0x1, "VK_QUEUE_GRAPHICS_BIT"},          Bit{0x2, "VK_QUEUE_COMPUTE_BIT"},
      Bit{0x4, "VK_QUEUE_TRANSFER_BIT"},          Bit{0x8, "VK_QUEUE_SPARSE_BINDING_BIT"},
      Bit{0x10, "VK_QUEUE_PROTECTED_BIT"},        Bit{0x20, "VK_QUEUE_VIDEO_DECODE_BIT_KHR"},
      Bit{0x40, "VK_QUEUE_VIDEO_ENCODE_BIT_KHR"}, Bit{0x100, "VK_QUEUE_OPTICAL_FLOW_BIT_NV"}};
  return bit_names(flags, kBits);
}

std::vector<std::string> memory_property_names(std::uint32_t flags) {
  static constexpr std::array kBits{Bit{0x1, "VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT"},
                                    Bit{0x2, "VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT"},
                                    Bit{0x4, "VK_MEMORY_PROPERTY_HOST_COHERENT_BIT"},
                                    Bit{0x8, "VK_MEMORY_PROPERTY_HOST_CACHED_BIT"},
                                    Bit{0x10, "VK_MEMORY_PROPERTY_LAZILY_ALLOCATED_BIT"},
                                    Bit{0x20, "VK_MEMORY_PROPERTY_PROTECTED_BIT"},
                                    Bit{0x40, "VK_MEMORY_PROPERTY_DEVICE_COHERENT_BIT_AMD"},
                                    Bit{0x80, "VK_MEMORY_PROPERTY_DEVICE_UNCACHED_BIT_AMD"},
                                    Bit{0x100, "VK_MEMORY_PROPERTY_RDMA_CAPABLE_BIT_NV"}};
  return bit_names(flags, kBits);
}

std::vector<std::string> memory_heap_flag_names(std::uint32_t flags) {
  static constexpr std::array kBits{Bit{0x1, "VK_MEMORY_HEAP_DEVICE_LOCAL_BIT"},
                                    Bit{0x2, "VK_MEMORY_HEAP_MULTI_INSTANCE_BIT"}};
  return bit_names(flags, kBits);
}

std::vector<std::string> subgroup_operation_names(std::uint32_t flags) {
  static constexpr std::array kBits{
      Bit{0x1, "VK_SUBGROUP_FEATURE_BASIC_BIT"}, Bit{0x2, "VK_SUBGROUP_FEATURE_VOTE_BIT"},
      Bit{0x4, "VK_SUBGROUP_FEATURE_ARITHMETIC_BIT"}, Bit{0x8, "VK_SUBGROUP_FEATURE_BALLOT_BIT"},
      Bit{0x10, "VK_SUBGROUP_FEATURE_SHUFFLE_BIT"},
      Bit{0x20, "VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT"},
      Bit{0x40, "VK_SUBGROUP_FEATURE_CLUSTERED_BIT"}, Bit{0x80, "VK_SUBGROUP_FEATURE_QUAD_BIT"},
      Bit{0x100, "VK_SUBGROUP_FEATURE_PARTITIONED_BIT_NV"},
      // Vulkan 1.4's names (VK_KHR_shader_subgroup_rotate before),
      // newer than Debian 12's headers; NVIDIA's 580 sets both.
      Bit{0x200, "VK_SUBGROUP_FEATURE_ROTATE_BIT"},
      Bit{0x400, "VK_SUBGROUP_FEATURE_ROTATE_CLUSTERED_BIT"}};
  return bit_names(flags, kBits);
}

std::vector<std::string> shader_stage_names(std::uint32_t flags) {
  static constexpr std::array kBits{Bit{0x1, "VK_SHADER_STAGE_VERTEX_BIT"},
                                    Bit{0x2, "VK_SHADER_STAGE_TESSELLATION_CONTROL_BIT"},
                                    Bit{0x4, "VK_SHADER_STAGE_TESSELLATION_EVALUATION_BIT"},
                                    Bit{0x8, "VK_SHADER_STAGE_GEOMETRY_BIT"},
                                    Bit{0x10, "VK_SHADER_STAGE_FRAGMENT_BIT"},
                                    Bit{0x20, "VK_SHADER_STAGE_COMPUTE_BIT"},
                                    Bit{0x40, "VK_SHADER_STAGE_TASK_BIT_EXT"},
                                    Bit{0x80, "VK_SHADER_STAGE_MESH_BIT_EXT"},
                                    Bit{0x100, "VK_SHADER_STAGE_RAYGEN_BIT_KHR"},
                                    Bit{0x200, "VK_SHADER_STAGE_ANY_HIT_BIT_KHR"},
                                    Bit{0x400, "VK_SHADER_STAGE_CLOSEST_HIT_BIT_KHR"},
                                    Bit{0x800, "VK_SHADER_STAGE_MISS_BIT_KHR"},
                                    Bit{0x1000, "VK_SHADER_STAGE_INTERSECTION_BIT_KHR"},
                                    Bit{0x2000, "VK_SHADER_STAGE_CALLABLE_BIT_KHR"},
                                    Bit{0x4000, "VK_SHADER_STAGE_SUBPASS_SHADING_BIT_HUAWEI"},
                                    Bit{0x80000, "VK_SHADER_STAGE_CLUSTER_CULLING_BIT_HUAWEI"}};
  return bit_names(flags, kBits);
}

std::string component_type_name(std::uint32_t type) {
  static constexpr std::array<std::string_view, 11> kTypes{"float16", "float32", "float64", "sint8",
                                                           "sint16",  "sint32",  "sint64",  "uint8",
                                                           "uint16",  "uint32",  "uint64"};
  if (type < kTypes.size()) return std::string(kTypes[type]);
  return fmt::format("component_type_{}", type);
}

std::string scope_name(std::uint32_t scope) {
  switch (scope) {
    case 1:
      return "device";
    case 2:
      return "workgroup";
    case 3:
      return "subgroup";
    case 5:
      return "queue_family";
    default:
      return fmt::format("scope_{}", scope);
  }
}

}  // namespace gpucheck::vulkan

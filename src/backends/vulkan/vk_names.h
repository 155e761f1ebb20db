// Vulkan codes, enums and bit masks by their names (as vulkaninfo prints them), and the version
// and UUID texts of the probe. Tables hold numbers, not enumerators, so they compile with any
// header version.
#pragma once

#include "backends/vulkan/vk_headers.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::vulkan {

// "VK_ERROR_INITIALIZATION_FAILED" for -3; "VK_RESULT_UNKNOWN" for a code no header defines.
std::string_view vk_result_name(std::int64_t code);
// "VK_ERROR_INITIALIZATION_FAILED (-3)": how a failed call appears in probe output.
std::string vk_result_text(std::int64_t code);

// Throws ApiError("Vulkan", code, its name, the call, file, line).
[[noreturn]] void throw_vk_error(std::int64_t code, const char* call, const char* file, int line);

// "VK_DRIVER_ID_MESA_LLVMPIPE" for 13; "VK_DRIVER_ID_UNKNOWN_<n>" otherwise.
std::string driver_id_name(std::uint32_t id);
// "VK_PHYSICAL_DEVICE_TYPE_CPU".
std::string device_type_name(std::uint32_t type);
// "1.3.230" (variant dropped unless non-zero: "1.3.230 variant 1").
std::string api_version_text(std::uint32_t version);
// The driver version as its vendor encodes it: NVIDIA 10.8.8.6 bits, Intel's Windows driver
// 18.14 bits, every other VK_MAKE_API_VERSION.
std::string driver_version_text(std::uint32_t vendor_id, std::uint32_t driver_id,
                                std::uint32_t version);
// "NVIDIA", "AMD", "Intel", "Mesa" (0x10005, lavapipe's), ... ; "" when unknown.
std::string vendor_name(std::uint32_t vendor_id);
// 8-4-4-4-12 lowercase hex of 16 bytes, as vulkaninfo --summary prints a UUID.
std::string uuid_text(const std::uint8_t* bytes);

// The names of the bits set in a mask, in bit order; an unnamed bit as "0x...".
std::vector<std::string> queue_flag_names(std::uint32_t flags);
std::vector<std::string> memory_property_names(std::uint32_t flags);
std::vector<std::string> memory_heap_flag_names(std::uint32_t flags);
std::vector<std::string> subgroup_operation_names(std::uint32_t flags);
std::vector<std::string> shader_stage_names(std::uint32_t flags);
// Cooperative-matrix component types and scopes (the NV and KHR enums share their values).
std::string component_type_name(std::uint32_t type);
std::string scope_name(std::uint32_t scope);

}  // namespace gpucheck::vulkan

// Checks a call that returns a VkResult; anything but VK_SUCCESS throws ApiError naming it.
#define GC_VK_CHECK(expr)                                                           \
  do {                                                                              \
    const VkResult gc_vk_status_ = (expr);                                          \
    if (gc_vk_status_ != VK_SUCCESS)                                                \
      ::gpucheck::vulkan::throw_vk_error(gc_vk_status_, #expr, __FILE__, __LINE__); \
  } while (0)

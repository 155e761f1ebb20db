// The keys only the Vulkan backend's probe section writes (backends[vulkan]), beside
// core/json_keys.h in the same namespace; the keys both share (path, loads, icd_files, ...)
// stay there.
#pragma once

#include "core/json_keys.h"

namespace gpucheck::keys {

inline constexpr K kInstanceVersion = "instance_version";
inline constexpr K kLayers = "layers";
inline constexpr K kSpecVersion = "spec_version";
inline constexpr K kImplementationVersion = "implementation_version";
inline constexpr K kElevated = "elevated";
inline constexpr K kOverriddenBy = "overridden_by";
inline constexpr K kManifests = "manifests";
inline constexpr K kFileFormatVersion = "file_format_version";
inline constexpr K kLibraryPath = "library_path";
inline constexpr K kApiVersion = "api_version";
inline constexpr K kIsPortabilityDriver = "is_portability_driver";
inline constexpr K kLibraryArch = "library_arch";
inline constexpr K kEntryPoints = "entry_points";
inline constexpr K kInit = "init";
inline constexpr K kStep = "step";  // negotiate | get_proc_addr | create_instance | enumerate
inline constexpr K kResult = "result";
inline constexpr K kInterfaceVersion = "interface_version";
inline constexpr K kPhysicalDevices = "physical_devices";
inline constexpr K kVendorId = "vendor_id";
inline constexpr K kDeviceId = "device_id";
inline constexpr K kDeviceType = "device_type";
inline constexpr K kDriverId = "driver_id";
inline constexpr K kDriverName = "driver_name";
inline constexpr K kDriverInfo = "driver_info";
inline constexpr K kDriverVersionRaw = "driver_version_raw";
inline constexpr K kApiVersionRaw = "api_version_raw";
inline constexpr K kConformanceVersion = "conformance_version";
inline constexpr K kDriverUuid = "driver_uuid";
inline constexpr K kMemoryHeaps = "memory_heaps";
inline constexpr K kMemoryTypes = "memory_types";
inline constexpr K kHeapIndex = "heap_index";
inline constexpr K kQueueFamilies = "queue_families";
inline constexpr K kQueueCount = "queue_count";
inline constexpr K kTimestampValidBits = "timestamp_valid_bits";
inline constexpr K kSubgroup = "subgroup";
inline constexpr K kSupportedStages = "supported_stages";
inline constexpr K kSupportedOperations = "supported_operations";
inline constexpr K kQuadOperationsInAllStages = "quad_operations_in_all_stages";
inline constexpr K kShaderFeatures = "shader_features";
inline constexpr K kComputeLimits = "compute_limits";
inline constexpr K kCooperativeMatrixNv = "cooperative_matrix_nv";
inline constexpr K kCooperativeMatrixKhr = "cooperative_matrix_khr";
inline constexpr K kSupported = "supported";
inline constexpr K kCooperativeMatrix = "cooperative_matrix";  // the summary: offered or why not
inline constexpr K kOffered = "offered";

}  // namespace gpucheck::keys

// The device field table and the decoding of each value type.
#include "backends/opencl/device_fields.h"

#include <fmt/format.h>

#include "backends/opencl/cl_errors.h"
#include "backends/opencl/opencl_library.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpucheck::opencl {

namespace {

using Json = nlohmann::json;

// The CL_* spelling is the name: a typo in one cannot compile.
#define GC_NAMED(x)              \
  FlagName {                     \
    static_cast<cl_ulong>(x), #x \
  }

constexpr std::array kDeviceTypes = {
    GC_NAMED(CL_DEVICE_TYPE_DEFAULT), GC_NAMED(CL_DEVICE_TYPE_CPU),
    GC_NAMED(CL_DEVICE_TYPE_GPU),     GC_NAMED(CL_DEVICE_TYPE_ACCELERATOR),
    GC_NAMED(CL_DEVICE_TYPE_CUSTOM),
};
constexpr std::array kFpConfig = {
    GC_NAMED(CL_FP_DENORM),           GC_NAMED(CL_FP_INF_NAN),
    GC_NAMED(CL_FP_ROUND_TO_NEAREST), GC_NAMED(CL_FP_ROUND_TO_ZERO),
    GC_NAMED(CL_FP_ROUND_TO_INF),     GC_NAMED(CL_FP_FMA),
    GC_NAMED(CL_FP_SOFT_FLOAT),       GC_NAMED(CL_FP_CORRECTLY_ROUNDED_DIVIDE_SQRT),
};
constexpr std::array kAffinityDomains = {
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_NUMA),
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_L4_CACHE),
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_L3_CACHE),
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_L2_CACHE),
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_L1_CACHE),
    GC_NAMED(CL_DEVICE_AFFINITY_DOMAIN_NEXT_PARTITIONABLE),
};
constexpr std::array kSvm = {
    GC_NAMED(CL_DEVICE_SVM_COARSE_GRAIN_BUFFER),
    GC_NAMED(CL_DEVICE_SVM_FINE_GRAIN_BUFFER),
    GC_NAMED(CL_DEVICE_SVM_FINE_GRAIN_SYSTEM),
    GC_NAMED(CL_DEVICE_SVM_ATOMICS),
};
constexpr std::array kAtomics = {
    GC_NAMED(CL_DEVICE_ATOMIC_ORDER_RELAXED),     GC_NAMED(CL_DEVICE_ATOMIC_ORDER_ACQ_REL),
    GC_NAMED(CL_DEVICE_ATOMIC_ORDER_SEQ_CST),     GC_NAMED(CL_DEVICE_ATOMIC_SCOPE_WORK_ITEM),
    GC_NAMED(CL_DEVICE_ATOMIC_SCOPE_WORK_GROUP),  GC_NAMED(CL_DEVICE_ATOMIC_SCOPE_DEVICE),
    GC_NAMED(CL_DEVICE_ATOMIC_SCOPE_ALL_DEVICES),
};
constexpr std::array kQueueProperties = {
    GC_NAMED(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE),
    GC_NAMED(CL_QUEUE_PROFILING_ENABLE),
    GC_NAMED(CL_QUEUE_ON_DEVICE),
    GC_NAMED(CL_QUEUE_ON_DEVICE_DEFAULT),
};
constexpr std::array kDeviceEnqueue = {
    GC_NAMED(CL_DEVICE_QUEUE_SUPPORTED),
    GC_NAMED(CL_DEVICE_QUEUE_REPLACEABLE_DEFAULT),
};
constexpr std::array kExecution = {
    GC_NAMED(CL_EXEC_KERNEL),
    GC_NAMED(CL_EXEC_NATIVE_KERNEL),
};
constexpr std::array kCacheTypes = {
    GC_NAMED(CL_NONE),
    GC_NAMED(CL_READ_ONLY_CACHE),
    GC_NAMED(CL_READ_WRITE_CACHE),
};
constexpr std::array kLocalMemTypes = {
    GC_NAMED(CL_NONE),
    GC_NAMED(CL_LOCAL),
    GC_NAMED(CL_GLOBAL),
};
constexpr std::array kPartitionNames = {
    GC_NAMED(CL_DEVICE_PARTITION_EQUALLY),
    GC_NAMED(CL_DEVICE_PARTITION_BY_COUNTS),
    GC_NAMED(CL_DEVICE_PARTITION_BY_AFFINITY_DOMAIN),
    FlagName{0x4052, "CL_DEVICE_PARTITION_BY_NAMES_INTEL"},
};
#undef GC_NAMED

constexpr DeviceField field(std::string_view name, cl_device_info param, FieldType type,
                            int min_version = 0, std::string_view extension = {},
                            std::span<const FlagName> names = {}) {
  return DeviceField{name, param, type, min_version, extension, names};
}

#define GC_FIELD(name, ...) field(#name, name, __VA_ARGS__)
using enum FieldType;

constexpr std::string_view kNv = "cl_nv_device_attribute_query";
constexpr std::string_view kAmd = "cl_amd_device_attribute_query";
constexpr std::string_view kUuidExt = "cl_khr_device_uuid";

const std::array kFields = {
    GC_FIELD(CL_DEVICE_NAME, kString),
    GC_FIELD(CL_DEVICE_VENDOR, kString),
    GC_FIELD(CL_DEVICE_VENDOR_ID, kUint),
    GC_FIELD(CL_DEVICE_VERSION, kString),
    GC_FIELD(CL_DEVICE_NUMERIC_VERSION, kVersion, 300),
    GC_FIELD(CL_DRIVER_VERSION, kString),
    GC_FIELD(CL_DEVICE_OPENCL_C_VERSION, kString, 110),
    GC_FIELD(CL_DEVICE_OPENCL_C_ALL_VERSIONS, kNameVersionArray, 300),
    GC_FIELD(CL_DEVICE_OPENCL_C_FEATURES, kNameVersionArray, 300),
    GC_FIELD(CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED, kString, 300),
    GC_FIELD(CL_DEVICE_TYPE, kBitfield, 0, {}, kDeviceTypes),
    GC_FIELD(CL_DEVICE_PROFILE, kString),
    GC_FIELD(CL_DEVICE_AVAILABLE, kBool),
    GC_FIELD(CL_DEVICE_COMPILER_AVAILABLE, kBool),
    GC_FIELD(CL_DEVICE_LINKER_AVAILABLE, kBool, 120),
    GC_FIELD(CL_DEVICE_MAX_COMPUTE_UNITS, kUint),
    GC_FIELD(CL_DEVICE_MAX_CLOCK_FREQUENCY, kUint),
    GC_FIELD(CL_DEVICE_PARTITION_MAX_SUB_DEVICES, kUint, 120),
    GC_FIELD(CL_DEVICE_PARTITION_PROPERTIES, kPartitionProperties, 120, {}, kPartitionNames),
    GC_FIELD(CL_DEVICE_PARTITION_AFFINITY_DOMAIN, kBitfield, 120, {}, kAffinityDomains),
    GC_FIELD(CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS, kUint),
    GC_FIELD(CL_DEVICE_MAX_WORK_ITEM_SIZES, kSizeTArray),
    GC_FIELD(CL_DEVICE_MAX_WORK_GROUP_SIZE, kSizeT),
    GC_FIELD(CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, kSizeT, 300),
    GC_FIELD(CL_DEVICE_MAX_NUM_SUB_GROUPS, kUint, 210),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_INT, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF, kUint, 110),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT, kUint, 110),
    GC_FIELD(CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, kUint),
    GC_FIELD(CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, kUint, 110),
    GC_FIELD(CL_DEVICE_HALF_FP_CONFIG, kBitfield, 0, "cl_khr_fp16", kFpConfig),
    GC_FIELD(CL_DEVICE_SINGLE_FP_CONFIG, kBitfield, 0, {}, kFpConfig),
    GC_FIELD(CL_DEVICE_DOUBLE_FP_CONFIG, kBitfield, 120, "cl_khr_fp64", kFpConfig),
    GC_FIELD(CL_DEVICE_ADDRESS_BITS, kUint),
    GC_FIELD(CL_DEVICE_ENDIAN_LITTLE, kBool),
    GC_FIELD(CL_DEVICE_GLOBAL_MEM_SIZE, kUlong),
    GC_FIELD(CL_DEVICE_ERROR_CORRECTION_SUPPORT, kBool),
    GC_FIELD(CL_DEVICE_MAX_MEM_ALLOC_SIZE, kUlong),
    GC_FIELD(CL_DEVICE_HOST_UNIFIED_MEMORY, kBool, 110),
    GC_FIELD(CL_DEVICE_SVM_CAPABILITIES, kBitfield, 200, {}, kSvm),
    GC_FIELD(CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, kUint),
    GC_FIELD(CL_DEVICE_MEM_BASE_ADDR_ALIGN, kUint),
    GC_FIELD(CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT, kUint, 200),
    GC_FIELD(CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, kUint, 200),
    GC_FIELD(CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT, kUint, 200),
    GC_FIELD(CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, kBitfield, 300, {}, kAtomics),
    GC_FIELD(CL_DEVICE_ATOMIC_FENCE_CAPABILITIES, kBitfield, 300, {}, kAtomics),
    GC_FIELD(CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE, kSizeT, 200),
    GC_FIELD(CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, kSizeT, 200),
    GC_FIELD(CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, kEnum, 0, {}, kCacheTypes),
    GC_FIELD(CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, kUlong),
    GC_FIELD(CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE, kUint),
    GC_FIELD(CL_DEVICE_IMAGE_SUPPORT, kBool),
    GC_FIELD(CL_DEVICE_MAX_SAMPLERS, kUint),
    GC_FIELD(CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, kSizeT, 120),
    GC_FIELD(CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, kSizeT, 120),
    GC_FIELD(CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, kUint, 200),
    GC_FIELD(CL_DEVICE_IMAGE_PITCH_ALIGNMENT, kUint, 200),
    GC_FIELD(CL_DEVICE_IMAGE2D_MAX_HEIGHT, kSizeT),
    GC_FIELD(CL_DEVICE_IMAGE2D_MAX_WIDTH, kSizeT),
    GC_FIELD(CL_DEVICE_IMAGE3D_MAX_HEIGHT, kSizeT),
    GC_FIELD(CL_DEVICE_IMAGE3D_MAX_WIDTH, kSizeT),
    GC_FIELD(CL_DEVICE_IMAGE3D_MAX_DEPTH, kSizeT),
    GC_FIELD(CL_DEVICE_MAX_READ_IMAGE_ARGS, kUint),
    GC_FIELD(CL_DEVICE_MAX_WRITE_IMAGE_ARGS, kUint),
    GC_FIELD(CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS, kUint, 200),
    GC_FIELD(CL_DEVICE_PIPE_SUPPORT, kBool, 300),
    GC_FIELD(CL_DEVICE_MAX_PIPE_ARGS, kUint, 200),
    GC_FIELD(CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, kUint, 200),
    GC_FIELD(CL_DEVICE_PIPE_MAX_PACKET_SIZE, kUint, 200),
    GC_FIELD(CL_DEVICE_LOCAL_MEM_TYPE, kEnum, 0, {}, kLocalMemTypes),
    GC_FIELD(CL_DEVICE_LOCAL_MEM_SIZE, kUlong),
    GC_FIELD(CL_DEVICE_MAX_CONSTANT_ARGS, kUint),
    GC_FIELD(CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE, kUlong),
    GC_FIELD(CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, kBool, 300),
    GC_FIELD(CL_DEVICE_MAX_PARAMETER_SIZE, kSizeT),
    GC_FIELD(CL_DEVICE_QUEUE_ON_HOST_PROPERTIES, kBitfield, 0, {}, kQueueProperties),
    GC_FIELD(CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, kBitfield, 300, {}, kDeviceEnqueue),
    GC_FIELD(CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, kBitfield, 200, {}, kQueueProperties),
    GC_FIELD(CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE, kUint, 200),
    GC_FIELD(CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, kUint, 200),
    GC_FIELD(CL_DEVICE_MAX_ON_DEVICE_QUEUES, kUint, 200),
    GC_FIELD(CL_DEVICE_MAX_ON_DEVICE_EVENTS, kUint, 200),
    GC_FIELD(CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, kBool, 120),
    GC_FIELD(CL_DEVICE_PROFILING_TIMER_RESOLUTION, kSizeT),
    GC_FIELD(CL_DEVICE_EXECUTION_CAPABILITIES, kBitfield, 0, {}, kExecution),
    GC_FIELD(CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, kBool, 300),
    GC_FIELD(CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT, kBool, 300),
    GC_FIELD(CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS, kBool, 210),
    GC_FIELD(CL_DEVICE_IL_VERSION, kString, 210, "cl_khr_il_program"),
    GC_FIELD(CL_DEVICE_ILS_WITH_VERSION, kNameVersionArray, 300),
    GC_FIELD(CL_DEVICE_SPIR_VERSIONS, kString, 0, "cl_khr_spir"),
    GC_FIELD(CL_DEVICE_PRINTF_BUFFER_SIZE, kSizeT, 120),
    GC_FIELD(CL_DEVICE_BUILT_IN_KERNELS, kString, 120),
    GC_FIELD(CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, kNameVersionArray, 300),
    GC_FIELD(CL_DEVICE_EXTENSIONS, kString),
    GC_FIELD(CL_DEVICE_EXTENSIONS_WITH_VERSION, kNameVersionArray, 300),
    // Identity: cl_khr_pci_bus_info, cl_khr_device_uuid.
    GC_FIELD(CL_DEVICE_PCI_BUS_INFO_KHR, kPciBusInfo, 0, "cl_khr_pci_bus_info"),
    GC_FIELD(CL_DEVICE_UUID_KHR, kUuid, 0, kUuidExt),
    GC_FIELD(CL_DRIVER_UUID_KHR, kUuid, 0, kUuidExt),
    GC_FIELD(CL_DEVICE_LUID_VALID_KHR, kBool, 0, kUuidExt),
    GC_FIELD(CL_DEVICE_LUID_KHR, kLuid, 0, kUuidExt),
    GC_FIELD(CL_DEVICE_NODE_MASK_KHR, kUint, 0, kUuidExt),
    // NVIDIA: cl_nv_device_attribute_query.
    GC_FIELD(CL_DEVICE_COMPUTE_CAPABILITY_MAJOR_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_COMPUTE_CAPABILITY_MINOR_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_REGISTERS_PER_BLOCK_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_WARP_SIZE_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_GPU_OVERLAP_NV, kBool, 0, kNv),
    GC_FIELD(CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV, kBool, 0, kNv),
    GC_FIELD(CL_DEVICE_INTEGRATED_MEMORY_NV, kBool, 0, kNv),
    GC_FIELD(CL_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_PCI_BUS_ID_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_PCI_SLOT_ID_NV, kUint, 0, kNv),
    GC_FIELD(CL_DEVICE_PCI_DOMAIN_ID_NV, kUint, 0, kNv),
    // AMD: cl_amd_device_attribute_query.
    GC_FIELD(CL_DEVICE_BOARD_NAME_AMD, kString, 0, kAmd),
    GC_FIELD(CL_DEVICE_TOPOLOGY_AMD, kTopologyAmd, 0, kAmd),
    GC_FIELD(CL_DEVICE_GFXIP_MAJOR_AMD, kUint, 0, kAmd),
    GC_FIELD(CL_DEVICE_GFXIP_MINOR_AMD, kUint, 0, kAmd),
    GC_FIELD(CL_DEVICE_SIMD_PER_COMPUTE_UNIT_AMD, kUint, 0, kAmd),
    GC_FIELD(CL_DEVICE_WAVEFRONT_WIDTH_AMD, kUint, 0, kAmd),
};
#undef GC_FIELD

template <typename T>
T read_as(std::span<const std::byte> bytes, std::size_t offset = 0) {
  T v;
  std::memcpy(&v, bytes.data() + offset, sizeof v);
  return v;
}

Json size_error(std::size_t got, std::string_view want) {
  return Json{{keys::kError, fmt::format("unexpected value size {} (expected {})", got, want)}};
}

std::string version_text(cl_version v) {
  return fmt::format("{}.{}.{}", CL_VERSION_MAJOR(v), CL_VERSION_MINOR(v), CL_VERSION_PATCH(v));
}

std::string_view name_of(std::span<const FlagName> names, cl_ulong value) {
  for (const auto& n : names) {
    if (n.value == value) return n.name;
  }
  return {};
}

Json bitfield(cl_ulong raw, std::span<const FlagName> names) {
  Json flags = Json::array();
  cl_ulong known = 0;
  for (const auto& n : names) {
    if ((raw & n.value) != 0) flags.push_back(n.name);
    known |= n.value;
  }
  if ((raw & ~known) != 0) flags.push_back(fmt::format("0x{:x}", raw & ~known));
  return Json{{keys::kRaw, raw}, {keys::kFlags, flags}};
}

std::string hex_bytes(std::span<const std::byte> bytes) {
  std::string out;
  for (std::byte b : bytes) out += fmt::format("{:02x}", static_cast<unsigned>(b));
  return out;
}

}  // namespace

std::string_view field_type_name(FieldType type) {
  switch (type) {
    case kString:
      return "string";
    case kUint:
      return "uint";
    case kUlong:
      return "ulong";
    case kSizeT:
      return "size_t";
    case kSizeTArray:
      return "size_t array";
    case kBool:
      return "bool";
    case kBitfield:
      return "bitfield";
    case kEnum:
      return "enum";
    case kVersion:
      return "version";
    case kNameVersionArray:
      return "name-version array";
    case kPartitionProperties:
      return "partition property array";
    case kUuid:
      return "uuid";
    case kLuid:
      return "luid";
    case kPciBusInfo:
      return "pci bus info";
    case kTopologyAmd:
      return "amd topology";
  }
  return "unknown";
}

std::span<const DeviceField> device_fields() {
  return kFields;
}

const DeviceField* find_device_field(std::string_view name) {
  for (const auto& f : kFields) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

std::string json_key(std::string_view cl_name) {
  std::string key(cl_name);
  for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return key;
}

int parse_opencl_version(std::string_view version) {
  constexpr std::string_view kPrefix = "OpenCL ";
  if (!version.starts_with(kPrefix)) return 0;
  version.remove_prefix(kPrefix.size());
  int major = 0;
  int minor = 0;
  std::size_t i = 0;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])))
    major = major * 10 + (version[i++] - '0');
  if (i == 0 || i >= version.size() || version[i] != '.') return 0;
  ++i;
  if (i >= version.size() || !std::isdigit(static_cast<unsigned char>(version[i]))) return 0;
  minor = version[i] - '0';
  return major * 100 + minor * 10;
}

bool field_applies(const DeviceField& field, int device_version,
                   const std::set<std::string, std::less<>>& extensions) {
  const bool by_version = field.min_version > 0 && device_version >= field.min_version;
  const bool by_extension = !field.extension.empty() && extensions.contains(field.extension);
  if (field.min_version == 0 && field.extension.empty()) return true;
  return by_version || by_extension;
}

std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device, unsigned function) {
  return fmt::format("{:04x}:{:02x}:{:02x}.{:x}", domain, bus, device, function);
}

Json decode_field(const DeviceField& field, std::span<const std::byte> value) {
  const std::size_t n = value.size();
  switch (field.type) {
    case kString:
      return sanitize_c_buffer(reinterpret_cast<const char*>(value.data()), n);
    case kUint:
      if (n != sizeof(cl_uint)) return size_error(n, "4");
      return read_as<cl_uint>(value);
    case kUlong:
      if (n != sizeof(cl_ulong)) return size_error(n, "8");
      return read_as<cl_ulong>(value);
    case kSizeT:
      if (n != sizeof(std::size_t)) return size_error(n, fmt::format("{}", sizeof(std::size_t)));
      return read_as<std::size_t>(value);
    case kSizeTArray: {
      if (n % sizeof(std::size_t) != 0) return size_error(n, "a multiple of size_t");
      Json out = Json::array();
      for (std::size_t off = 0; off < n; off += sizeof(std::size_t))
        out.push_back(read_as<std::size_t>(value, off));
      return out;
    }
    case kBool:
      if (n != sizeof(cl_bool)) return size_error(n, "4");
      return read_as<cl_bool>(value) != CL_FALSE;
    case kBitfield:
      // Some drivers answer 32-bit bitfields; the value is the same.
      if (n == sizeof(cl_uint)) return bitfield(read_as<cl_uint>(value), field.names);
      if (n != sizeof(cl_bitfield)) return size_error(n, "8");
      return bitfield(read_as<cl_bitfield>(value), field.names);
    case kEnum: {
      if (n != sizeof(cl_uint)) return size_error(n, "4");
      const cl_uint v = read_as<cl_uint>(value);
      std::string_view name = name_of(field.names, v);
      return name.empty() ? Json(fmt::format("0x{:x}", v)) : Json(name);
    }
    case kVersion: {
      if (n != sizeof(cl_version)) return size_error(n, "4");
      const cl_version v = read_as<cl_version>(value);
      return Json{{keys::kRaw, v}, {keys::kVersion, version_text(v)}};
    }
    case kNameVersionArray: {
      if (n % sizeof(cl_name_version) != 0) return size_error(n, "a multiple of cl_name_version");
      Json out = Json::array();
      for (std::size_t off = 0; off < n; off += sizeof(cl_name_version)) {
        const auto nv = read_as<cl_name_version>(value, off);
        out.push_back(Json{{keys::kName, sanitize_c_buffer(nv.name, sizeof nv.name)},
                           {keys::kVersion, version_text(nv.version)},
                           {keys::kRaw, nv.version}});
      }
      return out;
    }
    case kPartitionProperties: {
      using Property = cl_device_partition_property;
      if (n % sizeof(Property) != 0) return size_error(n, "a multiple of intptr_t");
      Json out = Json::array();
      for (std::size_t off = 0; off < n; off += sizeof(Property)) {
        const auto p = read_as<Property>(value, off);
        if (p == 0) break;  // the list's terminator
        std::string_view name = name_of(field.names, static_cast<cl_ulong>(p));
        out.push_back(name.empty() ? fmt::format("0x{:x}", static_cast<cl_ulong>(p))
                                   : std::string(name));
      }
      return out;
    }
    case kUuid: {
      if (n != CL_UUID_SIZE_KHR) return size_error(n, "16");
      const std::string h = hex_bytes(value);
      return fmt::format("{}-{}-{}-{}-{}", h.substr(0, 8), h.substr(8, 4), h.substr(12, 4),
                         h.substr(16, 4), h.substr(20));
    }
    case kLuid:
      if (n != CL_LUID_SIZE_KHR) return size_error(n, "8");
      return hex_bytes(value);
    case kPciBusInfo: {
      if (n != sizeof(cl_device_pci_bus_info_khr)) return size_error(n, "16");
      const auto p = read_as<cl_device_pci_bus_info_khr>(value);
      return format_pci_bus_id(p.pci_domain, p.pci_bus, p.pci_device, p.pci_function);
    }
    case kTopologyAmd: {
      if (n != sizeof(cl_device_topology_amd)) return size_error(n, "24");
      const auto t = read_as<cl_device_topology_amd>(value);
      if (t.raw.type != CL_DEVICE_TOPOLOGY_TYPE_PCIE_AMD) {
        return Json{{keys::kError, fmt::format("topology type {} is not PCIe", t.raw.type)}};
      }
      return format_pci_bus_id(0, static_cast<unsigned char>(t.pcie.bus),
                               static_cast<unsigned char>(t.pcie.device),
                               static_cast<unsigned char>(t.pcie.function));
    }
  }
  return Json{{keys::kError, "unknown field type"}};
}

Json query_device_field(const OpenClLibrary& lib, cl_device_id device, const DeviceField& field) {
  std::size_t size = 0;
  cl_int status = lib.clGetDeviceInfo(device, field.param, 0, nullptr, &size);
  if (status != CL_SUCCESS) return Json{{keys::kError, cl_error_text(status)}};
  std::vector<std::byte> buf(size);
  if (size > 0) {
    status = lib.clGetDeviceInfo(device, field.param, size, buf.data(), nullptr);
    if (status != CL_SUCCESS) return Json{{keys::kError, cl_error_text(status)}};
  }
  return decode_field(field, buf);
}

}  // namespace gpucheck::opencl

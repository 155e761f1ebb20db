// Every device field gpucheck reports (the ones clinfo prints), described once: its CL_* name,
// enum value, value type and when it may be asked. Probe output, tests and the clinfo
// comparison all read this table.
#pragma once

#include "backends/opencl/cl_headers.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <set>
#include <span>
#include <string>
#include <string_view>

namespace gpucheck::opencl {

class OpenClLibrary;

enum class FieldType {
  kString,               // char[]
  kUint,                 // cl_uint
  kUlong,                // cl_ulong
  kSizeT,                // size_t
  kSizeTArray,           // size_t[]
  kBool,                 // cl_bool
  kBitfield,             // cl_bitfield: {"raw": n, "flags": [names]}
  kEnum,                 // cl_uint naming one value: "CL_READ_WRITE_CACHE"
  kVersion,              // cl_version: {"raw": n, "version": "3.0.0"}
  kNameVersionArray,     // cl_name_version[]: [{"name", "version", "raw"}]
  kPartitionProperties,  // cl_device_partition_property[]: [names]
  kUuid,                 // cl_uchar[16]: "xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx"
  kLuid,                 // cl_uchar[8]: 16 hex digits
  kPciBusInfo,           // cl_device_pci_bus_info_khr: "dddd:bb:dd.f"
  kTopologyAmd,          // cl_device_topology_amd: "0000:bb:dd.f" (no PCI domain in the struct)
};

std::string_view field_type_name(FieldType type);

// One named bit of a bitfield, or one value of an enum.
struct FlagName {
  cl_ulong value;
  std::string_view name;
};

struct DeviceField {
  std::string_view name;  // CL_DEVICE_..., as clinfo prints it; the JSON key is its lower case
  cl_device_info param;
  FieldType type;
  // Asked when the device's OpenCL version is at least min_version (120 = 1.2) or, if extension
  // is given, when the device lists it; with both, either suffices; with neither, always.
  int min_version = 0;
  std::string_view extension = {};
  std::span<const FlagName> names = {};  // bit names of a kBitfield, values of kEnum/kPartition
};

// The table, in clinfo's order.
std::span<const DeviceField> device_fields();
const DeviceField* find_device_field(std::string_view name);

// "cl_device_name" for "CL_DEVICE_NAME".
std::string json_key(std::string_view cl_name);

// "OpenCL 3.0 PoCL ..." -> 300; 0 when the string does not start that way.
int parse_opencl_version(std::string_view version);

// Whether the field should be asked of a device with this version and these extensions.
bool field_applies(const DeviceField& field, int device_version,
                   const std::set<std::string, std::less<>>& extensions);

// The JSON value of a field from the bytes clGetDeviceInfo returned, or {"error": "..."} when
// their size does not fit the type. Strings are sanitised.
nlohmann::json decode_field(const DeviceField& field, std::span<const std::byte> value);

// Asks one field (size, then value). A failed call gives {"error": "CL_INVALID_VALUE (-30)"}.
nlohmann::json query_device_field(const OpenClLibrary& lib, cl_device_id device,
                                  const DeviceField& field);

// "0000:17:00.0"; "opencl" ids and pci_bus_id keys use this form.
std::string format_pci_bus_id(unsigned domain, unsigned bus, unsigned device, unsigned function);

}  // namespace gpucheck::opencl

// The OpenCL probe: loader, environment, ICD files, vendor libraries, platforms and every device
// field, as one JSON section. The core takes its facts as arguments so tests can fabricate them.
#pragma once

#include "backends/opencl/icd_inventory.h"
#include "backends/opencl/opencl_library.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpucheck::opencl {

struct ProbeOptions {
  SystemFacts facts = SystemFacts::of_this_process();
  std::string loader = kLoaderSoname;                 // what dlopen is asked for
  LibraryChecker check_library = check_library_here;  // how each ICD's library is tried
};

// The "opencl" backend section (see backends/backend.h). Status "unavailable" with reason
// "libOpenCL.so.1: <dlerror>" without a loader; "available" with "0 platforms" when the loader
// finds none; "failed" when enumeration itself fails. Never throws for a driver's failure.
nlohmann::json probe_opencl(const ProbeOptions& options);

// nvidia, amd, mesa_clover, mesa_rusticl, pocl, intel, apple or other, from a platform's name,
// vendor and version strings (not from vendor ids: pocl reports Intel's on AMD CPUs).
std::string_view platform_family(std::string_view name, std::string_view vendor,
                                 std::string_view version);

// Every field of device_fields() the device answers, keyed "cl_device_name", ...; a failed
// query is {"error": "..."}.
nlohmann::json device_properties(const OpenClLibrary& lib, cl_device_id device);

// PCI address from cl_khr_pci_bus_info, else NVIDIA's attribute queries, else AMD's topology;
// empty when the properties have none.
std::string pci_bus_id_of(const nlohmann::json& properties);

}  // namespace gpucheck::opencl

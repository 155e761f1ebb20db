// The Khronos OpenCL headers (types and constants only: nothing here links libOpenCL), plus the
// vendor constants and loader entry points that opencl-headers does not declare.
#pragma once

// clGetExtensionFunctionAddress is deprecated since 1.2 but is what every loader and ICD has.
#ifndef CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#endif
// clCreateCommandQueue is deprecated since 2.0 but is the one call every 1.2 driver has.
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>

// cl_nv_device_attribute_query: PCI location (not in opencl-headers 2023.02).
#ifndef CL_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV
#define CL_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT_NV 0x4007
#endif
#ifndef CL_DEVICE_PCI_BUS_ID_NV
#define CL_DEVICE_PCI_BUS_ID_NV 0x4008
#endif
#ifndef CL_DEVICE_PCI_SLOT_ID_NV
#define CL_DEVICE_PCI_SLOT_ID_NV 0x4009
#endif
#ifndef CL_DEVICE_PCI_DOMAIN_ID_NV
#define CL_DEVICE_PCI_DOMAIN_ID_NV 0x400A
#endif

namespace gpucheck::opencl {

// clGetICDLoaderInfoOCLICD (ocl-icd, and Khronos loaders since 2020): which loader this is.
// Reached through clGetExtensionFunctionAddress; ocl-icd does not export it as a symbol.
enum class IcdLoaderInfo : cl_uint {
  kOclVersion = 1,  // CL_ICDL_OCL_VERSION, e.g. "OpenCL 3.0"
  kVersion = 2,     // CL_ICDL_VERSION, e.g. "2.3.1"
  kName = 3,        // CL_ICDL_NAME, e.g. "OpenCL ICD Loader"
  kVendor = 4,      // CL_ICDL_VENDOR: "OCL Icd free software" or "Khronos Group"
};
using GetIcdLoaderInfoFn = cl_int(CL_API_CALL*)(cl_uint param_name, size_t param_value_size,
                                                void* param_value, size_t* param_value_size_ret);

}  // namespace gpucheck::opencl

// The OpenCL ICD loader (libOpenCL.so.1), opened at run time through a typed function table, so
// that the gpucheck binary starts on machines without it.
#pragma once

#include "backends/opencl/cl_headers.h"
#include "backends/opencl/icd_guard.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::opencl {

inline constexpr const char* kLoaderSoname = "libOpenCL.so.1";

// What clGetICDLoaderInfoOCLICD says about the loader; absent when the loader lacks it.
struct IcdLoaderFacts {
  bool has_loader_info = false;     // clGetICDLoaderInfoOCLICD was found
  std::string name;                 // CL_ICDL_NAME
  std::string vendor;               // CL_ICDL_VENDOR
  std::string version;              // CL_ICDL_VERSION
  std::string ocl_version;          // CL_ICDL_OCL_VERSION
  std::vector<std::string> errors;  // queries that failed: call, code and its name
};

// One loaded copy of the ICD loader. The handle is opened with RTLD_NODELETE: ICDs start threads
// (pocl) and register atexit handlers, so the loader must stay mapped until the process ends.
class OpenClLibrary {
 public:
  // Opens `soname` with dlopen. On failure returns nullptr and sets *error to the dlerror() text
  // or the name of a missing entry point.
  static std::unique_ptr<OpenClLibrary> open(const std::string& soname, std::string* error);

  OpenClLibrary(const OpenClLibrary&) = delete;
  OpenClLibrary& operator=(const OpenClLibrary&) = delete;
  ~OpenClLibrary();

  // The .icd entries the loader was kept from (icd_guard.h): FIFOs and other irregular files.
  const std::vector<IrregularIcd>& skipped_icds() const { return icd_guard_->skipped(); }

  // The path the dynamic linker loaded it from (link map), and that path with symlinks resolved.
  const std::string& path() const { return path_; }
  const std::string& real_path() const { return real_path_; }

  // Asks the loader who it is. This is the first OpenCL call: ocl-icd loads every ICD here.
  IcdLoaderFacts loader_facts() const;

  // Entry points used by the probe. Types come from CL/cl.h, so a wrong signature cannot compile.
  decltype(&::clGetPlatformIDs) clGetPlatformIDs = nullptr;
  decltype(&::clGetPlatformInfo) clGetPlatformInfo = nullptr;
  decltype(&::clGetDeviceIDs) clGetDeviceIDs = nullptr;
  decltype(&::clGetDeviceInfo) clGetDeviceInfo = nullptr;
  decltype(&::clGetExtensionFunctionAddress) clGetExtensionFunctionAddress = nullptr;

  // Entry points the bench device needs (contexts, memory, programs, queues, events). A loader
  // that lacks one still probes; bench_missing() names what is absent.
  decltype(&::clCreateContext) clCreateContext = nullptr;
  decltype(&::clReleaseContext) clReleaseContext = nullptr;
  decltype(&::clCreateCommandQueue) clCreateCommandQueue = nullptr;
  decltype(&::clReleaseCommandQueue) clReleaseCommandQueue = nullptr;
  decltype(&::clCreateBuffer) clCreateBuffer = nullptr;
  decltype(&::clReleaseMemObject) clReleaseMemObject = nullptr;
  decltype(&::clCreateProgramWithSource) clCreateProgramWithSource = nullptr;
  decltype(&::clBuildProgram) clBuildProgram = nullptr;
  decltype(&::clGetProgramBuildInfo) clGetProgramBuildInfo = nullptr;
  decltype(&::clReleaseProgram) clReleaseProgram = nullptr;
  decltype(&::clCreateKernel) clCreateKernel = nullptr;
  decltype(&::clReleaseKernel) clReleaseKernel = nullptr;
  decltype(&::clSetKernelArg) clSetKernelArg = nullptr;
  decltype(&::clEnqueueNDRangeKernel) clEnqueueNDRangeKernel = nullptr;
  decltype(&::clEnqueueWriteBuffer) clEnqueueWriteBuffer = nullptr;
  decltype(&::clEnqueueReadBuffer) clEnqueueReadBuffer = nullptr;
  decltype(&::clEnqueueCopyBuffer) clEnqueueCopyBuffer = nullptr;
  decltype(&::clEnqueueMapBuffer) clEnqueueMapBuffer = nullptr;
  decltype(&::clEnqueueUnmapMemObject) clEnqueueUnmapMemObject = nullptr;
  decltype(&::clEnqueueMarkerWithWaitList) clEnqueueMarkerWithWaitList = nullptr;
  decltype(&::clFlush) clFlush = nullptr;
  decltype(&::clFinish) clFinish = nullptr;
  decltype(&::clWaitForEvents) clWaitForEvents = nullptr;
  decltype(&::clGetEventProfilingInfo) clGetEventProfilingInfo = nullptr;
  decltype(&::clReleaseEvent) clReleaseEvent = nullptr;

  // The bench entry points this loader lacks, ", "-separated; empty when it has them all.
  const std::string& bench_missing() const { return bench_missing_; }

 private:
  explicit OpenClLibrary(void* handle) : handle_(handle) {}
  void* handle_;
  std::unique_ptr<IcdGuard> icd_guard_;  // lives as long as the loader may read its directory
  std::string path_;
  std::string real_path_;
  std::string bench_missing_;
};

}  // namespace gpucheck::opencl

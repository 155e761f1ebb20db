// dlopen of libOpenCL.so.1, symbol resolution, and the loader's self-description.
#include "backends/opencl/opencl_library.h"

#include <dlfcn.h>

#include <vector>

#include <fmt/format.h>

#include "backends/opencl/cl_errors.h"
#include "core/dynamic_library.h"
#include "core/sanitize.h"

namespace gpucheck::opencl {

namespace {

// One string of clGetICDLoaderInfoOCLICD; a failed call is recorded in *errors with its code.
std::string loader_string(GetIcdLoaderInfoFn fn, IcdLoaderInfo what, const char* what_name,
                          std::vector<std::string>* errors) {
  size_t size = 0;
  cl_int status = fn(static_cast<cl_uint>(what), 0, nullptr, &size);
  if (status == CL_SUCCESS && size > 0) {
    std::vector<char> buf(size);
    status = fn(static_cast<cl_uint>(what), size, buf.data(), nullptr);
    if (status == CL_SUCCESS) return sanitize_c_buffer(buf.data(), buf.size());
  }
  errors->push_back(fmt::format("clGetICDLoaderInfoOCLICD({}): {}", what_name,
                                status == CL_SUCCESS ? "empty value" : cl_error_text(status)));
  return {};
}

}  // namespace

std::unique_ptr<OpenClLibrary> OpenClLibrary::open(const std::string& soname, std::string* error) {
  // Before the loader can read its vendors directory: an .icd FIFO there would hang it.
  auto guard = IcdGuard::protect_this_process();
  ::dlerror();
  void* handle = ::dlopen(soname.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    *error = sanitize(e != nullptr ? e : "dlopen failed");
    return nullptr;
  }
  std::unique_ptr<OpenClLibrary> lib(new OpenClLibrary(handle));
  lib->icd_guard_ = std::move(guard);
  lib->path_ = sanitize(link_map_path(handle));
  lib->real_path_ = sanitize(resolved_path(link_map_path(handle)));
  std::string missing;
  bool ok = resolve_symbol(handle, "clGetPlatformIDs", &lib->clGetPlatformIDs, &missing);
  ok = resolve_symbol(handle, "clGetPlatformInfo", &lib->clGetPlatformInfo, &missing) && ok;
  ok = resolve_symbol(handle, "clGetDeviceIDs", &lib->clGetDeviceIDs, &missing) && ok;
  ok = resolve_symbol(handle, "clGetDeviceInfo", &lib->clGetDeviceInfo, &missing) && ok;
  ok = resolve_symbol(handle, "clGetExtensionFunctionAddress", &lib->clGetExtensionFunctionAddress,
                      &missing) &&
       ok;
  if (!ok) {
    *error = lib->path_ + ": missing symbols: " + missing;
    return nullptr;
  }
  std::string& m = lib->bench_missing_;
  resolve_symbol(handle, "clCreateContext", &lib->clCreateContext, &m);
  resolve_symbol(handle, "clReleaseContext", &lib->clReleaseContext, &m);
  resolve_symbol(handle, "clCreateCommandQueue", &lib->clCreateCommandQueue, &m);
  resolve_symbol(handle, "clReleaseCommandQueue", &lib->clReleaseCommandQueue, &m);
  resolve_symbol(handle, "clCreateBuffer", &lib->clCreateBuffer, &m);
  resolve_symbol(handle, "clReleaseMemObject", &lib->clReleaseMemObject, &m);
  resolve_symbol(handle, "clCreateProgramWithSource", &lib->clCreateProgramWithSource, &m);
  resolve_symbol(handle, "clBuildProgram", &lib->clBuildProgram, &m);
  resolve_symbol(handle, "clGetProgramBuildInfo", &lib->clGetProgramBuildInfo, &m);
  resolve_symbol(handle, "clReleaseProgram", &lib->clReleaseProgram, &m);
  resolve_symbol(handle, "clCreateKernel", &lib->clCreateKernel, &m);
  resolve_symbol(handle, "clReleaseKernel", &lib->clReleaseKernel, &m);
  resolve_symbol(handle, "clSetKernelArg", &lib->clSetKernelArg, &m);
  resolve_symbol(handle, "clEnqueueNDRangeKernel", &lib->clEnqueueNDRangeKernel, &m);
  resolve_symbol(handle, "clEnqueueWriteBuffer", &lib->clEnqueueWriteBuffer, &m);
  resolve_symbol(handle, "clEnqueueReadBuffer", &lib->clEnqueueReadBuffer, &m);
  resolve_symbol(handle, "clEnqueueCopyBuffer", &lib->clEnqueueCopyBuffer, &m);
  resolve_symbol(handle, "clEnqueueMapBuffer", &lib->clEnqueueMapBuffer, &m);
  resolve_symbol(handle, "clEnqueueUnmapMemObject", &lib->clEnqueueUnmapMemObject, &m);
  resolve_symbol(handle, "clEnqueueMarkerWithWaitList", &lib->clEnqueueMarkerWithWaitList, &m);
  resolve_symbol(handle, "clFlush", &lib->clFlush, &m);
  resolve_symbol(handle, "clFinish", &lib->clFinish, &m);
  resolve_symbol(handle, "clWaitForEvents", &lib->clWaitForEvents, &m);
  resolve_symbol(handle, "clGetEventProfilingInfo", &lib->clGetEventProfilingInfo, &m);
  resolve_symbol(handle, "clReleaseEvent", &lib->clReleaseEvent, &m);
  return lib;
}

OpenClLibrary::~OpenClLibrary() {
  // RTLD_NODELETE keeps the code mapped; this only drops the reference count.
  ::dlclose(handle_);
}

IcdLoaderFacts OpenClLibrary::loader_facts() const {
  IcdLoaderFacts facts;
  void* sym = ::dlsym(handle_, "clGetICDLoaderInfoOCLICD");
  if (sym == nullptr) sym = clGetExtensionFunctionAddress("clGetICDLoaderInfoOCLICD");
  if (sym == nullptr) return facts;
  auto fn = reinterpret_cast<GetIcdLoaderInfoFn>(sym);
  facts.has_loader_info = true;
  facts.name = loader_string(fn, IcdLoaderInfo::kName, "CL_ICDL_NAME", &facts.errors);
  facts.vendor = loader_string(fn, IcdLoaderInfo::kVendor, "CL_ICDL_VENDOR", &facts.errors);
  facts.version = loader_string(fn, IcdLoaderInfo::kVersion, "CL_ICDL_VERSION", &facts.errors);
  facts.ocl_version =
      loader_string(fn, IcdLoaderInfo::kOclVersion, "CL_ICDL_OCL_VERSION", &facts.errors);
  return facts;
}

}  // namespace gpucheck::opencl

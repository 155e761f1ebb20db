// dlopen of libOpenCL.so.1, symbol resolution, and the loader's self-description.
#include "backends/opencl/opencl_library.h"

#include <dlfcn.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "backends/opencl/cl_errors.h"
#include "core/sanitize.h"

namespace gpucheck::opencl {

namespace {

template <typename Fn>
bool resolve(void* handle, const char* symbol, Fn* out, std::string* missing) {
  void* p = ::dlsym(handle, symbol);
  if (p == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
    return false;
  }
  *out = reinterpret_cast<Fn>(p);
  return true;
}

std::string loaded_path(void* handle) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr) {
    return {};
  }
  return map->l_name;
}

std::string resolved(const std::string& path) {
  if (path.empty()) return {};
  char buf[PATH_MAX];
  return ::realpath(path.c_str(), buf) != nullptr ? std::string(buf) : path;
}

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
  lib->path_ = sanitize(loaded_path(handle));
  lib->real_path_ = sanitize(resolved(loaded_path(handle)));
  std::string missing;
  bool ok = resolve(handle, "clGetPlatformIDs", &lib->clGetPlatformIDs, &missing);
  ok = resolve(handle, "clGetPlatformInfo", &lib->clGetPlatformInfo, &missing) && ok;
  ok = resolve(handle, "clGetDeviceIDs", &lib->clGetDeviceIDs, &missing) && ok;
  ok = resolve(handle, "clGetDeviceInfo", &lib->clGetDeviceInfo, &missing) && ok;
  ok = resolve(handle, "clGetExtensionFunctionAddress", &lib->clGetExtensionFunctionAddress,
               &missing) &&
       ok;
  if (!ok) {
    *error = lib->path_ + ": missing symbols: " + missing;
    return nullptr;
  }
  std::string& m = lib->bench_missing_;
  resolve(handle, "clCreateContext", &lib->clCreateContext, &m);
  resolve(handle, "clReleaseContext", &lib->clReleaseContext, &m);
  resolve(handle, "clCreateCommandQueue", &lib->clCreateCommandQueue, &m);
  resolve(handle, "clReleaseCommandQueue", &lib->clReleaseCommandQueue, &m);
  resolve(handle, "clCreateBuffer", &lib->clCreateBuffer, &m);
  resolve(handle, "clReleaseMemObject", &lib->clReleaseMemObject, &m);
  resolve(handle, "clCreateProgramWithSource", &lib->clCreateProgramWithSource, &m);
  resolve(handle, "clBuildProgram", &lib->clBuildProgram, &m);
  resolve(handle, "clGetProgramBuildInfo", &lib->clGetProgramBuildInfo, &m);
  resolve(handle, "clReleaseProgram", &lib->clReleaseProgram, &m);
  resolve(handle, "clCreateKernel", &lib->clCreateKernel, &m);
  resolve(handle, "clReleaseKernel", &lib->clReleaseKernel, &m);
  resolve(handle, "clSetKernelArg", &lib->clSetKernelArg, &m);
  resolve(handle, "clEnqueueNDRangeKernel", &lib->clEnqueueNDRangeKernel, &m);
  resolve(handle, "clEnqueueWriteBuffer", &lib->clEnqueueWriteBuffer, &m);
  resolve(handle, "clEnqueueReadBuffer", &lib->clEnqueueReadBuffer, &m);
  resolve(handle, "clEnqueueCopyBuffer", &lib->clEnqueueCopyBuffer, &m);
  resolve(handle, "clEnqueueMapBuffer", &lib->clEnqueueMapBuffer, &m);
  resolve(handle, "clEnqueueUnmapMemObject", &lib->clEnqueueUnmapMemObject, &m);
  resolve(handle, "clEnqueueMarkerWithWaitList", &lib->clEnqueueMarkerWithWaitList, &m);
  resolve(handle, "clFlush", &lib->clFlush, &m);
  resolve(handle, "clFinish", &lib->clFinish, &m);
  resolve(handle, "clWaitForEvents", &lib->clWaitForEvents, &m);
  resolve(handle, "clGetEventProfilingInfo", &lib->clGetEventProfilingInfo, &m);
  resolve(handle, "clReleaseEvent", &lib->clReleaseEvent, &m);
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

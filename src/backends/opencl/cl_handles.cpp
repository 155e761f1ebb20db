// The checked creating calls of cl_handles.h.
#include "backends/opencl/cl_handles.h"

#include "core/sanitize.h"

#include <fmt/format.h>

#include <stdexcept>
#include <vector>

namespace gpucheck::opencl {

namespace {

// A create call's status names the call, not the variable it came back in.
void check_created(cl_int status, const char* call, int line) {
  if (status != CL_SUCCESS) throw_cl_error(status, call, __FILE__, line);
}

}  // namespace

ClContext create_context(const OpenClLibrary& lib, cl_platform_id platform, cl_device_id device) {
  const cl_context_properties props[] = {CL_CONTEXT_PLATFORM,
                                         reinterpret_cast<cl_context_properties>(platform), 0};
  cl_int err = CL_SUCCESS;
  ClContext c(lib, lib.clCreateContext(props, 1, &device, nullptr, nullptr, &err));
  check_created(err, "clCreateContext", __LINE__);
  return c;
}

ClQueue create_profiling_queue(const OpenClLibrary& lib, const ClContext& context,
                               cl_device_id device) {
  cl_int err = CL_SUCCESS;
  ClQueue q(lib, lib.clCreateCommandQueue(context.get(), device, CL_QUEUE_PROFILING_ENABLE, &err));
  check_created(err, "clCreateCommandQueue", __LINE__);
  return q;
}

ClMem create_buffer(const OpenClLibrary& lib, const ClContext& context, cl_mem_flags flags,
                    std::size_t bytes) {
  cl_int err = CL_SUCCESS;
  ClMem m(lib, lib.clCreateBuffer(context.get(), flags, bytes, nullptr, &err));
  check_created(err, "clCreateBuffer", __LINE__);
  return m;
}

ClKernel create_kernel(const OpenClLibrary& lib, const ClProgram& program, const char* name) {
  cl_int err = CL_SUCCESS;
  ClKernel k(lib, lib.clCreateKernel(program.get(), name, &err));
  check_created(err, "clCreateKernel", __LINE__);
  return k;
}

ClProgram build_program(const OpenClLibrary& lib, const ClContext& context, cl_device_id device,
                        const std::string& what, std::string_view text,
                        const std::string& options) {
  const char* source = text.data();
  const std::size_t size = text.size();
  cl_int err = CL_SUCCESS;
  ClProgram prog(lib, lib.clCreateProgramWithSource(context.get(), 1, &source, &size, &err));
  check_created(err, "clCreateProgramWithSource", __LINE__);
  const cl_int built =
      lib.clBuildProgram(prog.get(), 1, &device, options.c_str(), nullptr, nullptr);
  if (built == CL_SUCCESS) return prog;
  std::size_t log_size = 0;
  std::string log = "(no build log)";
  if (lib.clGetProgramBuildInfo(prog.get(), device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &log_size) ==
          CL_SUCCESS &&
      log_size > 0) {
    std::vector<char> buf(log_size);
    GC_CL_CHECK(lib.clGetProgramBuildInfo(prog.get(), device, CL_PROGRAM_BUILD_LOG, log_size,
                                          buf.data(), nullptr));
    log = sanitize_c_buffer(buf.data(), buf.size());
  }
  throw std::runtime_error(fmt::format("clBuildProgram of {} ({}) failed: {}; build log:\n{}", what,
                                       options, cl_error_text(built), log));
}

}  // namespace gpucheck::opencl

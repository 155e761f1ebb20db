// Owned OpenCL objects, as CLBlast's clpp11.hpp keeps them: one reference each to a cl_mem,
// cl_kernel, cl_program, cl_command_queue, cl_context or cl_event, released when its owner goes;
// and the calls that create one, each status checked. The device then holds operations only.
#pragma once

#include "backends/opencl/cl_errors.h"
#include "backends/opencl/opencl_library.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <utility>

namespace gpucheck::opencl {

// How a handle type is released, and the call's name for its error.
template <typename H>
struct ClRelease;

#define GC_CL_RELEASE(Handle, Call)                                           \
  template <>                                                                 \
  struct ClRelease<Handle> {                                                  \
    static constexpr const char* kCall = #Call;                               \
    static cl_int run(const OpenClLibrary& l, Handle h) { return l.Call(h); } \
  };
GC_CL_RELEASE(cl_mem, clReleaseMemObject)
GC_CL_RELEASE(cl_kernel, clReleaseKernel)
GC_CL_RELEASE(cl_program, clReleaseProgram)
GC_CL_RELEASE(cl_command_queue, clReleaseCommandQueue)
GC_CL_RELEASE(cl_context, clReleaseContext)
GC_CL_RELEASE(cl_event, clReleaseEvent)
#undef GC_CL_RELEASE

// One reference to an OpenCL object. release() reports a failed release as an ApiError naming
// the call and its code; the destructor, which must not throw, logs it instead.
template <typename H>
class ClHandle {
 public:
  ClHandle() = default;
  ClHandle(const OpenClLibrary& lib, H h) : lib_(&lib), h_(h) {}
  ClHandle(ClHandle&& o) noexcept : lib_(o.lib_), h_(std::exchange(o.h_, nullptr)) {}
  ClHandle& operator=(ClHandle&& o) noexcept {
    if (this != &o) {
      drop();
      lib_ = o.lib_;
      h_ = std::exchange(o.h_, nullptr);
    }
    return *this;
  }
  ClHandle(const ClHandle&) = delete;
  ClHandle& operator=(const ClHandle&) = delete;
  ~ClHandle() { drop(); }

  H get() const { return h_; }
  explicit operator bool() const { return h_ != nullptr; }

  // Gives the reference back now.
  void release() {
    if (h_ == nullptr) return;
    const cl_int status = ClRelease<H>::run(*lib_, std::exchange(h_, nullptr));
    if (status != CL_SUCCESS) throw_cl_error(status, ClRelease<H>::kCall, __FILE__, __LINE__);
  }

  // Where a call hands over a new object through an out-parameter (an enqueue's event): the
  // old one is released first.
  H* receive(const OpenClLibrary& lib) {
    drop();
    lib_ = &lib;
    return &h_;
  }

 private:
  void drop() noexcept {
    if (h_ == nullptr) return;
    const cl_int status = ClRelease<H>::run(*lib_, std::exchange(h_, nullptr));
    if (status != CL_SUCCESS) log_cl_error(status, ClRelease<H>::kCall, __FILE__, __LINE__);
  }

  const OpenClLibrary* lib_ = nullptr;
  H h_ = nullptr;
};

using ClMem = ClHandle<cl_mem>;
using ClKernel = ClHandle<cl_kernel>;
using ClProgram = ClHandle<cl_program>;
using ClQueue = ClHandle<cl_command_queue>;
using ClContext = ClHandle<cl_context>;
using ClEvent = ClHandle<cl_event>;

// The creating calls; a failure throws ApiError naming the call and its code.
ClContext create_context(const OpenClLibrary& lib, cl_platform_id platform, cl_device_id device);
// In order, with profiling (device time from events).
ClQueue create_profiling_queue(const OpenClLibrary& lib, const ClContext& context,
                               cl_device_id device);
ClMem create_buffer(const OpenClLibrary& lib, const ClContext& context, cl_mem_flags flags,
                    std::size_t bytes);
ClKernel create_kernel(const OpenClLibrary& lib, const ClProgram& program, const char* name);
// The program built from `text` for the device with `options`; a failed build throws with its
// build log, `what` naming the source.
ClProgram build_program(const OpenClLibrary& lib, const ClContext& context, cl_device_id device,
                        const std::string& what, std::string_view text, const std::string& options);

}  // namespace gpucheck::opencl

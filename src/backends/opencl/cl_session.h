// A context with its in-order profiling queue, the programs and kernels built in it, and scratch
// buffers that grow on demand: the OpenCL objects a device's operations run on. The device starts
// a fresh session after an allocation failure at enqueue, as some drivers leave a context
// unusable after one.
#pragma once

#include "backends/opencl/cl_handles.h"

#include <array>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>

namespace gpucheck::opencl {

class ClSession {
 public:
  enum class Scratch { kIm2col, kPartials };

  ClSession(const OpenClLibrary& lib, cl_platform_id platform, cl_device_id device);

  const ClContext& context() const { return context_; }
  cl_command_queue queue() const { return queue_.get(); }

  // Kernel `name` of the program built from `text` (named `what` in a build error) with
  // `options`, built once per session.
  cl_kernel kernel(const std::string& what, std::string_view text, const std::string& options,
                   const char* name);

  // The scratch buffer, grown to at least `bytes` once the queue has drained.
  cl_mem scratch(Scratch which, std::size_t bytes);

 private:
  struct Grown {
    ClMem mem;
    std::size_t bytes = 0;
  };

  const OpenClLibrary& lib_;
  cl_device_id device_;
  ClContext context_;
  ClQueue queue_;
  std::map<std::string, ClProgram> programs_;  // by source and build options
  std::map<std::string, ClKernel> kernels_;    // by program key and kernel name
  std::array<Grown, 2> scratch_;               // by Scratch
};

}  // namespace gpucheck::opencl

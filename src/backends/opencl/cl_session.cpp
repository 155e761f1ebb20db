// The OpenCL objects one session of a device owns.
#include "backends/opencl/cl_session.h"

namespace gpucheck::opencl {

ClSession::ClSession(const OpenClLibrary& lib, cl_platform_id platform, cl_device_id device)
    : lib_(lib),
      device_(device),
      context_(create_context(lib, platform, device)),
      queue_(create_profiling_queue(lib, context_, device)) {}

cl_kernel ClSession::kernel(const std::string& what, std::string_view text,
                            const std::string& options, const char* name) {
  const std::string program_key = what + " " + options;
  const std::string kernel_key = program_key + " " + name;
  if (auto it = kernels_.find(kernel_key); it != kernels_.end()) return it->second.get();
  auto prog = programs_.find(program_key);
  if (prog == programs_.end())
    prog =
        programs_.emplace(program_key, build_program(lib_, context_, device_, what, text, options))
            .first;
  return kernels_.emplace(kernel_key, create_kernel(lib_, prog->second, name)).first->second.get();
}

cl_mem ClSession::scratch(Scratch which, std::size_t bytes) {
  Grown& g = scratch_.at(static_cast<std::size_t>(which));
  if (g.bytes < bytes) {
    GC_CL_CHECK(lib_.clFinish(queue()));
    g.mem.release();
    g.bytes = 0;
    g.mem = create_buffer(lib_, context_, CL_MEM_READ_WRITE, bytes);
    g.bytes = bytes;
  }
  return g.mem.get();
}

}  // namespace gpucheck::opencl

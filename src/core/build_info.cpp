// The backends compiled into this binary (GPUCHECK_HAVE_* from CMake).
#include "core/build_info.h"

namespace gpucheck {

std::vector<std::string> built_backend_names() {
  std::vector<std::string> names{"cpu"};
#if GPUCHECK_HAVE_CUDA
  names.push_back("cuda");
#endif
#if GPUCHECK_HAVE_OPENCL
  names.push_back("opencl");
#endif
#if GPUCHECK_HAVE_VULKAN
  names.push_back("vulkan");
#endif
  return names;
}

std::vector<std::pair<std::string, std::string>> not_built_backends() {
  std::vector<std::pair<std::string, std::string>> out;
#if !GPUCHECK_HAVE_CUDA
  out.emplace_back("cuda", "not built: configure with GPUCHECK_WITH_CUDA=ON and a CUDA toolkit");
#endif
#if !GPUCHECK_HAVE_OPENCL
  out.emplace_back("opencl",
                   "not built: configure with GPUCHECK_WITH_OPENCL=ON and opencl-headers");
#endif
#if !GPUCHECK_HAVE_VULKAN
  out.emplace_back("vulkan",
                   "not built: configure with GPUCHECK_WITH_VULKAN=ON and the Vulkan headers");
#endif
  out.emplace_back("metal", "not built on this platform (Metal needs macOS)");
  return out;
}

}  // namespace gpucheck

// A CUDA library a Python environment's NVIDIA wheels hold that LD_LIBRARY_PATH also names: the
// wheels' libraries find their own dependencies through RUNPATH, which LD_LIBRARY_PATH precedes,
// so libcublas.so.12 of the wheel gets the toolkit's libcublasLt, libcusparse gets an older
// libnvJitLink, and JAX (which falls back to the linker when its preload misses) runs on the CPU
// ("Unable to load cuSPARSE", jax-ml/jax #30050) or cuDNN refuses to start ("Loaded runtime
// CuDNN library: 9.10.1 but source was compiled with: 9.13.1", conda-forge/jaxlib-feedstock
// #329). torch's own direct dependencies are safe: its wheels link them by RPATH.
#pragma once

#include "doctor/system_view.h"

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

struct ShadowedLibrary {
  std::string soname;         // libnvJitLink.so.12
  std::string environment;    // the Python environment's prefix
  std::string wheel_path;     // .../site-packages/nvidia/nvjitlink/lib/libnvJitLink.so.12
  std::string wheel_version;  // 12.4.127 (its distribution's); empty when unknown
  std::string path;           // the LD_LIBRARY_PATH copy that wins
  std::string version;        // 12.1.105 (from the file's real name); empty when unknown
  bool versions_differ() const;
};

// Every soname of these libraries ("libcublas", "libcublasLt", "libnvJitLink") a framework
// environment's nvidia/*/lib holds and an LD_LIBRARY_PATH directory holds too.
std::vector<ShadowedLibrary> shadowed_wheel_libraries(const SystemView& view,
                                                      const std::vector<std::string_view>& stems);

}  // namespace gpucheck::doctor

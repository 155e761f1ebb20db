// Opening an optional CUDA library (cuBLAS, cuBLASLt, cuDNN) along the search order, and
// resolving typed entry points from it.
#pragma once

#include "backends/cuda/library_search.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::cuda {

struct LoadedLibrary {
  void* handle = nullptr;  // opened RTLD_NODELETE: stays mapped until the process ends
  std::string path;        // link-map path
  std::string real_path;
  std::string source;  // which search step found it
  std::string error;   // why nothing loaded (dlerror texts, wrong majors found)
  std::vector<FoundCopy> copies;
  bool ok() const { return handle != nullptr; }
};

// Tries the explicit path alone when given; else LD_LIBRARY_PATH's copies, then the bare soname
// (the ld.so cache and default folders), then the toolkit, conda and wheel copies.
LoadedLibrary load_library(const LibrarySpec& spec, const SearchRoots& roots);

// Opens `soname` from the folder of an already loaded library, or the copy the process already
// has (RTLD_NOLOAD), e.g. cuBLASLt beside cuBLAS.
LoadedLibrary load_beside(const LibrarySpec& spec, const LoadedLibrary& sibling);

// Looks up `symbol`; appends its name to *missing when absent.
template <typename Fn>
bool resolve_symbol(void* handle, const char* symbol, Fn* out, std::string* missing);

// {"path", "real_path", "source", "version", "other_copies": [{path, version, usable}]}.
nlohmann::json library_json(const LoadedLibrary& lib, const std::string& version);

void* dlsym_checked(void* handle, const char* symbol);

// The path the dynamic linker loaded a handle from (its link map); empty when it cannot say.
std::string link_map_path(void* handle);

template <typename Fn>
bool resolve_symbol(void* handle, const char* symbol, Fn* out, std::string* missing) {
  void* p = dlsym_checked(handle, symbol);
  if (p == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
    return false;
  }
  *out = reinterpret_cast<Fn>(p);
  return true;
}

}  // namespace gpucheck::cuda

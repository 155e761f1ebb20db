// Opening an optional CUDA library (cuBLAS, cuBLASLt, cuDNN) along the search order; the dlopen
// itself and the typed entry points are core/dynamic_library.h's.
#pragma once

#include "backends/cuda/library_search.h"
#include "core/dynamic_library.h"

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace gpucheck::cuda {

// What the search opened, with every copy it found on the way.
struct LoadedLibrary : OpenedLibrary {
  std::vector<FoundCopy> copies;
};

// Tries the explicit path alone when given; else LD_LIBRARY_PATH's copies, then the bare soname
// (the ld.so cache and default folders), then the toolkit, conda and wheel copies.
LoadedLibrary load_library(const LibrarySpec& spec, const SearchRoots& roots);

// Opens `soname` from the folder of an already loaded library, or the copy the process already
// has (RTLD_NOLOAD), e.g. cuBLASLt beside cuBLAS.
LoadedLibrary load_beside(const LibrarySpec& spec, const LoadedLibrary& sibling);

// {"path", "real_path", "source", "version", "other_copies": [{path, version, usable}]}.
nlohmann::json library_json(const LoadedLibrary& lib, const std::string& version);

}  // namespace gpucheck::cuda

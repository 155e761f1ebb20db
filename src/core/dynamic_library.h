// Opening an optional shared library at run time (dlopen) with every failure's text kept for the
// report, and resolving typed entry points from it. Shared by the CUDA libraries and the CPU's
// BLAS, so that no optional library is needed at load time.
#pragma once

#include <string>
#include <vector>

namespace gpucheck {

struct OpenedLibrary {
  void* handle = nullptr;  // opened RTLD_NODELETE: stays mapped until the process ends
  std::string path;        // link-map path
  std::string real_path;
  std::string source;  // which search step found it
  std::string error;   // why nothing loaded (dlerror texts, wrong versions found)
  bool ok() const { return handle != nullptr; }
};

// dlopen(what, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE | extra_flags). On success fills lib's
// handle, paths and source; on failure appends the sanitised dlerror() text to *errors (if given).
bool open_library(const std::string& what, const std::string& source, OpenedLibrary* lib,
                  std::vector<std::string>* errors, int extra_flags = 0);

// The path the dynamic linker loaded a handle from (its link map); empty when it cannot say.
std::string link_map_path(void* handle);

// That path with its symlinks resolved; the path itself when it cannot be resolved, empty for
// an empty path. Not sanitised: the caller sanitises what it reports.
std::string resolved_path(const std::string& path);

// "a; b; c".
std::string join_errors(const std::vector<std::string>& errors);

void* dlsym_checked(void* handle, const char* symbol);

// Looks up `symbol`; appends its name to *missing when absent.
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

// The same without recording a miss: for optional entry points.
template <typename Fn>
bool resolve_optional(void* handle, const char* symbol, Fn* out) {
  void* p = dlsym_checked(handle, symbol);
  if (p != nullptr) *out = reinterpret_cast<Fn>(p);
  return p != nullptr;
}

}  // namespace gpucheck

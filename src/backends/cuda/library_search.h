// Where cuBLAS, cuDNN and NVML are looked for, in the order the CUDA backend issue sets:
// explicit path, LD_LIBRARY_PATH, the ld.so cache, /usr/local/cuda*, $CONDA_PREFIX/lib, the
// NVIDIA Python wheels in site-packages. Pure file-system work: nothing here is dlopen'ed.
#pragma once

#include "core/environment.h"

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::cuda {

struct LibrarySpec {
  std::string name;                     // "cublas"
  std::string stem;                     // "libcublas.so": copies are stem + ".N[.M...]"
  int major = 0;                        // the soname major this build uses (13 for cuBLAS)
  std::vector<std::string> wheel_dirs;  // relative to site-packages: "nvidia/cublas/lib"
  std::string override_env;             // "GPUCHECK_CUBLAS_LIB": an explicit path
  std::string soname() const { return stem + "." + std::to_string(major); }
};

LibrarySpec cublas_spec();
LibrarySpec cublaslt_spec();
LibrarySpec cudnn_spec();

// Where to look; from the environment, or made up by tests.
struct SearchRoots {
  std::optional<std::string> explicit_path;
  std::vector<std::string> ld_library_path;
  std::string ld_cache_file = "/etc/ld.so.cache";
  std::string usr_local = "/usr/local";  // holds cuda, cuda-13.0, ...
  std::string conda_prefix;
  std::vector<std::string> site_packages;
};

SearchRoots search_roots(const LibrarySpec& spec, const EnvMap& env);

// One file found: "source" says which step found it (explicit, LD_LIBRARY_PATH, ld.so cache,
// toolkit, conda, wheel).
struct FoundCopy {
  std::string path;
  std::string real_path;
  std::string source;
  std::optional<int> major;  // from the file name: libcublas.so.13.0.2.14 → 13
  std::string file_version;  // from the resolved file name: "13.0.2.14"; empty if none
  bool usable = false;       // major matches this build's
};

// Every copy, in search order, each real file once (the first path that reaches it).
std::vector<FoundCopy> find_copies(const LibrarySpec& spec, const SearchRoots& roots);

// Paths of the ld.so cache file's entries whose file name starts with `stem`.
std::vector<std::string> ld_cache_entries(const std::string& cache_file, const std::string& stem);

// "13.0.2.14" from ".../libcublas.so.13.0.2.14" given the stem; empty when no version suffix.
std::string version_suffix(const std::string& path, const std::string& stem);

// cudnn_version.h files found (include dirs beside the library roots) and their versions.
struct HeaderVersion {
  std::string path;
  std::string version;  // "9.14.0"
};
std::vector<HeaderVersion> find_cudnn_headers(const SearchRoots& roots);
std::optional<std::string> parse_cudnn_version_header(const std::string& text);
// cublas_api.h files found in the same folders, and their CUBLAS_VER_* versions.
std::vector<HeaderVersion> find_cublas_headers(const SearchRoots& roots);
std::optional<std::string> parse_cublas_version_header(const std::string& text);

}  // namespace gpucheck::cuda

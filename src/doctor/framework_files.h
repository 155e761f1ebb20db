// The files the framework checks read instead of importing the frameworks: the GPU architecture
// list a torch build carries (a string in its shared library, read with a bounded scan),
// TensorFlow's generated build_info.py, JAX's version.py, dist-info Requires-Dist lines, Keras's
// keras.json and Theano's flags. Pure parsers, plus the one bounded binary read.
#pragma once

#include "doctor/system_view.h"

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::doctor {

// ---- versions ----

// Compares dotted release numbers ("2.16.1" < "2.17.0", "0.4.35" == "0.4.35"); a local label
// ("+cu121") and pre-release tails after the numbers are ignored. -1, 0 or 1.
int compare_versions(const std::string& a, const std::string& b);
// The release part of a version: "2.3.0" of "2.3.0+cu121".
std::string release_of(const std::string& version);

// ---- Requires-Dist ----

struct Requirement {
  std::string name;                                        // normalised
  std::vector<std::pair<std::string, std::string>> specs;  // {">=", "9.1"}, {"==", "9.1.0.70"}
  std::string extra;                                       // the marker's extra == "...", or ""
  std::string text;                                        // the line as written, markers cut
};
// One Requires-Dist value: `nvidia-cudnn-cu12==9.1.0.70; platform_system == "Linux"`;
// nullopt when it names no package.
std::optional<Requirement> parse_requirement(const std::string& line);
// Whether a version meets every specifier (==, !=, >=, <=, >, <, ~=; "==9.*" prefix matches).
bool satisfies(const std::string& version, const Requirement& r);

// ---- torch's architecture list ----

// The entries of an arch list "sm_50 sm_60 sm_90 compute_90" (TORCH_CUDA_ARCH_LIST as the
// build stringised it); empty when the text is no such list.
std::vector<std::string> parse_arch_list(const std::string& text);

// Finds the arch list string in a shared library without loading it: the ELF's .rodata
// section when the file is ELF (where the compiler puts string literals), else the first
// max_bytes. nullopt when absent or unreadable.
std::optional<std::string> scan_arch_list(const SystemView& view, const std::string& path,
                                          std::size_t max_bytes = 256u << 20);
// The same over an in-memory buffer: the longest run of two or more "sm_NN"/"compute_NN"
// entries separated by single spaces and bounded by NULs.
std::optional<std::string> find_arch_list(std::string_view bytes);

// ---- TensorFlow ----

struct TfBuildInfo {
  bool is_cuda_build = false;
  bool is_rocm_build = false;
  std::string cuda_version;                    // "12.3" ("64_112" on Windows builds)
  std::string cudnn_version;                   // "8", "9"
  std::vector<std::string> cuda_capabilities;  // "sm_60", "compute_90"
};
// tensorflow/python/platform/build_info.py: `build_info = collections.OrderedDict([('key',
// value), ...])` as gen_build_info.py writes it, or the older dict literal.
std::optional<TfBuildInfo> parse_tf_build_info(const std::string& text);

// ---- JAX ----

struct JaxVersionPy {
  std::optional<std::string> version;         // _release_version, else __version__/_version
  std::optional<std::string> minimum_jaxlib;  // _minimum_jaxlib_version
};
JaxVersionPy parse_jax_version_py(const std::string& text);

// ---- Keras, Theano ----

// keras.json's "backend"; nullopt when absent or the file is not a JSON object.
std::optional<std::string> parse_keras_backend(const std::string& json_text);

// THEANO_FLAGS ("device=cuda0,floatX=float32,gpuarray__preallocate=0.8") and .theanorc
// ([global] device = cuda, [gpuarray] preallocate = 0.8, [lib] cnmem = 0.8) as one map keyed
// like the flags: "device", "floatx", "gpuarray.preallocate", "lib.cnmem" (lower-cased, "__"
// read as "."). Flags override the file.
std::map<std::string, std::string> parse_theano_flags(const std::string& flags);
std::map<std::string, std::string> parse_theanorc(const std::string& ini);

}  // namespace gpucheck::doctor

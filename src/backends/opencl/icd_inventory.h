// What the OpenCL loader will find on this system, from files and the environment alone: other
// copies of the loader, the .icd files it reads, vendor libraries, and what each variable does.
// Everything takes a SystemFacts, so tests point it at fabricated trees.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::opencl {

// The facts the inventory reads: a root prefix for every file path and an environment.
struct SystemFacts {
  std::string root;  // "" for this machine; a fabricated tree in tests
  EnvMap env;

  static SystemFacts of_this_process();
  // The path to open for a path of the described system ("/etc/x" -> root + "/etc/x").
  std::string host_path(std::string_view path) const;
  // A host path back in the described system's terms (root stripped).
  std::string system_path(std::string_view host) const;
  // The path with symlinks resolved, in the described system's terms; nullopt if it is missing.
  std::optional<std::string> real_path(std::string_view path) const;
  // The variable's value when set (possibly empty).
  std::optional<std::string> env_value(std::string_view name) const;
};

enum class LoaderKind { kNone, kOclIcd, kKhronos, kKhronosOld, kOther };

// "ocl-icd", "khronos", "khronos (old: no clGetICDLoaderInfoOCLICD)", "other", "none".
std::string_view loader_kind_name(LoaderKind kind);

// From clGetICDLoaderInfoOCLICD's CL_ICDL_VENDOR; has_loader_info false when it is missing.
LoaderKind loader_kind_from_vendor(std::string_view vendor, bool has_loader_info);

// The kind of the libOpenCL.so.1 the dynamic linker would most likely load (the first one in
// library_search_dirs), judged from its file contents; kNone when there is none. For a parent
// process that must not load the loader itself (an ICD may crash it).
LoaderKind loader_kind_from_files(const SystemFacts& facts);

// Directories ld.so.conf names, following its include lines.
std::vector<std::string> ld_so_conf_dirs(const SystemFacts& facts);

// Where libraries are looked for, in order: LD_LIBRARY_PATH, ld.so.conf, the default
// directories, then /usr/local/cuda*/targets/*/lib (CUDA toolkits ship a libOpenCL.so.1 there).
std::vector<std::string> library_search_dirs(const SystemFacts& facts);

// Whether one library loads, and what it is.
struct LibraryCheck {
  bool loads = false;
  std::string error;              // dlerror() text when it does not load
  std::string resolved_path;      // the file the dynamic linker opened
  bool icd_entry_points = false;  // exports clIcdGetPlatformIDsKHR or clGetExtensionFunctionAddress

  nlohmann::json to_json() const;
  static LibraryCheck from_json(const nlohmann::json& j);
};
using LibraryChecker = std::function<LibraryCheck(const std::string& name)>;

// dlopen(RTLD_LAZY | RTLD_LOCAL), look, dlclose. It runs the library's constructors, so it may
// crash: it needs nothing from its caller and can run in a child (pass the result as JSON).
LibraryCheck check_library_here(const std::string& name);

// libOpenCL.so* files in the search directories other than the one loaded (compared after
// resolving symlinks), each with the loader kind its file contents name.
nlohmann::json loader_copies(const SystemFacts& facts, const std::string& loaded_real_path);

// The loader variables that are set, with their value and what this kind of loader does with it.
nlohmann::json describe_environment(const SystemFacts& facts, LoaderKind kind,
                                    std::string_view loader_version);

struct IcdInventory {
  nlohmann::json source;  // {"path", "type": directory|icd_file|library, "source", "exists"}
  nlohmann::json files;   // every .icd (or library named by a variable) the loader reads
};

// The ICDs this kind of loader reads, in its rules, each checked with `check`.
IcdInventory icd_inventory(const SystemFacts& facts, LoaderKind kind, const LibraryChecker& check);

// An .icd entry of the loader's vendors directory (or the .icd OCL_ICD_VENDORS names) that is
// no regular file, links followed: a FIFO, a device, a socket, a directory. ocl-icd opens each
// .icd with a plain fopen, which waits on a FIFO until a writer comes: every OpenCL program of
// the machine would hang at its first call.
struct IrregularIcd {
  std::string path;    // the entry, in the described system's terms
  std::string what;    // "a FIFO", "a directory", ...
  std::string source;  // the vendors directory (or .icd) the loader reads
};

// The irregular entries among what this kind of loader reads, in its rules (nothing is opened).
std::vector<IrregularIcd> irregular_icds(const SystemFacts& facts, LoaderKind kind);

// Known vendor OpenCL libraries present in the search directories and vendor install
// directories, each with how it is registered: "icd" (an .icd in /etc/OpenCL/vendors names it),
// "environment" (only a variable names it) or "none".
nlohmann::json vendor_libraries(const SystemFacts& facts);

}  // namespace gpucheck::opencl

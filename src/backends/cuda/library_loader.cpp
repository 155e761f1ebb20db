// dlopen of a CUDA library along the search order, with every failure's text kept for the report.
#include "backends/cuda/library_loader.h"

#include "core/json_keys.h"

#include <dlfcn.h>  // RTLD_NOLOAD
#include <fmt/format.h>

#include <filesystem>

namespace gpucheck::cuda {

namespace fs = std::filesystem;
namespace k = keys;

LoadedLibrary load_library(const LibrarySpec& spec, const SearchRoots& roots) {
  LoadedLibrary lib;
  lib.copies = find_copies(spec, roots);
  std::vector<std::string> errors;
  if (roots.explicit_path) {
    if (!open_library(*roots.explicit_path, "explicit", &lib, &errors))
      lib.error =
          fmt::format("{} (from {}): {}", spec.name, spec.override_env, join_errors(errors));
    return lib;
  }
  auto from = [&](const std::string& source) {
    for (const auto& c : lib.copies)
      if (c.source == source && c.usable && open_library(c.path, source, &lib, &errors))
        return true;
    return false;
  };
  if (from("LD_LIBRARY_PATH")) return lib;
  if (open_library(spec.soname(), "ld.so", &lib, &errors)) return lib;
  for (const char* source : {"toolkit", "conda", "wheel"})
    if (from(source)) return lib;
  for (const auto& c : lib.copies)
    if (!c.usable)
      errors.push_back(fmt::format("found {} ({}), not usable by this build (it needs {})", c.path,
                                   c.file_version.empty() ? "unknown version" : c.file_version,
                                   spec.soname()));
  lib.error = join_errors(errors);
  return lib;
}

LoadedLibrary load_beside(const LibrarySpec& spec, const LoadedLibrary& sibling) {
  LoadedLibrary lib;
  std::vector<std::string> errors;
  if (open_library(spec.soname(), "already loaded", &lib, nullptr, RTLD_NOLOAD)) return lib;
  fs::path dir = fs::path(sibling.real_path).parent_path();
  if (open_library((dir / spec.soname()).string(), "beside " + sibling.real_path, &lib, &errors))
    return lib;
  if (open_library(spec.soname(), "ld.so", &lib, &errors)) return lib;
  lib.error = join_errors(errors);
  return lib;
}

nlohmann::json library_json(const LoadedLibrary& lib, const std::string& version) {
  nlohmann::json j = nlohmann::json::object();
  if (lib.ok()) {
    j[k::kPath] = lib.path;
    j[k::kRealPath] = lib.real_path;
    j[k::kSource] = lib.source;
    if (!version.empty()) j[k::kVersion] = version;
  } else {
    j[k::kError] = lib.error;
  }
  nlohmann::json others = nlohmann::json::array();
  for (const auto& c : lib.copies) {
    if (lib.ok() && c.real_path == lib.real_path) continue;
    nlohmann::json o = {{k::kPath, c.path}, {k::kSource, c.source}, {"usable", c.usable}};
    if (!c.file_version.empty()) o[k::kVersion] = c.file_version;
    others.push_back(o);
  }
  j[k::kOtherCopies] = others;
  return j;
}

}  // namespace gpucheck::cuda

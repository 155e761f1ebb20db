// dlopen along the search order, with every failure's text kept for the report.
#include "backends/cuda/dynamic_library.h"

#include "core/json_keys.h"
#include "core/sanitize.h"

#include <dlfcn.h>
#include <fmt/format.h>
#include <link.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

namespace gpucheck::cuda {

namespace fs = std::filesystem;
namespace k = keys;

std::string link_map_path(void* handle) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return {};
  return map->l_name;
}

namespace {

bool try_open(const std::string& what, const std::string& source, LoadedLibrary* lib,
              std::vector<std::string>* errors, int extra_flags = 0) {
  ::dlerror();
  void* h = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE | extra_flags);
  if (h == nullptr) {
    const char* e = ::dlerror();
    if (errors) errors->push_back(sanitize(e != nullptr ? e : what + ": dlopen failed"));
    return false;
  }
  lib->handle = h;
  lib->path = sanitize(link_map_path(h));
  std::error_code ec;
  auto real = fs::canonical(link_map_path(h), ec);
  lib->real_path = ec ? lib->path : sanitize(real.string());
  lib->source = source;
  return true;
}

std::string joined(const std::vector<std::string>& v) {
  std::string out;
  for (const auto& s : v) out += (out.empty() ? "" : "; ") + s;
  return out;
}

}  // namespace

void* dlsym_checked(void* handle, const char* symbol) {
  return ::dlsym(handle, symbol);
}

LoadedLibrary load_library(const LibrarySpec& spec, const SearchRoots& roots) {
  LoadedLibrary lib;
  lib.copies = find_copies(spec, roots);
  std::vector<std::string> errors;
  if (roots.explicit_path) {
    if (!try_open(*roots.explicit_path, "explicit", &lib, &errors))
      lib.error = fmt::format("{} (from {}): {}", spec.name, spec.override_env, joined(errors));
    return lib;
  }
  auto from = [&](const std::string& source) {
    for (const auto& c : lib.copies)
      if (c.source == source && c.usable && try_open(c.path, source, &lib, &errors)) return true;
    return false;
  };
  if (from("LD_LIBRARY_PATH")) return lib;
  if (try_open(spec.soname(), "ld.so", &lib, &errors)) return lib;
  for (const char* source : {"toolkit", "conda", "wheel"})
    if (from(source)) return lib;
  for (const auto& c : lib.copies)
    if (!c.usable)
      errors.push_back(fmt::format("found {} ({}), not usable by this build (it needs {})", c.path,
                                   c.file_version.empty() ? "unknown version" : c.file_version,
                                   spec.soname()));
  lib.error = joined(errors);
  return lib;
}

LoadedLibrary load_beside(const LibrarySpec& spec, const LoadedLibrary& sibling) {
  LoadedLibrary lib;
  std::vector<std::string> errors;
  if (try_open(spec.soname(), "already loaded", &lib, nullptr, RTLD_NOLOAD)) return lib;
  fs::path dir = fs::path(sibling.real_path).parent_path();
  if (try_open((dir / spec.soname()).string(), "beside " + sibling.real_path, &lib, &errors))
    return lib;
  if (try_open(spec.soname(), "ld.so", &lib, &errors)) return lib;
  lib.error = joined(errors);
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

// dlopen with the link-map and canonical paths of what was really opened.
#include "core/dynamic_library.h"

#include "core/sanitize.h"

#include <dlfcn.h>
#include <link.h>

#include <filesystem>

namespace gpucheck {

namespace fs = std::filesystem;

std::string link_map_path(void* handle) {
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || map == nullptr || map->l_name == nullptr)
    return {};
  return map->l_name;
}

std::string resolved_path(const std::string& path) {
  if (path.empty()) return {};
  std::error_code ec;
  auto real = fs::canonical(path, ec);
  return ec ? path : real.string();
}

bool open_library(const std::string& what, const std::string& source, OpenedLibrary* lib,
                  std::vector<std::string>* errors, int extra_flags) {
  ::dlerror();
  void* h = ::dlopen(what.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE | extra_flags);
  if (h == nullptr) {
    const char* e = ::dlerror();
    if (errors) errors->push_back(sanitize(e != nullptr ? e : what + ": dlopen failed"));
    return false;
  }
  lib->handle = h;
  lib->path = sanitize(link_map_path(h));
  lib->real_path = sanitize(resolved_path(link_map_path(h)));
  lib->source = source;
  return true;
}

std::string join_errors(const std::vector<std::string>& errors) {
  std::string out;
  for (const auto& s : errors) out += (out.empty() ? "" : "; ") + s;
  return out;
}

void* dlsym_checked(void* handle, const char* symbol) {
  return ::dlsym(handle, symbol);
}

}  // namespace gpucheck

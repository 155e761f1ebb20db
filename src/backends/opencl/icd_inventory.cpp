// Reading the loader's view of the system: ld.so.conf, library directories, .icd files, and the
// rules of ocl-icd 2.3 and the Khronos loader for their environment variables.
#include "backends/opencl/icd_inventory.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>

#include <fmt/format.h>

#include "core/files.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

namespace gpucheck::opencl {

namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

constexpr std::string_view kDefaultVendorsDir = "/etc/OpenCL/vendors";
constexpr std::size_t kMaxFileBytes = 64u << 20;  // loader and .icd files are far smaller

#if defined(__x86_64__)
constexpr std::string_view kMultiarch = "x86_64-linux-gnu";
#elif defined(__aarch64__)
constexpr std::string_view kMultiarch = "aarch64-linux-gnu";
#else
constexpr std::string_view kMultiarch = "";
#endif

std::string trim(std::string_view s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string_view::npos) return {};
  const auto e = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(b, e - b + 1));
}

std::string basename_of(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string dirname_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? "/" : std::string(path.substr(0, slash));
}

std::vector<std::string> split(std::string_view s, std::string_view separators) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = s.find_first_of(separators, start);
    const auto piece = s.substr(start, end == std::string_view::npos ? end : end - start);
    if (!piece.empty()) out.emplace_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

void add_unique(std::vector<std::string>* list, std::string item) {
  if (std::find(list->begin(), list->end(), item) == list->end()) list->push_back(std::move(item));
}

// Reads a whole regular file (up to kMaxFileBytes, without blocking on a FIFO); nullopt and
// *error set when it cannot be read.
std::optional<std::string> read_file(const std::string& host_path, std::string* error) {
  return read_text_file(host_path, kMaxFileBytes, error);
}

// Paths of the described system matching a glob pattern, sorted.
std::vector<std::string> glob_paths(const SystemFacts& facts, const std::string& pattern) {
  std::vector<std::string> out;
  glob_t g{};
  if (::glob(facts.host_path(pattern).c_str(), 0, nullptr, &g) == 0) {
    for (std::size_t i = 0; i < g.gl_pathc; ++i) out.push_back(facts.system_path(g.gl_pathv[i]));
  }
  ::globfree(&g);
  return out;
}

// Sorted names of the entries of a directory of the described system.
std::vector<std::string> list_dir(const SystemFacts& facts, const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(facts.host_path(dir), ec), end; !ec && it != end;
       it.increment(ec)) {
    names.push_back(it->path().filename().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

bool is_dir(const SystemFacts& facts, const std::string& path) {
  std::error_code ec;
  return fs::is_directory(facts.host_path(path), ec);
}

bool exists(const SystemFacts& facts, const std::string& path) {
  std::error_code ec;
  return fs::exists(facts.host_path(path), ec);
}

std::string join(const std::string& dir, const std::string& name) {
  return dir.ends_with('/') ? dir + name : dir + "/" + name;
}

void parse_ld_so_conf(const SystemFacts& facts, const std::string& path, int depth,
                      std::vector<std::string>* dirs) {
  if (depth > 8) return;  // an include cycle
  std::string error;
  auto text = read_file(facts.host_path(path), &error);
  if (!text) return;
  std::istringstream lines(*text);
  for (std::string line; std::getline(lines, line);) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty() || line.starts_with("hwcap ")) continue;
    if (line.starts_with("include") && line.size() > 7 && (line[7] == ' ' || line[7] == '\t')) {
      for (const auto& pattern : split(line.substr(8), " \t")) {
        const std::string abs =
            pattern.starts_with('/') ? pattern : join(dirname_of(path), pattern);
        for (const auto& inc : glob_paths(facts, abs))
          parse_ld_so_conf(facts, inc, depth + 1, dirs);
      }
      continue;
    }
    // "dir", "dir=TYPE" (libc5 era), several per line separated by spaces, commas or colons.
    for (auto dir : split(line, " \t,:")) {
      if (auto eq = dir.find('='); eq != std::string::npos) dir.resize(eq);
      if (dir.starts_with('/')) add_unique(dirs, dir);
    }
  }
}

// Which loader a libOpenCL file is, from the vendor string clGetICDLoaderInfoOCLICD returns.
std::string loader_kind_of_file(const SystemFacts& facts, const std::string& path,
                                std::string* error) {
  auto data = read_file(facts.host_path(path), error);
  if (!data) return {};
  if (!data->starts_with("\x7f"
                         "ELF")) {
    *error = "not an ELF file";
    return {};
  }
  if (data->find("OCL Icd free software") != std::string::npos) return "ocl-icd";
  if (data->find("Khronos Group") != std::string::npos) return "khronos";
  return "unknown";
}

// What an .icd entry is when it is no regular file (links followed, nothing opened): "a FIFO",
// "a directory", ...; nullopt for a regular file or one that is not there.
std::optional<std::string> irregular_kind(const SystemFacts& facts, const std::string& path) {
  std::error_code ec;
  const auto st = fs::status(facts.host_path(path), ec);
  if (ec || !fs::exists(st) || fs::is_regular_file(st)) return std::nullopt;
  if (fs::is_fifo(st)) return "a FIFO";
  if (fs::is_directory(st)) return "a directory";
  if (fs::is_character_file(st)) return "a character device";
  if (fs::is_block_file(st)) return "a block device";
  if (fs::is_socket(st)) return "a socket";
  return "not a regular file";
}

// An .icd file's library: its first line without the newline, as ocl-icd reads it (the
// Khronos loader strips one trailing newline from the whole file: the same for a one-line file).
struct IcdFile {
  std::string library;
  std::string error;
};

std::string irregular_icd_error(const std::string& kind) {
  return fmt::format("it is {}, not a regular file: skipped ({})", kind,
                     kind == "a FIFO"
                         ? "ocl-icd opens every .icd without a timeout and would wait on it for "
                           "ever, hanging every OpenCL program; gpucheck's loader does not read it"
                         : "no loader can read an ICD library's name from it");
}

IcdFile read_icd(const SystemFacts& facts, const std::string& path) {
  IcdFile icd;
  if (auto kind = irregular_kind(facts, path)) {
    icd.error = irregular_icd_error(*kind);
    return icd;
  }
  auto text = read_file(facts.host_path(path), &icd.error);
  if (!text) return icd;
  if (text->empty()) {
    icd.error = "empty .icd file";
    return icd;
  }
  icd.library = text->substr(0, text->find('\n'));
  if (icd.library.empty()) icd.error = "the .icd file's first line is empty";
  return icd;
}

bool ends_with_icd(std::string_view name) {
  return name.size() >= 5 && name.ends_with(".icd");
}

// The .icd entries of a directory: regular files; links that lead nowhere (dangling, or a loop)
// and entries that are no regular file (a FIFO, a device, a directory), so that they are
// reported as broken ICDs instead of silently dropped.
std::vector<std::string> icd_files_in(const SystemFacts& facts, const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& name : list_dir(facts, dir)) {
    if (!ends_with_icd(name)) continue;
    std::error_code ec;
    const auto st = fs::status(facts.host_path(join(dir, name)), ec);
    if (fs::exists(st) ||
        (ec && fs::is_symlink(fs::symlink_status(facts.host_path(join(dir, name)), ec))))
      out.push_back(join(dir, name));
  }
  return out;
}

// ocl-icd 2.3's reading of OCL_ICD_VENDORS and OPENCL_VENDOR_PATH (ocl_icd_loader.c).
struct Source {
  std::string path;
  std::string type;    // directory | icd_file | library
  std::string origin;  // default | OCL_ICD_VENDORS | OPENCL_VENDOR_PATH
};

std::string ocl_icd_vendor_path(const SystemFacts& facts) {
  auto v = facts.env_value("OPENCL_VENDOR_PATH");
  return v && !v->empty() ? *v : std::string(kDefaultVendorsDir);
}

Source ocl_icd_source(const SystemFacts& facts) {
  const std::string vendor_path = ocl_icd_vendor_path(facts);
  const std::string vendor_origin =
      vendor_path == kDefaultVendorsDir ? "default" : "OPENCL_VENDOR_PATH";
  auto v = facts.env_value("OCL_ICD_VENDORS");
  if (!v || v->empty()) return {vendor_path, "directory", vendor_origin};
  if (is_dir(facts, *v)) return {*v, "directory", "OCL_ICD_VENDORS"};
  if (ends_with_icd(*v)) {
    // A bare name is looked up in the vendors directory first.
    if (v->find('/') == std::string::npos && exists(facts, join(vendor_path, *v)))
      return {join(vendor_path, *v), "icd_file", "OCL_ICD_VENDORS"};
    return {*v, "icd_file", "OCL_ICD_VENDORS"};
  }
  return {*v, "library", "OCL_ICD_VENDORS"};
}

// The Khronos loader: OCL_ICD_VENDORS replaces the directory (a directory only).
Source khronos_source(const SystemFacts& facts) {
  auto v = facts.env_value("OCL_ICD_VENDORS");
  if (v) return {*v, "directory", "OCL_ICD_VENDORS"};
  return {std::string(kDefaultVendorsDir), "directory", "default"};
}

Json check_json(const SystemFacts& facts, const LibraryChecker& check, const std::string& library) {
  // Absolute names are files of the described system; bare names go to the dynamic linker.
  const std::string name = library.starts_with('/') ? facts.host_path(library) : library;
  LibraryCheck result = check(name);
  if (!result.resolved_path.empty()) result.resolved_path = facts.system_path(result.resolved_path);
  return result.to_json();
}

// ---- vendor libraries ----

struct VendorLibrary {
  std::string_view vendor;    // the platform family it provides
  std::string_view prefix;    // file names "prefix" or "prefix.*"
  std::string_view soname;    // the name an .icd usually gives
  std::string_view dir_only;  // search only directories ending in this, if set
};

constexpr std::array kVendorLibraries = {
    VendorLibrary{"nvidia", "libnvidia-opencl.so", "libnvidia-opencl.so.1", ""},
    VendorLibrary{"amd", "libamdocl64.so", "libamdocl64.so", ""},
    VendorLibrary{"intel", "libigdrcl.so", "libigdrcl.so", ""},
    VendorLibrary{"intel", "libcl.so", "libcl.so", "/beignet"},
    VendorLibrary{"mesa_clover", "libMesaOpenCL.so", "libMesaOpenCL.so.1", ""},
    VendorLibrary{"mesa_rusticl", "libRusticlOpenCL.so", "libRusticlOpenCL.so.1", ""},
    VendorLibrary{"pocl", "libpocl.so", "libpocl.so.2", ""},
};

bool has_prefix_name(std::string_view name, std::string_view prefix) {
  return name == prefix ||
         (name.starts_with(prefix) && name.size() > prefix.size() && name[prefix.size()] == '.');
}

std::vector<std::string> vendor_dirs(const SystemFacts& facts) {
  auto dirs = library_search_dirs(facts);
  add_unique(&dirs, "/usr/local/nvidia/lib64");
  add_unique(&dirs, "/usr/local/nvidia/lib");
  if (!kMultiarch.empty()) {
    add_unique(&dirs, fmt::format("/usr/lib/{}/beignet", kMultiarch));
    add_unique(&dirs, fmt::format("/usr/lib/{}/intel-opencl", kMultiarch));
  }
  for (const auto& d : glob_paths(facts, "/opt/rocm*/lib")) add_unique(&dirs, d);
  for (const auto& d : glob_paths(facts, "/opt/rocm*/opencl/lib")) add_unique(&dirs, d);
  if (!kMultiarch.empty()) add_unique(&dirs, fmt::format("/opt/amdgpu-pro/lib/{}", kMultiarch));
  return dirs;
}

struct Registration {
  std::string name;  // what the .icd or variable says
  std::string by;    // the .icd path or the variable
  bool environment;  // only the environment makes it count
};

std::vector<Registration> registrations(const SystemFacts& facts) {
  std::vector<Registration> out;
  auto add_dir = [&](const std::string& dir, const std::string& by_var, bool environment) {
    for (const auto& icd : icd_files_in(facts, dir)) {
      IcdFile f = read_icd(facts, icd);
      if (!f.library.empty())
        out.push_back({f.library, by_var.empty() ? icd : by_var + " (" + icd + ")", environment});
    }
  };
  add_dir(std::string(kDefaultVendorsDir), "", false);
  if (auto v = facts.env_value("OPENCL_VENDOR_PATH"); v && !v->empty() && is_dir(facts, *v))
    add_dir(*v, "OPENCL_VENDOR_PATH", true);
  if (auto v = facts.env_value("OCL_ICD_VENDORS"); v && !v->empty()) {
    if (is_dir(facts, *v)) {
      add_dir(*v, "OCL_ICD_VENDORS", true);
    } else if (ends_with_icd(*v)) {
      IcdFile f = read_icd(facts, *v);
      if (!f.library.empty()) out.push_back({f.library, "OCL_ICD_VENDORS (" + *v + ")", true});
    } else {
      out.push_back({*v, "OCL_ICD_VENDORS", true});
    }
  }
  if (auto v = facts.env_value("OCL_ICD_FILENAMES")) {
    for (const auto& name : split(*v, ":")) out.push_back({name, "OCL_ICD_FILENAMES", true});
  }
  return out;
}

bool names_library(const SystemFacts& facts, const std::string& name,
                   const std::vector<std::string>& paths, const std::string& real) {
  if (name.starts_with('/')) {
    if (std::find(paths.begin(), paths.end(), name) != paths.end()) return true;
    auto r = facts.real_path(name);
    return r && *r == real;
  }
  if (basename_of(real) == name) return true;
  return std::any_of(paths.begin(), paths.end(),
                     [&](const std::string& p) { return basename_of(p) == name; });
}

}  // namespace

// ---- SystemFacts ----

SystemFacts SystemFacts::of_this_process() {
  return SystemFacts{"", current_environment()};
}

std::string SystemFacts::host_path(std::string_view path) const {
  if (root.empty()) return std::string(path);
  if (path.starts_with('/')) return root + std::string(path);
  return join(root, std::string(path));
}

std::string SystemFacts::system_path(std::string_view host) const {
  if (root.empty()) return std::string(host);
  std::error_code ec;
  const std::string canon = fs::weakly_canonical(root, ec).string();
  for (const std::string& prefix : {root, canon}) {
    if (!prefix.empty() && host.starts_with(prefix) &&
        (host.size() == prefix.size() || host[prefix.size()] == '/')) {
      std::string rest(host.substr(prefix.size()));
      return rest.empty() ? "/" : rest;
    }
  }
  return std::string(host);
}

std::optional<std::string> SystemFacts::real_path(std::string_view path) const {
  char buf[PATH_MAX];
  if (::realpath(host_path(path).c_str(), buf) == nullptr) return std::nullopt;
  return system_path(buf);
}

std::optional<std::string> SystemFacts::env_value(std::string_view name) const {
  auto it = env.find(std::string(name));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

// ---- loader kind ----

std::string_view loader_kind_name(LoaderKind kind) {
  switch (kind) {
    case LoaderKind::kNone:
      return "none";
    case LoaderKind::kOclIcd:
      return "ocl-icd";
    case LoaderKind::kKhronos:
      return "khronos";
    case LoaderKind::kKhronosOld:
      return "khronos (old: no clGetICDLoaderInfoOCLICD)";
    case LoaderKind::kOther:
      return "other";
  }
  return "none";
}

LoaderKind loader_kind_from_vendor(std::string_view vendor, bool has_loader_info) {
  if (!has_loader_info) return LoaderKind::kKhronosOld;
  if (vendor == "OCL Icd free software") return LoaderKind::kOclIcd;
  if (vendor == "Khronos Group") return LoaderKind::kKhronos;
  return LoaderKind::kOther;
}

LoaderKind loader_kind_from_files(const SystemFacts& facts) {
  for (const auto& dir : library_search_dirs(facts)) {
    const std::string path = join(dir, "libOpenCL.so.1");
    if (!exists(facts, path)) continue;
    std::string error;
    const std::string kind = loader_kind_of_file(facts, path, &error);
    if (kind == "ocl-icd") return LoaderKind::kOclIcd;
    if (kind == "khronos") return LoaderKind::kKhronos;
    return LoaderKind::kOther;
  }
  return LoaderKind::kNone;
}

// ---- search directories ----

std::vector<std::string> ld_so_conf_dirs(const SystemFacts& facts) {
  std::vector<std::string> dirs;
  parse_ld_so_conf(facts, "/etc/ld.so.conf", 0, &dirs);
  return dirs;
}

std::vector<std::string> library_search_dirs(const SystemFacts& facts) {
  std::vector<std::string> dirs;
  if (auto v = facts.env_value("LD_LIBRARY_PATH")) {
    for (const auto& d : split(*v, ":;")) add_unique(&dirs, d);
  }
  for (const auto& d : ld_so_conf_dirs(facts)) add_unique(&dirs, d);
  if (!kMultiarch.empty()) {
    add_unique(&dirs, fmt::format("/lib/{}", kMultiarch));
    add_unique(&dirs, fmt::format("/usr/lib/{}", kMultiarch));
  }
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"})
    add_unique(&dirs, d);
  for (const auto& d : glob_paths(facts, "/usr/local/cuda*/targets/*/lib")) add_unique(&dirs, d);
  return dirs;
}

// ---- library checks ----

Json LibraryCheck::to_json() const {
  Json j{{keys::kLoads, loads}};
  if (!loads) j[keys::kError] = error;
  if (!resolved_path.empty()) j[keys::kResolvedPath] = resolved_path;
  if (loads) j[keys::kIcdEntryPoints] = icd_entry_points;
  return j;
}

LibraryCheck LibraryCheck::from_json(const Json& j) {
  LibraryCheck c;
  c.loads = j.value(keys::kLoads, false);
  c.error = j.value(keys::kError, std::string());
  c.resolved_path = j.value(keys::kResolvedPath, std::string());
  c.icd_entry_points = j.value(keys::kIcdEntryPoints, false);
  return c;
}

LibraryCheck check_library_here(const std::string& name) {
  LibraryCheck c;
  ::dlerror();
  void* handle = ::dlopen(name.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    c.error = sanitize(e != nullptr ? e : "dlopen failed");
    return c;
  }
  c.loads = true;
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
    c.resolved_path = sanitize(map->l_name);
  c.icd_entry_points = ::dlsym(handle, "clIcdGetPlatformIDsKHR") != nullptr ||
                       ::dlsym(handle, "clGetExtensionFunctionAddress") != nullptr;
  ::dlclose(handle);
  return c;
}

// ---- loader copies ----

Json loader_copies(const SystemFacts& facts, const std::string& loaded_real_path) {
  Json out = Json::array();
  std::set<std::string> seen;
  if (!loaded_real_path.empty()) seen.insert(loaded_real_path);
  for (const auto& dir : library_search_dirs(facts)) {
    for (const auto& name : list_dir(facts, dir)) {
      if (!has_prefix_name(name, "libOpenCL.so")) continue;
      const std::string path = join(dir, name);
      auto real = facts.real_path(path);
      Json copy{{keys::kPath, sanitize(path)}};
      if (!real) {
        copy[keys::kError] = "dangling symbolic link";
        out.push_back(std::move(copy));
        continue;
      }
      if (!seen.insert(*real).second) continue;
      copy[keys::kRealPath] = sanitize(*real);
      std::string error;
      std::string kind = loader_kind_of_file(facts, *real, &error);
      if (kind.empty()) {
        copy[keys::kError] = sanitize(error);
      } else {
        copy[keys::kKind] = kind;
      }
      out.push_back(std::move(copy));
    }
  }
  return out;
}

// ---- environment ----

Json describe_environment(const SystemFacts& facts, LoaderKind kind,
                          std::string_view loader_version) {
  const bool ocl_icd = kind == LoaderKind::kOclIcd;
  const bool khronos = kind == LoaderKind::kKhronos || kind == LoaderKind::kKhronosOld;
  const std::string ocl_icd_name =
      loader_version.empty() ? "ocl-icd" : fmt::format("ocl-icd {}", loader_version);
  Json out = Json::object();
  auto add = [&](std::string_view var, const std::string& effect) {
    auto v = facts.env_value(var);
    if (!v) return;
    out[std::string(var)] = Json{{keys::kValue, sanitize(*v)}, {keys::kEffect, effect}};
  };
  auto value = [&](std::string_view var) { return facts.env_value(var).value_or(""); };
  const std::string none = "no effect here: no ICD loader was loaded";

  // OCL_ICD_FILENAMES
  if (ocl_icd) {
    add("OCL_ICD_FILENAMES",
        fmt::format("ignored: {} does not read it (the Khronos loader would load these libraries "
                    "before the vendors directory)",
                    ocl_icd_name));
  } else if (khronos) {
    add("OCL_ICD_FILENAMES",
        "these ':'-separated libraries are loaded as ICDs before the .icd files of the vendors "
        "directory");
  } else {
    add("OCL_ICD_FILENAMES", none);
  }

  // OCL_ICD_VENDORS
  const std::string vendors = value("OCL_ICD_VENDORS");
  if (ocl_icd) {
    const Source s = ocl_icd_source(facts);
    if (vendors.empty()) {
      add("OCL_ICD_VENDORS", "empty: ignored, .icd files are read from " + s.path);
    } else if (s.type == "directory") {
      add("OCL_ICD_VENDORS", "replaces the vendors directory: .icd files are read from " + s.path);
    } else if (s.type == "icd_file") {
      add("OCL_ICD_VENDORS", "only the ICD named in " + s.path + " is loaded");
    } else {
      add("OCL_ICD_VENDORS", "loaded directly as the only ICD library (no .icd file is read)");
    }
  } else if (khronos) {
    if (is_dir(facts, vendors)) {
      add("OCL_ICD_VENDORS", "replaces the vendors directory: .icd files are read from " + vendors);
    } else {
      add("OCL_ICD_VENDORS",
          "not a directory: the Khronos loader reads no .icd file at all (it takes only a "
          "directory here)");
    }
  } else {
    add("OCL_ICD_VENDORS", none);
  }

  // OPENCL_VENDOR_PATH
  if (ocl_icd) {
    if (value("OPENCL_VENDOR_PATH").empty()) {
      add("OPENCL_VENDOR_PATH", "empty: ignored");
    } else if (!vendors.empty()) {
      add("OPENCL_VENDOR_PATH",
          "overridden by OCL_ICD_VENDORS (used only to find a bare .icd name it gives)");
    } else {
      add("OPENCL_VENDOR_PATH", "replaces /etc/OpenCL/vendors as the vendors directory");
    }
  } else if (khronos) {
    add("OPENCL_VENDOR_PATH", "ignored: the Khronos loader does not read it");
  } else {
    add("OPENCL_VENDOR_PATH", none);
  }

  // OCL_ICD_PLATFORM_SORT and the other ocl-icd-only variables
  if (ocl_icd) {
    const std::string sort = value("OCL_ICD_PLATFORM_SORT");
    if (sort == "none") {
      add("OCL_ICD_PLATFORM_SORT", "platforms are not sorted: their order may change between runs");
    } else if (sort == "devices") {
      add("OCL_ICD_PLATFORM_SORT",
          "platforms are sorted by number of GPUs, then CPUs, then devices (the default)");
    } else {
      add("OCL_ICD_PLATFORM_SORT",
          "unknown value: the default sort (by number of GPUs, then CPUs, then devices) is used");
    }
    add("OCL_ICD_DEFAULT_PLATFORM", "the index of the platform used when a call names none");
    add("OCL_ICD_ASSUME_ICD_EXTENSION",
        "ICDs are loaded without checking that their platforms list cl_khr_icd");
    add("OPENCL_LAYERS", "these ':'-separated layers are loaded in front of every ICD");
    add("OPENCL_LAYER_PATH", "ignored: ocl-icd reads layers from OPENCL_LAYERS only");
  } else if (khronos) {
    for (const char* var :
         {"OCL_ICD_PLATFORM_SORT", "OCL_ICD_DEFAULT_PLATFORM", "OCL_ICD_ASSUME_ICD_EXTENSION"}) {
      add(var, "ignored: only ocl-icd reads it (the Khronos loader keeps load order)");
    }
    add("OPENCL_LAYERS",
        "these ':'-separated layers are loaded (when the loader was built with layer support)");
    add("OPENCL_LAYER_PATH",
        "the directory of .lay layer files (when the loader was built with layer support)");
  } else {
    for (const char* var : {"OCL_ICD_PLATFORM_SORT", "OCL_ICD_DEFAULT_PLATFORM",
                            "OCL_ICD_ASSUME_ICD_EXTENSION", "OPENCL_LAYERS", "OPENCL_LAYER_PATH"})
      add(var, none);
  }
  return out;
}

// ---- ICD files ----

IcdInventory icd_inventory(const SystemFacts& facts, LoaderKind kind, const LibraryChecker& check) {
  IcdInventory inv;
  inv.files = Json::array();
  const Source source = kind == LoaderKind::kOclIcd ? ocl_icd_source(facts) : khronos_source(facts);
  inv.source = Json{{keys::kPath, sanitize(source.path)},
                    {keys::kType, source.type},
                    {keys::kSource, source.origin},
                    {keys::kExists, exists(facts, source.path)}};

  std::map<std::string, std::string> first_by_library;  // resolved library -> who named it first
  auto add = [&](Json entry, const std::string& library, const std::string& who) {
    entry[keys::kLibrary] = sanitize(library);
    if (!library.empty()) {
      entry.update(check_json(facts, check, library));
      const std::string key = entry.value(keys::kResolvedPath, library);
      auto [it, inserted] = first_by_library.emplace(key, who);
      if (!inserted) entry[keys::kDuplicateOf] = sanitize(it->second);
    } else {
      entry[keys::kLoads] = false;
    }
    inv.files.push_back(std::move(entry));
  };
  auto add_icd = [&](const std::string& icd_path, std::string_view origin) {
    IcdFile f = read_icd(facts, icd_path);
    Json entry{{keys::kPath, sanitize(icd_path)}, {keys::kSource, origin}};
    if (!f.error.empty()) entry[keys::kError] = sanitize(f.error);
    add(std::move(entry), f.library, icd_path);
  };

  if (kind != LoaderKind::kOclIcd) {
    if (auto v = facts.env_value("OCL_ICD_FILENAMES"); v && kind != LoaderKind::kNone) {
      for (const auto& lib : split(*v, ":"))
        add(Json{{keys::kSource, "OCL_ICD_FILENAMES"}}, lib, "OCL_ICD_FILENAMES");
    }
  }
  if (source.type == "directory") {
    for (const auto& icd : icd_files_in(facts, source.path)) add_icd(icd, "vendors_directory");
  } else if (source.type == "icd_file") {
    add_icd(source.path, source.origin);
  } else {
    add(Json{{keys::kSource, source.origin}}, source.path, source.origin);
  }
  return inv;
}

std::vector<IrregularIcd> irregular_icds(const SystemFacts& facts, LoaderKind kind) {
  const Source source = kind == LoaderKind::kOclIcd ? ocl_icd_source(facts) : khronos_source(facts);
  std::vector<std::string> entries;
  if (source.type == "directory")
    entries = icd_files_in(facts, source.path);
  else if (source.type == "icd_file")
    entries.push_back(source.path);
  std::vector<IrregularIcd> out;
  for (const auto& e : entries)
    if (auto what = irregular_kind(facts, e)) out.push_back({e, *what, source.path});
  return out;
}

// ---- vendor libraries ----

Json vendor_libraries(const SystemFacts& facts) {
  struct Found {
    const VendorLibrary* kind;
    std::vector<std::string> paths;
    std::string real;
  };
  std::vector<Found> found;
  for (const auto& dir : vendor_dirs(facts)) {
    for (const auto& name : list_dir(facts, dir)) {
      for (const auto& v : kVendorLibraries) {
        if (!has_prefix_name(name, v.prefix)) continue;
        if (!v.dir_only.empty() && !dir.ends_with(v.dir_only)) continue;
        const std::string path = join(dir, name);
        auto real = facts.real_path(path);
        if (!real) continue;  // a dangling link is no library
        auto same = std::find_if(found.begin(), found.end(),
                                 [&](const Found& f) { return f.real == *real; });
        if (same == found.end()) {
          found.push_back({&v, {path}, *real});
        } else {
          add_unique(&same->paths, path);
        }
      }
    }
  }
  const auto regs = registrations(facts);
  Json out = Json::array();
  for (const auto& f : found) {
    // Report the name an .icd would use when that file is among the paths.
    std::string path = f.paths.front();
    for (const auto& p : f.paths)
      if (basename_of(p) == f.kind->soname) path = p;
    Json entry{{keys::kVendor, f.kind->vendor},
               {keys::kPath, sanitize(path)},
               {keys::kRealPath, sanitize(f.real)}};
    const Registration* by_icd = nullptr;
    const Registration* by_env = nullptr;
    for (const auto& r : regs) {
      if (!names_library(facts, r.name, f.paths, f.real)) continue;
      if (!r.environment && by_icd == nullptr) by_icd = &r;
      if (r.environment && by_env == nullptr) by_env = &r;
    }
    if (by_icd != nullptr) {
      entry[keys::kRegistered] = "icd";
      entry[keys::kRegisteredBy] = sanitize(by_icd->by);
    } else if (by_env != nullptr) {
      entry[keys::kRegistered] = "environment";
      entry[keys::kRegisteredBy] = sanitize(by_env->by);
      entry[keys::kIcdLine] = sanitize(path);
    } else {
      entry[keys::kRegistered] = "none";
      entry[keys::kIcdLine] = sanitize(path);
    }
    out.push_back(std::move(entry));
  }
  return out;
}

}  // namespace gpucheck::opencl

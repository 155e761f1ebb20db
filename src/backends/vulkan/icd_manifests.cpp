// The loader's driver search (Vulkan-Loader docs/LoaderDriverInterface.md, "Driver Discovery on
// Linux"), manifest parsing and the per-driver load and initialisation check.
#include "backends/vulkan/icd_manifests.h"

#include "backends/vulkan/vk_headers.h"
#include "backends/vulkan/vk_names.h"
#include "core/dynamic_library.h"
#include "core/files.h"
#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"
#include "core/sanitize.h"

#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

namespace gpucheck::vulkan {

namespace {

namespace fs = std::filesystem;
namespace k = keys;
using Json = nlohmann::json;

constexpr std::size_t kMaxManifestBytes = 1u << 20;  // real manifests are a few hundred bytes
constexpr int kMaxDepth = 32;
constexpr std::string_view kIcdSuffix = "/vulkan/icd.d";

std::vector<std::string> split_colon(std::string_view s) {
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= s.size()) {
    const auto end = s.find(':', start);
    const auto piece = s.substr(start, end == std::string_view::npos ? end : end - start);
    if (!piece.empty()) out.emplace_back(piece);
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return out;
}

// The deepest nesting of arrays and objects outside strings; stops counting past the limit.
int nesting_depth(std::string_view text) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    if (c == '[' || c == '{') deepest = std::max(deepest, ++depth);
    if (c == ']' || c == '}') --depth;
    if (deepest > kMaxDepth) break;
  }
  return deepest;
}

std::string dirname_of(std::string_view path) {
  const auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return ".";
  return slash == 0 ? "/" : std::string(path.substr(0, slash));
}

Json entry_json(const ManifestFacts& facts, const SearchEntry& e, bool directory) {
  std::error_code ec;
  return {{k::kPath, e.path},
          {k::kSource, e.source},
          {k::kType, directory ? "directory" : "manifest_file"},
          {k::kExists, fs::exists(facts.host_path(e.path), ec)}};
}

// A manifest file: parsed, its library tried (when it names one).
Json manifest_json(const ManifestFacts& facts, const std::string& path, const std::string& source,
                   const IcdChecker& check) {
  Json m{{k::kPath, path}, {k::kSource, source}};
  std::string why;
  auto text = read_text_file(facts.host_path(path), kMaxManifestBytes, &why);
  if (!text) {
    m[k::kError] = sanitize(why.empty() ? "cannot be read" : why);
    return m;
  }
  const Manifest parsed = parse_manifest(*text);
  if (!parsed.file_format_version.empty())
    m[k::kFileFormatVersion] = sanitize(parsed.file_format_version);
  if (!parsed.library_path.empty()) m[k::kLibraryPath] = sanitize(parsed.library_path);
  if (!parsed.api_version.empty()) m[k::kApiVersion] = sanitize(parsed.api_version);
  if (parsed.is_portability_driver) m[k::kIsPortabilityDriver] = *parsed.is_portability_driver;
  if (!parsed.library_arch.empty()) m[k::kLibraryArch] = sanitize(parsed.library_arch);
  if (!parsed.error.empty()) {
    m[k::kError] = sanitize(parsed.error);
    return m;
  }
  const std::string library = library_to_open(path, parsed.library_path);
  m[k::kLibrary] = sanitize(library);
  // A relative or absolute path is opened inside the described system's root.
  Json result = check(library.find('/') != std::string::npos ? facts.host_path(library) : library);
  for (auto& [key, value] : result.items()) m[key] = value;
  return m;
}

void add_unique(std::vector<SearchEntry>* list, SearchEntry e) {
  for (const auto& have : *list)
    if (have.path == e.path) return;
  list->push_back(std::move(e));
}

// Walks the negotiation and instance creation the loader does with one driver.
Json initialise(void* handle) {
  Json init = Json::object();
  auto negotiate = reinterpret_cast<GcVkIcdNegotiateFn>(
      dlsym_checked(handle, "vk_icdNegotiateLoaderICDInterfaceVersion"));
  auto gipa = reinterpret_cast<GcVkIcdGetInstanceProcAddrFn>(
      dlsym_checked(handle, "vk_icdGetInstanceProcAddr"));
  if (gipa == nullptr)
    gipa = reinterpret_cast<GcVkIcdGetInstanceProcAddrFn>(
        dlsym_checked(handle, "vkGetInstanceProcAddr"));
  if (negotiate != nullptr) {
    std::uint32_t version = 5;  // what Vulkan-Loader 1.3 offers on Linux
    const VkResult r = negotiate(&version);
    init[k::kStep] = "vk_icdNegotiateLoaderICDInterfaceVersion";
    init[k::kResult] = vk_result_text(r);
    if (r != VK_SUCCESS) return init;
    init[k::kInterfaceVersion] = version;
  }
  if (gipa == nullptr) {
    init[k::kStep] = "vk_icdGetInstanceProcAddr";
    init[k::kResult] =
        "the library exports neither vk_icdGetInstanceProcAddr nor "
        "vkGetInstanceProcAddr";
    return init;
  }
  auto create = reinterpret_cast<PFN_vkCreateInstance>(gipa(VK_NULL_HANDLE, "vkCreateInstance"));
  if (create == nullptr) {
    init[k::kStep] = "vk_icdGetInstanceProcAddr(vkCreateInstance)";
    init[k::kResult] = "returned no vkCreateInstance";
    return init;
  }
  VkApplicationInfo app{};
  app.sType = VK_STRUCTURE_TYPE_APPLICATION_INFO;
  app.pApplicationName = "gpucheck";
  app.apiVersion = VK_API_VERSION_1_0;  // every driver, of any interface version, accepts 1.0
  VkInstanceCreateInfo info{};
  info.sType = VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO;
  info.pApplicationInfo = &app;
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult r = create(&info, nullptr, &instance);
  init[k::kStep] = "vkCreateInstance";
  init[k::kResult] = vk_result_text(r);
  if (r != VK_SUCCESS) return init;
  auto enumerate = reinterpret_cast<PFN_vkEnumeratePhysicalDevices>(
      gipa(instance, "vkEnumeratePhysicalDevices"));
  if (enumerate != nullptr) {
    std::uint32_t count = 0;
    const VkResult e = enumerate(instance, &count, nullptr);
    init[k::kStep] = "vkEnumeratePhysicalDevices";
    init[k::kResult] = vk_result_text(e);
    if (e == VK_SUCCESS) init[k::kPhysicalDevices] = count;
  }
  if (auto destroy = reinterpret_cast<PFN_vkDestroyInstance>(gipa(instance, "vkDestroyInstance")))
    destroy(instance, nullptr);
  return init;
}

}  // namespace

ManifestFacts ManifestFacts::of_this_process() {
  ManifestFacts f;
  f.env = current_environment();
  f.elevated = ::getuid() != ::geteuid() || ::getgid() != ::getegid();
  return f;
}

std::string ManifestFacts::host_path(std::string_view path) const {
  if (root.empty() || root == "/") return std::string(path);
  std::string base = root;
  while (base.size() > 1 && base.ends_with('/')) base.pop_back();
  return path.starts_with('/') ? base + std::string(path) : base + "/" + std::string(path);
}

std::optional<std::string> ManifestFacts::env_value(std::string_view name) const {
  if (elevated) return std::nullopt;  // the loader reads them with secure_getenv
  auto it = env.find(std::string(name));
  if (it == env.end()) return std::nullopt;
  return it->second;
}

std::vector<SearchEntry> driver_search_list(const ManifestFacts& facts) {
  std::vector<SearchEntry> out;
  auto from_variable = [&](std::string_view name) {
    bool any = false;
    if (auto v = facts.env_value(name))
      for (auto& p : split_colon(*v)) {
        add_unique(&out, {p, std::string(name)});
        any = true;
      }
    return any;
  };
  from_variable("VK_ADD_DRIVER_FILES");
  if (from_variable("VK_DRIVER_FILES") || from_variable("VK_ICD_FILENAMES")) return out;
  auto nonempty = [&](std::string_view name) -> std::optional<std::string> {
    auto v = facts.env_value(name);
    if (v && !v->empty()) return v;
    return std::nullopt;
  };
  const auto home = nonempty("HOME");
  if (auto v = nonempty("XDG_CONFIG_HOME"))
    add_unique(&out, {*v + std::string(kIcdSuffix), "XDG_CONFIG_HOME"});
  else if (home)
    add_unique(&out, {*home + "/.config" + std::string(kIcdSuffix), "XDG_CONFIG_HOME"});
  for (const auto& d : split_colon(nonempty("XDG_CONFIG_DIRS").value_or("/etc/xdg")))
    add_unique(&out, {d + std::string(kIcdSuffix), "XDG_CONFIG_DIRS"});
  add_unique(&out, {"/etc" + std::string(kIcdSuffix), "SYSCONFDIR"});
  if (auto v = nonempty("XDG_DATA_HOME"))
    add_unique(&out, {*v + std::string(kIcdSuffix), "XDG_DATA_HOME"});
  else if (home)
    add_unique(&out, {*home + "/.local/share" + std::string(kIcdSuffix), "XDG_DATA_HOME"});
  for (const auto& d :
       split_colon(nonempty("XDG_DATA_DIRS").value_or("/usr/local/share:/usr/share")))
    add_unique(&out, {d + std::string(kIcdSuffix), "XDG_DATA_DIRS"});
  return out;
}

Manifest parse_manifest(std::string_view text) {
  Manifest m;
  if (nesting_depth(text) > kMaxDepth) {
    m.error = fmt::format("nested deeper than {} levels: not a driver manifest", kMaxDepth);
    return m;
  }
  const Json j = Json::parse(text, nullptr, false);
  if (j.is_discarded()) {
    m.error = "not valid JSON";
    return m;
  }
  if (!j.is_object()) {
    m.error = "not a JSON object";
    return m;
  }
  auto string_field = [&](const Json& obj, const char* name, std::string* out) {
    auto it = obj.find(name);
    if (it == obj.end()) return false;
    if (!it->is_string()) {
      if (m.error.empty()) m.error = fmt::format("\"{}\" is not a string", name);
      return false;
    }
    *out = it->get<std::string>();
    return true;
  };
  const bool has_format = string_field(j, "file_format_version", &m.file_format_version);
  auto icd = j.find("ICD");
  if (icd == j.end() || !icd->is_object()) {
    if (m.error.empty())
      m.error = icd == j.end() ? "no \"ICD\" object (a layer manifest, or not a driver's)"
                               : "\"ICD\" is not an object";
    return m;
  }
  const bool has_library = string_field(*icd, "library_path", &m.library_path);
  string_field(*icd, "api_version", &m.api_version);
  string_field(*icd, "library_arch", &m.library_arch);
  if (auto p = icd->find("is_portability_driver"); p != icd->end() && p->is_boolean())
    m.is_portability_driver = p->get<bool>();
  if (!m.error.empty()) return m;
  if (!has_format)
    m.error = "no \"file_format_version\"";
  else if (!has_library || m.library_path.empty())
    m.error = "no \"ICD\".\"library_path\"";
  return m;
}

std::string library_to_open(std::string_view manifest_path, std::string_view library_path) {
  if (library_path.find('/') == std::string_view::npos || library_path.starts_with('/'))
    return std::string(library_path);
  std::string dir = dirname_of(manifest_path);
  return dir.ends_with('/') ? dir + std::string(library_path)
                            : dir + "/" + std::string(library_path);
}

Json check_icd_here(const std::string& library) {
  Json out;
  OpenedLibrary lib;
  std::vector<std::string> errors;
  if (!open_library(library, "manifest", &lib, &errors)) {
    out[k::kLoads] = false;
    out[k::kError] = join_errors(errors);
    return out;
  }
  out[k::kLoads] = true;
  out[k::kResolvedPath] = sanitize(lib.real_path.empty() ? lib.path : lib.real_path);
  Json entry = Json::array();
  for (const char* name : {"vk_icdNegotiateLoaderICDInterfaceVersion", "vk_icdGetInstanceProcAddr",
                           "vk_icdGetPhysicalDeviceProcAddr", "vkGetInstanceProcAddr"})
    if (dlsym_checked(lib.handle, name) != nullptr) entry.push_back(name);
  out[k::kEntryPoints] = std::move(entry);
  out[k::kInit] = initialise(lib.handle);
  return out;
}

ManifestInventory manifest_inventory(const ManifestFacts& facts, const IcdChecker& check) {
  ManifestInventory inv;
  inv.source = Json::array();
  inv.files = Json::array();
  for (const auto& e : driver_search_list(facts)) {
    if ((e.source == "VK_DRIVER_FILES" || e.source == "VK_ICD_FILENAMES") &&
        inv.overridden_by.empty())
      inv.overridden_by = e.source;
    // A variable's entry is a manifest or a directory of them; a standard place is a directory.
    std::error_code ec;
    const bool from_variable = e.source.starts_with("VK_");
    const bool directory = !from_variable || fs::is_directory(facts.host_path(e.path), ec);
    inv.source.push_back(entry_json(facts, e, directory));
    if (!directory) {
      inv.files.push_back(manifest_json(facts, e.path, e.source, check));
      continue;
    }
    // readdir's order is the loader's, which is arbitrary: sorted here so runs compare.
    std::vector<std::string> names;
    for (fs::directory_iterator it(facts.host_path(e.path), ec), end; !ec && it != end;
         it.increment(ec))
      if (it->path().extension() == ".json") names.push_back(it->path().filename().string());
    std::sort(names.begin(), names.end());
    for (const auto& n : names)
      inv.files.push_back(manifest_json(facts, e.path + "/" + n, e.source, check));
  }
  return inv;
}

Json describe_environment(const ManifestFacts& facts) {
  static constexpr std::pair<std::string_view, std::string_view> kVariables[] = {
      {"VK_DRIVER_FILES", "only these manifests (files or directories) are read"},
      {"VK_ICD_FILENAMES",
       "only these manifests are read (the older name; ignored when VK_DRIVER_FILES is set)"},
      {"VK_ADD_DRIVER_FILES", "these manifests are read before the standard directories"},
      {"VK_LOADER_DRIVERS_SELECT", "only drivers whose manifest file name matches are used"},
      {"VK_LOADER_DRIVERS_DISABLE", "drivers whose manifest file name matches are not used"},
      {"VK_LOADER_DEBUG", "the loader logs to stderr (error, warn, info, debug, driver, all)"},
      {"VK_LAYER_PATH", "only these directories are searched for layer manifests"},
      {"VK_ADD_LAYER_PATH", "these directories are searched for layers first"},
      {"VK_INSTANCE_LAYERS", "these layers are enabled in every instance"},
      {"VK_LOADER_LAYERS_ENABLE", "layers whose name matches are enabled"},
      {"VK_LOADER_LAYERS_DISABLE", "layers whose name matches are disabled"},
      {"MESA_VK_DEVICE_SELECT", "Mesa's device-select layer puts this device first"},
      {"XDG_CONFIG_DIRS", "directories searched for vulkan/icd.d (default /etc/xdg)"},
      {"XDG_DATA_DIRS",
       "directories searched for vulkan/icd.d (default /usr/local/share:/usr/share)"},
  };
  Json out = Json::array();
  for (const auto& [name, effect] : kVariables) {
    auto it = facts.env.find(std::string(name));
    if (it == facts.env.end()) continue;
    out.push_back({{k::kName, name},
                   {k::kValue, sanitize(it->second)},
                   {k::kEffect, facts.elevated ? "ignored: this process runs with elevated "
                                                 "privileges"
                                               : std::string(effect)}});
  }
  return out;
}

}  // namespace gpucheck::vulkan

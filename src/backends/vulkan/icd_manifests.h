// The Vulkan driver manifests (ICD JSON files) the loader reads, in its search order and by its
// rules for VK_DRIVER_FILES, VK_ICD_FILENAMES and VK_ADD_DRIVER_FILES, each parsed and its
// library tried. Everything takes ManifestFacts, so tests point it at fabricated trees.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::vulkan {

struct ManifestFacts {
  std::string root;  // "" for this machine; a fabricated tree in tests
  EnvMap env;
  // setuid/setgid: the loader then ignores $HOME's directories and every VK_* variable.
  bool elevated = false;

  static ManifestFacts of_this_process();
  std::string host_path(std::string_view path) const;
  std::optional<std::string> env_value(std::string_view name) const;
};

// One place the loader looks: a directory of *.json manifests, or one manifest file that a
// variable names.
struct SearchEntry {
  std::string path;
  std::string source;  // XDG_CONFIG_HOME, XDG_CONFIG_DIRS, SYSCONFDIR, XDG_DATA_HOME,
                       // XDG_DATA_DIRS, VK_DRIVER_FILES, VK_ICD_FILENAMES, VK_ADD_DRIVER_FILES
};

// The places in the loader's order: VK_ADD_DRIVER_FILES first, then VK_DRIVER_FILES (or the
// older VK_ICD_FILENAMES when it is unset) instead of the standard directories:
// $XDG_CONFIG_HOME, $XDG_CONFIG_DIRS, /etc, $XDG_DATA_HOME, $XDG_DATA_DIRS, each + /vulkan/icd.d.
std::vector<SearchEntry> driver_search_list(const ManifestFacts& facts);

// A manifest's contents: {"file_format_version", "ICD": {"library_path", "api_version",
// "is_portability_driver", "library_arch"}}.
struct Manifest {
  std::string error;  // why it is no usable manifest; empty when it is one
  std::string file_format_version;
  std::string library_path;
  std::string api_version;
  std::optional<bool> is_portability_driver;
  std::string library_arch;
};

// Parses a manifest's text. Refuses nesting deeper than 32 levels before parsing (no manifest
// needs more than 2), and reports a missing or mistyped field by name; never throws.
Manifest parse_manifest(std::string_view text);

// What dlopen is given for a manifest's library_path: a name as is (the linker searches), a path
// with a slash relative to the manifest's directory when it is not absolute.
std::string library_to_open(std::string_view manifest_path, std::string_view library_path);

// Whether a driver library loads, exports the loader-ICD entry points, and initialises: its
// interface negotiation and a vkCreateInstance called through it, as the loader does.
// `init` is {"step": the last step tried, "result": "VK_..." text, "interface_version",
// "physical_devices"} or absent when the library did not load.
using IcdChecker = std::function<nlohmann::json(const std::string& library)>;

// dlopen(RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE), look, initialise. It runs the driver's code,
// so it may crash: the probe runs it in its child process.
nlohmann::json check_icd_here(const std::string& library);

struct ManifestInventory {
  nlohmann::json source;      // [{"path", "source", "type": directory|manifest_file, "exists"}]
  nlohmann::json files;       // every manifest the loader reads, parsed and checked
  std::string overridden_by;  // VK_DRIVER_FILES or VK_ICD_FILENAMES when it replaces the dirs
};

ManifestInventory manifest_inventory(const ManifestFacts& facts, const IcdChecker& check);

// The loader variables that are set, with their value and what the loader does with them.
nlohmann::json describe_environment(const ManifestFacts& facts);

}  // namespace gpucheck::vulkan

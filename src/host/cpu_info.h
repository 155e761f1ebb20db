// CPU facts for `gpucheck probe`: model, topology, clocks, caches, NUMA nodes and ISA extensions,
// read from proc/cpuinfo and sysfs under a root prefix, so tests can use fabricated sysroots.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucheck::host {

// One cache of cpu0 (sys/devices/system/cpu/cpu0/cache/indexN); a field is absent when its
// file is missing or malformed.
struct CacheFacts {
  std::optional<int> level;
  std::optional<std::string> type;  // kernel text, lower-cased: data | instruction | unified
  std::optional<std::uint64_t> size_bytes;
  std::optional<int> shared_by_threads;  // logical CPUs in shared_cpu_list
};

// Every field is absent (nullopt or empty) when the file it comes from is missing or malformed;
// nothing stands in for "unknown" with a 0.
struct CpuFacts {
  std::optional<std::string> model;   // "model name", or the Arm core named by implementer/part
  std::optional<std::string> vendor;  // x86 vendor_id, or the Arm implementer's name
  std::optional<std::string> arch;    // uname's machine for the live root, else from cpuinfo
  std::optional<int> sockets;         // distinct physical ids (sysfs physical_package_id)
  std::optional<int> cores;           // distinct (physical id, core id), or cpu cores × sockets
  std::optional<int> threads;         // logical processors
  std::optional<double> mhz_current;  // cpuinfo "cpu MHz", else cpufreq scaling_cur_freq
  std::optional<double> mhz_max;      // cpufreq cpuinfo_max_freq (kHz) / 1000
  std::optional<double> mhz_min;      // cpufreq cpuinfo_min_freq (kHz) / 1000
  std::vector<CacheFacts> caches;     // cpu0's caches in index order
  std::optional<int> numa_nodes;      // sys/devices/system/node/nodeN directories
  std::vector<std::string> flags;     // x86 "flags" or Arm "Features", as listed
  std::map<std::string, bool> isa;    // only the keys of the parsed architecture
};

// True when root names the running system ("" or "/"): then uname() is asked too.
bool is_live_root(const std::filesystem::path& root);

// "x86_64" / "aarch64" from cpuinfo's fields (vendor_id / CPU implementer), or uname()'s machine
// for the live root; nullopt when neither tells.
std::optional<std::string> detect_arch(const std::filesystem::path& root);

// Never throws for missing, unreadable or malformed files: the affected fields stay absent.
CpuFacts read_cpu_facts(const std::filesystem::path& root);

// The "cpu" object of the JSON document; absent fields have no key.
nlohmann::json to_json(const CpuFacts& facts);

}  // namespace gpucheck::host

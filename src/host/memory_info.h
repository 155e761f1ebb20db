// Memory facts for `gpucheck probe` and the bench engine's memory preflight, from proc/meminfo
// under a root prefix (so tests can use fabricated sysroots).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>

#include <nlohmann/json.hpp>

namespace gpucheck::host {

// Bytes; a field is absent when its meminfo line is missing or malformed.
struct MemoryFacts {
  std::optional<std::uint64_t> total_bytes;       // MemTotal
  std::optional<std::uint64_t> available_bytes;   // MemAvailable (kernel 3.14+)
  std::optional<std::uint64_t> free_bytes;        // MemFree
  std::optional<std::uint64_t> swap_total_bytes;  // SwapTotal
};

// Never throws for a missing, unreadable or malformed meminfo: the fields stay absent.
MemoryFacts read_memory_facts(const std::filesystem::path& root);

// The "memory" object of the JSON document; absent fields have no key.
nlohmann::json to_json(const MemoryFacts& facts);

}  // namespace gpucheck::host

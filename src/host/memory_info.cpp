// Parses proc/meminfo ("Key:   value kB" lines) into byte counts.
#include "host/memory_info.h"
#include "core/json_access.h"

#include <array>
#include <charconv>
#include <fstream>
#include <limits>
#include <string>
#include <string_view>
#include <system_error>

#include "core/files.h"
#include "core/json_keys.h"

namespace gpucheck::host {

namespace fs = std::filesystem;

namespace {

// meminfo is a few KiB; reading stops well past that so a wrong file cannot exhaust memory.
constexpr std::size_t kMeminfoBytes = std::size_t{1} << 20;

std::optional<std::string> read_meminfo(const fs::path& p) {
  return read_text_file(p, kMeminfoBytes);
}

// "   24684084 kB" → bytes; a value without unit is already bytes (the HugePages_* counts are
// not asked for). nullopt when malformed or when the byte count would overflow.
std::optional<std::uint64_t> parse_amount(std::string_view s) {
  const auto b = s.find_first_not_of(" \t");
  if (b == std::string_view::npos) return std::nullopt;
  s.remove_prefix(b);
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || ptr == s.data()) return std::nullopt;
  std::string_view unit(ptr, static_cast<std::size_t>(s.data() + s.size() - ptr));
  const auto ub = unit.find_first_not_of(" \t\r");
  unit = ub == std::string_view::npos ? std::string_view{} : unit.substr(ub);
  const auto ue = unit.find_last_not_of(" \t\r");
  unit = ue == std::string_view::npos ? std::string_view{} : unit.substr(0, ue + 1);
  std::uint64_t mult = 1;
  if (unit == "kB" || unit == "KB" || unit == "KiB") {
    mult = 1024;
  } else if (!unit.empty()) {
    return std::nullopt;
  }
  if (v > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
  return v * mult;
}

}  // namespace

MemoryFacts read_memory_facts(const fs::path& root) {
  MemoryFacts m;
  const auto text = read_meminfo((root.empty() ? fs::path("/") : root) / "proc/meminfo");
  if (!text) return m;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view line = rest.substr(0, nl);
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon);
    std::optional<std::uint64_t>* slot = nullptr;
    if (key == "MemTotal")
      slot = &m.total_bytes;
    else if (key == "MemAvailable")
      slot = &m.available_bytes;
    else if (key == "MemFree")
      slot = &m.free_bytes;
    else if (key == "SwapTotal")
      slot = &m.swap_total_bytes;
    if (slot && !*slot) *slot = parse_amount(line.substr(colon + 1));
  }
  return m;
}

nlohmann::json to_json(const MemoryFacts& m) {
  nlohmann::json j = nlohmann::json::object();
  put_if(j, keys::kTotalBytes, m.total_bytes);
  put_if(j, keys::kAvailableBytes, m.available_bytes);
  put_if(j, keys::kFreeBytes, m.free_bytes);
  put_if(j, keys::kSwapTotalBytes, m.swap_total_bytes);
  return j;
}

}  // namespace gpucheck::host

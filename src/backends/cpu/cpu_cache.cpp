// Last-level cache size from sysfs, with sysconf and a constant as fallbacks.
#include "backends/cpu/cpu_cache.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <string>

namespace gpucheck::cpu {

namespace {

std::string read_line(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// The size of the highest-level data or unified cache listed for CPU 0; 0 when none is.
std::size_t sysfs_last_level_cache() {
  int best_level = 0;
  std::size_t best = 0;
  for (int index = 0; index < 16; ++index) {
    const std::string dir = "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(index);
    const std::string level = read_line(dir + "/level");
    if (level.empty()) break;
    if (read_line(dir + "/type") == "Instruction") continue;
    const int l = std::atoi(level.c_str());
    const std::size_t size = parse_cache_size(read_line(dir + "/size").c_str());
    if (l > best_level && size > 0) {
      best_level = l;
      best = size;
    }
  }
  return best;
}

}  // namespace

std::size_t parse_cache_size(const char* text) {
  char* end = nullptr;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text) return 0;
  switch (std::toupper(static_cast<unsigned char>(*end))) {
    case '\0':
      return static_cast<std::size_t>(v);
    case 'K':
      return static_cast<std::size_t>(v) << 10;
    case 'M':
      return static_cast<std::size_t>(v) << 20;
    case 'G':
      return static_cast<std::size_t>(v) << 30;
    default:
      return 0;
  }
}

std::size_t last_level_cache_bytes() {
  static const std::size_t bytes = [] {
    if (const std::size_t sysfs = sysfs_last_level_cache(); sysfs > 0) return sysfs;
    const long guess = std::max(sysconf(_SC_LEVEL3_CACHE_SIZE), sysconf(_SC_LEVEL2_CACHE_SIZE));
    return guess > 0 ? static_cast<std::size_t>(guess) : std::size_t{32} << 20;
  }();
  return bytes;
}

}  // namespace gpucheck::cpu

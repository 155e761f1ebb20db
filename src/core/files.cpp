// Bounded, non-throwing reads of small text files.
#include "core/files.h"

#include <array>
#include <fstream>

namespace gpucheck {

std::filesystem::path under_root(const std::filesystem::path& root, std::string_view rel) {
  return (root.empty() ? std::filesystem::path("/") : root) / rel;
}

std::optional<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in.is_open()) return std::nullopt;
  std::string out;
  std::array<char, 8192> buf{};
  while (in.read(buf.data(), buf.size()) || in.gcount() > 0) {
    out.append(buf.data(), static_cast<std::size_t>(in.gcount()));
    if (out.size() > max_bytes) return std::nullopt;
  }
  if (in.bad()) return std::nullopt;
  return out;
}

}  // namespace gpucheck

// Reading small text files (proc, sys, etc) under a root prefix, never throwing.
#pragma once

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// root / rel, with an empty root meaning "/".
std::filesystem::path under_root(const std::filesystem::path& root, std::string_view rel);

// The whole file, or nullopt when it cannot be opened or read, or is larger than max_bytes
// (a wrong file must not exhaust memory).
std::optional<std::string> read_text_file(const std::filesystem::path& path,
                                          std::size_t max_bytes = std::size_t{1} << 20);

}  // namespace gpucheck

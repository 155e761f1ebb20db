// `qualify --profile` takes a path or the name of a shipped profile ("cpu-only", "cuda-hopper"),
// found in configs/qualify of the data directories (core/install_dirs.h).
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace gpucheck::qualify {

// The argument itself when it names an existing file (or has a '/'); else <dir>/configs/qualify/
// <name>[.toml] in the first data directory that has it. Throws UsageError naming the shipped
// profiles when the name matches none.
std::string find_profile(const std::string& arg,
                         const std::vector<std::filesystem::path>& data_dirs);

}  // namespace gpucheck::qualify

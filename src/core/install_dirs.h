// Where an installed gpucheck finds its data: <prefix>/share/gpucheck beside <prefix>/bin (the
// `cmake --install` and package layout, and the pip wheel's: pip installs its script into the
// venv's bin/ and its data into the venv itself, --user and --target alike), and, for a binary
// run from its build tree, the source tree it was built from.
#pragma once

#include <filesystem>
#include <vector>

namespace gpucheck {

// The data directories that exist, in search order: <prefix>/share/gpucheck for the running
// binary at <prefix>/bin/gpucheck, then the source tree's root (which holds configs/ and schema/).
std::vector<std::filesystem::path> data_dirs();

}  // namespace gpucheck

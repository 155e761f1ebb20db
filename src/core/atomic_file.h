// Writing a file so that readers see the old content or the new, never a part: a temporary file
// beside it, flushed to disk, then renamed over it.
#pragma once

#include <filesystem>
#include <string_view>

namespace gpucheck {

// Creates the parent directory if needed. std::runtime_error naming the path and the failing
// call (with strerror) when anything fails; the temporary file is removed then.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

}  // namespace gpucheck

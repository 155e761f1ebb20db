// The running binary's data directories, found from /proc/self/exe.
#include "core/install_dirs.h"

#include <system_error>

namespace gpucheck {

namespace fs = std::filesystem;

std::vector<fs::path> data_dirs() {
  std::vector<fs::path> dirs;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    const fs::path installed = exe.parent_path().parent_path() / "share" / "gpucheck";
    if (fs::is_directory(installed, ec)) dirs.push_back(installed);
  }
#ifdef GPUCHECK_SOURCE_ROOT
  const fs::path source = GPUCHECK_SOURCE_ROOT;
  if (fs::is_directory(source / "configs", ec)) dirs.push_back(source);
#endif
  return dirs;
}

}  // namespace gpucheck

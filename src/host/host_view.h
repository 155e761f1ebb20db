// The described host as files under a root prefix (--sysroot) and an environment: what the host
// readers that take a view (Python environments) and every doctor check read, and nothing else.
// Fixtures supply stat results for device nodes a directory tree cannot hold.
#pragma once

#include "core/environment.h"

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::host {

// The parts of stat(2) the readers use. mode holds the file type bits too (S_IFCHR | 0660).
struct FileStat {
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

class HostView {
 public:
  std::filesystem::path root = "/";  // the described system's "/"
  EnvMap env;
  // Paths of the described system whose stat results are given, not read: fixtures cannot
  // hold character devices or their owners. They also appear in list_dir and exists.
  std::map<std::string, FileStat> stat_overrides;

  // The path to open for a path of the described system ("/etc/x" -> root/etc/x).
  std::string host_path(std::string_view path) const;
  // The whole file (up to max_bytes), nullopt when it cannot be read.
  std::optional<std::string> read_file(std::string_view path,
                                       std::size_t max_bytes = 1u << 20) const;
  bool exists(std::string_view path) const;
  bool is_dir(std::string_view path) const;
  // Sorted entry names of a directory (empty when it is missing).
  std::vector<std::string> list_dir(std::string_view dir) const;
  // Paths of the described system matching a glob(3) pattern, sorted.
  std::vector<std::string> glob(std::string_view pattern) const;
  // stat(2), following symlinks; an override wins.
  std::optional<FileStat> stat(std::string_view path) const;
  // The target of a symbolic link as written, nullopt when the path is no link.
  std::optional<std::string> read_link(std::string_view path) const;

  std::optional<std::string> env_value(std::string_view name) const;
  // Set and not empty.
  bool env_set(std::string_view name) const;
};

}  // namespace gpucheck::host

// What every doctor check reads, and nothing else: files under a root prefix, an environment,
// the probe's facts (the document `gpucheck probe --json` writes), the identity permission
// checks judge against, and stat results that fixtures supply for device nodes.
#pragma once

#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// The parts of stat(2) the checks use. mode holds the file type bits too (S_IFCHR | 0660).
struct FileStat {
  std::uint32_t mode = 0;
  std::uint32_t uid = 0;
  std::uint32_t gid = 0;
};

// The identity of the process a check speaks for: who will run the GPU program.
struct Identity {
  std::uint32_t uid = 0;
  std::vector<std::uint32_t> gids;  // the primary group and every supplementary one

  static Identity of_this_process();
};

class SystemView {
 public:
  std::filesystem::path root = "/";  // the described system's "/"
  EnvMap env;
  nlohmann::json facts = nlohmann::json::object();  // host, cpu, memory, backends
  Identity identity;
  // Paths of the described system whose stat results are given, not read: fixtures cannot
  // hold character devices or their owners. They also appear in list_dir and exists.
  std::map<std::string, FileStat> stat_overrides;
  // Per check id, the state the check kept on its last run (CheckResult::state, from doctor's
  // state file); empty without a state file.
  nlohmann::json saved_state = nlohmann::json::object();
  // --ci: judge as on a CI runner (persistence mode off is WARN), as the CI variable does.
  bool ci = false;

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

  // The backend section named `name` in facts.backends; nullptr when absent.
  const nlohmann::json* backend(std::string_view name) const;
  // The same, but a check that needs it and finds none is SKIP (throws NotObservable).
  const nlohmann::json& require_backend(std::string_view name) const;
  // facts[key] (host, cpu); throws NotObservable when absent.
  const nlohmann::json& require_facts(std::string_view key) const;
};

// Group names by gid and member lists by name, from root/etc/group.
struct GroupEntry {
  std::string name;
  std::uint32_t gid = 0;
  std::vector<std::string> members;
};
std::vector<GroupEntry> read_groups(const SystemView& view);
// The user name of a uid from root/etc/passwd; nullopt when not listed.
std::optional<std::string> user_name(const SystemView& view, std::uint32_t uid);

// Whether identity may read and write a file with these permissions, judged from the mode
// bits as the kernel does (owner, else group, else other); uid 0 may always.
bool may_read_write(const FileStat& st, const Identity& who);

// "crw-rw----" from a mode.
std::string mode_text(std::uint32_t mode);

}  // namespace gpucheck::doctor

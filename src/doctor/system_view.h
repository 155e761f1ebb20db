// What every doctor check reads, and nothing else: the host's files and environment
// (host::HostView: files under a root prefix, stat results fixtures supply for device nodes), the
// probe's facts (the document `gpucheck probe --json` writes) and the identity permission checks
// judge against.
#pragma once

#include "host/host_view.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

using host::FileStat;

// The identity of the process a check speaks for: who will run the GPU program.
struct Identity {
  std::uint32_t uid = 0;
  std::vector<std::uint32_t> gids;  // the primary group and every supplementary one

  static Identity of_this_process();
};

class SystemView : public host::HostView {
 public:
  nlohmann::json facts = nlohmann::json::object();  // host, cpu, memory, backends
  Identity identity;
  // Per check id, the state the check kept on its last run (CheckResult::state, from doctor's
  // state file); empty without a state file.
  nlohmann::json saved_state = nlohmann::json::object();
  // --ci: judge as on a CI runner (persistence mode off is WARN), as the CI variable does.
  bool ci = false;
  // Paths whose open(2) for reading and writing gives this errno (0: opens), not tried:
  // fixtures cannot make the kernel refuse a node its mode allows (a device cgroup's EPERM).
  std::map<std::string, int> open_overrides;

  // open(2) of a device node for reading and writing, closed at once: 0 when it opens, else
  // the errno. nullopt when it cannot be tried: a described system under a root prefix (its
  // nodes are not this kernel's) without an override. The one effect a check may have, and
  // why it lives here rather than in host/, whose readers open no device: the kernel's answer
  // is the only evidence of a device cgroup that refuses what the mode bits allow.
  std::optional<int> open_error(std::string_view path) const;

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

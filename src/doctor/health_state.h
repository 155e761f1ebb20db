// doctor's state file (`--state FILE`): per check the state it kept on its last run (counters it
// judges as deltas, such as Xid lines per GPU and code), and the events those deltas raised.
// An event stays unacknowledged, and its check keeps its WARN or FAIL, until an administrator
// runs `gpucheck doctor --ack CHECK` or removes the event from the file: a drained node does not
// flap back to idle on the next run.
#pragma once

#include "core/environment.h"
#include "doctor/check.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::doctor {

struct StateEvent {
  std::string check;
  CheckStatus status = CheckStatus::kFail;
  std::string finding;
  std::string time;          // UTC, when the event was first seen
  std::string acknowledged;  // UTC of the --ack; empty while unacknowledged
};

class HealthState {
 public:
  // The file's state; a file that does not exist is an empty state. A file that cannot be read
  // or is not a gpucheck state is a UsageError naming it (exit 2: health cannot be decided).
  static HealthState load(const std::filesystem::path& path);

  // Per check id, what it kept last time: SystemView::saved_state.
  const nlohmann::json& saved_checks() const { return checks_; }

  // After the checks ran: a check that kept state and reports WARN or FAIL raised a new event;
  // every unacknowledged event of an earlier run keeps its check at least at the event's status,
  // with the event first in the finding and the --ack command in the fix; each check's kept
  // state replaces its previous one. Returns the events raised now.
  std::vector<StateEvent> apply(std::vector<CheckResult>& results, const std::string& now);

  // Marks the check's unacknowledged events acknowledged; returns how many.
  std::size_t acknowledge(const std::string& check, const std::string& now);

  std::vector<StateEvent> unacknowledged() const;

  // Writes the whole file (its directory created when missing).
  void save(const std::filesystem::path& path) const;

 private:
  nlohmann::json checks_ = nlohmann::json::object();
  std::vector<StateEvent> events_;
};

// The default state file, the first whose directory is (or can be made) writable:
// $XDG_STATE_HOME/gpucheck/state.json, /var/lib/gpucheck/state.json,
// $HOME/.local/state/gpucheck/state.json (XDG's default); nullopt when none is.
std::optional<std::filesystem::path> default_state_path(const EnvMap& env);

}  // namespace gpucheck::doctor

// doctor's state file (`--state FILE`): per check the state it kept on its last run (counters it
// judges as deltas, such as Xid lines per GPU and code), and the events those deltas raised.
// An event stays unacknowledged, and its check keeps its WARN or FAIL, until an administrator
// runs `gpucheck doctor --ack CHECK` or removes the event from the file: a drained node does not
// flap back to idle on the next run.
//
// The file stays small however often the node fails: each event keeps only its own check's
// finding, a check keeps at most kMaxOpenEvents unacknowledged events (older ones are folded
// into the oldest, which then counts them), and loading, judging and saving are linear in it.
// A damaged file (not JSON, nested too deep, too large, malformed events or counters) is set
// aside as FILE.bad and rebuilt: a check whose counters were lost judges its whole source again.
#pragma once

#include "core/environment.h"
#include "doctor/check.h"

#include <nlohmann/json.hpp>

#include <cstddef>
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
  // Events folded into this one (itself included) when a check had more than the file keeps,
  // and when the last of them was seen.
  std::size_t count = 1;
  std::string last_time;
};

// Unacknowledged events kept per check, and acknowledged ones kept as history.
inline constexpr std::size_t kMaxOpenEvents = 32;
inline constexpr std::size_t kMaxAcknowledgedKept = 64;
// A file of the most events and counters kept is well under this.
inline constexpr std::size_t kMaxStateBytes = std::size_t{4} << 20;

class HealthState {
 public:
  // The file's state; a file that does not exist is an empty state. A damaged one is set aside
  // (damage() says why and where) and what could be read of it kept. A path that is no regular
  // file (a FIFO, a directory), cannot be read, or holds JSON that is no gpucheck state is a
  // UsageError naming it (exit 2: health cannot be decided), and is left alone.
  static HealthState load(const std::filesystem::path& path);

  // "the state file 'F' was damaged (WHY): set aside as 'F.bad'"; empty when it was sound.
  const std::string& damage() const { return damage_; }

  // Per check id, what it kept last time: SystemView::saved_state.
  const nlohmann::json& saved_checks() const { return checks_; }

  // After the checks ran: a check that kept state and reports WARN or FAIL raised a new event;
  // every unacknowledged event of an earlier run keeps its check at least at the event's status,
  // with the event first in the finding and the --ack command in the fix; each check's kept
  // state replaces its previous one. Returns the events raised now.
  std::vector<StateEvent> apply(std::vector<CheckResult>& results, const std::string& now);

  // Marks the check's unacknowledged events acknowledged; returns how many (folded ones too).
  std::size_t acknowledge(const std::string& check, const std::string& now);

  std::vector<StateEvent> unacknowledged() const;

  // Writes the whole file (its directory created when missing).
  void save(const std::filesystem::path& path) const;

 private:
  void note_damage(const std::string& why);
  void bound();  // folds and drops events past the kMax* limits, keeping their order

  nlohmann::json checks_ = nlohmann::json::object();
  std::vector<StateEvent> events_;
  std::string damaged_why_;
  std::string damage_;
};

// The default state file, the first whose directory is (or can be made) writable:
// $XDG_STATE_HOME/gpucheck/state.json, /var/lib/gpucheck/state.json,
// $HOME/.local/state/gpucheck/state.json (XDG's default); nullopt when none is.
std::optional<std::filesystem::path> default_state_path(const EnvMap& env);

}  // namespace gpucheck::doctor

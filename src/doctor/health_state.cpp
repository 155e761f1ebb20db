// Reading, applying and writing doctor's state file.
#include "doctor/health_state.h"

#include "core/errors.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/output_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <system_error>

namespace gpucheck::doctor {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// The state file is gpucheck's own, not a gpucheck/1 document: its keys live here.
constexpr const char* kStateSchema = "gpucheck-state/1";
constexpr const char* kChecks = "checks";
constexpr const char* kEvents = "events";
constexpr const char* kAcknowledged = "acknowledged";
constexpr const char* kCount = "count";
constexpr const char* kLastTime = "last_time";
constexpr std::size_t kMaxFindingBytes =
    1024;  // a finding is one line; a hand-edited one may not be
constexpr std::size_t kMaxEventsInEvidence = 8;

// The text cut to max bytes at a character's start, marked with "...".
std::string bounded(std::string text, std::size_t max = kMaxFindingBytes) {
  if (text.size() <= max) return text;
  std::size_t cut = max - 3;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xc0) == 0x80) --cut;
  text.resize(cut);
  return text + "...";
}

// A count as gpucheck writes it: a whole number that JSON readers keep exactly (2^53), so one
// of 2^63 and more is never read as a negative or wrapped number.
constexpr std::uint64_t kMaxCount = std::uint64_t{1} << 53;
bool is_count(const Json& n) {
  return n.is_number_unsigned() && n.get<std::uint64_t>() <= kMaxCount;
}

Json event_json(const StateEvent& e) {
  Json j{{keys::kCheck, e.check},
         {keys::kStatus, to_string(e.status)},
         {keys::kFinding, e.finding},
         {keys::kTime, e.time}};
  if (!e.acknowledged.empty()) j[kAcknowledged] = e.acknowledged;
  if (e.count > 1) {
    j[kCount] = e.count;
    j[kLastTime] = e.last_time;
  }
  return j;
}

// The string member `key`, or nullopt with *why set when it is there but no string.
std::optional<std::string> text_member(const Json& j, std::string_view key, std::string* why) {
  auto it = j.find(std::string(key));
  if (it == j.end()) return std::string();
  if (it->is_string()) return it->get<std::string>();
  *why = fmt::format("has a \"{}\" that is not a string", key);
  return std::nullopt;
}

// An event as gpucheck writes it, or nullopt with *why.
std::optional<StateEvent> event_from(const Json& j, std::string* why) {
  if (!j.is_object()) {
    *why = "is not an object";
    return std::nullopt;
  }
  StateEvent e;
  auto check = text_member(j, keys::kCheck, why);
  auto status = text_member(j, keys::kStatus, why);
  auto finding = text_member(j, keys::kFinding, why);
  auto time = text_member(j, keys::kTime, why);
  auto acknowledged = text_member(j, kAcknowledged, why);
  auto last_time = text_member(j, kLastTime, why);
  if (!check || !status || !finding || !time || !acknowledged || !last_time) return std::nullopt;
  if (check->empty()) {
    *why = "names no check";
    return std::nullopt;
  }
  e.check = std::move(*check);
  if (status->empty()) {
    e.status = CheckStatus::kFail;
  } else if (auto st = check_status_from_string(*status)) {
    e.status = *st;
  } else {
    *why = "has an unknown status";
    return std::nullopt;
  }
  if (auto c = j.find(kCount); c != j.end()) {
    if (!is_count(*c) || c->get<std::uint64_t>() == 0) {
      *why = "has a count that is no whole number from 1 to 2^53";
      return std::nullopt;
    }
    e.count = c->get<std::size_t>();
  }
  e.finding = bounded(std::move(*finding));
  e.time = bounded(std::move(*time), 64);
  e.acknowledged = bounded(std::move(*acknowledged), 64);
  e.last_time = bounded(std::move(*last_time), 64);
  return e;
}

// What a check keeps must have the shape it writes: a counter it cannot read would make the
// check throw, and its SKIP would hide what the counter was for (18 Xid 79 lines judged healthy).
std::string kept_state_problem(const std::string& check, const Json& state) {
  if (!state.is_object()) return "is not an object";
  if (check == "nvidia_xid") {
    if (auto b = state.find("boot_id"); b != state.end() && !b->is_string())
      return "has a boot_id that is not a string";
    if (auto c = state.find("counts"); c != state.end()) {
      if (!c->is_object()) return "has counts that are not an object";
      for (const auto& n : *c)
        if (!is_count(n)) return "has counts that are not all whole numbers up to 2^53";
    }
    if (auto l = state.find("last"); l != state.end()) {
      if (!l->is_object() || !l->value("line", Json()).is_string() ||
          !l->value("source", Json()).is_string())
        return "has a last line that is not an object with a line and a source";
      if (auto p = l->find("position"); p != l->end() && !p->is_number_unsigned())
        return "has a last line whose position is no whole number";
    }
  }
  return {};
}

// The directory exists and is writable, or its nearest existing ancestor is (it can be made).
bool can_write_into(const fs::path& dir) {
  std::error_code ec;
  fs::path p = dir;
  while (!p.empty() && !fs::exists(p, ec)) {
    if (p == p.parent_path()) return false;
    p = p.parent_path();
  }
  return !p.empty() && fs::is_directory(p, ec) && ::access(p.c_str(), W_OK) == 0;
}

// The check keeps its unacknowledged events' status; the finding starts with the oldest, the
// fix says how to acknowledge. The events were bounded on load, so this is linear.
void keep_open_events(CheckResult& r, const std::vector<const StateEvent*>& open) {
  std::size_t total = 0;
  CheckStatus worst = CheckStatus::kPass;
  for (const auto* e : open) {
    total += e->count;
    worst = worse(worst, e->status);
  }
  const StateEvent& first = *open.front();
  const StateEvent& last = *open.back();
  std::string note = fmt::format("unacknowledged since {}: {}", first.time, first.finding);
  if (total > 1)
    note += fmt::format(" (+{} later event{}, the last at {})", total - 1, total == 2 ? "" : "s",
                        last.last_time.empty() ? last.time : last.last_time);
  r.finding = r.status == CheckStatus::kPass ? note : note + "; now: " + r.finding;
  r.status = worse(r.status, worst);
  if (r.fault == nullptr || r.fault->action == Action::kNone)
    r.fault = find_fault_code("GC-DOCTOR-UNACKNOWLEDGED");
  const std::string ack = fmt::format(
      "once handled, acknowledge it: gpucheck doctor --ack {} (or remove the event from the "
      "state file)",
      r.id);
  if (r.fix.find(ack) == std::string::npos) r.fix = r.fix.empty() ? ack : r.fix + "; " + ack;
  for (std::size_t i = 0; i < open.size() && i < kMaxEventsInEvidence; ++i) {
    const StateEvent& e = *open[i];
    r.evidence.push_back(e.count > 1
                             ? fmt::format("state file events of {} to {} ({}), the first: {}",
                                           e.time, e.last_time, e.count, e.finding)
                             : fmt::format("state file event of {}: {}", e.time, e.finding));
  }
  if (open.size() > kMaxEventsInEvidence)
    r.evidence.push_back(
        fmt::format("and {} more state file events", open.size() - kMaxEventsInEvidence));
}

}  // namespace

HealthState HealthState::load(const fs::path& path) {
  HealthState s;
  const KeptJsonFile file = read_kept_json_file(path, kMaxStateBytes);
  switch (file.outcome) {
    case KeptJsonFile::Outcome::kMissing:
      return s;
    case KeptJsonFile::Outcome::kUnreadable:
      throw UsageError(
          fmt::format("--state: cannot use '{}' as the state file: {}", path.string(), file.why));
    case KeptJsonFile::Outcome::kDamaged:
      s.note_damage(file.why);
      break;
    case KeptJsonFile::Outcome::kParsed: {
      const Json& doc = file.doc;
      std::string ignored;
      // JSON of another kind is someone else's file: refused, never moved.
      if (!doc.is_object() || text_member(doc, keys::kSchema, &ignored) != kStateSchema)
        throw UsageError(fmt::format(
            "--state: '{}' is not a gpucheck state file (schema {}); give another --state, or "
            "move it away to start afresh",
            path.string(), kStateSchema));
      if (auto c = doc.find(kChecks); c != doc.end() && !c->is_object()) {
        s.note_damage("its \"checks\" is not an object");
      } else if (c != doc.end()) {
        for (const auto& [id, kept] : c->items()) {
          if (const std::string bad = kept_state_problem(id, kept); !bad.empty())
            s.note_damage(fmt::format("what {} keeps {}", bounded(id, 64), bad));
          else
            s.checks_[id] = kept;
        }
      }
      if (auto ev = doc.find(kEvents); ev != doc.end() && !ev->is_array()) {
        s.note_damage("its \"events\" is not an array");
      } else if (ev != doc.end()) {
        s.events_.reserve(ev->size());
        for (std::size_t i = 0; i < ev->size(); ++i) {
          std::string why;
          if (auto e = event_from((*ev)[i], &why))
            s.events_.push_back(std::move(*e));
          else
            s.note_damage(fmt::format("its event {} {}", i, why));
        }
      }
      break;
    }
  }
  if (!s.damaged_why_.empty()) {
    // Kept for a look; the next save writes what could be read, and a check whose counters
    // were dropped judges its whole source again.
    std::string why;
    if (auto bad = set_aside_bad_file(path, &why))
      s.damage_ = fmt::format("the state file '{}' was damaged ({}): set aside as '{}'",
                              path.string(), s.damaged_why_, bad->string());
    else
      s.damage_ =
          fmt::format("the state file '{}' was damaged ({}) and could not be set aside ({})",
                      path.string(), s.damaged_why_, why);
  }
  s.bound();
  return s;
}

void HealthState::note_damage(const std::string& why) {
  if (damaged_why_.empty())
    damaged_why_ = why;
  else if (damaged_why_.find("; and more") == std::string::npos)
    damaged_why_ += "; and more";
}

void HealthState::bound() {
  std::map<std::string, std::size_t> open;
  std::size_t acknowledged = 0;
  for (const auto& e : events_) {
    if (e.acknowledged.empty())
      ++open[e.check];
    else
      ++acknowledged;
  }
  // Per check, how many of its oldest open events become one.
  std::map<std::string, std::size_t> to_fold;
  for (const auto& [check, n] : open)
    if (n > kMaxOpenEvents) to_fold[check] = n - kMaxOpenEvents + 1;
  std::size_t history_to_drop =
      acknowledged > kMaxAcknowledgedKept ? acknowledged - kMaxAcknowledgedKept : 0;
  if (to_fold.empty() && history_to_drop == 0) return;
  std::map<std::string, std::size_t> folded_into;  // check -> index in kept
  std::vector<StateEvent> kept;
  kept.reserve(std::min(events_.size(), open.size() * kMaxOpenEvents + kMaxAcknowledgedKept));
  for (auto& e : events_) {
    if (!e.acknowledged.empty()) {
      // The oldest acknowledged events go first once the history is long.
      if (history_to_drop > 0) {
        --history_to_drop;
        continue;
      }
      kept.push_back(std::move(e));
      continue;
    }
    auto fold = to_fold.find(e.check);
    if (fold == to_fold.end() || fold->second == 0) {
      kept.push_back(std::move(e));
      continue;
    }
    --fold->second;
    auto [at, first] = folded_into.try_emplace(e.check, kept.size());
    if (first) {
      kept.push_back(std::move(e));
      continue;
    }
    StateEvent& into = kept[at->second];
    into.count = std::min<std::size_t>(into.count + e.count, kMaxCount);
    into.status = worse(into.status, e.status);
    into.last_time = e.last_time.empty() ? e.time : e.last_time;
  }
  events_ = std::move(kept);
}

std::vector<StateEvent> HealthState::apply(std::vector<CheckResult>& results,
                                           const std::string& now) {
  std::map<std::string, std::vector<const StateEvent*>> open;
  for (const auto& e : events_)
    if (e.acknowledged.empty()) open[e.check].push_back(&e);
  std::vector<StateEvent> raised;
  for (auto& r : results) {
    // The check's own verdict: an event records what this run found, never the older events
    // it repeats (which would double the file with every new event).
    const CheckStatus own_status = r.status;
    const std::string own_finding = r.finding;
    // Earlier events first: this run's result may already be clean (the delta is zero).
    if (auto it = open.find(r.id); it != open.end()) keep_open_events(r, it->second);
    if (r.state.is_null()) continue;
    if (own_status == CheckStatus::kWarn || own_status == CheckStatus::kFail) {
      // Only a check whose state changed this run can have raised something new: with its
      // counters unchanged, the WARN or FAIL comes from the older events above.
      const Json& before = checks_.value(r.id, Json());
      if (before != r.state) {
        StateEvent e;
        e.check = r.id;
        e.status = own_status;
        e.finding = bounded(own_finding);
        e.time = now;
        raised.push_back(std::move(e));
      }
    }
    checks_[r.id] = r.state;
    if (!damage_.empty()) {
      // Judged without what it kept: said in the result, never raised as an event of its own.
      r.evidence.push_back(damage_);
      r.finding +=
          "; the state file was damaged and set aside: judged without its earlier counters";
      if (r.status == CheckStatus::kPass || r.status == CheckStatus::kInfo) {
        r.status = CheckStatus::kWarn;
        r.fix =
            "look at the file set aside (see the evidence); the next run judges against the "
            "rebuilt one";
      }
    }
  }
  events_.insert(events_.end(), raised.begin(), raised.end());
  bound();
  return raised;
}

std::size_t HealthState::acknowledge(const std::string& check, const std::string& now) {
  std::size_t n = 0;
  for (auto& e : events_)
    if (e.check == check && e.acknowledged.empty()) {
      e.acknowledged = now;
      n += e.count;
    }
  bound();
  return n;
}

std::vector<StateEvent> HealthState::unacknowledged() const {
  std::vector<StateEvent> out;
  for (const auto& e : events_)
    if (e.acknowledged.empty()) out.push_back(e);
  return out;
}

void HealthState::save(const fs::path& path) const {
  Json events = Json::array();
  for (const auto& e : events_) events.push_back(event_json(e));
  const Json doc{{keys::kSchema, kStateSchema}, {kChecks, checks_}, {kEvents, std::move(events)}};
  std::error_code ec;
  if (path.has_parent_path()) fs::create_directories(path.parent_path(), ec);
  // Complete or untouched: a --quick run killed by its caller's timeout leaves the old state.
  write_output_file(path.string(), doc.dump(2) + "\n", "--state");
}

std::optional<fs::path> default_state_path(const EnvMap& env) {
  auto var = [&](const char* name) {
    auto it = env.find(name);
    return it == env.end() ? std::string() : it->second;
  };
  std::vector<fs::path> candidates;
  if (const std::string xdg = var("XDG_STATE_HOME"); !xdg.empty()) candidates.emplace_back(xdg);
  candidates.emplace_back("/var/lib");
  if (const std::string home = var("HOME"); !home.empty())
    candidates.push_back(fs::path(home) / ".local" / "state");
  for (const auto& base : candidates) {
    const fs::path dir = base / "gpucheck";
    if (can_write_into(dir)) return dir / "state.json";
  }
  return std::nullopt;
}

}  // namespace gpucheck::doctor

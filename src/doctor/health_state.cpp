// Reading, applying and writing doctor's state file.
#include "doctor/health_state.h"

#include "core/errors.h"
#include "core/files.h"
#include "core/json_keys.h"
#include "core/output_file.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
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
constexpr std::size_t kMaxAcknowledgedKept = 64;  // history; unacknowledged ones are all kept

Json event_json(const StateEvent& e) {
  Json j{{keys::kCheck, e.check},
         {keys::kStatus, to_string(e.status)},
         {keys::kFinding, e.finding},
         {keys::kTime, e.time}};
  if (!e.acknowledged.empty()) j[kAcknowledged] = e.acknowledged;
  return j;
}

StateEvent event_from(const Json& j, const fs::path& path) {
  StateEvent e;
  if (!j.is_object() || !j.contains(keys::kCheck) || !j[keys::kCheck].is_string())
    throw UsageError(fmt::format("--state: '{}' holds an event without \"check\"", path.string()));
  e.check = j[keys::kCheck].get<std::string>();
  e.status = check_status_from_string(j.value(keys::kStatus, std::string("fail")))
                 .value_or(CheckStatus::kFail);
  e.finding = j.value(keys::kFinding, std::string());
  e.time = j.value(keys::kTime, std::string());
  e.acknowledged = j.value(kAcknowledged, std::string());
  return e;
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

}  // namespace

HealthState HealthState::load(const fs::path& path) {
  HealthState s;
  std::error_code ec;
  if (!fs::exists(path, ec)) return s;
  auto text = read_text_file(path, 16u << 20);
  if (!text)
    throw UsageError(
        fmt::format("--state: cannot read '{}' ({})", path.string(), std::strerror(errno)));
  Json doc = Json::parse(*text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object() ||
      doc.value(keys::kSchema, std::string()) != kStateSchema)
    throw UsageError(fmt::format(
        "--state: '{}' is not a gpucheck state file (schema {}); move it away to start afresh",
        path.string(), kStateSchema));
  if (auto c = doc.find(kChecks); c != doc.end() && c->is_object()) s.checks_ = *c;
  if (auto ev = doc.find(kEvents); ev != doc.end() && ev->is_array())
    for (const auto& e : *ev) s.events_.push_back(event_from(e, path));
  return s;
}

std::vector<StateEvent> HealthState::apply(std::vector<CheckResult>& results,
                                           const std::string& now) {
  std::vector<StateEvent> raised;
  for (auto& r : results) {
    // Earlier events first: this run's result may already be clean (the delta is zero).
    for (const auto& e : events_) {
      if (e.check != r.id || !e.acknowledged.empty()) continue;
      const std::string note = fmt::format("unacknowledged since {}: {}", e.time, e.finding);
      r.finding = r.status == CheckStatus::kPass ? note : note + "; now: " + r.finding;
      r.status = worse(r.status, e.status);
      if (r.fault == nullptr || r.fault->action == Action::kNone)
        r.fault = find_fault_code("GC-DOCTOR-UNACKNOWLEDGED");
      const std::string ack = fmt::format(
          "once handled, acknowledge it: gpucheck doctor --ack {} (or remove the event from the "
          "state file)",
          r.id);
      if (r.fix.find(ack) == std::string::npos) r.fix = r.fix.empty() ? ack : r.fix + "; " + ack;
      r.evidence.push_back(fmt::format("state file event of {}: {}", e.time, e.finding));
    }
    if (r.state.is_null()) continue;
    if (r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) {
      // Only a check whose state changed this run can have raised something new: with its
      // counters unchanged, the WARN or FAIL comes from the older events above.
      const Json& before = checks_.value(r.id, Json());
      if (before != r.state) raised.push_back({r.id, r.status, r.finding, now, {}});
    }
    checks_[r.id] = r.state;
  }
  events_.insert(events_.end(), raised.begin(), raised.end());
  return raised;
}

std::size_t HealthState::acknowledge(const std::string& check, const std::string& now) {
  std::size_t n = 0;
  for (auto& e : events_)
    if (e.check == check && e.acknowledged.empty()) {
      e.acknowledged = now;
      ++n;
    }
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
  std::size_t acknowledged = 0;
  for (const auto& e : events_)
    if (!e.acknowledged.empty()) ++acknowledged;
  for (const auto& e : events_) {
    // The oldest acknowledged events go first once the history is long.
    if (!e.acknowledged.empty() && acknowledged > kMaxAcknowledgedKept) {
      --acknowledged;
      continue;
    }
    events.push_back(event_json(e));
  }
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

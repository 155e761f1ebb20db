// Verdicts of backend, device and doctor requirements, the dispatch to bench's, and --strict.
#include "qualify/judge.h"

#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "core/safe_regex.h"
#include "qualify/judge_bench.h"
#include "qualify/judge_infiniband.h"
#include "qualify/judge_multigpu.h"
#include "qualify/judge_stress.h"
#include "qualify/toml_reader.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::qualify {

namespace k = keys;
using doctor::CheckStatus;

namespace {

std::vector<Verdict> judge_backend(const Requirement& r, const Observations& obs) {
  // "backend cuda: available, ≥ 1 device(s)": what, then after the last ": " the criterion, as
  // every requirement's words are (the text view's "required" column is that part).
  std::vector<std::string> want;
  if (r.available) want.push_back(*r.available ? "available" : "not available");
  if (r.devices_min) want.push_back(fmt::format("≥ {} device(s)", *r.devices_min));
  std::string words = fmt::format("backend {}: {}", r.backend, join(want));
  Verdict v = verdict_for(r, words);
  v.threshold = r.devices_min ? nlohmann::json(*r.devices_min) : nlohmann::json(*r.available);
  v.unit = r.devices_min ? "devices" : "";
  const nlohmann::json* section = nullptr;
  for (const auto& b : obs.backends)
    if (b.value(std::string(k::kName), "") == r.backend) section = &b;
  std::string status = section ? section->value(std::string(k::kStatus), "") : "absent";
  std::size_t count = 0;
  if (section && section->contains(k::kDevices)) count = (*section)[k::kDevices].size();
  v.measured = r.devices_min ? nlohmann::json(count) : nlohmann::json(status == "available");
  std::vector<std::string> wrong;
  if (r.available && (status == "available") != *r.available)
    wrong.push_back(fmt::format("the {} backend is {}{}", r.backend, status,
                                section && section->contains(k::kReason)
                                    ? ": " + (*section)[k::kReason].get<std::string>()
                                    : ""));
  if (r.devices_min && static_cast<std::int64_t>(count) < *r.devices_min)
    wrong.push_back(fmt::format("{} device(s), {} required", count, *r.devices_min));
  v.outcome = wrong.empty() ? Outcome::kMet : Outcome::kUnmet;
  for (const auto& w : wrong) v.reason += (v.reason.empty() ? "" : "; ") + w;
  if (v.outcome == Outcome::kMet) v.reason = fmt::format("{}, {} device(s)", status, count);
  return {v};
}

// One device against every criterion: unmet if one fails, else skip if one cannot be seen.
struct DeviceJudgement {
  Outcome outcome = Outcome::kMet;
  std::vector<std::string> measured, failed, unseen;
};

DeviceJudgement judge_one_device(const Requirement& r, const DeviceFacts& d,
                                 const Observations& obs) {
  DeviceJudgement j;
  const BackendDescriptor* desc = find_backend_descriptor(d.backend);
  auto criterion = [&](bool seen, bool ok, const std::string& measured,
                       const std::string& required) {
    if (!seen) {
      j.unseen.push_back(measured);
      return;
    }
    j.measured.push_back(measured);
    if (!ok) j.failed.push_back(fmt::format("{} (required {})", measured, required));
  };
  if (!r.name_regex.empty()) {
    // The profile reader refuses patterns the linear-time matcher does not take; one made
    // otherwise is unmet.
    const auto re = SafeRegex::compile(r.name_regex);
    const auto* matcher = std::get_if<SafeRegex>(&re);
    criterion(true, matcher && matcher->search(d.name), fmt::format("name '{}'", d.name),
              fmt::format("/{}/", r.name_regex));
  }
  if (r.compute_capability_min) {
    std::string cc = d.properties.value("compute_capability", "");
    auto have = version_tuple(cc);
    auto need = version_tuple(*r.compute_capability_min);
    // The profile reader refuses versions that do not parse; a requirement made otherwise
    // (no reader) is unmet, never judged through an empty optional.
    criterion(have.has_value(), have && need && compare_versions(*have, *need) >= 0,
              have ? "compute capability " + cc
                   : fmt::format("compute capability not known for a {} device", d.backend),
              "≥ " + *r.compute_capability_min);
  }
  if (r.memory_gib_min) {
    std::optional<double> bytes;
    if (desc && desc->memory_bytes) bytes = desc->memory_bytes(d.properties);
    if (backend_is_host_cpu(d.backend) && obs.memory.contains(k::kTotalBytes))
      bytes = obs.memory[k::kTotalBytes].get<double>();
    double gib = bytes.value_or(0) / (1024.0 * 1024 * 1024);
    criterion(bytes.has_value(), gib >= *r.memory_gib_min,
              bytes ? fmt::format("memory {:.1f} GiB", gib) : std::string("memory size not known"),
              fmt::format("≥ {} GiB", *r.memory_gib_min));
  }
  if (r.driver_min) {
    static const nlohmann::json kNoSection = nlohmann::json::object();
    const nlohmann::json* section = &kNoSection;
    for (const auto& b : obs.backends)
      if (b.value(std::string(k::kName), "") == d.backend) section = &b;
    std::string version;
    if (desc && desc->driver_version) version = desc->driver_version(*section, d.properties);
    auto have = version_tuple(version);
    auto need = version_tuple(*r.driver_min);
    criterion(have.has_value(), have && need && compare_versions(*have, *need) >= 0,
              have ? "driver " + version : fmt::format("driver version not known for {}", d.device),
              "≥ " + *r.driver_min);
  }
  j.outcome = !j.failed.empty()   ? Outcome::kUnmet
              : !j.unseen.empty() ? Outcome::kSkip
                                  : Outcome::kMet;
  return j;
}

std::vector<Verdict> judge_device(const Requirement& r, const Observations& obs) {
  std::vector<std::string> want;
  if (!r.name_regex.empty()) want.push_back("name ~ /" + r.name_regex + "/");
  if (r.compute_capability_min) want.push_back("compute capability ≥ " + *r.compute_capability_min);
  if (r.memory_gib_min) want.push_back(fmt::format("memory ≥ {} GiB", *r.memory_gib_min));
  if (r.driver_min) want.push_back("driver ≥ " + *r.driver_min);
  std::string subject =
      r.selector == Selector::kNamed
          ? r.device
          : (r.selector == Selector::kEach ? "each " : "a ") +
                (r.backend.empty() ? std::string("device") : r.backend + " device");
  std::string words = want.empty() ? subject : subject + ": " + join(want);
  auto devices = select_devices(r, list_devices(obs.backends));
  if (devices.empty()) {
    Verdict v = verdict_for(r, words);
    v.threshold = join(want);
    v.outcome = Outcome::kUnmet;
    v.reason = why_no_device(r, obs.backends);
    return {v};
  }
  std::vector<Verdict> out;
  for (const auto& d : devices) {
    DeviceJudgement j = judge_one_device(r, d, obs);
    Verdict v = verdict_for(r, words);
    v.device = d.device;
    v.device_name = d.name;
    v.measured = join(j.measured);
    v.threshold = join(want);
    v.outcome = j.outcome;
    if (!j.failed.empty())
      v.reason = join(j.failed);
    else if (!j.unseen.empty())
      v.reason = "not observable: " + join(j.unseen);
    out.push_back(std::move(v));
  }
  if (r.selector == Selector::kEach) return out;
  return {pick_any(out)};
}

std::vector<Verdict> judge_doctor(const Requirement& r, const Observations& obs) {
  std::string limit(doctor::to_string(r.max_status));
  Verdict v = verdict_for(
      r, !r.check.empty() ? fmt::format("doctor check {}: at most {}", r.check, limit)
         : r.ignore.empty()
             ? fmt::format("doctor: no check worse than {}", limit)
             : fmt::format("doctor (but {}): no check worse than {}", join(r.ignore), limit));
  v.threshold = limit;
  std::optional<CheckStatus> worst;
  std::vector<std::string> at_worst, skipped;
  for (const auto& c : obs.checks) {
    std::string id = c.value(std::string(k::kId), "");
    if (!r.check.empty() && id != r.check) continue;
    if (std::find(r.ignore.begin(), r.ignore.end(), id) != r.ignore.end()) continue;
    auto s = doctor::check_status_from_string(c.value(std::string(k::kStatus), ""));
    if (!s) continue;
    if (*s == CheckStatus::kSkip) {
      skipped.push_back(fmt::format("{}: {}", id, c.value(std::string(k::kFinding), "")));
      continue;
    }
    if (!worst || *s > *worst) {
      worst = *s;
      at_worst.clear();
    }
    if (*s == *worst) at_worst.push_back(id + ": " + c.value(std::string(k::kFinding), ""));
  }
  if (!worst) {
    v.measured = skipped.empty() ? nlohmann::json() : nlohmann::json("skip");
    v.outcome = Outcome::kSkip;
    v.reason = skipped.empty() ? std::string("the check did not run") : join(skipped);
    return {v};
  }
  v.measured = std::string(doctor::to_string(*worst));
  v.outcome = *worst <= r.max_status ? Outcome::kMet : Outcome::kUnmet;
  if (v.outcome == Outcome::kUnmet) {
    v.reason = join(at_worst);
  } else {  // met: the ids at the worst status are enough
    for (auto& w : at_worst) w = w.substr(0, w.find(':'));
    v.reason = fmt::format("worst {}: {}", doctor::to_string(*worst), join(at_worst));
  }
  return {v};
}

}  // namespace

Verdict pick_any(const std::vector<Verdict>& per_device) {
  for (const auto& v : per_device)
    if (v.outcome == Outcome::kMet) return v;
  for (const auto& v : per_device)
    if (v.outcome == Outcome::kSkip) return v;
  Verdict v = per_device.front();
  v.device.clear();
  v.device_name.clear();
  v.reason.clear();
  for (const auto& d : per_device)
    v.reason += fmt::format("{}{}: {}", v.reason.empty() ? "" : "; ", d.device, d.reason);
  return v;
}

std::string_view to_string(Outcome o) {
  switch (o) {
    case Outcome::kMet:
      return "met";
    case Outcome::kUnmet:
      return "unmet";
    case Outcome::kSkip:
      return "skip";
  }
  return "skip";
}

nlohmann::json Verdict::to_json() const {
  nlohmann::json j = {{k::kId, id},
                      {k::kKind, to_string(kind)},
                      {k::kRequirement, requirement},
                      {k::kMeasured, measured},
                      {k::kThreshold, threshold},
                      {k::kVerdict, to_string(outcome)}};
  if (!unit.empty()) j[k::kUnit] = unit;
  if (!reason.empty())
    j[k::kReason] = reason;
  else if (outcome != Outcome::kMet)
    j[k::kReason] = "no reason recorded";
  if (!device.empty()) j[k::kDevice] = device;
  if (!device_name.empty()) j[k::kDeviceName] = device_name;
  if (line > 0) j[k::kLine] = line;
  return j;
}

Verdict verdict_for(const Requirement& r, std::string words, std::string device) {
  Verdict v;
  v.id = r.id;
  v.kind = r.kind;
  v.line = r.line;
  v.requirement = std::move(words);
  v.device = std::move(device);
  return v;
}

std::vector<Verdict> judge(const Requirement& r, const Observations& obs) {
  switch (r.kind) {
    case Kind::kBackend:
      return judge_backend(r, obs);
    case Kind::kDevice:
      return judge_device(r, obs);
    case Kind::kDoctor:
      return judge_doctor(r, obs);
    case Kind::kBench:
      return judge_bench(r, obs);
    case Kind::kStress:
      return judge_stress(r, obs);
    case Kind::kP2p:
      return judge_p2p(r, obs);
    case Kind::kAllreduce:
      return judge_allreduce(r, obs);
    case Kind::kSiblings:
      return judge_siblings(r, obs);
    case Kind::kInfiniband:
      return judge_infiniband(r, obs);
  }
  return {};
}

void apply_strict(std::vector<Verdict>& verdicts) {
  for (auto& v : verdicts)
    if (v.outcome == Outcome::kSkip) {
      v.outcome = Outcome::kUnmet;
      v.reason = "skipped, and --strict counts a skip as unmet: " + v.reason;
    }
}

}  // namespace gpucheck::qualify

// The registry over the explicit list of checks (check_defs.h; no static self-registration:
// linkers drop it from static libraries) and the runner, which is doctor's only catch boundary.
#include "doctor/registry.h"

#include "core/closest_word.h"
#include "core/errors.h"
#include "doctor/check_defs.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>

namespace gpucheck::doctor {

std::span<const CheckDef> all_checks() {
  return kCheckDefs;
}

const CheckDef* find_check(std::string_view id) {
  const auto& checks = all_checks();
  auto it =
      std::find_if(checks.begin(), checks.end(), [&](const CheckDef& c) { return c.id == id; });
  return it == checks.end() ? nullptr : &*it;
}

CheckResult run_check(const CheckDef& check, const SystemView& view) {
  CheckResult r;
  try {
    r = check.run(view);
  } catch (const NotObservable& e) {
    r = skip(e.what());
  } catch (const std::exception& e) {
    // Facts of an unexpected shape (a JSON type error) or a bug: the check cannot judge.
    r = skip(fmt::format("the check could not read what it needs ({})", e.what()));
  }
  r.id = std::string(check.id);
  const bool problem = r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail;
  if (problem && r.fix.empty()) r.fix = "(no fix known: please report this check's finding)";
  // PASS, INFO and SKIP carry the check's own code; a WARN or FAIL one of its failure codes. A
  // code of another check, or none, is a bug in the check: GC-DOCTOR-UNCODED says so.
  if (!problem)
    r.fault = own_code(check.id);
  else if (r.fault != nullptr && (r.fault->check != check.id || r.fault->action == Action::kNone))
    r.fault = nullptr;
  return r;
}

std::string unknown_check_id(std::string_view flag, std::string_view id) {
  std::vector<std::string> ids;
  for (const auto& c : all_checks()) ids.emplace_back(c.id);
  return fmt::format("{}: unknown check id {}{}", flag, id, did_you_mean(id, ids));
}

std::vector<const CheckDef*> select_checks(const std::vector<std::string>& only,
                                           const std::vector<std::string>& skip) {
  std::vector<std::string> problems;
  for (const auto& [flag, list] : {std::pair{"--only", &only}, std::pair{"--skip", &skip}})
    for (const auto& id : *list)
      if (find_check(id) == nullptr) problems.push_back(unknown_check_id(flag, id));
  if (!problems.empty())
    throw UsageError(fmt::format("{} (gpucheck doctor --list lists the {} ids)",
                                 fmt::join(problems, "; "), all_checks().size()));
  std::vector<const CheckDef*> out;
  for (const auto& c : all_checks()) {
    const std::string id(c.id);
    if (!only.empty() && std::find(only.begin(), only.end(), id) == only.end()) continue;
    if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    out.push_back(&c);
  }
  return out;
}

std::vector<CheckResult> run_checks(const std::vector<const CheckDef*>& checks,
                                    const SystemView& view) {
  std::vector<CheckResult> out;
  out.reserve(checks.size());
  for (const auto* c : checks) out.push_back(run_check(*c, view));
  return out;
}

}  // namespace gpucheck::doctor

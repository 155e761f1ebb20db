// Check statuses, their JSON form and the result builders.
#include "doctor/check.h"

#include "core/json_keys.h"
#include "core/json_keys_inject.h"
#include "core/sanitize.h"

#include <array>
#include <utility>

namespace gpucheck::doctor {

namespace {

constexpr std::array<std::pair<CheckStatus, std::string_view>, 5> kNames{{
    {CheckStatus::kPass, "pass"},
    {CheckStatus::kInfo, "info"},
    {CheckStatus::kSkip, "skip"},
    {CheckStatus::kWarn, "warn"},
    {CheckStatus::kFail, "fail"},
}};

CheckResult make(CheckStatus status, std::string finding, std::string fix,
                 std::vector<std::string> evidence, const FaultCode* fault = nullptr) {
  CheckResult r;
  r.status = status;
  r.fault = fault;
  r.finding = std::move(finding);
  r.fix = std::move(fix);
  r.evidence = std::move(evidence);
  return r;
}

}  // namespace

std::string_view to_string(CheckStatus s) {
  for (const auto& [status, name] : kNames)
    if (status == s) return name;
  return "skip";
}

std::optional<CheckStatus> check_status_from_string(std::string_view s) {
  for (const auto& [status, name] : kNames)
    if (name == s) return status;
  return std::nullopt;
}

CheckStatus worse(CheckStatus a, CheckStatus b) {
  return static_cast<int>(a) >= static_cast<int>(b) ? a : b;
}

const FaultCode& CheckResult::code() const {
  if (fault != nullptr) return *fault;
  if (status == CheckStatus::kWarn || status == CheckStatus::kFail)
    return *find_fault_code("GC-DOCTOR-UNCODED");
  if (const FaultCode* own = own_code(id)) return *own;
  return *find_fault_code("GC-DOCTOR-UNCODED");
}

nlohmann::json CheckResult::to_json() const {
  // Findings quote file contents and environment values: sanitised where they enter the JSON.
  nlohmann::json evidence_json = nlohmann::json::array();
  for (const auto& e : evidence) evidence_json.push_back(sanitize(e));
  nlohmann::json j{{keys::kId, id},
                   {keys::kStatus, to_string(status)},
                   {keys::kCode, code().code},
                   {keys::kAction, to_string(code().action)},
                   {keys::kRecoveryAction, to_string(recovery_action(code()))},
                   {keys::kFinding, sanitize(finding)},
                   {keys::kEvidence, std::move(evidence_json)}};
  if (!fix.empty()) j[keys::kFix] = sanitize(fix);
  if (injected) j[keys::kInjected] = true;
  return j;
}

CheckResult pass(std::string finding, std::vector<std::string> evidence) {
  return make(CheckStatus::kPass, std::move(finding), {}, std::move(evidence));
}
CheckResult info(std::string finding, std::vector<std::string> evidence) {
  return make(CheckStatus::kInfo, std::move(finding), {}, std::move(evidence));
}
CheckResult warn(Code code, std::string finding, std::string fix,
                 std::vector<std::string> evidence) {
  return make(CheckStatus::kWarn, std::move(finding), std::move(fix), std::move(evidence),
              code.get());
}
CheckResult fail(Code code, std::string finding, std::string fix,
                 std::vector<std::string> evidence) {
  return make(CheckStatus::kFail, std::move(finding), std::move(fix), std::move(evidence),
              code.get());
}
CheckResult warn(std::string finding, std::string fix, std::vector<std::string> evidence) {
  return make(CheckStatus::kWarn, std::move(finding), std::move(fix), std::move(evidence));
}
CheckResult fail(std::string finding, std::string fix, std::vector<std::string> evidence) {
  return make(CheckStatus::kFail, std::move(finding), std::move(fix), std::move(evidence));
}
CheckResult skip(std::string why, std::vector<std::string> evidence) {
  return make(CheckStatus::kSkip, "not observable here: " + why, {}, std::move(evidence));
}

}  // namespace gpucheck::doctor

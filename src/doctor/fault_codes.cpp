// Names of the repair actions and look-ups in the table of fault codes.
#include "doctor/fault_codes.h"

#include <array>
#include <utility>

namespace gpucheck::doctor {

namespace {

constexpr std::array<std::pair<Action, std::string_view>, 8> kActionNames{{
    {Action::kNone, "none"},
    {Action::kFixConfig, "fix_config"},
    {Action::kUpdateDriverOrLibrary, "update_driver_or_library"},
    {Action::kResetGpu, "reset_gpu"},
    {Action::kReboot, "reboot"},
    {Action::kDrainAndDiagnose, "drain_and_diagnose"},
    {Action::kReplaceHardware, "replace_hardware"},
    {Action::kContactVendor, "contact_vendor"},
}};

}  // namespace

std::string_view to_string(Action a) {
  for (const auto& [action, name] : kActionNames)
    if (action == a) return name;
  return "none";
}

std::optional<Action> action_from_string(std::string_view s) {
  for (const auto& [action, name] : kActionNames)
    if (name == s) return action;
  return std::nullopt;
}

std::span<const FaultCode> all_fault_codes() {
  return kFaultCodes;
}

const FaultCode* find_fault_code(std::string_view code) {
  for (const auto& f : kFaultCodes)
    if (f.code == code) return &f;
  return nullptr;
}

const FaultCode* own_code(std::string_view check) {
  for (const auto& f : kFaultCodes)
    if (f.check == check && f.action == Action::kNone) return &f;
  return nullptr;
}

}  // namespace gpucheck::doctor

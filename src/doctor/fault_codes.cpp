// Names of the repair and recovery actions and look-ups in the table of fault codes that
// check_defs.h derives from the checks' entries.
#include "doctor/fault_codes.h"

#include "doctor/check_defs.h"

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

constexpr std::array<std::pair<RecoveryAction, std::string_view>, 5> kRecoveryNames{{
    {RecoveryAction::kNone, "NONE"},
    {RecoveryAction::kGpuReset, "GPU_RESET"},
    {RecoveryAction::kNodeReboot, "NODE_REBOOT"},
    {RecoveryAction::kDrainP2p, "DRAIN_P2P"},
    {RecoveryAction::kDrainAndReset, "DRAIN_AND_RESET"},
}};

// Each table starts with its "nothing to do" word, the name of a value it lacks.
template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<E, std::string_view>, N>& names, E e) {
  for (const auto& [value, name] : names)
    if (value == e) return name;
  return names.front().second;
}

template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<E, std::string_view>, N>& names,
                          std::string_view s) {
  for (const auto& [value, name] : names)
    if (name == s) return value;
  return std::nullopt;
}

}  // namespace

std::string_view to_string(Action a) {
  return name_of(kActionNames, a);
}

std::optional<Action> action_from_string(std::string_view s) {
  return value_of(kActionNames, s);
}

std::string_view to_string(RecoveryAction r) {
  return name_of(kRecoveryNames, r);
}

std::optional<RecoveryAction> recovery_action_from_string(std::string_view s) {
  return value_of(kRecoveryNames, s);
}

RecoveryAction recovery_action(const FaultCode& f) {
  return f.recovery.value_or(recovery_for(f.action));
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

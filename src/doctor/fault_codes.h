// The words of doctor's fault codes: the repair action a code calls for and the recovery action
// in NVML's words, derived from the repair action where the code names none. The codes
// themselves, each under the check that gives it, are doctor/check_defs.h's; docs/FLEET.md
// explains both actions.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace gpucheck::doctor {

// What a remediation system does with a finding, modelled on DCGM's and NVSentinel's actions;
// ordered from nothing to the vendor.
enum class Action {
  kNone,                   // PASS, INFO, SKIP: nothing to do
  kFixConfig,              // change a setting, a variable, a permission or a service
  kUpdateDriverOrLibrary,  // install, update or reinstall a driver or a library
  kResetGpu,               // reset the GPU (nvidia-smi -r) with nothing running on it
  kReboot,                 // reboot the node
  kDrainAndDiagnose,       // drain the node and run field diagnostics (dcgmi diag -r 3)
  kReplaceHardware,        // reseat or replace a GPU, bridge, board or cable
  kContactVendor,          // the fault is the vendor's to diagnose
};

// "none", "fix_config", "update_driver_or_library", "reset_gpu", "reboot",
// "drain_and_diagnose", "replace_hardware", "contact_vendor".
std::string_view to_string(Action a);
std::optional<Action> action_from_string(std::string_view s);

// NVML's nvmlGpuRecoveryAction_t, the words a fleet controller (NVSentinel, a drain script)
// already acts on; a finding names one beside its Action.
enum class RecoveryAction {
  kNone,           // NONE: nothing to do at the GPU level
  kGpuReset,       // GPU_RESET: stop the GPU's processes and reset it
  kNodeReboot,     // NODE_REBOOT: reboot the node
  kDrainP2p,       // DRAIN_P2P: stop peer-to-peer (NVLink) work on the node
  kDrainAndReset,  // DRAIN_AND_RESET: drain the GPU's work, peer traffic included, then reset
};

// "NONE", "GPU_RESET", "NODE_REBOOT", "DRAIN_P2P", "DRAIN_AND_RESET".
std::string_view to_string(RecoveryAction r);
std::optional<RecoveryAction> recovery_action_from_string(std::string_view s);

// What an Action means for the GPU. Settings, drivers and libraries: no GPU-level recovery
// helps. Hardware faults and diagnostics: keep work off the GPU and reset it.
constexpr RecoveryAction recovery_for(Action a) {
  switch (a) {
    case Action::kResetGpu:
      return RecoveryAction::kGpuReset;
    case Action::kReboot:
      return RecoveryAction::kNodeReboot;
    case Action::kDrainAndDiagnose:
    case Action::kReplaceHardware:
    case Action::kContactVendor:
      return RecoveryAction::kDrainAndReset;
    case Action::kNone:
    case Action::kFixConfig:
    case Action::kUpdateDriverOrLibrary:
      break;
  }
  return RecoveryAction::kNone;
}

// A code as its check declares it (doctor/check_defs.h): the check is the entry it sits in.
struct CodeDef {
  std::string_view code;  // GC-<TOPIC>-<WHAT>
  Action action = Action::kNone;
  std::string_view meaning;
  // Only where the action alone does not say what the GPU needs (docs/FLEET.md's overrides).
  std::optional<RecoveryAction> recovery = std::nullopt;
};

struct FaultCode {
  std::string_view code;   // GC-<TOPIC>-<WHAT>
  std::string_view check;  // the check id that gives it ("doctor": doctor itself)
  Action action = Action::kNone;
  std::string_view meaning;
  std::optional<RecoveryAction> recovery = std::nullopt;  // as CodeDef's
};

// Every code: doctor's own, then each check's in the registry's order.
std::span<const FaultCode> all_fault_codes();
// The recovery action of a code: the one it names, else recovery_for(its action).
RecoveryAction recovery_action(const FaultCode& f);
const FaultCode* find_fault_code(std::string_view code);
// The check's own code (action none), or nullptr for an unknown check.
const FaultCode* own_code(std::string_view check);

// A code named in a check's source: Code{"GC-NVLINK-REPLAY"} or "GC-NVLINK-REPLAY"_gc, both
// from doctor/check_defs.h. A code no check declares does not compile. Default: the check's own
// code.
class Code {
 public:
  constexpr Code() = default;
  consteval explicit Code(std::string_view code);  // defined beside the codes, check_defs.h
  const FaultCode* get() const { return fault_; }

 private:
  const FaultCode* fault_ = nullptr;
};

}  // namespace gpucheck::doctor

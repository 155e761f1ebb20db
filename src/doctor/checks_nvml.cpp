// What NVML says of each GPU: MIG, compute mode, ECC and row remapping, persistence mode, and
// the PCIe link and clocks-event reasons, read while doctor's load run kept the GPU busy (or
// idle, when no CUDA device could be loaded, and judged as idle readings).
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

bool flag(const Json& f, const char* key) {
  auto it = f.find(key);
  return it != f.end() && it->is_boolean() && it->get<bool>();
}

std::optional<unsigned long long> number(const Json& obj, const char* key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number_unsigned()) return std::nullopt;
  return it->get<unsigned long long>();
}

// The load run's entry for a GPU CUDA sees; nullptr when none ran (no CUDA device, --no-load).
const Json* load_entry(const SystemView& view, const NvmlGpu& gpu) {
  if (gpu.cuda_device == nullptr) return nullptr;
  const Json& cuda = cuda_section(view);
  const std::string device = text(*gpu.cuda_device, k::kDevice);
  for (const auto& e : array_at(cuda, k::kUnderLoad))
    if (text(e, k::kDevice) == device) return &e;
  return nullptr;
}

// Why a GPU was read idle, for the finding.
std::string idle_because(const SystemView& view, const NvmlGpu& gpu, const Json* entry) {
  if (entry != nullptr && text(*entry, k::kStatus) == "ok")
    return "read idle: the load run's NVML samples hold no such reading";
  if (entry != nullptr)
    return fmt::format("the load run failed ({}), so read idle", text(*entry, k::kReason));
  if (gpu.cuda_device == nullptr) {
    const Json& cuda = cuda_section(view);
    return fmt::format("read idle: CUDA cannot load this GPU ({})", text(cuda, k::kReason).empty()
                                                                        ? "CUDA does not see it"
                                                                        : text(cuda, k::kReason));
  }
  return "read idle: the load run did not run (--no-load)";
}

bool ran_under_load(const Json* entry) {
  return entry != nullptr && text(*entry, k::kStatus) == "ok";
}

}  // namespace

// ---- nvidia_mig ----

CheckResult check_nvidia_mig(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence{nvml_origin(view)};
  std::vector<std::string> enabled;
  for (const auto& g : gpus) {
    const Json& f = *g.fields;
    if (!f.contains("mig_mode_current")) {
      evidence.push_back(g.label + ": no MIG support");
      continue;
    }
    const bool cur = flag(f, "mig_mode_current"), pending = flag(f, "mig_mode_pending");
    const auto instances = number(f, k::kMigDevices.data());
    evidence.push_back(fmt::format("{}: MIG {} (pending {}){}", g.label, cur ? "on" : "off",
                                   pending ? "on" : "off",
                                   instances ? fmt::format(", {} MIG devices", *instances) : ""));
    if (cur != pending)
      findings.push_back({CheckStatus::kWarn, "GC-MIG-PENDING"_gc,
                          fmt::format("{}: MIG mode change to {} is pending a GPU reset", g.label,
                                      pending ? "on" : "off"),
                          "reset the GPU (sudo nvidia-smi -r -i <index>, with nothing running on "
                          "it) or reboot"});
    if (!cur) continue;
    enabled.push_back(g.label);
    if (instances && *instances == 0)
      findings.push_back(
          {CheckStatus::kFail, "GC-MIG-NO-INSTANCE"_gc,
           fmt::format("{}: MIG is enabled but no GPU instance exists: CUDA sees no device on it",
                       g.label),
           "create instances (sudo nvidia-smi mig -cgi 1g.10gb,1g.10gb -C; nvidia-smi mig -lgip "
           "lists the profiles) or disable MIG (sudo nvidia-smi -mig 0)"});
  }
  if (findings.empty() && !enabled.empty())
    return info(fmt::format("MIG is enabled with instances on {}: CUDA sees MIG devices, not "
                            "whole GPUs",
                            join(enabled, ", ")),
                evidence);
  return combine(findings, evidence, "MIG is off on every GPU (CUDA sees whole GPUs)");
}

// ---- nvidia_compute_mode ----

CheckResult check_nvidia_compute_mode(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence{nvml_origin(view)};
  for (const auto& g : gpus) {
    std::string mode = text(*g.fields, "compute_mode");
    if (mode.empty() && g.cuda_device != nullptr)
      mode = text((*g.cuda_device).value(k::kProperties, Json::object()), "compute_mode");
    if (mode.empty()) continue;
    evidence.push_back(fmt::format("{}: compute mode {}", g.label, mode));
    if (mode == "prohibited")
      findings.push_back({CheckStatus::kFail, "GC-COMPUTE-PROHIBITED"_gc,
                          g.label + ": compute mode PROHIBITED: no process may create a CUDA "
                                    "context on it",
                          "sudo nvidia-smi -c DEFAULT -i <index> (unless an administrator "
                          "reserved the GPU on purpose)"});
    else if (mode.rfind("exclusive", 0) == 0)
      findings.push_back({CheckStatus::kWarn, "GC-COMPUTE-EXCLUSIVE"_gc,
                          g.label + ": compute mode " + mode +
                              ": one process at a time; a second (a DataLoader worker, a "
                              "second job) fails with cudaErrorDevicesUnavailable",
                          "sudo nvidia-smi -c DEFAULT -i <index>, unless the scheduler set it on "
                          "purpose (MPS needs EXCLUSIVE_PROCESS)"});
  }
  if (evidence.size() == 1) throw NotObservable("NVML and CUDA report no compute mode");
  return combine(findings, evidence, "every GPU is in the DEFAULT compute mode");
}

// ---- nvidia_ecc ----

CheckResult check_nvidia_ecc(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence{nvml_origin(view)};
  const std::string reset_fix =
      "drain the GPU and reset it (sudo nvidia-smi -r -i <index>) or reboot: a pending remap is "
      "applied then; if remapping failed or uncorrectable errors return, the GPU needs service";
  std::size_t with_ecc = 0;
  for (const auto& g : gpus) {
    const Json& f = *g.fields;
    const Json ecc = f.value("ecc_errors", Json::object());
    const Json rows = f.value("remapped_rows", Json::object());
    const Json pages = f.value("retired_pages", Json::object());
    if (f.contains("ecc_mode_current")) {
      ++with_ecc;
      evidence.push_back(fmt::format("{}: ECC {}{}", g.label,
                                     flag(f, "ecc_mode_current") ? "on" : "off",
                                     flag(f, "ecc_mode_pending") != flag(f, "ecc_mode_current")
                                         ? " (a change is pending a reset)"
                                         : ""));
      if (!flag(f, "ecc_mode_current"))
        findings.push_back({CheckStatus::kInfo, {}, g.label + ": ECC is off", ""});
    }
    if (!ecc.empty()) evidence.push_back(g.label + ": ECC errors " + ecc.dump());
    if (!rows.empty()) evidence.push_back(g.label + ": remapped rows " + rows.dump());
    if (!pages.empty()) evidence.push_back(g.label + ": retired pages " + pages.dump());
    if (auto v = number(ecc, "volatile_uncorrected"); v && *v > 0)
      findings.push_back({CheckStatus::kFail, "GC-ECC-UNCORRECTABLE"_gc,
                          fmt::format("{}: {} uncorrectable ECC error{} since the driver loaded",
                                      g.label, *v, *v == 1 ? "" : "s"),
                          reset_fix});
    if (flag(rows, "pending"))
      findings.push_back({CheckStatus::kFail, "GC-ECC-REMAP-PENDING"_gc,
                          g.label + ": a row remap is pending (needs a GPU reset)", reset_fix});
    if (flag(rows, "failure"))
      findings.push_back({CheckStatus::kFail, "GC-ECC-REMAP-FAILED"_gc,
                          g.label + ": row remapping failed (no spare rows left)", reset_fix});
    if (flag(pages, "pending"))
      findings.push_back({CheckStatus::kFail, "GC-ECC-REMAP-PENDING"_gc,
                          g.label + ": retired pages are pending (need a GPU reset)", reset_fix});
    std::vector<std::string> lifetime;
    for (const char* key : {"aggregate_uncorrected", "aggregate_corrected"})
      if (auto v = number(ecc, key); v && *v > 0) lifetime.push_back(fmt::format("{} {}", *v, key));
    for (const char* key : {"uncorrectable", "correctable"})
      if (auto v = number(rows, key); v && *v > 0)
        lifetime.push_back(fmt::format("{} rows remapped ({})", *v, key));
    for (const char* key : {"double_bit", "multiple_single_bit"})
      if (auto v = number(pages, key); v && *v > 0)
        lifetime.push_back(fmt::format("{} pages retired ({})", *v, key));
    if (!lifetime.empty())
      findings.push_back({CheckStatus::kInfo,
                          {},
                          fmt::format("{}: lifetime counts {}", g.label, join(lifetime, ", ")),
                          ""});
  }
  if (with_ecc == 0 && findings.empty())
    return info("no GPU reports an ECC mode (GPUs without ECC memory)", evidence);
  return combine(findings, evidence,
                 "ECC on, no uncorrectable error since the driver loaded, no pending or failed "
                 "row remap");
}

// ---- nvidia_persistence_mode ----

CheckResult check_nvidia_persistence_mode(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<std::string> evidence{nvml_origin(view)};
  std::vector<std::string> off;
  for (const auto& g : gpus) {
    if (!g.fields->contains("persistence_mode")) continue;
    const bool on = flag(*g.fields, "persistence_mode");
    evidence.push_back(fmt::format("{}: persistence mode {}", g.label, on ? "on" : "off"));
    if (!on) off.push_back(g.label);
  }
  if (evidence.size() == 1) throw NotObservable("NVML reports no persistence mode for any GPU");
  if (off.empty()) return pass("persistence mode is on for every GPU", evidence);
  auto ci = view.env_value("CI");
  const bool on_ci = view.ci || (ci && !ci->empty() && *ci != "0" && *ci != "false");
  evidence.push_back(view.ci ? "--ci given" : ci ? "CI='" + *ci + "'" : "CI not set");
  const std::string finding = fmt::format(
      "persistence mode is off on {}: the driver tears the GPU down whenever no process holds it, "
      "so every short job pays seconds of initialisation and loses its clocks settings",
      join(off, ", "));
  const std::string fix =
      "sudo systemctl enable --now nvidia-persistenced (or sudo nvidia-smi -pm 1, lost at reboot)";
  if (on_ci)
    return warn("GC-PERSISTENCE-OFF"_gc, finding + " (on CI, where every job is short)", fix,
                evidence);
  return info(finding + " (INFO off CI; WARN with CI set or --ci)", evidence);
}

// ---- pcie_link_under_load ----

CheckResult check_pcie_link_under_load(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence{nvml_origin(view)};
  std::size_t judged = 0, loaded = 0;
  for (const auto& g : gpus) {
    const Json& f = *g.fields;
    const auto max_gen = number(f, "pcie_link_gen_max");
    const auto max_width = number(f, "pcie_link_width_max");
    if (!max_gen || !max_width) continue;
    const Json* entry = load_entry(view, g);
    std::optional<unsigned long long> gen, width;
    std::string how;
    if (ran_under_load(entry) && entry->contains(k::kPcieLinkGen) &&
        entry->contains(k::kPcieLinkWidth)) {
      // The best the link reached while copies ran: a link that trains up at all is healthy.
      gen =
          static_cast<unsigned long long>((*entry)[std::string(k::kPcieLinkGen)].value("max", 0.0));
      width = static_cast<unsigned long long>(
          (*entry)[std::string(k::kPcieLinkWidth)].value("max", 0.0));
      how = fmt::format("under load ({}, {} NVML samples)", text(*entry, k::kWorkload),
                        entry->value(k::kNvmlSamples, 0u));
      ++loaded;
    } else {
      gen = number(f, "pcie_link_gen_current");
      width = number(f, "pcie_link_width_current");
      how = idle_because(view, g, entry);
    }
    if (!gen || !width) continue;
    ++judged;
    evidence.push_back(fmt::format("{}: PCIe gen {} x{} of max gen {} x{}, {}", g.label, *gen,
                                   *width, *max_gen, *max_width, how));
    if (*gen >= *max_gen && *width >= *max_width) continue;
    const std::string text = fmt::format("{}: PCIe link gen {} x{} below its maximum gen {} x{}",
                                         g.label, *gen, *width, *max_gen, *max_width);
    if (how.rfind("under load", 0) == 0)
      findings.push_back({CheckStatus::kWarn, "GC-PCIE-DEGRADED"_gc,
                          text + " under load: host-device copies are slower",
                          "reseat the card or move it to a full-width slot; check the BIOS PCIe "
                          "speed setting and riser cables; nvidia-smi -q -d PCIE shows the link"});
    else
      findings.push_back({CheckStatus::kInfo,
                          {},
                          text + " (" + how + "; idle GPUs drop their link to save power)",
                          ""});
  }
  if (judged == 0) throw NotObservable("NVML reports no PCIe link generation and width");
  return combine(findings, evidence,
                 loaded > 0 ? "every GPU's PCIe link reached its maximum generation and width "
                              "under load"
                            : "every GPU's PCIe link is at its maximum generation and width (read "
                              "idle)");
}

// ---- clocks_under_load ----

CheckResult check_clocks_under_load(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence{nvml_origin(view)};
  static const std::set<std::string> kSlowdown{"hw_slowdown", "sw_thermal_slowdown",
                                               "hw_thermal_slowdown", "hw_power_brake_slowdown"};
  std::size_t judged = 0, loaded = 0;
  for (const auto& g : gpus) {
    const Json* entry = load_entry(view, g);
    Json names;
    std::string how;
    if (ran_under_load(entry) && entry->contains(k::kClocksEventReasons)) {
      names = (*entry)[std::string(k::kClocksEventReasons)];
      how = fmt::format("under load ({})", text(*entry, k::kWorkload));
      ++loaded;
    } else if (g.fields->contains(k::kClocksEventReasons)) {
      names = (*g.fields)[std::string(k::kClocksEventReasons)].value(k::kNames, Json::array());
      how = idle_because(view, g, entry);
    } else {
      continue;
    }
    ++judged;
    std::vector<std::string> seen, slow;
    for (const auto& n : names) {
      seen.push_back(n.get<std::string>());
      if (kSlowdown.contains(seen.back())) slow.push_back(seen.back());
    }
    evidence.push_back(
        fmt::format("{}: clocks-event reasons [{}], {}", g.label, join(seen, ", "), how));
    if (!slow.empty())
      findings.push_back(
          {CheckStatus::kWarn, "GC-CLOCKS-THROTTLED"_gc,
           fmt::format("{}: clocks held down by {} ({})", g.label, join(slow, ", "), how),
           "check cooling and airflow (nvidia-smi -q -d TEMPERATURE,PERFORMANCE), the power "
           "supply and cables (HW slowdown, power brake); benchmarks on this GPU understate it"});
    else if (std::find(seen.begin(), seen.end(), "sw_power_cap") != seen.end())
      findings.push_back({CheckStatus::kInfo,
                          {},
                          fmt::format("{}: clocks limited by the power cap ({}): normal at full "
                                      "load",
                                      g.label, how),
                          ""});
  }
  if (judged == 0) throw NotObservable("NVML reports no clocks-event reasons");
  return combine(findings, evidence,
                 loaded > 0 ? "no thermal, HW slowdown or power-brake clocks event under load"
                            : "no thermal, HW slowdown or power-brake clocks event (read idle)");
}

}  // namespace gpucheck::doctor

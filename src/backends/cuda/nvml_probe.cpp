// NVML's entry points resolved by their versioned names, and one JSON object per GPU.
#include "backends/cuda/nvml_probe.h"

#include "backends/cuda/cuda_probe.h"
#include "backends/cuda/nvml_api.h"
#include "backends/cuda/nvml_links.h"
#include "backends/cuda/nvml_session.h"
#include "core/concurrently.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <climits>
#include <utility>
#include <vector>

namespace gpucheck::cuda {

namespace k = keys;

namespace {

// Collects one device's fields: NOT_SUPPORTED → absent, other failures → errors.
class Fields {
 public:
  nlohmann::json out = nlohmann::json::object();
  nlohmann::json errors = nlohmann::json::object();

  // Calls `call` when the entry point exists; true when it succeeded.
  template <typename Call>
  bool query(const char* key, bool have, Call&& call) {
    if (!have) return false;
    nvml::Return r = call();
    if (r == nvml::kSuccess) return true;
    if (r != nvml::kErrorNotSupported) errors[key] = nvml_error_name(r);
    return false;
  }
};

std::string buffer_string(const char* buf, std::size_t cap) {
  return sanitize_c_buffer(buf, cap);
}

}  // namespace

nlohmann::json clocks_event_reason_names(unsigned long long bits) {
  static constexpr std::pair<unsigned long long, const char*> kNames[] = {
      {nvml::kEventGpuIdle, "gpu_idle"},
      {nvml::kEventApplicationsClocksSetting, "applications_clocks_setting"},
      {nvml::kEventSwPowerCap, "sw_power_cap"},
      {nvml::kEventHwSlowdown, "hw_slowdown"},
      {nvml::kEventSyncBoost, "sync_boost"},
      {nvml::kEventSwThermalSlowdown, "sw_thermal_slowdown"},
      {nvml::kEventHwThermalSlowdown, "hw_thermal_slowdown"},
      {nvml::kEventHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {nvml::kEventDisplayClockSetting, "display_clock_setting"},
  };
  nlohmann::json names = nlohmann::json::array();
  for (const auto& [bit, name] : kNames)
    if (bits & bit) names.push_back(name);
  return names;
}

std::string cpu_list_from_mask(const unsigned long* words, unsigned int count) {
  constexpr unsigned kBits = sizeof(unsigned long) * CHAR_BIT;
  std::string out;
  long start = -1;
  const long total = static_cast<long>(count * kBits);
  for (long cpu = 0; cpu <= total; ++cpu) {
    bool set = cpu < total && ((words[cpu / kBits] >> (cpu % kBits)) & 1UL);
    if (set && start < 0) start = cpu;
    if (!set && start >= 0) {
      if (!out.empty()) out += ",";
      out += (cpu - 1 == start) ? fmt::format("{}", start) : fmt::format("{}-{}", start, cpu - 1);
      start = -1;
    }
  }
  return out;
}

nlohmann::json probe_nvml(const EnvMap& env) {
  nlohmann::json j = {{k::kLoaded, false}};
  std::string error, path;
  auto session = NvmlSession::open(env, &error, &path);
  if (!path.empty()) {
    j[k::kLoaded] = true;
    j[k::kPath] = path;
  }
  if (!session) {
    j[k::kError] = error;
    return j;
  }
  NvmlSession& n = *session;
  auto sys_driver = n.get<nvml::SystemStringFn>("nvmlSystemGetDriverVersion");
  auto sys_nvml = n.get<nvml::SystemStringFn>("nvmlSystemGetNVMLVersion");
  auto sys_cuda = n.get_any<nvml::SystemIntFn>({"nvmlSystemGetCudaDriverVersion_v2"});
  auto count_fn = n.get_any<nvml::DeviceGetCountFn>({"nvmlDeviceGetCount_v2"});
  auto by_index = n.get_any<nvml::DeviceGetHandleByIndexFn>({"nvmlDeviceGetHandleByIndex_v2"});
  auto name_fn = n.get<nvml::DeviceStringFn>("nvmlDeviceGetName");
  auto uuid_fn = n.get<nvml::DeviceStringFn>("nvmlDeviceGetUUID");
  auto serial_fn = n.get<nvml::DeviceStringFn>("nvmlDeviceGetSerial");
  auto vbios_fn = n.get<nvml::DeviceStringFn>("nvmlDeviceGetVbiosVersion");
  auto inforom_fn = n.get<nvml::DeviceStringFn>("nvmlDeviceGetInforomImageVersion");
  auto pci_fn = n.get_any<nvml::DevicePciInfoFn>({"nvmlDeviceGetPciInfo_v3"});
  auto persistence_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPersistenceMode");
  auto pstate_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPerformanceState");
  auto power_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerUsage");
  auto limit_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerManagementLimit");
  auto default_limit_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerManagementDefaultLimit");
  auto constraints_fn =
      n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetPowerManagementLimitConstraints");
  auto enforced_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetEnforcedPowerLimit");
  auto temp_fn = n.get<nvml::DeviceTemperatureFn>("nvmlDeviceGetTemperature");
  auto fan_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetFanSpeed");
  auto clock_fn = n.get<nvml::DeviceClockFn>("nvmlDeviceGetClockInfo");
  auto max_clock_fn = n.get<nvml::DeviceClockFn>("nvmlDeviceGetMaxClockInfo");
  auto mem_fn = n.get_any<nvml::DeviceMemoryFn>({"nvmlDeviceGetMemoryInfo_v2"});
  auto util_fn = n.get<nvml::DeviceUtilizationFn>("nvmlDeviceGetUtilizationRates");
  auto gen_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetCurrPcieLinkGeneration");
  auto width_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetCurrPcieLinkWidth");
  auto max_gen_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxPcieLinkGeneration");
  auto max_width_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxPcieLinkWidth");
  auto replay_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPcieReplayCounter");
  auto ecc_mode_fn = n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetEccMode");
  auto ecc_count_fn = n.get<nvml::DeviceEccCountFn>("nvmlDeviceGetTotalEccErrors");
  auto retired_fn = n.get<nvml::DeviceRetiredPagesFn>("nvmlDeviceGetRetiredPages");
  auto retired_pending_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetRetiredPagesPendingStatus");
  auto remapped_fn = n.get<nvml::DeviceRemappedRowsFn>("nvmlDeviceGetRemappedRows");
  auto mig_fn = n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetMigMode");
  auto compute_mode_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetComputeMode");
  auto max_mig_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxMigDeviceCount");
  auto mig_handle_fn = n.get<nvml::DeviceMigHandleFn>("nvmlDeviceGetMigDeviceHandleByIndex");
  auto reasons_fn = n.get_any<nvml::DeviceUllFn>(
      {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
  auto procs_fn = n.get_any<nvml::DeviceProcessesFn>({"nvmlDeviceGetComputeRunningProcesses_v3"});
  auto numa_fn = n.get<nvml::DeviceUintFn>("nvmlDeviceGetNumaNodeId");
  auto affinity_fn = n.get<nvml::DeviceCpuAffinityFn>("nvmlDeviceGetCpuAffinity");
  const NvLinkFns link_fns = NvLinkFns::resolve(n);
  std::vector<PairGpu> pair_gpus;

  char version[256];
  if (sys_driver && sys_driver(version, nvml::kDriverVersionBufferSize) == nvml::kSuccess)
    j[k::kDriverVersion] = buffer_string(version, nvml::kDriverVersionBufferSize);
  if (sys_nvml && sys_nvml(version, nvml::kDriverVersionBufferSize) == nvml::kSuccess)
    j[k::kNvmlVersion] = buffer_string(version, nvml::kDriverVersionBufferSize);
  int cuda_version = 0;
  if (sys_cuda && sys_cuda(&cuda_version) == nvml::kSuccess)
    j[k::kCudaVersion] = fmt::format("{}.{}", cuda_version / 1000, (cuda_version % 1000) / 10);

  nlohmann::json devices = nlohmann::json::array();
  unsigned int count = 0;
  if (count_fn && count_fn(&count) != nvml::kSuccess) count = 0;
  // One GPU's fields: tens of values and every NVLink's counters, read on its own thread.
  auto read_device = [&](unsigned int i, nvml::Device d) {
    char buf[256];
    Fields f;
    auto& o = f.out;
    o[k::kIndex] = i;
    auto str = [&](const char* key, nvml::DeviceStringFn fn, unsigned int cap) {
      if (f.query(key, fn != nullptr, [&] { return fn(d, buf, cap); }))
        o[key] = buffer_string(buf, cap);
    };
    auto uint = [&](const char* key, nvml::DeviceUintFn fn) {
      unsigned int v = 0;
      if (f.query(key, fn != nullptr, [&] { return fn(d, &v); })) o[key] = v;
    };
    str(k::kDeviceName.data(), name_fn, nvml::kDeviceNameBufferSize);
    str(k::kDeviceUuid.data(), uuid_fn, nvml::kUuidBufferSize);
    str("serial", serial_fn, nvml::kSerialBufferSize);
    str("vbios_version", vbios_fn, nvml::kVbiosBufferSize);
    str("inforom_image_version", inforom_fn, nvml::kInforomBufferSize);
    nvml::PciInfo pci{};
    if (f.query("pci", pci_fn != nullptr, [&] { return pci_fn(d, &pci); }))
      if (auto id = normalize_pci_bus_id(buffer_string(pci.bus_id, sizeof(pci.bus_id))))
        o[k::kPciBusId] = *id;
    unsigned int v = 0, w = 0;
    if (f.query("persistence_mode", persistence_fn != nullptr,
                [&] { return persistence_fn(d, &v); }))
      o["persistence_mode"] = v != 0;
    if (f.query("performance_state", pstate_fn != nullptr, [&] { return pstate_fn(d, &v); }))
      o["performance_state"] = v <= 15 ? fmt::format("P{}", v) : std::string("unknown");
    uint("power_draw_mw", power_fn);
    uint("power_limit_mw", limit_fn);
    uint("power_default_limit_mw", default_limit_fn);
    uint("power_enforced_limit_mw", enforced_fn);
    if (f.query("power_limit_constraints", constraints_fn != nullptr,
                [&] { return constraints_fn(d, &v, &w); })) {
      o["power_min_limit_mw"] = v;
      o["power_max_limit_mw"] = w;
    }
    if (f.query("temperature_c", temp_fn != nullptr,
                [&] { return temp_fn(d, nvml::kTemperatureGpu, &v); }))
      o["temperature_c"] = v;
    uint("fan_percent", fan_fn);
    for (auto [key, type, fn] : {std::tuple{"sm_clock_mhz", nvml::kClockSm, clock_fn},
                                 std::tuple{"mem_clock_mhz", nvml::kClockMem, clock_fn},
                                 std::tuple{"graphics_clock_mhz", nvml::kClockGraphics, clock_fn},
                                 std::tuple{"max_sm_clock_mhz", nvml::kClockSm, max_clock_fn},
                                 std::tuple{"max_mem_clock_mhz", nvml::kClockMem, max_clock_fn}})
      if (f.query(key, fn != nullptr, [&, t = type, g = fn] { return g(d, t, &v); })) o[key] = v;
    nvml::MemoryV2 mem{};
    mem.version = nvml::kMemoryV2Version;
    if (f.query("memory", mem_fn != nullptr, [&] { return mem_fn(d, &mem); })) {
      o["memory_total_bytes"] = mem.total;
      o["memory_reserved_bytes"] = mem.reserved;
      o["memory_used_bytes"] = mem.used;
      o["memory_free_bytes"] = mem.free;
    }
    nvml::Utilization util{};
    if (f.query("utilization", util_fn != nullptr, [&] { return util_fn(d, &util); })) {
      o["utilization_gpu_percent"] = util.gpu;
      o["utilization_memory_percent"] = util.memory;
    }
    uint("pcie_link_gen_current", gen_fn);
    uint("pcie_link_gen_max", max_gen_fn);
    uint("pcie_link_width_current", width_fn);
    uint("pcie_link_width_max", max_width_fn);
    uint("pcie_replay_count", replay_fn);
    if (f.query("ecc_mode", ecc_mode_fn != nullptr, [&] { return ecc_mode_fn(d, &v, &w); })) {
      o["ecc_mode_current"] = v != 0;
      o["ecc_mode_pending"] = w != 0;
    }
    nlohmann::json ecc = nlohmann::json::object();
    for (auto [key, type, counter] :
         {std::tuple{"volatile_corrected", nvml::kMemoryErrorCorrected, nvml::kVolatileEcc},
          std::tuple{"volatile_uncorrected", nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc},
          std::tuple{"aggregate_corrected", nvml::kMemoryErrorCorrected, nvml::kAggregateEcc},
          std::tuple{"aggregate_uncorrected", nvml::kMemoryErrorUncorrected,
                     nvml::kAggregateEcc}}) {
      unsigned long long c = 0;
      if (f.query(key, ecc_count_fn != nullptr,
                  [&, t = type, ct = counter] { return ecc_count_fn(d, t, ct, &c); }))
        ecc[key] = c;
    }
    if (!ecc.empty()) o["ecc_errors"] = ecc;
    nlohmann::json retired = nlohmann::json::object();
    for (auto [key, cause] : {std::pair{"multiple_single_bit", nvml::kRetiredMultipleSingleBit},
                              std::pair{"double_bit", nvml::kRetiredDoubleBit}}) {
      unsigned int pages = 0;
      // With a zero-sized buffer NVML reports the count (SUCCESS, or INSUFFICIENT_SIZE).
      if (retired_fn != nullptr) {
        nvml::Return r = retired_fn(d, cause, &pages, nullptr);
        if (r == nvml::kSuccess || r == nvml::kErrorInsufficientSize)
          retired[key] = pages;
        else if (r != nvml::kErrorNotSupported)
          f.errors[std::string("retired_pages_") + key] = nvml_error_name(r);
      }
    }
    if (f.query("retired_pages_pending", retired_pending_fn != nullptr,
                [&] { return retired_pending_fn(d, &v); }))
      retired["pending"] = v != 0;
    if (!retired.empty()) o["retired_pages"] = retired;
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    if (f.query("remapped_rows", remapped_fn != nullptr,
                [&] { return remapped_fn(d, &corr, &unc, &pending, &failed); }))
      o["remapped_rows"] = {{"correctable", corr},
                            {"uncorrectable", unc},
                            {"pending", pending != 0},
                            {"failure", failed != 0}};
    if (f.query("mig_mode", mig_fn != nullptr, [&] { return mig_fn(d, &v, &w); })) {
      o["mig_mode_current"] = v != 0;
      o["mig_mode_pending"] = w != 0;
      // MIG on: CUDA sees only the MIG devices (compute instances); none is a GPU CUDA cannot use.
      unsigned int max_mig = 0;
      if (v != 0 && mig_handle_fn != nullptr &&
          f.query("max_mig_devices", max_mig_fn != nullptr,
                  [&] { return max_mig_fn(d, &max_mig); })) {
        unsigned int present = 0;
        for (unsigned int m = 0; m < max_mig; ++m) {
          nvml::Device mig = nullptr;
          if (mig_handle_fn(d, m, &mig) == nvml::kSuccess) ++present;
        }
        o[k::kMigDevices] = present;
      }
    }
    if (f.query("compute_mode", compute_mode_fn != nullptr,
                [&] { return compute_mode_fn(d, &v); })) {
      static constexpr const char* kModes[] = {"default", "exclusive_thread", "prohibited",
                                               "exclusive_process"};
      o["compute_mode"] = v < 4 ? kModes[v] : "unknown";
    }
    unsigned long long reasons = 0;
    if (f.query("clocks_event_reasons", reasons_fn != nullptr,
                [&] { return reasons_fn(d, &reasons); }))
      o["clocks_event_reasons"] = {{k::kRaw, reasons},
                                   {k::kNames, clocks_event_reason_names(reasons)}};
    if (procs_fn != nullptr) {
      std::vector<nvml::ProcessInfo> procs(64);
      unsigned int n_procs = static_cast<unsigned int>(procs.size());
      nvml::Return r = procs_fn(d, &n_procs, procs.data());
      if (r == nvml::kSuccess) {
        nlohmann::json list = nlohmann::json::array();
        for (unsigned int p = 0; p < n_procs && p < procs.size(); ++p) {
          nlohmann::json pj = {{"pid", procs[p].pid}};
          if (procs[p].used_gpu_memory != nvml::kValueNotAvailable)
            pj["used_memory_bytes"] = procs[p].used_gpu_memory;
          list.push_back(pj);
        }
        o["processes"] = list;
      } else if (r != nvml::kErrorNotSupported) {
        f.errors["processes"] = nvml_error_name(r);
      }
    }
    uint("numa_node", numa_fn);
    unsigned long mask[16] = {};
    if (f.query("cpu_affinity", affinity_fn != nullptr, [&] { return affinity_fn(d, 16, mask); }))
      o["cpu_affinity"] = cpu_list_from_mask(mask, 16);
    nlohmann::json nvlink = read_nvlink(link_fns, d, f.errors);
    if (!nvlink.empty()) o[k::kNvlink] = nvlink;
    nlohmann::json fabric = read_fabric(link_fns, d, f.errors);
    if (!fabric.empty()) o[k::kFabric] = fabric;
    PairGpu gpu{d, o.value(std::string(k::kPciBusId), ""), o.value(std::string(k::kDeviceUuid), ""),
                nvlink};
    if (!f.errors.empty()) o[k::kErrors] = f.errors;
    return std::pair{std::move(f.out), std::move(gpu)};
  };
  // The handles one after another (cheap), then every GPU's fields at once: read in turn, the
  // probe grew with the GPU count (0.9 s on two H200s, 2.5 s on four).
  std::vector<std::future<std::pair<nlohmann::json, PairGpu>>> reads;
  std::vector<nlohmann::json> refused;
  for (unsigned int i = 0; i < count && by_index; ++i) {
    nvml::Device d = nullptr;
    if (nvml::Return r = by_index(i, &d); r != nvml::kSuccess) {
      refused.push_back({{k::kIndex, i}, {k::kError, nvml_error_name(r)}});
      reads.emplace_back();  // no read: its place keeps the refusal
      continue;
    }
    refused.emplace_back();
    reads.push_back(std::async(kConcurrently, read_device, i, d));
  }
  for (std::size_t i = 0; i < reads.size(); ++i) {
    if (!reads[i].valid()) {
      devices.push_back(std::move(refused[i]));
      continue;
    }
    auto [fields, gpu] = reads[i].get();
    devices.push_back(std::move(fields));
    pair_gpus.push_back(std::move(gpu));
  }
  j[k::kDevices] = devices;
  if (pair_gpus.size() >= 2) j[k::kPairs] = read_gpu_pairs(link_fns, pair_gpus);
  if (!n.missing().empty()) j["missing_functions"] = n.missing();
  return j;
}

nlohmann::json join_nvml(nlohmann::json& cuda_devices, const nlohmann::json& nvml) {
  nlohmann::json unmatched = nlohmann::json::array();
  if (!nvml.contains(k::kDevices)) return unmatched;
  for (const auto& nd : nvml[k::kDevices]) {
    bool matched = false;
    for (auto& cd : cuda_devices) {
      bool same_pci = nd.contains(k::kPciBusId) && cd.contains(k::kPciBusId) &&
                      nd[k::kPciBusId] == cd[k::kPciBusId];
      bool same_uuid = nd.contains(k::kDeviceUuid) && cd.contains(k::kDeviceUuid) &&
                       nd[k::kDeviceUuid] == cd[k::kDeviceUuid];
      if (same_pci || same_uuid) {
        cd[k::kProperties][k::kNvml] = nd;
        matched = true;
        break;
      }
    }
    if (!matched) unmatched.push_back(nd);
  }
  return unmatched;
}

}  // namespace gpucheck::cuda

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

namespace {

// NVML's per-GPU entry points, resolved once for every GPU in this order (a missing one is null,
// and the session names it in the probe's missing_functions).
struct DeviceFns {
  nvml::DeviceStringFn name, uuid, serial, vbios, inforom;
  nvml::DevicePciInfoFn pci;
  nvml::DeviceUintFn persistence, pstate, power, limit, default_limit;
  nvml::DeviceUintPairFn constraints;
  nvml::DeviceUintFn enforced;
  nvml::DeviceTemperatureFn temperature;
  nvml::DeviceUintFn fan;
  nvml::DeviceClockFn clock, max_clock;
  nvml::DeviceMemoryFn memory;
  nvml::DeviceUtilizationFn utilization;
  nvml::DeviceUintFn link_gen, link_width, max_link_gen, max_link_width, replays;
  nvml::DeviceUintPairFn ecc_mode;
  nvml::DeviceEccCountFn ecc_count;
  nvml::DeviceRetiredPagesFn retired;
  nvml::DeviceUintFn retired_pending;
  nvml::DeviceRemappedRowsFn remapped;
  nvml::DeviceUintPairFn mig;
  nvml::DeviceUintFn compute_mode, max_mig;
  nvml::DeviceMigHandleFn mig_handle;
  nvml::DeviceUllFn reasons;
  nvml::DeviceProcessesFn processes;
  nvml::DeviceUintFn numa;
  nvml::DeviceCpuAffinityFn affinity;

  static DeviceFns resolve(NvmlSession& n) {
    DeviceFns f{};
    f.name = n.get<nvml::DeviceStringFn>("nvmlDeviceGetName");
    f.uuid = n.get<nvml::DeviceStringFn>("nvmlDeviceGetUUID");
    f.serial = n.get<nvml::DeviceStringFn>("nvmlDeviceGetSerial");
    f.vbios = n.get<nvml::DeviceStringFn>("nvmlDeviceGetVbiosVersion");
    f.inforom = n.get<nvml::DeviceStringFn>("nvmlDeviceGetInforomImageVersion");
    f.pci = n.get_any<nvml::DevicePciInfoFn>({"nvmlDeviceGetPciInfo_v3"});
    f.persistence = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPersistenceMode");
    f.pstate = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPerformanceState");
    f.power = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerUsage");
    f.limit = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerManagementLimit");
    f.default_limit = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPowerManagementDefaultLimit");
    f.constraints = n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetPowerManagementLimitConstraints");
    f.enforced = n.get<nvml::DeviceUintFn>("nvmlDeviceGetEnforcedPowerLimit");
    f.temperature = n.get<nvml::DeviceTemperatureFn>("nvmlDeviceGetTemperature");
    f.fan = n.get<nvml::DeviceUintFn>("nvmlDeviceGetFanSpeed");
    f.clock = n.get<nvml::DeviceClockFn>("nvmlDeviceGetClockInfo");
    f.max_clock = n.get<nvml::DeviceClockFn>("nvmlDeviceGetMaxClockInfo");
    f.memory = n.get_any<nvml::DeviceMemoryFn>({"nvmlDeviceGetMemoryInfo_v2"});
    f.utilization = n.get<nvml::DeviceUtilizationFn>("nvmlDeviceGetUtilizationRates");
    f.link_gen = n.get<nvml::DeviceUintFn>("nvmlDeviceGetCurrPcieLinkGeneration");
    f.link_width = n.get<nvml::DeviceUintFn>("nvmlDeviceGetCurrPcieLinkWidth");
    f.max_link_gen = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxPcieLinkGeneration");
    f.max_link_width = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxPcieLinkWidth");
    f.replays = n.get<nvml::DeviceUintFn>("nvmlDeviceGetPcieReplayCounter");
    f.ecc_mode = n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetEccMode");
    f.ecc_count = n.get<nvml::DeviceEccCountFn>("nvmlDeviceGetTotalEccErrors");
    f.retired = n.get<nvml::DeviceRetiredPagesFn>("nvmlDeviceGetRetiredPages");
    f.retired_pending = n.get<nvml::DeviceUintFn>("nvmlDeviceGetRetiredPagesPendingStatus");
    f.remapped = n.get<nvml::DeviceRemappedRowsFn>("nvmlDeviceGetRemappedRows");
    f.mig = n.get<nvml::DeviceUintPairFn>("nvmlDeviceGetMigMode");
    f.compute_mode = n.get<nvml::DeviceUintFn>("nvmlDeviceGetComputeMode");
    f.max_mig = n.get<nvml::DeviceUintFn>("nvmlDeviceGetMaxMigDeviceCount");
    f.mig_handle = n.get<nvml::DeviceMigHandleFn>("nvmlDeviceGetMigDeviceHandleByIndex");
    f.reasons = n.get_any<nvml::DeviceUllFn>(
        {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetCurrentClocksThrottleReasons"});
    f.processes = n.get_any<nvml::DeviceProcessesFn>({"nvmlDeviceGetComputeRunningProcesses_v3"});
    f.numa = n.get<nvml::DeviceUintFn>("nvmlDeviceGetNumaNodeId");
    f.affinity = n.get<nvml::DeviceCpuAffinityFn>("nvmlDeviceGetCpuAffinity");
    return f;
  }
};

// The fields that are one string or one unsigned number, each its key and entry point.
struct StringField {
  const char* key;
  nvml::DeviceStringFn DeviceFns::*fn;
  unsigned int cap;
};
constexpr StringField kStringFields[] = {
    {k::kDeviceName.data(), &DeviceFns::name, nvml::kDeviceNameBufferSize},
    {k::kDeviceUuid.data(), &DeviceFns::uuid, nvml::kUuidBufferSize},
    {"serial", &DeviceFns::serial, nvml::kSerialBufferSize},
    {"vbios_version", &DeviceFns::vbios, nvml::kVbiosBufferSize},
    {"inforom_image_version", &DeviceFns::inforom, nvml::kInforomBufferSize},
};
struct UintField {
  const char* key;
  nvml::DeviceUintFn DeviceFns::*fn;
};
constexpr UintField kUintFields[] = {
    {"power_draw_mw", &DeviceFns::power},
    {"power_limit_mw", &DeviceFns::limit},
    {"power_default_limit_mw", &DeviceFns::default_limit},
    {"power_enforced_limit_mw", &DeviceFns::enforced},
    {"fan_percent", &DeviceFns::fan},
    {"pcie_link_gen_current", &DeviceFns::link_gen},
    {"pcie_link_gen_max", &DeviceFns::max_link_gen},
    {"pcie_link_width_current", &DeviceFns::link_width},
    {"pcie_link_width_max", &DeviceFns::max_link_width},
    {"pcie_replay_count", &DeviceFns::replays},
    {"numa_node", &DeviceFns::numa},
};
struct ClockField {
  const char* key;
  int type;
  nvml::DeviceClockFn DeviceFns::*fn;
};
constexpr ClockField kClockFields[] = {
    {"sm_clock_mhz", nvml::kClockSm, &DeviceFns::clock},
    {"mem_clock_mhz", nvml::kClockMem, &DeviceFns::clock},
    {"graphics_clock_mhz", nvml::kClockGraphics, &DeviceFns::clock},
    {"max_sm_clock_mhz", nvml::kClockSm, &DeviceFns::max_clock},
    {"max_mem_clock_mhz", nvml::kClockMem, &DeviceFns::max_clock},
};
struct EccField {
  const char* key;
  int type;
  int counter;
};
constexpr EccField kEccFields[] = {
    {"volatile_corrected", nvml::kMemoryErrorCorrected, nvml::kVolatileEcc},
    {"volatile_uncorrected", nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc},
    {"aggregate_corrected", nvml::kMemoryErrorCorrected, nvml::kAggregateEcc},
    {"aggregate_uncorrected", nvml::kMemoryErrorUncorrected, nvml::kAggregateEcc},
};

// One GPU's fields, read step by step into `f` (tens of values and every NVLink's counters).
class DeviceReader {
 public:
  DeviceReader(const DeviceFns& fns, const NvLinkFns& links, nvml::Device d)
      : fns_(fns), links_(links), d_(d) {}

  std::pair<nlohmann::json, PairGpu> read(unsigned int index) {
    f_.out[k::kIndex] = index;
    identity();
    table_fields();
    power_and_state();
    memory();
    ecc();
    retired_and_remapped();
    modes();
    processes();
    nlohmann::json nvlink = topology();
    auto& o = f_.out;
    PairGpu gpu{d_, o.value(std::string(k::kPciBusId), ""),
                o.value(std::string(k::kDeviceUuid), ""), nvlink};
    if (!f_.errors.empty()) o[k::kErrors] = f_.errors;
    return {std::move(f_.out), std::move(gpu)};
  }

 private:
  template <typename Fn, typename Call>
  bool query(const char* key, Fn fn, Call&& call) {
    return f_.query(key, fn != nullptr, std::forward<Call>(call));
  }

  void identity() {
    char buf[256];
    for (const auto& [key, member, cap] : kStringFields) {
      auto fn = fns_.*member;
      if (query(key, fn, [&, c = cap] { return fn(d_, buf, c); }))
        f_.out[key] = buffer_string(buf, cap);
    }
    nvml::PciInfo pci{};
    if (query("pci", fns_.pci, [&] { return fns_.pci(d_, &pci); }))
      if (auto id = normalize_pci_bus_id(buffer_string(pci.bus_id, sizeof(pci.bus_id))))
        f_.out[k::kPciBusId] = *id;
  }

  void table_fields() {
    for (const auto& [key, member] : kUintFields) {
      auto fn = fns_.*member;
      unsigned int v = 0;
      if (query(key, fn, [&] { return fn(d_, &v); })) f_.out[key] = v;
    }
    for (const auto& [key, type, member] : kClockFields) {
      auto fn = fns_.*member;
      unsigned int v = 0;
      if (query(key, fn, [&, t = type] { return fn(d_, t, &v); })) f_.out[key] = v;
    }
  }

  void power_and_state() {
    auto& o = f_.out;
    unsigned int v = 0, w = 0;
    if (query("persistence_mode", fns_.persistence, [&] { return fns_.persistence(d_, &v); }))
      o["persistence_mode"] = v != 0;
    if (query("performance_state", fns_.pstate, [&] { return fns_.pstate(d_, &v); }))
      o["performance_state"] = v <= 15 ? fmt::format("P{}", v) : std::string("unknown");
    if (query("power_limit_constraints", fns_.constraints,
              [&] { return fns_.constraints(d_, &v, &w); })) {
      o["power_min_limit_mw"] = v;
      o["power_max_limit_mw"] = w;
    }
    if (query("temperature_c", fns_.temperature,
              [&] { return fns_.temperature(d_, nvml::kTemperatureGpu, &v); }))
      o["temperature_c"] = v;
  }

  void memory() {
    auto& o = f_.out;
    nvml::MemoryV2 mem{};
    mem.version = nvml::kMemoryV2Version;
    if (query("memory", fns_.memory, [&] { return fns_.memory(d_, &mem); })) {
      o["memory_total_bytes"] = mem.total;
      o["memory_reserved_bytes"] = mem.reserved;
      o["memory_used_bytes"] = mem.used;
      o["memory_free_bytes"] = mem.free;
    }
    nvml::Utilization util{};
    if (query("utilization", fns_.utilization, [&] { return fns_.utilization(d_, &util); })) {
      o["utilization_gpu_percent"] = util.gpu;
      o["utilization_memory_percent"] = util.memory;
    }
  }

  void ecc() {
    unsigned int v = 0, w = 0;
    if (query("ecc_mode", fns_.ecc_mode, [&] { return fns_.ecc_mode(d_, &v, &w); })) {
      f_.out["ecc_mode_current"] = v != 0;
      f_.out["ecc_mode_pending"] = w != 0;
    }
    nlohmann::json counts = nlohmann::json::object();
    for (const auto& [key, type, counter] : kEccFields) {
      unsigned long long c = 0;
      if (query(key, fns_.ecc_count,
                [&, t = type, ct = counter] { return fns_.ecc_count(d_, t, ct, &c); }))
        counts[key] = c;
    }
    if (!counts.empty()) f_.out["ecc_errors"] = counts;
  }

  void retired_and_remapped() {
    nlohmann::json retired = nlohmann::json::object();
    for (auto [key, cause] : {std::pair{"multiple_single_bit", nvml::kRetiredMultipleSingleBit},
                              std::pair{"double_bit", nvml::kRetiredDoubleBit}}) {
      unsigned int pages = 0;
      // With a zero-sized buffer NVML reports the count (SUCCESS, or INSUFFICIENT_SIZE).
      if (fns_.retired != nullptr) {
        nvml::Return r = fns_.retired(d_, cause, &pages, nullptr);
        if (r == nvml::kSuccess || r == nvml::kErrorInsufficientSize)
          retired[key] = pages;
        else if (r != nvml::kErrorNotSupported)
          f_.errors[std::string("retired_pages_") + key] = nvml_error_name(r);
      }
    }
    unsigned int v = 0;
    if (query("retired_pages_pending", fns_.retired_pending,
              [&] { return fns_.retired_pending(d_, &v); }))
      retired["pending"] = v != 0;
    if (!retired.empty()) f_.out["retired_pages"] = retired;
    unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
    if (query("remapped_rows", fns_.remapped,
              [&] { return fns_.remapped(d_, &corr, &unc, &pending, &failed); }))
      f_.out["remapped_rows"] = {{"correctable", corr},
                                 {"uncorrectable", unc},
                                 {"pending", pending != 0},
                                 {"failure", failed != 0}};
  }

  void modes() {
    auto& o = f_.out;
    unsigned int v = 0, w = 0;
    if (query("mig_mode", fns_.mig, [&] { return fns_.mig(d_, &v, &w); })) {
      o["mig_mode_current"] = v != 0;
      o["mig_mode_pending"] = w != 0;
      // MIG on: CUDA sees only the MIG devices (compute instances); none is a GPU CUDA cannot use.
      unsigned int max_mig = 0;
      if (v != 0 && fns_.mig_handle != nullptr &&
          query("max_mig_devices", fns_.max_mig, [&] { return fns_.max_mig(d_, &max_mig); })) {
        unsigned int present = 0;
        for (unsigned int m = 0; m < max_mig; ++m) {
          nvml::Device mig = nullptr;
          if (fns_.mig_handle(d_, m, &mig) == nvml::kSuccess) ++present;
        }
        o[k::kMigDevices] = present;
      }
    }
    if (query("compute_mode", fns_.compute_mode, [&] { return fns_.compute_mode(d_, &v); })) {
      static constexpr const char* kModes[] = {"default", "exclusive_thread", "prohibited",
                                               "exclusive_process"};
      o["compute_mode"] = v < 4 ? kModes[v] : "unknown";
    }
    unsigned long long reasons = 0;
    if (query("clocks_event_reasons", fns_.reasons, [&] { return fns_.reasons(d_, &reasons); }))
      o["clocks_event_reasons"] = {{k::kRaw, reasons},
                                   {k::kNames, clocks_event_reason_names(reasons)}};
  }

  void processes() {
    if (fns_.processes == nullptr) return;
    std::vector<nvml::ProcessInfo> procs(64);
    unsigned int n_procs = static_cast<unsigned int>(procs.size());
    nvml::Return r = fns_.processes(d_, &n_procs, procs.data());
    if (r == nvml::kSuccess) {
      nlohmann::json list = nlohmann::json::array();
      for (unsigned int p = 0; p < n_procs && p < procs.size(); ++p) {
        nlohmann::json pj = {{"pid", procs[p].pid}};
        if (procs[p].used_gpu_memory != nvml::kValueNotAvailable)
          pj["used_memory_bytes"] = procs[p].used_gpu_memory;
        list.push_back(pj);
      }
      f_.out["processes"] = list;
    } else if (r != nvml::kErrorNotSupported) {
      f_.errors["processes"] = nvml_error_name(r);
    }
  }

  // CPU affinity, NVLinks and fabric; returns the NVLinks, which the GPU pairs read too.
  nlohmann::json topology() {
    unsigned long mask[16] = {};
    if (query("cpu_affinity", fns_.affinity, [&] { return fns_.affinity(d_, 16, mask); }))
      f_.out["cpu_affinity"] = cpu_list_from_mask(mask, 16);
    nlohmann::json nvlink = read_nvlink(links_, d_, f_.errors);
    if (!nvlink.empty()) f_.out[k::kNvlink] = nvlink;
    nlohmann::json fabric = read_fabric(links_, d_, f_.errors);
    if (!fabric.empty()) f_.out[k::kFabric] = fabric;
    return nvlink;
  }

  const DeviceFns& fns_;
  const NvLinkFns& links_;
  nvml::Device d_;
  Fields f_;
};

}  // namespace

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
  const DeviceFns fns = DeviceFns::resolve(n);
  const NvLinkFns link_fns = NvLinkFns::resolve(n);

  char version[256];
  if (sys_driver && sys_driver(version, nvml::kDriverVersionBufferSize) == nvml::kSuccess)
    j[k::kDriverVersion] = buffer_string(version, nvml::kDriverVersionBufferSize);
  if (sys_nvml && sys_nvml(version, nvml::kDriverVersionBufferSize) == nvml::kSuccess)
    j[k::kNvmlVersion] = buffer_string(version, nvml::kDriverVersionBufferSize);
  int cuda_version = 0;
  if (sys_cuda && sys_cuda(&cuda_version) == nvml::kSuccess)
    j[k::kCudaVersion] = fmt::format("{}.{}", cuda_version / 1000, (cuda_version % 1000) / 10);

  unsigned int count = 0;
  if (count_fn && count_fn(&count) != nvml::kSuccess) count = 0;
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
    reads.push_back(std::async(
        kConcurrently, [&fns, &link_fns, i, d] { return DeviceReader(fns, link_fns, d).read(i); }));
  }
  nlohmann::json devices = nlohmann::json::array();
  std::vector<PairGpu> pair_gpus;
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

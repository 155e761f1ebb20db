// The NVML sampling thread: a few versioned entry points resolved once, one sample every 25 ms
// while a region is open, a summary per region.
#include "backends/cuda/nvml_sampler.h"

#include "backends/cuda/nvml_api.h"
#include "backends/cuda/nvml_links.h"
#include "backends/cuda/nvml_probe.h"
#include "core/json_keys.h"
#include "core/json_keys_nvlink.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace gpucheck::cuda {

namespace {

extern "C" {
using HandleByStringFn = nvml::Return (*)(const char*, nvml::Device*);
}

constexpr unsigned long long kThrottleBits =
    nvml::kEventHwSlowdown | nvml::kEventSwThermalSlowdown | nvml::kEventHwThermalSlowdown |
    nvml::kEventHwPowerBrakeSlowdown;

}  // namespace

// Named, not anonymous: NvmlSampler::Impl (a member type, so external linkage) holds these.
namespace sampler_detail {

using Clock = std::chrono::steady_clock;

struct Sample {
  Clock::time_point t;
  std::optional<double> sm_mhz, mem_mhz, temp_c, power_w;
  std::optional<unsigned long long> reasons;
  std::optional<double> pcie_gen, pcie_width;  // the link's current generation and lanes
};

struct Stat {
  double sum = 0, min = 0, max = 0;
  std::size_t n = 0;
  void add(double v) {
    min = n == 0 ? v : std::min(min, v);
    max = n == 0 ? v : std::max(max, v);
    sum += v;
    ++n;
  }
  nlohmann::json json(int digits) const {
    auto round = [&](double v) {
      double s = digits == 0 ? 1.0 : 10.0;
      return std::round(v * s) / s;
    };
    return {
        {"mean", round(sum / static_cast<double>(n))}, {"min", round(min)}, {"max", round(max)}};
  }
};

}  // namespace sampler_detail

using sampler_detail::Clock;
using sampler_detail::Sample;
using sampler_detail::Stat;

struct NvmlSampler::Impl {
  nvml::ShutdownFn shutdown = nullptr;
  nvml::DeviceClockFn clock = nullptr;
  nvml::DeviceClockFn max_clock = nullptr;
  nvml::DeviceTemperatureFn temperature = nullptr;
  nvml::DeviceUintFn power = nullptr;
  nvml::DeviceUllFn reasons = nullptr;
  nvml::DeviceUintFn pcie_gen = nullptr;
  nvml::DeviceUintFn pcie_width = nullptr;
  nvml::DeviceEccCountFn ecc = nullptr;
  nvml::DeviceRemappedRowsFn remapped = nullptr;
  nvml::DeviceUintFn replay = nullptr;
  nvml::DeviceViolationFn violation = nullptr;
  NvLinkFns links;  // state and error counters only
  nvml::Device device = nullptr;
  std::optional<double> max_sm_mhz;

  mutable std::mutex mu;
  std::condition_variable cv;
  bool stop = false;
  bool recording = false;
  bool kick = false;  // take a sample now
  int interval_ms = kIntervalMs;
  Clock::time_point begun;
  std::vector<Sample> samples;
  std::thread thread;

  Sample take() const {
    Sample s;
    s.t = Clock::now();
    unsigned int v = 0;
    if (clock && clock(device, nvml::kClockSm, &v) == nvml::kSuccess) s.sm_mhz = v;
    if (clock && clock(device, nvml::kClockMem, &v) == nvml::kSuccess) s.mem_mhz = v;
    if (temperature && temperature(device, nvml::kTemperatureGpu, &v) == nvml::kSuccess)
      s.temp_c = v;
    if (power && power(device, &v) == nvml::kSuccess) s.power_w = v / 1000.0;
    unsigned long long bits = 0;
    if (reasons && reasons(device, &bits) == nvml::kSuccess) s.reasons = bits;
    if (pcie_gen && pcie_gen(device, &v) == nvml::kSuccess) s.pcie_gen = v;
    if (pcie_width && pcie_width(device, &v) == nvml::kSuccess) s.pcie_width = v;
    return s;
  }

  void loop() {
    std::unique_lock lock(mu);
    while (!stop) {
      // Idle between regions. A wait whose predicate is already true returns without unlocking,
      // so a kick left over from a region that ended before this thread woke is cleared here, or
      // the loop would spin holding the lock and the next begin() would wait forever.
      cv.wait(lock, [&] { return stop || recording; });
      if (stop) break;
      cv.wait_for(lock, std::chrono::milliseconds(interval_ms), [&] { return stop || kick; });
      kick = false;
      if (stop) break;
      if (!recording) continue;
      lock.unlock();
      Sample s = take();  // NVML outside the lock: begin()/end() never wait on it
      lock.lock();
      if (recording) samples.push_back(s);
    }
  }
};

NvmlSampler::NvmlSampler(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {
  impl_->thread = std::thread([p = impl_.get()] { p->loop(); });
}

NvmlSampler::~NvmlSampler() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
  if (impl_->shutdown) impl_->shutdown();
}

std::unique_ptr<NvmlSampler> NvmlSampler::open(const EnvMap& env, const std::string& uuid,
                                               const std::string& pci_bus_id, std::string* error) {
  auto it = env.find(kNvmlLibEnv);
  std::string lib = it != env.end() && !it->second.empty() ? it->second : kNvmlSoname;
  ::dlerror();
  void* h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (h == nullptr) {
    const char* e = ::dlerror();
    *error = e != nullptr ? e : lib + ": dlopen failed";
    return nullptr;
  }
  auto sym = [&](const char* name) { return ::dlsym(h, name); };
  auto init = reinterpret_cast<nvml::InitFn>(sym("nvmlInit_v2"));
  if (init == nullptr || init() != nvml::kSuccess) {
    *error = "nvmlInit_v2 missing or failed";
    return nullptr;
  }
  auto impl = std::make_unique<Impl>();
  impl->shutdown = reinterpret_cast<nvml::ShutdownFn>(sym("nvmlShutdown"));
  auto by_uuid = reinterpret_cast<HandleByStringFn>(sym("nvmlDeviceGetHandleByUUID"));
  auto by_pci = reinterpret_cast<HandleByStringFn>(sym("nvmlDeviceGetHandleByPciBusId_v2"));
  bool found = !uuid.empty() && by_uuid && by_uuid(uuid.c_str(), &impl->device) == nvml::kSuccess;
  if (!found)
    found = !pci_bus_id.empty() && by_pci &&
            by_pci(pci_bus_id.c_str(), &impl->device) == nvml::kSuccess;
  if (!found) {
    *error = fmt::format("NVML knows no GPU with UUID '{}' or PCI bus id '{}'", uuid, pci_bus_id);
    if (impl->shutdown) impl->shutdown();
    return nullptr;
  }
  impl->clock = reinterpret_cast<nvml::DeviceClockFn>(sym("nvmlDeviceGetClockInfo"));
  impl->max_clock = reinterpret_cast<nvml::DeviceClockFn>(sym("nvmlDeviceGetMaxClockInfo"));
  impl->temperature = reinterpret_cast<nvml::DeviceTemperatureFn>(sym("nvmlDeviceGetTemperature"));
  impl->power = reinterpret_cast<nvml::DeviceUintFn>(sym("nvmlDeviceGetPowerUsage"));
  impl->reasons =
      reinterpret_cast<nvml::DeviceUllFn>(sym("nvmlDeviceGetCurrentClocksEventReasons"));
  if (impl->reasons == nullptr)
    impl->reasons =
        reinterpret_cast<nvml::DeviceUllFn>(sym("nvmlDeviceGetCurrentClocksThrottleReasons"));
  impl->pcie_gen = reinterpret_cast<nvml::DeviceUintFn>(sym("nvmlDeviceGetCurrPcieLinkGeneration"));
  impl->pcie_width = reinterpret_cast<nvml::DeviceUintFn>(sym("nvmlDeviceGetCurrPcieLinkWidth"));
  impl->ecc = reinterpret_cast<nvml::DeviceEccCountFn>(sym("nvmlDeviceGetTotalEccErrors"));
  impl->remapped = reinterpret_cast<nvml::DeviceRemappedRowsFn>(sym("nvmlDeviceGetRemappedRows"));
  impl->replay = reinterpret_cast<nvml::DeviceUintFn>(sym("nvmlDeviceGetPcieReplayCounter"));
  impl->violation = reinterpret_cast<nvml::DeviceViolationFn>(sym("nvmlDeviceGetViolationStatus"));
  impl->links.state = reinterpret_cast<nvml::DeviceLinkIntFn>(sym("nvmlDeviceGetNvLinkState"));
  impl->links.counter =
      reinterpret_cast<nvml::DeviceLinkCounterFn>(sym("nvmlDeviceGetNvLinkErrorCounter"));
  unsigned int v = 0;
  if (impl->max_clock && impl->max_clock(impl->device, nvml::kClockSm, &v) == nvml::kSuccess &&
      v > 0)
    impl->max_sm_mhz = v;
  return std::unique_ptr<NvmlSampler>(new NvmlSampler(std::move(impl)));
}

void NvmlSampler::begin() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->samples.clear();
    impl_->begun = Clock::now();
    impl_->recording = true;
    impl_->kick = true;
  }
  impl_->cv.notify_all();
}

void NvmlSampler::end() {
  bool empty = false;
  {
    std::lock_guard lock(impl_->mu);
    impl_->recording = false;
    empty = impl_->samples.empty();
  }
  if (empty) {
    Sample s = impl_->take();
    std::lock_guard lock(impl_->mu);
    impl_->samples.push_back(s);
  }
}

std::optional<double> NvmlSampler::mean_sm_clock_mhz() const {
  std::lock_guard lock(impl_->mu);
  Stat st;
  for (const auto& s : impl_->samples)
    if (s.sm_mhz) st.add(*s.sm_mhz);
  if (st.n == 0) return std::nullopt;
  return st.sum / static_cast<double>(st.n);
}

std::optional<double> NvmlSampler::max_sm_clock_mhz() const {
  return impl_->max_sm_mhz;
}

nlohmann::json NvmlSampler::summary() const {
  std::lock_guard lock(impl_->mu);
  nlohmann::json j = nlohmann::json::object();
  if (impl_->samples.empty()) return j;
  Stat sm, mem, temp, power, gen, width;
  unsigned long long seen = 0;
  bool have_reasons = false;
  for (const auto& s : impl_->samples) {
    if (s.sm_mhz) sm.add(*s.sm_mhz);
    if (s.mem_mhz) mem.add(*s.mem_mhz);
    if (s.temp_c) temp.add(*s.temp_c);
    if (s.power_w) power.add(*s.power_w);
    if (s.reasons) seen |= *s.reasons, have_reasons = true;
    if (s.pcie_gen) gen.add(*s.pcie_gen);
    if (s.pcie_width) width.add(*s.pcie_width);
  }
  j["nvml_samples"] = impl_->samples.size();
  j["nvml_interval_ms"] = impl_->interval_ms;
  if (sm.n) j["sm_clock_mhz"] = sm.json(0);
  if (impl_->max_sm_mhz) j["max_sm_clock_mhz"] = *impl_->max_sm_mhz;
  if (mem.n) j["mem_clock_mhz"] = mem.json(0);
  if (temp.n) j["temperature_c"] = temp.json(0);
  if (power.n) j["power_w"] = power.json(1);
  // The link under load (idle GPUs drop to a lower generation): doctor's pcie_link check.
  if (gen.n) j["pcie_link_gen"] = gen.json(0);
  if (width.n) j["pcie_link_width"] = width.json(0);
  if (have_reasons) {
    j["clocks_event_reasons"] = clocks_event_reason_names(seen);
    j["throttled"] = (seen & kThrottleBits) != 0;
    j["power_capped"] = (seen & nvml::kEventSwPowerCap) != 0;
  }
  return j;
}

void NvmlSampler::set_interval_ms(int ms) {
  std::lock_guard lock(impl_->mu);
  impl_->interval_ms = std::max(ms, 1);
}

std::vector<TelemetrySample> NvmlSampler::take() {
  std::vector<Sample> got;
  Clock::time_point begun;
  {
    std::lock_guard lock(impl_->mu);
    got.swap(impl_->samples);
    begun = impl_->begun;
  }
  std::vector<TelemetrySample> out;
  out.reserve(got.size());
  for (const auto& s : got) {
    TelemetrySample t;
    t.t_s = std::chrono::duration<double>(s.t - begun).count();
    t.sm_clock_mhz = s.sm_mhz;
    t.mem_clock_mhz = s.mem_mhz;
    t.temperature_c = s.temp_c;
    t.power_w = s.power_w;
    if (s.reasons) t.clock_events = clock_event_flags(*s.reasons);
    out.push_back(t);
  }
  return out;
}

std::map<std::string, std::uint64_t> NvmlSampler::counters() const {
  namespace k = keys;
  const Impl& m = *impl_;
  std::map<std::string, std::uint64_t> out;
  unsigned long long c = 0;
  if (m.ecc &&
      m.ecc(m.device, nvml::kMemoryErrorCorrected, nvml::kVolatileEcc, &c) == nvml::kSuccess)
    out[std::string(k::kCounterEccVolatileCorrected)] = c;
  if (m.ecc &&
      m.ecc(m.device, nvml::kMemoryErrorUncorrected, nvml::kVolatileEcc, &c) == nvml::kSuccess)
    out[std::string(k::kCounterEccVolatileUncorrected)] = c;
  unsigned int corr = 0, unc = 0, pending = 0, failed = 0;
  if (m.remapped && m.remapped(m.device, &corr, &unc, &pending, &failed) == nvml::kSuccess) {
    out[std::string(k::kCounterRemappedRowsCorrectable)] = corr;
    out[std::string(k::kCounterRemappedRowsUncorrectable)] = unc;
    out[std::string(k::kCounterRemapPending)] = pending != 0 ? 1 : 0;
    out[std::string(k::kCounterRemapFailure)] = failed != 0 ? 1 : 0;
  }
  unsigned int replays = 0;
  if (m.replay && m.replay(m.device, &replays) == nvml::kSuccess)
    out[std::string(k::kCounterPcieReplay)] = replays;
  // Every error counter of every active NVLink, summed: peer copies under load that make any
  // of them grow (CRC, replay, recovery) point at a link, not at the GPU.
  if (const auto links = read_link_counters(m.links, m.device); !links.empty()) {
    std::uint64_t sum = 0;
    for (const auto& l : links)
      for (const char* name : kNvLinkCounterNames)
        if (auto it = l.find(name); it != l.end() && it->is_number_unsigned())
          sum += it->get<std::uint64_t>();
    out[std::string(k::kCounterNvlinkErrors)] = sum;
    // And per kind, so stress judges replays, recoveries and CRC/ECC rates as doctor does.
    for (auto [key, name] : {std::pair{k::kCounterNvlinkReplay, "replay"},
                             std::pair{k::kCounterNvlinkRecovery, "recovery"},
                             std::pair{k::kCounterNvlinkCrcFlit, "crc_flit"},
                             std::pair{k::kCounterNvlinkCrcData, "crc_data"},
                             std::pair{k::kCounterNvlinkEccData, "ecc_data"}}) {
      std::uint64_t kind = 0;
      for (const auto& l : links)
        if (auto it = l.find(name); it != l.end() && it->is_number_unsigned())
          kind += it->get<std::uint64_t>();
      out[std::string(key)] = kind;
    }
    out[std::string(k::kCounterNvlinkActiveLinks)] = links.size();
  }
  // Time the clocks were held down by each policy since the driver loaded.
  for (auto [name, policy] :
       {std::pair{k::kCounterViolationPowerNs, nvml::kPerfPolicyPower},
        std::pair{k::kCounterViolationThermalNs, nvml::kPerfPolicyThermal},
        std::pair{k::kCounterViolationSyncBoostNs, nvml::kPerfPolicySyncBoost},
        std::pair{k::kCounterViolationBoardLimitNs, nvml::kPerfPolicyBoardLimit},
        std::pair{k::kCounterViolationReliabilityNs, nvml::kPerfPolicyReliability}}) {
    nvml::ViolationTime v{};
    if (m.violation && m.violation(m.device, policy, &v) == nvml::kSuccess)
      out[std::string(name)] = v.violation_time;
  }
  return out;
}

std::uint32_t clock_event_flags(unsigned long long r) {
  namespace ce = clock_event;
  std::uint32_t f = 0;
  if (r & nvml::kEventGpuIdle) f |= ce::kIdle;
  if (r & nvml::kEventApplicationsClocksSetting) f |= ce::kAppClocksSetting;
  if (r & nvml::kEventSwPowerCap) f |= ce::kSwPowerCap;
  if (r & nvml::kEventHwSlowdown) f |= ce::kHwSlowdown;
  if (r & nvml::kEventSyncBoost) f |= ce::kSyncBoost;
  if (r & nvml::kEventSwThermalSlowdown) f |= ce::kSwThermalSlowdown;
  if (r & nvml::kEventHwThermalSlowdown) f |= ce::kHwThermalSlowdown;
  if (r & nvml::kEventHwPowerBrakeSlowdown) f |= ce::kHwPowerBrakeSlowdown;
  if (r & nvml::kEventDisplayClockSetting) f |= ce::kDisplayClockSetting;
  return f;
}

std::optional<double> dense_flop_per_clock_per_sm(int major, int minor, const std::string& dtype) {
  // Per SM per clock, dense, from NVIDIA's A100 and H100 whitepapers (peak ÷ SMs ÷ boost clock).
  // fp8 (e4m3, f32 accumulation) is 0 where the tensor cores have none.
  struct Row {
    int major, minor;
    double f32, tf32, f16, f64, fp8;
  };
  static constexpr Row kRows[] = {
      // A100: 19.5 / 156 / 312 / 19.5 TFLOP/s, 108 SMs, 1410 MHz; no FP8
      {8, 0, 128, 1024, 2048, 128, 0},
      // H100 SXM: 67 / 495 / 989 / 67 / 1979 TFLOP/s, 132 SMs
      {9, 0, 256, 2048, 4096, 256, 8192},
  };
  for (const auto& r : kRows) {
    if (r.major != major || r.minor != minor) continue;
    if (dtype == "f32") return r.f32;
    if (dtype == "tf32") return r.tf32;
    if (dtype == "f16" || dtype == "bf16") return r.f16;
    if (dtype == "f64") return r.f64;
    if (dtype == "fp8" && r.fp8 > 0) return r.fp8;
  }
  return std::nullopt;
}

}  // namespace gpucheck::cuda

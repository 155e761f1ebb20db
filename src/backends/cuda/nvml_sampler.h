// NVML telemetry of one GPU sampled on its own thread while the engine times a record, so each
// record's context says at which clocks, temperature and power it ran, and whether the GPU was
// throttled (HW slowdown, thermal slowdown, power brake; the power cap alone is only noted).
#pragma once

#include "backends/device.h"
#include "core/environment.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::cuda {

class NvmlSampler {
 public:
  static constexpr int kIntervalMs = 25;

  // nullptr, with *error set, when NVML does not load or knows no GPU with this UUID or PCI bus id.
  static std::unique_ptr<NvmlSampler> open(const EnvMap& env, const std::string& uuid,
                                           const std::string& pci_bus_id, std::string* error);
  ~NvmlSampler();
  NvmlSampler(const NvmlSampler&) = delete;
  NvmlSampler& operator=(const NvmlSampler&) = delete;

  // Starts a region: the samples of the last one are dropped; the thread takes one at once and
  // then one every kIntervalMs.
  void begin();
  // Ends it; a region shorter than one interval still gets one sample, taken here.
  void end();
  // The last region: sample count, SM/memory clock, temperature and power (mean, min, max), the
  // clocks-event reasons seen, throttled, power_capped, max_sm_clock_mhz. Empty before any region.
  nlohmann::json summary() const;
  // The mean SM clock of the last region, and NVML's maximum SM clock, in MHz.
  std::optional<double> mean_sm_clock_mhz() const;
  std::optional<double> max_sm_clock_mhz() const;

  // For stress: the interval of the next regions (ms, at least 1), the samples taken
  // since begin() or the last take() (moved out, times from begin()), and the counters that
  // only grow, by name (keys::kCounter*): ECC, remapped rows, PCIe replays, violation times.
  void set_interval_ms(int ms);
  std::vector<TelemetrySample> take();
  std::map<std::string, std::uint64_t> counters() const;

 private:
  struct Impl;
  explicit NvmlSampler(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// NVML's clocks-event reason bits as the device-neutral clock_event flags.
std::uint32_t clock_event_flags(unsigned long long nvml_reasons);

// Dense FLOP per clock per SM of the matrix path a GEMM of `dtype` takes on compute capability
// major.minor (tensor cores for tf32/f16/bf16/fp8 and, from Ampere, f64; FMA units for f32);
// nullopt for architectures without a checked figure.
std::optional<double> dense_flop_per_clock_per_sm(int major, int minor, const std::string& dtype);

}  // namespace gpucheck::cuda

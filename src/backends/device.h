// The primitives a device offers the bench engine and stress: a core every backend implements
// (Device) and optional capabilities (GemmTuner, StressOps, DeviceTelemetry) a backend may offer.
// The engine owns every workload (inputs, reference, timing, verification); a backend only moves
// bytes and runs single operations.
#pragma once

#include "backends/stress_math.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// Memory on the device; for the CPU, ordinary host memory.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual std::size_t bytes() const = 0;
};

// Throws std::logic_error when [offset, offset + bytes) is not inside b: a caller's bug, named
// instead of a write past the end.
void check_buffer_range(const DeviceBuffer& b, std::size_t offset, std::size_t bytes);

// Host memory a device transfers from: pageable, or pinned where the device has it.
class HostAllocation {
 public:
  virtual ~HostAllocation() = default;
  virtual void* data() = 0;
  virtual std::size_t bytes() const = 0;
};

struct DeviceIdentity {
  std::string device;       // "cpu", "cuda0", "opencl1"
  std::string backend;      // "cpu", "cuda", "opencl"
  std::string device_name;  // sanitised
  std::string device_uuid;  // empty when unknown
  std::string pci_bus_id;   // empty when unknown
};

// Settings a device is opened with.
struct DeviceOptions {
  int threads = 0;  // CPU threads (0: all hardware threads)
  // CPU only: the OpenBLAS core the library chooses by itself and whether it is a DYNAMIC_ARCH
  // build, learned (by a probe child) before this process loads it; empty when not known. With
  // it, the CPU device can select a better core before it loads the library.
  std::string blas_library_kernel;
  bool blas_dynamic_arch = false;
};

// ---- For stress ----

// What the device has, for sizing the stress tests: free memory (on the CPU, MemAvailable),
// the total, the largest single allocation, and whether it is the host's RAM (CPU, pocl).
struct MemoryInfo {
  std::uint64_t free_bytes = 0;
  std::uint64_t total_bytes = 0;
  std::uint64_t max_allocation = 0;
  bool host_memory = false;
  std::string source;  // where free_bytes came from, for the record
};

// One memory-test pattern (backends/stress_math.h): what each word is checked against or set to.
struct MemPattern {
  stress_math::PatternKind kind = stress_math::PatternKind::kNone;
  std::uint64_t param = 0;
};

// Clocks-event reasons as flags of their own, so the stress layer needs no vendor API.
namespace clock_event {
inline constexpr std::uint32_t kIdle = 1u << 0;
inline constexpr std::uint32_t kAppClocksSetting = 1u << 1;
inline constexpr std::uint32_t kSwPowerCap = 1u << 2;
inline constexpr std::uint32_t kHwSlowdown = 1u << 3;
inline constexpr std::uint32_t kSyncBoost = 1u << 4;
inline constexpr std::uint32_t kSwThermalSlowdown = 1u << 5;
inline constexpr std::uint32_t kHwThermalSlowdown = 1u << 6;
inline constexpr std::uint32_t kHwPowerBrakeSlowdown = 1u << 7;
inline constexpr std::uint32_t kDisplayClockSetting = 1u << 8;
// NVML's reason names, as probe and doctor print them.
struct Named {
  std::uint32_t flag;
  const char* name;
};
inline constexpr Named kNames[] = {
    {kIdle, "gpu_idle"},
    {kAppClocksSetting, "applications_clocks_setting"},
    {kSwPowerCap, "sw_power_cap"},
    {kHwSlowdown, "hw_slowdown"},
    {kSyncBoost, "sync_boost"},
    {kSwThermalSlowdown, "sw_thermal_slowdown"},
    {kHwThermalSlowdown, "hw_thermal_slowdown"},
    {kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
    {kDisplayClockSetting, "display_clock_setting"},
};
}  // namespace clock_event

// One telemetry sample; a field the device could not read is empty.
struct TelemetrySample {
  double t_s = 0;  // seconds since telemetry_begin()
  std::optional<double> sm_clock_mhz, mem_clock_mhz, temperature_c, power_w;
  std::optional<std::uint32_t> clock_events;  // clock_event flags
};

// ---- For GEMM tuning: a device whose GEMM has parameters to search.

enum class TuningMode { kOff, kAuto, kRetune };  // --no-tune, the default, --retune

// One timed, verified run of the device's GEMM as it is set up now, on a shape the tuner chose:
// `reps` timed runs after one warm-up; `corrupt` plants a wrong element in the result before
// it is verified (the test hook that proves a wrong candidate is never chosen).
struct GemmTrialResult {
  bool verified = false;
  double seconds = 0;  // median device time of one GEMM
  std::string detail;  // why verification failed
  // Wall time of the untimed first run, which builds a new candidate's kernel: what a rerun of
  // the same candidate no longer pays (0: unknown, counted as part of every rerun).
  double first_run_s = 0;
};
using GemmTrialFn = std::function<GemmTrialResult(const GemmShape& shape, int reps, bool corrupt)>;

enum class TuningLog { kInfo, kWarn };

struct GemmTuningRequest {
  TuningMode mode = TuningMode::kOff;
  std::optional<double> budget_s;    // seconds of search per dtype; nullopt: the device's own
  std::string cache_dir;             // where tuned parameters are kept; empty: nowhere
  std::string gpucheck_version;      // part of the cache's identity
  bool plant_bad_candidate = false;  // GPUCHECK_TEST_PLANT_TUNE=wrong
  std::string forced_parameters;     // GPUCHECK_TEST_GEMM_PARAMS: run these, search nothing
  std::function<void(TuningLog, const std::string&)> log;
  // "tuning gemm f32 (up to 60 s)" and the search's budget in seconds, for estimates.
  std::function<void(const std::string& what, double budget_s)> progress;
};

// Which parameters a dtype's GEMM runs with, for the records' context.
struct GemmTuning {
  std::string state;          // "tuned", "cached" or "default"
  nlohmann::json parameters;  // what runs (impl and its parameters)
  std::string note;           // why the defaults run although tuning was not turned off
};

struct MemoryBudget {
  std::size_t max_total = 0;       // everything a cell may allocate on the device together
  std::size_t max_allocation = 0;  // the largest single buffer
  std::string rule;                // how the budget was derived, for the skip reason
};

// Host copies in both directions at once, for stress's copy test: uploads and downloads on queues
// of their own (CUDA: a stream each, so the copy engines of both directions run together), the
// device checksums of what was uploaded on a third, and events that order the queues and time
// them. Calls enqueue and return, except wait_host and seconds_between. Events are numbered
// 0..events-1 (open_host_copy_queues); an event may be recorded again once what waited
// on it has been enqueued.
class HostCopyQueues {
 public:
  enum class Queue { kUp, kDown, kCheck };
  virtual ~HostCopyQueues() = default;
  virtual void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) = 0;    // on kUp
  virtual void download(void* dst, const DeviceBuffer& src, std::size_t bytes) = 0;  // on kDown
  // On kCheck: StressOps::checksum's sum of src's first `words` words into sums[slot], then that
  // word copied to *host_sum (a pinned HostAllocation's memory, read after wait_host).
  virtual void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                        std::size_t slot, std::uint64_t* host_sum) = 0;
  virtual void record(std::size_t event, Queue queue) = 0;
  // The queue's later work starts after the event's recorded point.
  virtual void wait(Queue queue, std::size_t event) = 0;
  virtual void wait_host(std::size_t event) = 0;
  // Seconds from one recorded event to another, both reached (wait_host).
  virtual double seconds_between(std::size_t from, std::size_t to) = 0;
};

// ---- Optional capabilities. A backend offers one by deriving from it and returning itself from
// the Device accessor of the same name; a caller that needs one asks, and where it is absent
// says so (missing_capability) instead of running.

// Chooses the parameters of a dtype's GEMM (a device whose GEMM has parameters to search).
class GemmTuner {
 public:
  virtual ~GemmTuner() = default;
  // Chooses the parameters of dtype's GEMM (and of the GEMM inside conv) once, before its first
  // record: tuned now through `trial`, read from the cache, or the library's defaults, as the
  // request's mode says. nullopt: this device has nothing to tune (its library chooses).
  virtual std::optional<GemmTuning> tune_gemm(DType dtype, const GemmTuningRequest& request,
                                              const GemmTrialFn& trial) = 0;
};

// What stress runs on the device besides the core primitives: memory sizing, ranged transfers,
// checksums and the memory-test pass.
class StressOps {
 public:
  virtual ~StressOps() = default;
  virtual MemoryInfo memory_info() const = 0;
  // upload/download of a byte range of a device buffer (offset + bytes within it).
  virtual void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                         std::size_t bytes) = 0;
  virtual void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                           std::size_t bytes) = 0;
  // sums[slot] = Σ_i stress_math::checksum_term(word i of src, i) over the first `words` 64-bit
  // words of src, modulo 2^64; sums holds 64-bit words. Asynchronous like a kernel.
  virtual void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                        std::size_t slot) = 0;
  // One memory-test pass over the first `words` 64-bit words of buf, in place: where `check` is
  // a pattern, each word is compared with check's value for index first_word + i, and a
  // mismatch adds 1 to result word 0 and lowers result word 1 to its index (first_word + i) if
  // smaller; then, where `write` is a pattern, the word is set to write's value. result holds
  // two 64-bit words the caller set to {0, UINT64_MAX}; passes accumulate into it.
  virtual void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word,
                       MemPattern check, MemPattern write, DeviceBuffer& result) = 0;
  // True when the GEMM gives bit-identical results for the same inputs every time (fixed
  // algorithm, no atomics); stress then compares results bit for bit, else within tolerance.
  virtual bool gemm_reproducible(DType dtype) const {
    (void)dtype;
    return true;
  }
  // Queues for host copies in both directions at once with `events` events; nullptr where the
  // device has none of its own (open_host_copy_queues then runs them one after another).
  virtual std::unique_ptr<HostCopyQueues> host_copy_queues(std::size_t events) {
    (void)events;
    return nullptr;
  }
};

// Telemetry sampled on a thread every interval_ms while stress runs. telemetry_take() hands over
// the samples taken since the last call; health_counters() reads the counters that only grow
// (ECC, remapped rows, PCIe replay, NVLink errors, clocks-event time in ns) by name, for
// before/after deltas.
class DeviceTelemetry {
 public:
  virtual ~DeviceTelemetry() = default;
  // false when sampling could not start (the run then has no samples).
  virtual bool telemetry_begin(int interval_ms) = 0;
  virtual std::vector<TelemetrySample> telemetry_take() = 0;
  virtual void telemetry_end() = 0;
  virtual std::map<std::string, std::uint64_t> health_counters() = 0;
  // The maximum SM clock, where known: the reference of the clock floor.
  virtual std::optional<double> max_sm_clock_mhz() const = 0;
};

// The core every backend implements: identity, memory, transfers, one op's steps, synchronising
// and timing. Everything else is an optional capability (above) or a defaulted hook.
class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceIdentity& identity() const = 0;
  // The CPU computes where the data already is: no transfers-included records.
  virtual bool is_host() const = 0;
  // Seconds of warm-up a timed cell needs at least, beyond --warmup's count: for a device whose
  // clocks rise slowly from idle under its API (NVIDIA's GPUs through Vulkan).
  virtual double min_warmup_seconds() const { return 0; }
  virtual MemoryBudget memory_budget() const = 0;

  // nullopt when the device can run op in dtype; else why not (library missing, no fp64, ...).
  virtual std::optional<std::string> unsupported_reason(Op op, DType dtype,
                                                        Layout layout) const = 0;
  // What the record names as impl ("openblas", "cublas", "kernel") and compute_type; both may
  // depend on how the dtype's GEMM was tuned (GemmTuner), which happens before its records.
  virtual std::string impl(Op op, DType dtype) const = 0;
  virtual std::string compute_type(Op op, DType dtype) const = 0;

  virtual std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) = 0;
  virtual std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) = 0;
  // Asynchronous where the device allows; synchronize() waits for all of it.
  virtual void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) = 0;
  virtual void download(void* dst, const DeviceBuffer& src, std::size_t bytes) = 0;
  virtual void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) = 0;
  virtual void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) = 0;
  // C = A·B, row-major, C[m×n], A[m×k], B[k×n]; where gemm_b_k_major(dtype) (fp8) B comes as
  // Bᵀ[n×k] row-major, and C is in gemm_output_dtype(dtype) (bf16 for fp8).
  virtual void gemm(DType dtype, const GemmShape& shape, const DeviceBuffer& a,
                    const DeviceBuffer& b, DeviceBuffer& c) = 0;
  // x and y in shape.layout; w K×C×R×S for NCHW, K×R×S×C for NHWC.
  virtual void conv2d(DType dtype, const ConvShape& shape, const DeviceBuffer& x,
                      const DeviceBuffer& w, DeviceBuffer& y) = 0;
  virtual void launch_empty() = 0;
  virtual void synchronize() = 0;
  // Seconds the enqueued work took on the device's own clock (events, profiling); for the
  // CPU the host clock around the synchronous call.
  virtual double time_on_device(const std::function<void()>& enqueue) = 0;

  // ---- Defaulted hooks.

  // The arithmetic the engine verifies GEMM/conv results with, where it is not
  // bench::default_compute(dtype) (CLBlast's HGEMM accumulates in f16); nullopt: the default.
  virtual std::optional<DType> verify_compute(Op op, DType dtype) const {
    (void)op;
    (void)dtype;
    return std::nullopt;
  }
  // The engine brackets each record's repetitions (warm-up and timed) with these, so a device
  // can observe the region from outside it (NVML sampled on its own thread, say). Default: no-op.
  virtual void timed_region_begin(Op op, DType dtype) {
    (void)op;
    (void)dtype;
  }
  virtual void timed_region_end() {}
  // Facts recorded in each record's context (threads, clocks); may be empty. Called after
  // timed_region_end(), it describes that region. A device that knows the dense peak of the
  // region's op may add keys::kPeakTflopsAtMeanSmClock (and ..AtMaxSmClock): the engine turns
  // them into the record's peak_fraction (and context's peak_fraction_at_max_sm_clock).
  virtual nlohmann::json context() const { return nlohmann::json::object(); }
  // The engine or algorithm a vendor library ran for the region's GEMM or conv (the record's
  // `choice`: library, version, id, ...); an empty object where the device has no such choice.
  virtual nlohmann::json library_choice() const { return nlohmann::json::object(); }

  // ---- Optional capabilities: nullptr where the backend offers none.
  virtual GemmTuner* gemm_tuner() { return nullptr; }
  virtual StressOps* stress_ops() { return nullptr; }
  virtual DeviceTelemetry* telemetry() { return nullptr; }
};

// "the cpu backend offers no stress primitives": the reason a caller gives (an "unsupported"
// record) where the device lacks the capability it needs.
std::string missing_capability(const Device& device, std::string_view capability);

// The device's host-copy queues where it has its own; else queues run one after another on the
// device's own primitives (upload, download, checksum, synchronize), each event the host clock
// once everything before it is done: every backend's fallback.
std::unique_ptr<HostCopyQueues> open_host_copy_queues(Device& device, StressOps& ops,
                                                      std::size_t events);

}  // namespace gpucheck

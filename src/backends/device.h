// The primitives a device offers the bench engine. The engine owns every workload (inputs,
// reference, timing, verification); a backend only moves bytes and runs single operations.
#pragma once

#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

namespace gpucheck {

// Memory on the device; for the CPU, ordinary host memory.
class DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  virtual std::size_t bytes() const = 0;
};

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

// ---- GEMM tuning (issue 20): a device whose GEMM has parameters to search (OpenCL).

enum class TuningMode { kOff, kAuto, kRetune };  // --no-tune, the default, --retune

// One timed, verified run of the device's GEMM as it is set up now, on a shape the tuner chose:
// `reps` timed runs after one warm-up; `corrupt` plants a wrong element in the result before
// it is verified (the test hook that proves a wrong candidate is never chosen).
struct GemmTrialResult {
  bool verified = false;
  double seconds = 0;  // median device time of one GEMM
  std::string detail;  // why verification failed
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
  std::function<void(const std::string&)> progress;  // "tuning gemm f32 (up to 60 s)"
};

// Which parameters a dtype's GEMM runs with, for the records' context.
struct GemmTuning {
  std::string state;          // "tuned", "cached" or "default"
  nlohmann::json parameters;  // what runs (impl and its parameters)
};

struct MemoryBudget {
  std::size_t max_total = 0;       // everything a cell may allocate on the device together
  std::size_t max_allocation = 0;  // the largest single buffer
  std::string rule;                // how the budget was derived, for the skip reason
};

class Device {
 public:
  virtual ~Device() = default;
  virtual const DeviceIdentity& identity() const = 0;
  // The CPU computes where the data already is: no transfers-included records.
  virtual bool is_host() const = 0;
  virtual MemoryBudget memory_budget() const = 0;

  // nullopt when the device can run op in dtype; else why not (library missing, no fp64, ...).
  virtual std::optional<std::string> unsupported_reason(Op op, DType dtype,
                                                        Layout layout) const = 0;
  // What the record names as impl ("openblas", "cublas", "kernel") and compute_type; both may
  // depend on how the dtype's GEMM was tuned (tune_gemm), which happens before its records.
  virtual std::string impl(Op op, DType dtype) const = 0;
  virtual std::string compute_type(Op op, DType dtype) const = 0;
  // The arithmetic the engine verifies GEMM/conv results with, where it is not
  // bench::default_compute(dtype) (CLBlast's HGEMM accumulates in f16); nullopt: the default.
  virtual std::optional<DType> verify_compute(Op op, DType dtype) const {
    (void)op;
    (void)dtype;
    return std::nullopt;
  }

  virtual std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) = 0;
  virtual std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) = 0;
  // Asynchronous where the device allows; synchronize() waits for all of it.
  virtual void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) = 0;
  virtual void download(void* dst, const DeviceBuffer& src, std::size_t bytes) = 0;
  virtual void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) = 0;
  virtual void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) = 0;
  // C = A·B, row-major, C[m×n], A[m×k], B[k×n].
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

  // Chooses the parameters of dtype's GEMM (and of the GEMM inside conv) once, before its first
  // record: tuned now through `trial`, read from the cache, or the library's defaults, as the
  // request's mode says. nullopt: this device has nothing to tune (its library chooses).
  virtual std::optional<GemmTuning> tune_gemm(DType dtype, const GemmTuningRequest& request,
                                              const GemmTrialFn& trial) {
    (void)dtype;
    (void)request;
    (void)trial;
    return std::nullopt;
  }
};

}  // namespace gpucheck

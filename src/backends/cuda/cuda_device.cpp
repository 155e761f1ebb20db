// The CUDA bench device: one non-blocking stream, events around each timed enqueue, the library
// handles; the per-shape plans of GEMM and conv are cuda_gemm_plans.h's and cuda_conv_plans.h's.
#include "backends/cuda/cuda_device.h"

#include "backends/cuda/cublas_library.h"
#include "backends/cuda/cuda_conv_plans.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_gemm_plans.h"
#include "backends/cuda/cuda_host_copies.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/cuda_probe.h"
#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/nvml_sampler.h"
#include "backends/cuda/stress_kernels.h"
#include "backends/library_choice_cache.h"
#include "backends/pageable_host.h"
#include "core/environment.h"
#include "core/flop_rates.h"
#include "core/json_keys.h"
#include "core/version.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <vector>

namespace gpucheck::cuda {

namespace {

namespace k = keys;

// cuBLASLt's version (cublasLtGetVersion()) of the first cuBLASLt with FP8 matmuls (11.11.x,
// CUDA 11.8).
constexpr int kLtFp8Version = 111100;

class CudaDevice final : public Device, public GemmTuner, public StressOps, public DeviceTelemetry {
 public:
  CudaDevice(int index, const EnvMap& env) : index_(index), env_(env) {
    GC_CUDA_CHECK(cudaSetDevice(index));
    nlohmann::json d = probe_device(index);
    identity_ = {d[k::kDevice], "cuda", d[k::kDeviceName], d.value(std::string(k::kDeviceUuid), ""),
                 d.value(std::string(k::kPciBusId), "")};
    GC_CUDA_CHECK(cudaDeviceGetAttribute(&sms_, cudaDevAttrMultiProcessorCount, index));
    GC_CUDA_CHECK(cudaDeviceGetAttribute(&cc_major_, cudaDevAttrComputeCapabilityMajor, index));
    GC_CUDA_CHECK(cudaDeviceGetAttribute(&cc_minor_, cudaDevAttrComputeCapabilityMinor, index));
    GC_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    GC_CUDA_CHECK(cudaEventCreate(&start_));
    GC_CUDA_CHECK(cudaEventCreate(&stop_));
    // Stress checksums run on a stream of their own, so they can overlap the next GEMM.
    GC_CUDA_CHECK(cudaStreamCreateWithFlags(&check_stream_, cudaStreamNonBlocking));
    GC_CUDA_CHECK(cudaEventCreateWithFlags(&check_ready_, cudaEventDisableTiming));
    // NVML telemetry for each record's context; without NVML the context is just empty.
    std::string nvml_error;
    sampler_ = NvmlSampler::open(env, identity_.device_uuid, identity_.pci_bus_id, &nvml_error);
    // Libraries: a missing or broken one makes its ops unsupported, with the reason.
    cublas_ = CublasLibrary::open(env, &cublas_error_);
    if (cublas_) {
      if (auto s = cublas_->cublasLtCreate(&lt_); s != CUBLAS_STATUS_SUCCESS) {
        cublas_error_ = fmt::format("cublasLtCreate failed: status {}", static_cast<int>(s));
        lt_ = nullptr;
      } else if (auto s2 = cublas_->cublasCreate(&blas_); s2 != CUBLAS_STATUS_SUCCESS) {
        cublas_error_ = fmt::format("cublasCreate failed: status {}", static_cast<int>(s2));
        blas_ = nullptr;
      } else {
        GC_CUBLAS_CHECK(cublas_->cublasSetStream(blas_, stream_));
        gemm_ = std::make_unique<GemmPlans>(*cublas_, lt_, blas_, stream_, choices_);
      }
    }
  }

  // cuDNN is opened when a conv is first asked about: its load and cudnnCreate take time that a
  // child running no conv (doctor's load, stress, peer copies) should not pay.
  bool cudnn_ready() const {
    if (cudnn_tried_) return dnn_ != nullptr;
    cudnn_tried_ = true;
    cudnn_ = CudnnLibrary::open(env_, &cudnn_error_);
    if (!cudnn_) return false;
    if (auto s = cudnn_->cudnnCreate(&dnn_); s != CUDNN_STATUS_SUCCESS) {
      cudnn_error_ = fmt::format("cudnnCreate failed: status {}", static_cast<int>(s));
      dnn_ = nullptr;
      return false;
    }
    GC_CUDNN_CHECK(cudnn_->cudnnSetStream(dnn_, stream_));
    return true;
  }

  ~CudaDevice() override {
    gemm_.reset();
    conv_.reset();
    if (lt_) GC_CUBLAS_CHECK_NOTHROW(cublas_->cublasLtDestroy(lt_));
    if (blas_) GC_CUBLAS_CHECK_NOTHROW(cublas_->cublasDestroy(blas_));
    if (dnn_) GC_CUDNN_CHECK_NOTHROW(cudnn_->cudnnDestroy(dnn_));
    if (start_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(start_));
    if (stop_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(stop_));
    checksum_partials_.reset();
    if (check_ready_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(check_ready_));
    if (check_stream_) GC_CUDA_CHECK_NOTHROW(cudaStreamDestroy(check_stream_));
    if (stream_) GC_CUDA_CHECK_NOTHROW(cudaStreamDestroy(stream_));
  }
  CudaDevice(const CudaDevice&) = delete;
  CudaDevice& operator=(const CudaDevice&) = delete;

  const DeviceIdentity& identity() const override { return identity_; }
  bool is_host() const override { return false; }

  MemoryBudget memory_budget() const override {
    std::size_t free = 0, total = 0;
    GC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return {free / 2, free / 2,
            fmt::format("half of the device's free memory ({} of {} bytes free)", free, total)};
  }

  std::optional<std::string> unsupported_reason(Op op, DType dtype, Layout layout) const override {
    (void)layout;
    const bool needs_ampere = dtype == DType::kTf32 || dtype == DType::kBf16;
    auto arch_reason = [&]() -> std::optional<std::string> {
      if (needs_ampere && cc_major_ < 8)
        return fmt::format("{} needs compute capability 8.0 or newer; this device has {}.x",
                           gpucheck::to_string(dtype), cc_major_);
      return std::nullopt;
    };
    if (dtype == DType::kFp8) {
      if (op == Op::kCopy || op == Op::kLatency) return std::nullopt;
      if (op != Op::kGemm)
        return fmt::format("fp8 (e4m3) is a GEMM input type; {} does not run in it",
                           gpucheck::to_string(op));
      return fp8_gemm_reason();
    }
    if (runs_between_devices(op))
      return std::string("peer copies and all-reduce run in the group child, not on one device");
    switch (op) {
      case Op::kExp:
        if (dtype == DType::kTf32)
          return std::string("tf32 is a math mode of GEMM and conv; exp runs in f32");
        return std::nullopt;
      case Op::kSeedloop:
        if (dtype != DType::kF32) return std::string("the seed loop is defined in f32");
        return std::nullopt;
      case Op::kGemm:
        if (!lt_ || !blas_) return "GEMM needs cuBLAS: " + cublas_error_;
        return arch_reason();
      case Op::kConv:
        if (!cudnn_ready()) return "conv needs cuDNN: " + cudnn_error_;
        if (dtype == DType::kF64)
          return std::string(
              "conv runs in f32, tf32, f16 and bf16 on CUDA (cuDNN's f64 paths are "
              "not tensor-core work and not benchmarked)");
        return arch_reason();
      case Op::kCopy:
      case Op::kLatency:
        return std::nullopt;
      default:
        break;
    }
    return std::string("unknown op");
  }

  std::string impl(Op op, DType dtype) const override {
    (void)dtype;
    switch (op) {
      case Op::kGemm:
        return "cublaslt";
      case Op::kConv:
        return "cudnn";
      case Op::kCopy:
        return "cudaMemcpyAsync";
      default:
        return "kernel";
    }
  }

  std::string compute_type(Op op, DType dtype) const override {
    if (op == Op::kGemm) return gemm_types(dtype).compute_name;
    if (dtype == DType::kFp8) return "fp8";  // a GEMM type only: every other op is refused
    if (op == Op::kConv) return conv_types(dtype).name;
    // exp: f16 and bf16 are computed in f32 and rounded once.
    if (dtype == DType::kF16 || dtype == DType::kBf16) return "f32";
    return std::string(gpucheck::to_string(dtype));
  }

  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override {
    return std::make_unique<CudaBuffer>(bytes);
  }
  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) override {
    if (kind == HostMemory::kPinned) return std::make_unique<PinnedHost>(bytes);
    return std::make_unique<PageableHost>(bytes);
  }
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    GC_CUDA_CHECK(cudaMemcpyAsync(dptr(dst), src, bytes, cudaMemcpyHostToDevice, stream_));
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    GC_CUDA_CHECK(cudaMemcpyAsync(dst, dptr(src), bytes, cudaMemcpyDeviceToHost, stream_));
  }
  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    GC_CUDA_CHECK(cudaMemcpyAsync(dptr(dst), dptr(src), bytes, cudaMemcpyDeviceToDevice, stream_));
  }

  void exp(DType dtype, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    switch (dtype) {
      case DType::kF32:
        GC_CUDA_CHECK(launch_exp_f32(static_cast<const float*>(dptr(x)),
                                     static_cast<float*>(dptr(y)), n, sms_, stream_));
        break;
      case DType::kF64:
        GC_CUDA_CHECK(launch_exp_f64(static_cast<const double*>(dptr(x)),
                                     static_cast<double*>(dptr(y)), n, sms_, stream_));
        break;
      case DType::kF16:
        GC_CUDA_CHECK(launch_exp_f16(dptr(x), dptr(y), n, sms_, stream_));
        break;
      case DType::kBf16:
        GC_CUDA_CHECK(launch_exp_bf16(dptr(x), dptr(y), n, sms_, stream_));
        break;
      case DType::kTf32:
      case DType::kFp8:
        throw std::logic_error("exp in tf32 or fp8: unsupported_reason says no");
    }
  }

  void gemm(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    if (!gemm_) throw std::runtime_error("GEMM needs cuBLAS: " + cublas_error_);
    gemm_->run(dtype, s, a, b, c);
  }

  void conv2d(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    if (!cudnn_ready()) throw std::runtime_error("conv needs cuDNN: " + cudnn_error_);
    if (!conv_) conv_ = std::make_unique<ConvPlans>(*cudnn_, dnn_, stream_, choices_);
    conv_->run(dtype, s, x, w, y);
  }

  void timed_region_begin(Op op, DType dtype) override {
    region_op_ = op;
    region_dtype_ = dtype;
    if (sampler_) sampler_->begin();
  }
  void timed_region_end() override {
    if (sampler_) sampler_->end();
    region_fresh_ = true;
  }

  // Nothing to tune (the libraries choose), but the request says where the choices are kept and
  // whether to search again: the choice cache opens before the first GEMM or conv.
  std::optional<GemmTuning> tune_gemm(DType dtype, const GemmTuningRequest& request,
                                      const GemmTrialFn& trial) override {
    (void)dtype;
    (void)trial;
    if (!choices_opened_ && !identity_.device_uuid.empty()) {
      choices_opened_ = true;
      choices_.open(request.cache_dir, {identity_.device_uuid, identity_.device_name, kVersion},
                    request.mode, request.log);
    }
    return std::nullopt;
  }

  nlohmann::json library_choice() const override {
    if (region_op_ == Op::kGemm && gemm_) return gemm_->last_choice();
    if (region_op_ == Op::kConv && conv_) return conv_->last_choice();
    return nlohmann::json::object();
  }

  // The NVML summary of the region just timed, once (a record made before the next region gets
  // none); for GEMM also the dense peak at the mean and at the maximum SM clock.
  nlohmann::json context() const override {
    if (!region_fresh_) return nlohmann::json::object();
    region_fresh_ = false;
    nlohmann::json c = sampler_ ? sampler_->summary() : nlohmann::json::object();
    if (region_op_ == Op::kConv && conv_ && !conv_->last_how().empty())
      c["cudnn_choice"] = conv_->last_how();
    if (region_op_ != Op::kGemm || !sampler_) return c;
    auto per_sm =
        dense_flop_per_clock_per_sm(cc_major_, cc_minor_, gpucheck::to_string(region_dtype_));
    if (!per_sm) return c;
    const double per_mhz = *per_sm * static_cast<double>(sms_) * 1e6 / 1e12;  // TFLOP/s per MHz
    if (auto mean = sampler_->mean_sm_clock_mhz(); mean && *mean > 0)
      c[std::string(k::kPeakTflopsAtMeanSmClock)] = per_mhz * *mean;
    if (auto max = sampler_->max_sm_clock_mhz(); max && *max > 0)
      c[std::string(k::kPeakTflopsAtMaxSmClock)] = per_mhz * *max;
    return c;
  }

  void launch_empty() override { GC_CUDA_CHECK(launch_empty_kernel(stream_)); }
  void synchronize() override {
    GC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    if (checks_pending_) {
      GC_CUDA_CHECK(cudaStreamSynchronize(check_stream_));
      checks_pending_ = false;
    }
  }

  GemmTuner* gemm_tuner() override { return this; }
  StressOps* stress_ops() override { return this; }
  DeviceTelemetry* telemetry() override { return this; }

  // ---- StressOps ----
  MemoryInfo memory_info() const override {
    std::size_t free = 0, total = 0;
    GC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    return {free, total, free, false, "cudaMemGetInfo"};
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    check_buffer_range(dst, offset, bytes);
    GC_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(dptr(dst)) + offset, src, bytes,
                                  cudaMemcpyHostToDevice, stream_));
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    check_buffer_range(src, offset, bytes);
    GC_CUDA_CHECK(cudaMemcpyAsync(dst, static_cast<const char*>(dptr(src)) + offset, bytes,
                                  cudaMemcpyDeviceToHost, stream_));
  }
  // On the side stream, after everything enqueued so far on the main one.
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    check_buffer_range(src, 0, words * 8);
    check_buffer_range(sums, slot * 8, 8);
    if (!checksum_partials_)
      checksum_partials_ =
          std::make_unique<CudaBuffer>(static_cast<std::size_t>(checksum_blocks(sms_)) * 8);
    GC_CUDA_CHECK(cudaEventRecord(check_ready_, stream_));
    GC_CUDA_CHECK(cudaStreamWaitEvent(check_stream_, check_ready_, 0));
    GC_CUDA_CHECK(launch_checksum(static_cast<const std::uint64_t*>(dptr(src)), words,
                                  static_cast<std::uint64_t*>(checksum_partials_->get()),
                                  static_cast<std::uint64_t*>(dptr(sums)), slot, sms_,
                                  check_stream_));
    checks_pending_ = true;
  }
  std::unique_ptr<HostCopyQueues> host_copy_queues(std::size_t events) override {
    return open_cuda_host_copy_queues(index_, sms_, events);
  }
  void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word, MemPattern check,
               MemPattern write, DeviceBuffer& result) override {
    check_buffer_range(buf, 0, words * 8);
    check_buffer_range(result, 0, 16);
    GC_CUDA_CHECK(launch_memtest(static_cast<std::uint64_t*>(dptr(buf)), words, first_word,
                                 check.kind, check.param, write.kind, write.param,
                                 static_cast<unsigned long long*>(dptr(result)), sms_, stream_));
  }
  // ---- DeviceTelemetry ----
  bool telemetry_begin(int interval_ms) override {
    if (!sampler_) return false;
    sampler_->set_interval_ms(interval_ms);
    sampler_->begin();
    return true;
  }
  std::vector<TelemetrySample> telemetry_take() override {
    return sampler_ ? sampler_->take() : std::vector<TelemetrySample>{};
  }
  void telemetry_end() override {
    if (sampler_) sampler_->end();
  }
  std::map<std::string, std::uint64_t> health_counters() override {
    return sampler_ ? sampler_->counters() : std::map<std::string, std::uint64_t>{};
  }
  std::optional<double> max_sm_clock_mhz() const override {
    return sampler_ ? sampler_->max_sm_clock_mhz() : std::nullopt;
  }

  double time_on_device(const std::function<void()>& enqueue) override {
    GC_CUDA_CHECK(cudaEventRecord(start_, stream_));
    enqueue();
    GC_CUDA_CHECK(cudaEventRecord(stop_, stream_));
    GC_CUDA_CHECK(cudaEventSynchronize(stop_));
    float ms = 0;
    GC_CUDA_CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return static_cast<double>(ms) * 1e-3;
  }

 private:
  // Why this device cannot run fp8 GEMM, or nullopt: FP8 tensor cores (compute capability 8.9:
  // Ada, Hopper and later) and a cuBLASLt with the FP8 path (11.11, CUDA 11.8).
  std::optional<std::string> fp8_gemm_reason() const {
    if (!lt_ || !blas_) return "GEMM needs cuBLAS: " + cublas_error_;
    if (cc_major_ < 8 || (cc_major_ == 8 && cc_minor_ < 9))
      return fmt::format(
          "fp8 GEMM needs FP8 tensor cores, compute capability 8.9 or newer (Ada, Hopper and "
          "later); this device has {}.{}",
          cc_major_, cc_minor_);
    if (cublas_->lt_version_number() < kLtFp8Version)
      return fmt::format(
          "fp8 GEMM needs cuBLASLt 11.11 (CUDA 11.8) or newer, the first with an FP8 path; this "
          "cuBLASLt is {}",
          cublas_->lt_version());
    return std::nullopt;
  }

  int index_;
  DeviceIdentity identity_;
  int sms_ = 1;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaStream_t check_stream_ = nullptr;  // stress checksums
  cudaEvent_t check_ready_ = nullptr;    // orders a checksum after the main stream's work
  bool checks_pending_ = false;
  std::unique_ptr<CudaBuffer> checksum_partials_;
  std::unique_ptr<NvmlSampler> sampler_;
  Op region_op_ = Op::kExp;
  DType region_dtype_ = DType::kF32;
  mutable bool region_fresh_ = false;
  std::unique_ptr<CublasLibrary> cublas_;
  std::string cublas_error_;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  EnvMap env_;  // where the libraries opened later (cuDNN) are looked for
  mutable bool cudnn_tried_ = false;
  mutable std::unique_ptr<CudnnLibrary> cudnn_;
  mutable std::string cudnn_error_;
  mutable cudnnHandle_t dnn_ = nullptr;
  LibraryChoiceCache choices_;  // kept engine and algorithm choices (tune_gemm opens it)
  bool choices_opened_ = false;
  std::unique_ptr<GemmPlans> gemm_;  // with cuBLAS
  std::unique_ptr<ConvPlans> conv_;  // with cuDNN, at the first conv
};

}  // namespace

std::unique_ptr<Device> make_cuda_device(const std::string& device_id,
                                         const DeviceOptions& options) {
  (void)options;
  if (device_id.rfind("cuda", 0) != 0 || device_id.size() == 4) return nullptr;
  int index = 0;
  const char* first = device_id.data() + 4;
  const char* last = device_id.data() + device_id.size();
  auto parsed = std::from_chars(first, last, index);
  if (parsed.ec != std::errc() || parsed.ptr != last) return nullptr;
  DriverVerdict verdict = judge_driver(DriverLibrary::observe());
  if (!verdict.usable) throw std::runtime_error(verdict.reason);
  int count = 0;
  GC_CUDA_CHECK(cudaGetDeviceCount(&count));
  if (index < 0 || index >= count) return nullptr;
  return std::make_unique<CudaDevice>(index, current_environment());
}

}  // namespace gpucheck::cuda

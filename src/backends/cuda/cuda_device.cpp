// The CUDA bench device: one non-blocking stream, events around each timed enqueue, library
// handles and per-shape plans (cuBLASLt heuristics, cuDNN algorithm search) made once.
#include "backends/cuda/cuda_device.h"

#include "backends/cuda/cublas_library.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_host_copies.h"
#include "backends/cuda/cuda_kernels.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/cuda_probe.h"
#include "backends/cuda/cudnn_graph_conv.h"
#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/library_choice.h"
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
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <tuple>
#include <vector>

namespace gpucheck::cuda {

namespace {

namespace k = keys;

constexpr std::size_t kLtWorkspaceBytes = std::size_t{32} << 20;           // cuBLAS's Hopper advice
constexpr std::size_t kConvSearchWorkspaceBytes = std::size_t{512} << 20;  // cap for the search
// cuBLASLt candidates timed once per GEMM shape (the heuristic's first is not always fastest).
constexpr int kLtCandidates = 8;
constexpr int kLtTuneRuns = 5;
// Candidates timed within this of the fastest are tied; the library's first of them is kept, so
// that a search's pick does not hang on the last percent of a short timing.
constexpr double kTieNoise = 0.03;
// cublasLtGetVersion() of the first cuBLASLt with FP8 matmuls (11.11.x, CUDA 11.8).
constexpr int kLtFp8Version = 111100;

int to_int(std::uint64_t v, const char* what) {
  if (v > static_cast<std::uint64_t>(INT_MAX))
    throw std::overflow_error(fmt::format("{} = {} exceeds the library's int range", what, v));
  return static_cast<int>(v);
}

// cuBLASLt descriptors of one GEMM shape and dtype, with the algorithm its heuristic chose.
struct LtPlan {
  const CublasLibrary* lib = nullptr;
  cublasLtMatmulDesc_t op = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulHeuristicResult_t heuristic{};
  bool have_algo = false;
  nlohmann::json choice;  // the record's `choice`
  LtPlan() = default;
  LtPlan(const LtPlan&) = delete;
  LtPlan& operator=(const LtPlan&) = delete;
  ~LtPlan() {
    if (a) GC_CUBLAS_CHECK_NOTHROW(lib->cublasLtMatrixLayoutDestroy(a));
    if (b) GC_CUBLAS_CHECK_NOTHROW(lib->cublasLtMatrixLayoutDestroy(b));
    if (c) GC_CUBLAS_CHECK_NOTHROW(lib->cublasLtMatrixLayoutDestroy(c));
    if (op) GC_CUBLAS_CHECK_NOTHROW(lib->cublasLtMatmulDescDestroy(op));
  }
};

// cuDNN descriptors of one convolution, with the algorithm the search chose.
struct ConvPlan {
  const CudnnLibrary* lib = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::size_t workspace = 0;
  bool searched = false;
  std::unique_ptr<GraphConv> graph;  // set when the backend API's engine beat the legacy search
  std::string how;                   // which search chose, for the record's context
  nlohmann::json choice;             // the record's `choice`
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    if (x) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyTensorDescriptor(x));
    if (y) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyTensorDescriptor(y));
    if (w) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyFilterDescriptor(w));
    if (conv) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyConvolutionDescriptor(conv));
  }
};

// A and B in `data`, C and D in `out` (the same but for fp8, whose GEMM writes bf16).
struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  const char* compute_name;
  cudaDataType_t out;
};

GemmTypes gemm_types(DType d) {
  switch (d) {
    case DType::kF32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F", CUDA_R_32F};
    case DType::kTf32:
      return {CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, "CUBLAS_COMPUTE_32F_FAST_TF32",
              CUDA_R_32F};
    case DType::kF16:
      return {CUDA_R_16F, CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F", CUDA_R_16F};
    case DType::kBf16:
      return {CUDA_R_16BF, CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F", CUDA_R_16BF};
    case DType::kF64:
      return {CUDA_R_64F, CUBLAS_COMPUTE_64F, CUDA_R_64F, "CUBLAS_COMPUTE_64F", CUDA_R_64F};
    case DType::kFp8:
      // cuBLASLt's FP8 path: e4m3 A and B, f32 compute and scale, bf16 C and D.
      return {CUDA_R_8F_E4M3, CUBLAS_COMPUTE_32F, CUDA_R_32F, "CUBLAS_COMPUTE_32F", CUDA_R_16BF};
  }
  throw std::logic_error("unknown dtype");
}

struct ConvTypes {
  cudnnDataType_t data;
  cudnnDataType_t compute;
  cudnnMathType_t math;
  const char* name;
};

ConvTypes conv_types(DType d) {
  switch (d) {
    case DType::kF32:
      return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_FMA_MATH"};
    case DType::kTf32:
      return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kF16:
      return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kBf16:
      return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kF64:
      return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
              "CUDNN_DATA_DOUBLE+CUDNN_DEFAULT_MATH"};
    case DType::kFp8:
      break;  // unsupported_reason refuses conv in fp8
  }
  throw std::logic_error("no cuDNN types for this dtype");
}

using GemmKey = std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t>;
using ConvKey =
    std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
               std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, int>;

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
    GC_CUDA_CHECK(cudaEventCreate(&tune_start_));
    GC_CUDA_CHECK(cudaEventCreate(&tune_stop_));
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
    lt_plans_.clear();
    conv_plans_.clear();
    lt_workspace_.reset();
    conv_workspace_.reset();
    if (lt_) GC_CUBLAS_CHECK_NOTHROW(cublas_->cublasLtDestroy(lt_));
    if (blas_) GC_CUBLAS_CHECK_NOTHROW(cublas_->cublasDestroy(blas_));
    if (dnn_) GC_CUDNN_CHECK_NOTHROW(cudnn_->cudnnDestroy(dnn_));
    if (start_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(start_));
    if (stop_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(stop_));
    if (tune_start_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(tune_start_));
    if (tune_stop_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(tune_stop_));
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
      case Op::kP2p:
      case Op::kAllreduce:
        return std::string("peer copies and all-reduce run in the group child, not on one device");
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

  // Row-major C[m×n] = A[m×k]·B[k×n] is column-major Cᵀ[n×m] = Bᵀ[n×k]·Aᵀ[k×m]: the same
  // memory, no transposes, so cuBLASLt computes M=n, N=m, K=k with A'=B and B'=A. fp8's B comes
  // K-major (Bᵀ[n×k] row-major, gemm_b_k_major): column-major that is a k×n A' read transposed,
  // the "TN" form cuBLASLt's FP8 kernels require (A' transposed, B' = Aᵀ[k×m] not).
  void gemm(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    const GemmTypes t = gemm_types(dtype);
    LtPlan& plan = lt_plan(dtype, s, a, b, c);
    last_lt_ = &plan;
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void* alpha = dtype == DType::kF64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* beta = dtype == DType::kF64 ? static_cast<const void*>(&zero_d) : &zero_f;
    if (plan.have_algo) {
      GC_CUBLAS_CHECK(cublas_->cublasLtMatmul(
          lt_, plan.op, alpha, dptr(b), plan.a, dptr(a), plan.b, beta, dptr(c), plan.c, dptr(c),
          plan.c, &plan.heuristic.algo, lt_workspace_->get(), lt_workspace_->bytes(), stream_));
      return;
    }
    // No cuBLASLt algorithm for this shape: cublasGemmEx chooses its own (lt_plan threw for
    // fp8, which cublasGemmEx does not run).
    const int m = to_int(s.m, "m"), n = to_int(s.n, "n"), kk = to_int(s.k, "k");
    GC_CUBLAS_CHECK(cublas_->cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, alpha, dptr(b),
                                          t.data, n, dptr(a), t.data, kk, beta, dptr(c), t.data, n,
                                          t.compute, CUBLAS_GEMM_DEFAULT));
  }

  void conv2d(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    ConvPlan& plan = conv_plan(dtype, s, x, w, y);
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void* alpha = dtype == DType::kF64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* beta = dtype == DType::kF64 ? static_cast<const void*>(&zero_d) : &zero_f;
    void* ws = plan.workspace > 0 ? conv_workspace_->get() : nullptr;
    last_conv_ = &plan;
    if (plan.graph) {
      GC_CUDNN_CHECK(plan.graph->execute(dptr(x), dptr(w), dptr(y), ws));
      return;
    }
    GC_CUDNN_CHECK(cudnn_->cudnnConvolutionForward(dnn_, alpha, plan.x, dptr(x), plan.w, dptr(w),
                                                   plan.conv, plan.algo, ws, plan.workspace, beta,
                                                   plan.y, dptr(y)));
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
    if (region_op_ == Op::kGemm && last_lt_ != nullptr) return last_lt_->choice;
    if (region_op_ == Op::kConv && last_conv_ != nullptr) return last_conv_->choice;
    return nlohmann::json::object();
  }

  // The NVML summary of the region just timed, once (a record made before the next region gets
  // none); for GEMM also the dense peak at the mean and at the maximum SM clock.
  nlohmann::json context() const override {
    if (!region_fresh_) return nlohmann::json::object();
    region_fresh_ = false;
    nlohmann::json c = sampler_ ? sampler_->summary() : nlohmann::json::object();
    if (region_op_ == Op::kConv && last_conv_ != nullptr) c["cudnn_choice"] = last_conv_->how;
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

  LtPlan& lt_plan(DType dtype, const GemmShape& s, const DeviceBuffer& a_buf,
                  const DeviceBuffer& b_buf, DeviceBuffer& c_buf) {
    GemmKey key{static_cast<int>(dtype), s.m, s.n, s.k};
    if (auto it = lt_plans_.find(key); it != lt_plans_.end()) return *it->second;
    if (!lt_workspace_) lt_workspace_ = std::make_unique<CudaBuffer>(kLtWorkspaceBytes);
    const GemmTypes t = gemm_types(dtype);
    auto plan = std::make_unique<LtPlan>();
    plan->lib = cublas_.get();
    const auto& L = *cublas_;
    GC_CUBLAS_CHECK(L.cublasLtMatmulDescCreate(&plan->op, t.compute, t.scale));
    if (gemm_b_k_major(dtype)) {
      // A' = Bᵀ[n×k] row-major is column-major k×n (leading dimension k), read transposed. The
      // scale pointers stay unset: cuBLASLt takes them as 1 (the inputs need no scaling).
      const cublasOperation_t transpose = CUBLAS_OP_T;
      GC_CUBLAS_CHECK(L.cublasLtMatmulDescSetAttribute(plan->op, CUBLASLT_MATMUL_DESC_TRANSA,
                                                       &transpose, sizeof(transpose)));
      GC_CUBLAS_CHECK(
          L.cublasLtMatrixLayoutCreate(&plan->a, t.data, s.k, s.n, static_cast<int64_t>(s.k)));
    } else {
      GC_CUBLAS_CHECK(
          L.cublasLtMatrixLayoutCreate(&plan->a, t.data, s.n, s.k, static_cast<int64_t>(s.n)));
    }
    GC_CUBLAS_CHECK(
        L.cublasLtMatrixLayoutCreate(&plan->b, t.data, s.k, s.m, static_cast<int64_t>(s.k)));
    GC_CUBLAS_CHECK(
        L.cublasLtMatrixLayoutCreate(&plan->c, t.out, s.n, s.m, static_cast<int64_t>(s.n)));
    cublasLtMatmulPreference_t pref = nullptr;
    GC_CUBLAS_CHECK(L.cublasLtMatmulPreferenceCreate(&pref));
    std::size_t ws = lt_workspace_->bytes();
    cublasStatus_t st = L.cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
    int returned = 0;
    std::vector<cublasLtMatmulHeuristicResult_t> found(kLtCandidates);
    if (st == CUBLAS_STATUS_SUCCESS)
      st = L.cublasLtMatmulAlgoGetHeuristic(lt_, plan->op, plan->a, plan->b, plan->c, plan->c, pref,
                                            kLtCandidates, found.data(), &returned);
    GC_CUBLAS_CHECK_NOTHROW(L.cublasLtMatmulPreferenceDestroy(pref));
    // NOT_SUPPORTED from the heuristic means "no algorithm": cublasGemmEx takes over.
    if (st != CUBLAS_STATUS_SUCCESS && st != CUBLAS_STATUS_NOT_SUPPORTED) GC_CUBLAS_CHECK(st);
    plan->have_algo = st == CUBLAS_STATUS_SUCCESS && returned > 0;
    if (!plan->have_algo && dtype == DType::kFp8)
      throw ApiError("cuBLASLt", static_cast<long long>(CUBLAS_STATUS_NOT_SUPPORTED),
                     "CUBLAS_STATUS_NOT_SUPPORTED",
                     fmt::format("cublasLtMatmulAlgoGetHeuristic: no FP8 (e4m3, bf16 out) "
                                 "algorithm for {}x{}x{} (FP8 kernels need 16-byte aligned rows)",
                                 s.m, s.n, s.k),
                     __FILE__, __LINE__);
    if (!plan->have_algo) plan->choice = gemm_ex_choice_json(cublas_->version());
    if (plan->have_algo) {
      found.resize(static_cast<std::size_t>(returned));
      const std::string version = cublas_->lt_version();
      std::vector<nlohmann::json> named;
      for (const auto& f : found) named.push_back(choice_json(describe_algo(f.algo), version));
      const std::string kept_key =
          choice_key("cublaslt", version, "gemm", gpucheck::to_string(dtype),
                     fmt::format("{}x{}x{}", s.m, s.n, s.k),
                     gemm_b_k_major(dtype) ? "row-major, B K-major" : "row-major");
      if (auto kept = choices_.find(kept_key)) {
        for (std::size_t i = 0; i < found.size() && !plan->choice.is_object(); ++i)
          if (found[i].state == CUBLAS_STATUS_SUCCESS && named[i][k::kId] == (*kept)[k::kId]) {
            plan->heuristic = found[i];
            plan->choice = named[i];
            plan->choice[k::kSource] = "cached";
          }
        if (!plan->choice.is_object())
          choices_.forget(kept_key, "cuBLASLt's heuristic no longer offers " +
                                        (*kept)[k::kId].get<std::string>());
      }
      if (!plan->choice.is_object()) {
        auto [best, timed] = fastest(*plan, dtype, found, a_buf, b_buf, c_buf);
        plan->heuristic = found[best];
        choices_.keep(kept_key, named[best]);
        plan->choice = named[best];
        plan->choice[k::kSource] = "searched";
        plan->choice[k::kCandidates] = timed;
      }
    }
    auto& ref = *plan;
    lt_plans_.emplace(key, std::move(plan));
    return ref;
  }

  // cuBLASLt's description of an algorithm: id, tile, stages, split-k and the rest. The inner and
  // cluster shapes are newer attributes: a library without them reads as 0.
  LtAlgoChoice describe_algo(const cublasLtMatmulAlgo_t& algo) const {
    LtAlgoChoice c;
    auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value, bool required) {
      std::size_t written = 0;
      const cublasStatus_t st = cublas_->cublasLtMatmulAlgoConfigGetAttribute(
          &algo, attr, value, sizeof(*value), &written);
      if (required) GC_CUBLAS_CHECK(st);
    };
    get(CUBLASLT_ALGO_CONFIG_ID, &c.algo, true);
    get(CUBLASLT_ALGO_CONFIG_TILE_ID, &c.tile, true);
    get(CUBLASLT_ALGO_CONFIG_STAGES_ID, &c.stages, true);
    get(CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &c.split_k, true);
    get(CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &c.reduction, true);
    get(CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &c.swizzle, true);
    get(CUBLASLT_ALGO_CONFIG_CUSTOM_OPTION, &c.custom, true);
    get(CUBLASLT_ALGO_CONFIG_INNER_SHAPE_ID, &c.inner_shape, false);
    get(CUBLASLT_ALGO_CONFIG_CLUSTER_SHAPE_ID, &c.cluster_shape, false);
    return c;
  }

  // Times each heuristic candidate on the real buffers (median of a few runs after one warm-up)
  // and returns the one to keep (pick_within_noise: of those within kTieNoise of the fastest,
  // the heuristic's first) and how many ran; a failing candidate is passed over. (Timing
  // cublasGemmEx's own choice as well was tried: on an H100, f64 8192 then ran 15 % slower, at
  // higher power, in all three rounds: these short runs on a cool card chose differently;
  // docs/PERFORMANCE.md.)
  std::pair<std::size_t, int> fastest(const LtPlan& plan, DType dtype,
                                      const std::vector<cublasLtMatmulHeuristicResult_t>& found,
                                      const DeviceBuffer& a, const DeviceBuffer& b,
                                      DeviceBuffer& c) {
    if (found.size() == 1) return {0, 0};
    const double one_d = 1.0, zero_d = 0.0;
    const float one_f = 1.0f, zero_f = 0.0f;
    const void* alpha = dtype == DType::kF64 ? static_cast<const void*>(&one_d) : &one_f;
    const void* beta = dtype == DType::kF64 ? static_cast<const void*>(&zero_d) : &zero_f;
    auto run = [&](const cublasLtMatmulHeuristicResult_t& h) {
      return cublas_->cublasLtMatmul(lt_, plan.op, alpha, dptr(b), plan.a, dptr(a), plan.b, beta,
                                     dptr(c), plan.c, dptr(c), plan.c, &h.algo,
                                     lt_workspace_->get(), lt_workspace_->bytes(), stream_);
    };
    // Median milliseconds of kLtTuneRuns runs of `once`, or a negative number if it fails.
    auto time_it = [&](const std::function<cublasStatus_t()>& once) -> float {
      if (once() != CUBLAS_STATUS_SUCCESS) return -1;
      std::vector<float> ms;
      for (int r = 0; r < kLtTuneRuns; ++r) {
        GC_CUDA_CHECK(cudaEventRecord(tune_start_, stream_));
        if (once() != CUBLAS_STATUS_SUCCESS) return -1;
        GC_CUDA_CHECK(cudaEventRecord(tune_stop_, stream_));
        GC_CUDA_CHECK(cudaEventSynchronize(tune_stop_));
        float v = 0;
        GC_CUDA_CHECK(cudaEventElapsedTime(&v, tune_start_, tune_stop_));
        ms.push_back(v);
      }
      std::nth_element(ms.begin(), ms.begin() + kLtTuneRuns / 2, ms.end());
      return ms[kLtTuneRuns / 2];
    };
    std::vector<double> ms(found.size(), -1);
    int timed = 0;
    for (std::size_t i = 0; i < found.size(); ++i) {
      if (found[i].state != CUBLAS_STATUS_SUCCESS) continue;
      ms[i] = time_it([&] { return run(found[i]); });
      timed += ms[i] >= 0;
    }
    GC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return {pick_within_noise(ms, kTieNoise).value_or(0), timed};
  }

  // The kept choice of a convolution, set up without a search: the legacy algorithm with its
  // math, or the backend engine of that id. One that no longer runs is forgotten (the caller
  // then searches).
  void use_kept_conv(ConvPlan& plan, DType dtype, const std::string& key,
                     const nlohmann::json& kept, const GraphConvSpec& gs, const DeviceBuffer& x,
                     const DeviceBuffer& w, DeviceBuffer& y, std::size_t search_bytes) {
    const auto& L = *cudnn_;
    const std::string id = kept[k::kId].get<std::string>();
    int algo = -1, math = -1;
    if (id.rfind("legacy ", 0) == 0) {
      char rest = 0;
      if (std::sscanf(id.c_str(), "legacy algo %d math %d%c", &algo, &math, &rest) != 2 ||
          algo < 0 || algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT || math < 0 ||
          math > CUDNN_FMA_MATH) {
        choices_.forget(key, "its legacy algorithm cannot be read");
        return;
      }
      plan.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
      if (dtype != DType::kF32)
        GC_CUDNN_CHECK(
            L.cudnnSetConvolutionMathType(plan.conv, static_cast<cudnnMathType_t>(math)));
      std::size_t ws = 0;
      if (auto st = L.cudnnGetConvolutionForwardWorkspaceSize(dnn_, plan.x, plan.w, plan.conv,
                                                              plan.y, plan.algo, &ws);
          st != CUDNN_STATUS_SUCCESS) {
        choices_.forget(key, fmt::format("cudnnGetConvolutionForwardWorkspaceSize for it failed: "
                                         "status {}",
                                         static_cast<int>(st)));
        return;
      }
      plan.workspace = ws;
      plan.how = fmt::format("legacy algorithm {}, kept", algo);
    } else {
      CudaBuffer search(search_bytes);
      std::string why;
      plan.graph = GraphConv::build(L, dnn_, stream_, gs, dptr(x), dptr(w), dptr(y), search.get(),
                                    search.bytes(), kTieNoise, &id, &why);
      if (!plan.graph) {
        choices_.forget(key, why);
        return;
      }
      plan.workspace = plan.graph->workspace_bytes();
      plan.how = "backend API engine, kept";
    }
    plan.choice = kept;
    plan.choice[k::kVersion] = L.version();
    plan.choice[k::kSource] = "cached";
  }

  // The legacy search and the backend API's engines, each timed; the faster is kept (the legacy
  // algorithm when it is as fast) and remembered under `key`.
  void search_conv(ConvPlan& plan, DType dtype, const std::string& key, const GraphConvSpec& gs,
                   const DeviceBuffer& x, const DeviceBuffer& w, DeviceBuffer& y,
                   std::size_t search_bytes) {
    const auto& L = *cudnn_;
    const ConvTypes t = conv_types(dtype);
    int max_algos = 0;
    GC_CUDNN_CHECK(L.cudnnGetConvolutionForwardAlgorithmMaxCount(dnn_, &max_algos));
    std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(
        static_cast<std::size_t>(std::max(max_algos, 1)));
    int returned = 0;
    std::string graph_why;
    {
      CudaBuffer search(search_bytes);
      GC_CUDNN_CHECK(L.cudnnFindConvolutionForwardAlgorithmEx(
          dnn_, plan.x, dptr(x), plan.w, dptr(w), plan.conv, plan.y, dptr(y), max_algos, &returned,
          perf.data(), search.get(), search.bytes()));
      // The backend API's engines too (PyTorch's cudnn.benchmark path); the faster one is kept.
      plan.graph = GraphConv::build(L, dnn_, stream_, gs, dptr(x), dptr(w), dptr(y), search.get(),
                                    search.bytes(), kTieNoise, nullptr, &graph_why);
    }
    auto best = std::find_if(perf.begin(), perf.begin() + returned,
                             [](const auto& p) { return p.status == CUDNN_STATUS_SUCCESS; });
    const bool legacy_ok = best != perf.begin() + returned;
    if (!legacy_ok && !plan.graph)
      throw ApiError(
          "cuDNN", CUDNN_STATUS_NOT_SUPPORTED, "CUDNN_STATUS_NOT_SUPPORTED",
          fmt::format("cudnnFindConvolutionForwardAlgorithmEx: no algorithm for {} "
                      "conv in {} ({})",
                      gpucheck::to_string(dtype),
                      gpucheck::to_string(gs.nhwc ? Layout::kNhwc : Layout::kNchw), graph_why),
          __FILE__, __LINE__);
    if (plan.graph && legacy_ok && best->time <= plan.graph->best_ms())
      plan.graph.reset();  // the legacy algorithm was as fast
    if (plan.graph) {
      plan.workspace = plan.graph->workspace_bytes();
      plan.how = legacy_ok ? fmt::format(
                                 "backend API engine, fastest of {} timed ({:.3f} ms; "
                                 "legacy algorithm {} {:.3f} ms)",
                                 plan.graph->candidates_timed(), plan.graph->best_ms(),
                                 static_cast<int>(best->algo), best->time)
                           : fmt::format("backend API engine, fastest of {} timed ({:.3f} ms)",
                                         plan.graph->candidates_timed(), plan.graph->best_ms());
      plan.choice = choice_json(plan.graph->choice(), L.version());
    } else {
      plan.algo = best->algo;
      plan.workspace = best->memory;
      plan.how = fmt::format("legacy algorithm {} ({:.3f} ms){}", static_cast<int>(best->algo),
                             best->time, graph_why.empty() ? "" : "; backend API: " + graph_why);
      // f32 stays on FMA math; the reduced-precision types run with the math the search used.
      const cudnnMathType_t math = dtype == DType::kF32 ? t.math : best->mathType;
      if (dtype != DType::kF32) GC_CUDNN_CHECK(L.cudnnSetConvolutionMathType(plan.conv, math));
      plan.choice = cudnn_legacy_choice_json(static_cast<int>(best->algo), static_cast<int>(math),
                                             L.version());
    }
    choices_.keep(key, plan.choice);
    plan.choice[k::kSource] = "searched";
    plan.choice[k::kCandidates] = (plan.graph ? plan.graph->candidates_timed() : 0) + returned;
  }

  ConvPlan& conv_plan(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
                      DeviceBuffer& y) {
    ConvKey key{static_cast<int>(dtype),   s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad,
                static_cast<int>(s.layout)};
    if (auto it = conv_plans_.find(key); it != conv_plans_.end()) return *it->second;
    if (!cudnn_ready()) throw std::runtime_error("conv needs cuDNN: " + cudnn_error_);
    const ConvTypes t = conv_types(dtype);
    const auto& L = *cudnn_;
    auto plan = std::make_unique<ConvPlan>();
    plan->lib = cudnn_.get();
    const cudnnTensorFormat_t fmt_ =
        s.layout == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
    const int n = to_int(s.n, "n"), c = to_int(s.c, "c"), h = to_int(s.h, "h"),
              wd = to_int(s.w, "w"), kk = to_int(s.k, "k"), r = to_int(s.r, "r"),
              ss = to_int(s.s, "s"), pad = to_int(s.pad, "pad"),
              stride = to_int(s.stride, "stride");
    GC_CUDNN_CHECK(L.cudnnCreateTensorDescriptor(&plan->x));
    GC_CUDNN_CHECK(L.cudnnSetTensor4dDescriptor(plan->x, fmt_, t.data, n, c, h, wd));
    // The filter's format sets its memory order: KCRS for NCHW, KRSC for NHWC (the engine's).
    GC_CUDNN_CHECK(L.cudnnCreateFilterDescriptor(&plan->w));
    GC_CUDNN_CHECK(L.cudnnSetFilter4dDescriptor(plan->w, t.data, fmt_, kk, c, r, ss));
    GC_CUDNN_CHECK(L.cudnnCreateConvolutionDescriptor(&plan->conv));
    GC_CUDNN_CHECK(L.cudnnSetConvolution2dDescriptor(plan->conv, pad, pad, stride, stride, 1, 1,
                                                     CUDNN_CROSS_CORRELATION, t.compute));
    GC_CUDNN_CHECK(L.cudnnSetConvolutionMathType(plan->conv, t.math));
    GC_CUDNN_CHECK(L.cudnnCreateTensorDescriptor(&plan->y));
    GC_CUDNN_CHECK(L.cudnnSetTensor4dDescriptor(plan->y, fmt_, t.data, n, kk, to_int(s.p(), "p"),
                                                to_int(s.q(), "q")));
    GraphConvSpec gs;
    gs.data = t.data;
    gs.compute = t.compute;
    gs.allow_tensor_cores = dtype != DType::kF32;
    gs.nhwc = s.layout == Layout::kNhwc;
    gs.n = n, gs.c = c, gs.h = h, gs.w = wd, gs.k = kk, gs.r = r, gs.s = ss;
    gs.p = to_int(s.p(), "p"), gs.q = to_int(s.q(), "q"), gs.stride = stride, gs.pad = pad;
    std::size_t free = 0, total = 0;
    GC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
    const std::size_t search_bytes = std::min(kConvSearchWorkspaceBytes, free / 4);
    const std::string kept_key =
        choice_key("cudnn", L.version(), "conv", gpucheck::to_string(dtype),
                   fmt::format("n{} c{} h{} w{} k{} r{} s{} stride{} pad{}", n, c, h, wd, kk, r, ss,
                               stride, pad),
                   gpucheck::to_string(s.layout));
    if (auto kept = choices_.find(kept_key))
      use_kept_conv(*plan, dtype, kept_key, *kept, gs, x, w, y, search_bytes);
    if (!plan->choice.is_object()) search_conv(*plan, dtype, kept_key, gs, x, w, y, search_bytes);
    if (plan->workspace > 0 && (!conv_workspace_ || conv_workspace_->bytes() < plan->workspace)) {
      GC_CUDA_CHECK(cudaStreamSynchronize(stream_));
      conv_workspace_.reset();
      conv_workspace_ = std::make_unique<CudaBuffer>(plan->workspace);
    }
    auto& ref = *plan;
    conv_plans_.emplace(key, std::move(plan));
    return ref;
  }

  int index_;
  DeviceIdentity identity_;
  int sms_ = 1;
  int cc_major_ = 0;
  int cc_minor_ = 0;
  cudaStream_t stream_ = nullptr;
  cudaEvent_t start_ = nullptr, stop_ = nullptr;
  cudaEvent_t tune_start_ = nullptr, tune_stop_ = nullptr;  // GEMM candidates, apart from start_
  cudaStream_t check_stream_ = nullptr;                     // stress checksums
  cudaEvent_t check_ready_ = nullptr;  // orders a checksum after the main stream's work
  bool checks_pending_ = false;
  std::unique_ptr<CudaBuffer> checksum_partials_;
  std::unique_ptr<NvmlSampler> sampler_;
  Op region_op_ = Op::kExp;
  DType region_dtype_ = DType::kF32;
  mutable bool region_fresh_ = false;
  const ConvPlan* last_conv_ =
      nullptr;  // the plan the last conv2d ran  // context() hands each region's summary out once
  std::unique_ptr<CublasLibrary> cublas_;
  std::string cublas_error_;
  cublasLtHandle_t lt_ = nullptr;
  cublasHandle_t blas_ = nullptr;
  EnvMap env_;  // where the libraries opened later (cuDNN) are looked for
  mutable bool cudnn_tried_ = false;
  mutable std::unique_ptr<CudnnLibrary> cudnn_;
  mutable std::string cudnn_error_;
  mutable cudnnHandle_t dnn_ = nullptr;
  std::unique_ptr<CudaBuffer> lt_workspace_;
  std::unique_ptr<CudaBuffer> conv_workspace_;
  std::map<GemmKey, std::unique_ptr<LtPlan>> lt_plans_;
  const LtPlan* last_lt_ = nullptr;  // the plan the last gemm ran
  LibraryChoiceCache choices_;       // kept engine and algorithm choices (tune_gemm opens it)
  bool choices_opened_ = false;
  std::map<ConvKey, std::unique_ptr<ConvPlan>> conv_plans_;
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

#include "backends/cuda/cuda_gemm_plans.h"

#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/library_choice.h"
#include "backends/library_choice_cache.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <string>

namespace gpucheck::cuda {

namespace {

namespace k = keys;

constexpr std::size_t kWorkspaceBytes = std::size_t{32} << 20;  // cuBLAS's Hopper advice
// cuBLASLt candidates timed once per GEMM shape (the heuristic's first is not always fastest).
constexpr int kLtCandidates = 8;
constexpr int kLtTuneRuns = 5;

}  // namespace

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

GemmPlans::GemmPlans(const CublasLibrary& lib, cublasLtHandle_t lt, cublasHandle_t blas,
                     cudaStream_t stream, LibraryChoiceCache& choices)
    : lib_(lib), lt_(lt), blas_(blas), stream_(stream), choices_(choices) {
  GC_CUDA_CHECK(cudaEventCreate(&tune_start_));
  GC_CUDA_CHECK(cudaEventCreate(&tune_stop_));
}

GemmPlans::~GemmPlans() {
  plans_.clear();
  workspace_.reset();
  if (tune_start_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(tune_start_));
  if (tune_stop_) GC_CUDA_CHECK_NOTHROW(cudaEventDestroy(tune_stop_));
}

// Row-major C[m×n] = A[m×k]·B[k×n] is column-major Cᵀ[n×m] = Bᵀ[n×k]·Aᵀ[k×m]: the same
// memory, no transposes, so cuBLASLt computes M=n, N=m, K=k with A'=B and B'=A. fp8's B comes
// K-major (Bᵀ[n×k] row-major, gemm_b_k_major): column-major that is a k×n A' read transposed,
// the "TN" form cuBLASLt's FP8 kernels require (A' transposed, B' = Aᵀ[k×m] not).
void GemmPlans::run(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
                    DeviceBuffer& c) {
  const GemmTypes t = gemm_types(dtype);
  LtPlan& plan = this->plan(dtype, s, a, b, c);
  last_ = &plan;
  const UnitScale scale(dtype);
  if (plan.have_algo) {
    GC_CUBLAS_CHECK(lib_.cublasLtMatmul(lt_, plan.op, scale.alpha(), dptr(b), plan.a, dptr(a),
                                        plan.b, scale.beta(), dptr(c), plan.c, dptr(c), plan.c,
                                        &plan.heuristic.algo, workspace_->get(),
                                        workspace_->bytes(), stream_));
    return;
  }
  // No cuBLASLt algorithm for this shape: cublasGemmEx chooses its own (plan() threw for
  // fp8, which cublasGemmEx does not run).
  const int m = to_library_int(s.m, "m"), n = to_library_int(s.n, "n"),
            kk = to_library_int(s.k, "k");
  GC_CUBLAS_CHECK(lib_.cublasGemmEx(blas_, CUBLAS_OP_N, CUBLAS_OP_N, n, m, kk, scale.alpha(),
                                    dptr(b), t.data, n, dptr(a), t.data, kk, scale.beta(), dptr(c),
                                    t.data, n, t.compute, CUBLAS_GEMM_DEFAULT));
}

nlohmann::json GemmPlans::last_choice() const {
  return last_ != nullptr ? last_->choice : nlohmann::json::object();
}

LtPlan& GemmPlans::plan(DType dtype, const GemmShape& s, const DeviceBuffer& a_buf,
                        const DeviceBuffer& b_buf, DeviceBuffer& c_buf) {
  Key key{static_cast<int>(dtype), s.m, s.n, s.k};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  if (!workspace_) workspace_ = std::make_unique<CudaBuffer>(kWorkspaceBytes);
  const GemmTypes t = gemm_types(dtype);
  auto plan = std::make_unique<LtPlan>();
  plan->lib = &lib_;
  const auto& L = lib_;
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
  std::size_t ws = workspace_->bytes();
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
  if (!plan->have_algo) plan->choice = gemm_ex_choice_json(lib_.version());
  if (plan->have_algo) {
    found.resize(static_cast<std::size_t>(returned));
    const std::string version = lib_.lt_version();
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
  plans_.emplace(key, std::move(plan));
  return ref;
}

// cuBLASLt's description of an algorithm: id, tile, stages, split-k and the rest. The inner and
// cluster shapes are newer attributes: a library without them reads as 0.
LtAlgoChoice GemmPlans::describe_algo(const cublasLtMatmulAlgo_t& algo) const {
  LtAlgoChoice c;
  auto get = [&](cublasLtMatmulAlgoConfigAttributes_t attr, auto* value, bool required) {
    std::size_t written = 0;
    const cublasStatus_t st =
        lib_.cublasLtMatmulAlgoConfigGetAttribute(&algo, attr, value, sizeof(*value), &written);
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
// and returns the one to keep (pick_within_noise: of those within kChoiceTieNoise of the fastest,
// the heuristic's first) and how many ran; a failing candidate is passed over. (Timing
// cublasGemmEx's own choice as well was tried: on an H100, f64 8192 then ran 15 % slower, at
// higher power, in all three rounds: these short runs on a cool card chose differently;
// docs/PERFORMANCE.md.)
std::pair<std::size_t, int> GemmPlans::fastest(
    const LtPlan& plan, DType dtype, const std::vector<cublasLtMatmulHeuristicResult_t>& found,
    const DeviceBuffer& a, const DeviceBuffer& b, DeviceBuffer& c) {
  if (found.size() == 1) return {0, 0};
  const UnitScale scale(dtype);
  auto run = [&](const cublasLtMatmulHeuristicResult_t& h) {
    return lib_.cublasLtMatmul(lt_, plan.op, scale.alpha(), dptr(b), plan.a, dptr(a), plan.b,
                               scale.beta(), dptr(c), plan.c, dptr(c), plan.c, &h.algo,
                               workspace_->get(), workspace_->bytes(), stream_);
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
  return {pick_within_noise(ms, kChoiceTieNoise).value_or(0), timed};
}

}  // namespace gpucheck::cuda

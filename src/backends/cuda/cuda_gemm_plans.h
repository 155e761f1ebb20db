// cuBLASLt plans of a CUDA device's GEMMs: per shape and dtype its descriptors, the heuristic's
// candidates timed once on the real buffers (or the choice kept from an earlier run), and the
// run through cuBLASLt, or cublasGemmEx where cuBLASLt offers no algorithm.
#pragma once

#include "backends/cuda/cublas_library.h"
#include "backends/device.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace gpucheck {
class LibraryChoiceCache;
}

namespace gpucheck::cuda {

class CudaBuffer;

// A and B in `data`, C and D in `out` (the same but for fp8, whose GEMM writes bf16).
struct GemmTypes {
  cudaDataType_t data;
  cublasComputeType_t compute;
  cudaDataType_t scale;
  const char* compute_name;
  cudaDataType_t out;
};

GemmTypes gemm_types(DType d);

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

class GemmPlans {
 public:
  // The handles and stream are the device's, and outlive these plans; so does `choices`, which
  // the device opens before its first GEMM.
  GemmPlans(const CublasLibrary& lib, cublasLtHandle_t lt, cublasHandle_t blas, cudaStream_t stream,
            LibraryChoiceCache& choices);
  ~GemmPlans();
  GemmPlans(const GemmPlans&) = delete;
  GemmPlans& operator=(const GemmPlans&) = delete;

  // Enqueues row-major C[m×n] = A[m×k]·B[k×n] (fp8: B K-major) on the stream; the shape's plan
  // is made on its first run.
  void run(DType dtype, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
           DeviceBuffer& c);
  // The record's `choice` of the last run's plan; an empty object before any.
  nlohmann::json last_choice() const;

 private:
  using Key = std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t>;
  LtPlan& plan(DType dtype, const GemmShape& s, const DeviceBuffer& a_buf,
               const DeviceBuffer& b_buf, DeviceBuffer& c_buf);
  LtAlgoChoice describe_algo(const cublasLtMatmulAlgo_t& algo) const;
  std::pair<std::size_t, int> fastest(const LtPlan& plan, DType dtype,
                                      const std::vector<cublasLtMatmulHeuristicResult_t>& found,
                                      const DeviceBuffer& a, const DeviceBuffer& b,
                                      DeviceBuffer& c);

  const CublasLibrary& lib_;
  cublasLtHandle_t lt_;
  cublasHandle_t blas_;
  cudaStream_t stream_;
  LibraryChoiceCache& choices_;
  cudaEvent_t tune_start_ = nullptr, tune_stop_ = nullptr;  // candidates' timing
  std::unique_ptr<CudaBuffer> workspace_;
  std::map<Key, std::unique_ptr<LtPlan>> plans_;
  const LtPlan* last_ = nullptr;
};

}  // namespace gpucheck::cuda

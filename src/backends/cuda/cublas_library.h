// cuBLAS and cuBLASLt opened at run time through typed function tables (types from the
// toolkit's headers, so a wrong signature cannot compile; no link to the libraries).
#pragma once

#include "backends/cuda/library_loader.h"
#include "core/environment.h"

#include <cublasLt.h>
#include <cublas_v2.h>

#include <memory>
#include <string>

namespace gpucheck::cuda {

class CublasLibrary {
 public:
  // nullptr with *error set (dlerror texts, missing symbols) when cuBLAS cannot be used.
  static std::unique_ptr<CublasLibrary> open(const EnvMap& env, std::string* error);

  const LoadedLibrary& cublas() const { return cublas_; }
  const LoadedLibrary& cublaslt() const { return cublaslt_; }
  // "13.0.2" from cublasGetProperty; cuBLASLt's from cublasLtGetVersion.
  std::string version() const;
  std::string lt_version() const;
  int lt_version_number() const { return static_cast<int>(cublasLtGetVersion()); }

  decltype(&::cublasGetProperty) cublasGetProperty = nullptr;
  decltype(&::cublasCreate_v2) cublasCreate = nullptr;
  decltype(&::cublasDestroy_v2) cublasDestroy = nullptr;
  decltype(&::cublasSetStream_v2) cublasSetStream = nullptr;
  decltype(&::cublasSetWorkspace_v2) cublasSetWorkspace = nullptr;
  decltype(&::cublasSetMathMode) cublasSetMathMode = nullptr;
  // cublas_api.h overloads cublasGemmEx for C++ (a cudaDataType compute argument): pick the C one.
  using GemmExFn = cublasStatus_t (*)(cublasHandle_t, cublasOperation_t, cublasOperation_t, int,
                                      int, int, const void*, const void*, cudaDataType, int,
                                      const void*, cudaDataType, int, const void*, void*,
                                      cudaDataType, int, cublasComputeType_t, cublasGemmAlgo_t);
  GemmExFn cublasGemmEx = nullptr;

  decltype(&::cublasLtGetVersion) cublasLtGetVersion = nullptr;
  decltype(&::cublasLtCreate) cublasLtCreate = nullptr;
  decltype(&::cublasLtDestroy) cublasLtDestroy = nullptr;
  decltype(&::cublasLtMatmulDescCreate) cublasLtMatmulDescCreate = nullptr;
  decltype(&::cublasLtMatmulDescDestroy) cublasLtMatmulDescDestroy = nullptr;
  decltype(&::cublasLtMatmulDescSetAttribute) cublasLtMatmulDescSetAttribute = nullptr;
  decltype(&::cublasLtMatrixLayoutCreate) cublasLtMatrixLayoutCreate = nullptr;
  decltype(&::cublasLtMatrixLayoutDestroy) cublasLtMatrixLayoutDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceCreate) cublasLtMatmulPreferenceCreate = nullptr;
  decltype(&::cublasLtMatmulPreferenceDestroy) cublasLtMatmulPreferenceDestroy = nullptr;
  decltype(&::cublasLtMatmulPreferenceSetAttribute) cublasLtMatmulPreferenceSetAttribute = nullptr;
  decltype(&::cublasLtMatmulAlgoGetHeuristic) cublasLtMatmulAlgoGetHeuristic = nullptr;
  decltype(&::cublasLtMatmul) cublasLtMatmul = nullptr;
  decltype(&::cublasLtMatmulAlgoConfigGetAttribute) cublasLtMatmulAlgoConfigGetAttribute = nullptr;

 private:
  CublasLibrary() = default;
  LoadedLibrary cublas_;
  LoadedLibrary cublaslt_;
};

}  // namespace gpucheck::cuda

// Loading cuBLAS, then cuBLASLt beside it, and resolving the entry points the GEMM uses.
#include "backends/cuda/cublas_library.h"

#include <fmt/format.h>

namespace gpucheck::cuda {

std::unique_ptr<CublasLibrary> CublasLibrary::open(const EnvMap& env, std::string* error) {
  std::unique_ptr<CublasLibrary> lib(new CublasLibrary());
  auto spec = cublas_spec();
  lib->cublas_ = load_library(spec, search_roots(spec, env));
  if (!lib->cublas_.ok()) {
    *error = fmt::format("cuBLAS not loadable: {}", lib->cublas_.error);
    return nullptr;
  }
  auto lt_spec = cublaslt_spec();
  auto lt_roots = search_roots(lt_spec, env);
  lib->cublaslt_ =
      lt_roots.explicit_path ? load_library(lt_spec, lt_roots) : load_beside(lt_spec, lib->cublas_);
  if (!lib->cublaslt_.ok()) {
    *error = fmt::format("cuBLASLt not loadable: {}", lib->cublaslt_.error);
    return nullptr;
  }
  std::string missing;
  void* b = lib->cublas_.handle;
  void* lt = lib->cublaslt_.handle;
  bool ok = resolve_symbol(b, "cublasGetProperty", &lib->cublasGetProperty, &missing);
  ok = resolve_symbol(b, "cublasCreate_v2", &lib->cublasCreate, &missing) && ok;
  ok = resolve_symbol(b, "cublasDestroy_v2", &lib->cublasDestroy, &missing) && ok;
  ok = resolve_symbol(b, "cublasSetStream_v2", &lib->cublasSetStream, &missing) && ok;
  ok = resolve_symbol(b, "cublasSetWorkspace_v2", &lib->cublasSetWorkspace, &missing) && ok;
  ok = resolve_symbol(b, "cublasSetMathMode", &lib->cublasSetMathMode, &missing) && ok;
  ok = resolve_symbol(b, "cublasGemmEx", &lib->cublasGemmEx, &missing) && ok;
  ok = resolve_symbol(lt, "cublasLtGetVersion", &lib->cublasLtGetVersion, &missing) && ok;
  ok = resolve_symbol(lt, "cublasLtCreate", &lib->cublasLtCreate, &missing) && ok;
  ok = resolve_symbol(lt, "cublasLtDestroy", &lib->cublasLtDestroy, &missing) && ok;
  ok = resolve_symbol(lt, "cublasLtMatmulDescCreate", &lib->cublasLtMatmulDescCreate, &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulDescDestroy", &lib->cublasLtMatmulDescDestroy, &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulDescSetAttribute", &lib->cublasLtMatmulDescSetAttribute,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatrixLayoutCreate", &lib->cublasLtMatrixLayoutCreate,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatrixLayoutDestroy", &lib->cublasLtMatrixLayoutDestroy,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulPreferenceCreate", &lib->cublasLtMatmulPreferenceCreate,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulPreferenceDestroy", &lib->cublasLtMatmulPreferenceDestroy,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulPreferenceSetAttribute",
                      &lib->cublasLtMatmulPreferenceSetAttribute, &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmulAlgoGetHeuristic", &lib->cublasLtMatmulAlgoGetHeuristic,
                      &missing) &&
       ok;
  ok = resolve_symbol(lt, "cublasLtMatmul", &lib->cublasLtMatmul, &missing) && ok;
  ok = resolve_symbol(lt, "cublasLtMatmulAlgoConfigGetAttribute",
                      &lib->cublasLtMatmulAlgoConfigGetAttribute, &missing) &&
       ok;
  if (!ok) {
    *error = fmt::format("cuBLAS at {} lacks {}", lib->cublas_.real_path, missing);
    return nullptr;
  }
  return lib;
}

std::string CublasLibrary::version() const {
  int major = 0, minor = 0, patch = 0;
  if (cublasGetProperty(MAJOR_VERSION, &major) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(MINOR_VERSION, &minor) != CUBLAS_STATUS_SUCCESS ||
      cublasGetProperty(PATCH_LEVEL, &patch) != CUBLAS_STATUS_SUCCESS)
    return {};
  return fmt::format("{}.{}.{}", major, minor, patch);
}

std::string CublasLibrary::lt_version() const {
  // major·10000 + minor·100 + patch since cuBLAS 12.
  std::size_t v = cublasLtGetVersion();
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace gpucheck::cuda

// Error names for the CUDA runtime, cuBLAS and cuDNN, and the functions the macros call.
#include "backends/cuda/cuda_errors.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <array>
#include <climits>
#include <stdexcept>
#include <utility>

namespace gpucheck::cuda {

namespace {

// cuBLAS status names (cublas_api.h); the library's own cublasGetStatusName needs the library.
std::string cublas_status_name(int code) {
  static constexpr std::array<std::pair<int, const char*>, 11> kNames{{
      {0, "CUBLAS_STATUS_SUCCESS"},
      {1, "CUBLAS_STATUS_NOT_INITIALIZED"},
      {3, "CUBLAS_STATUS_ALLOC_FAILED"},
      {7, "CUBLAS_STATUS_INVALID_VALUE"},
      {8, "CUBLAS_STATUS_ARCH_MISMATCH"},
      {11, "CUBLAS_STATUS_MAPPING_ERROR"},
      {13, "CUBLAS_STATUS_EXECUTION_FAILED"},
      {14, "CUBLAS_STATUS_INTERNAL_ERROR"},
      {15, "CUBLAS_STATUS_NOT_SUPPORTED"},
      {16, "CUBLAS_STATUS_LICENSE_ERROR"},
      {-1, ""},
  }};
  for (const auto& [c, n] : kNames)
    if (c == code) return n;
  return "CUBLAS_STATUS_UNKNOWN";
}

// A failed library call may come from a kernel that poisoned the context: ask the runtime.
void throw_if_context_lost(const char* call, const char* file, int line) {
  int last = static_cast<int>(cudaPeekAtLastError());
  if (is_sticky_cuda_error(last))
    throw StickyCudaError("CUDA", last, cuda_error_name(last), call, file, line);
}

}  // namespace

// cuDNN 9 status codes are grouped by thousands (cudnn_graph.h); the common ones by name.
std::string cudnn_status_name(int code) {
  static constexpr std::array<std::pair<int, const char*>, 14> kNames{{
      {0, "CUDNN_STATUS_SUCCESS"},
      {1001, "CUDNN_STATUS_NOT_INITIALIZED"},
      {1002, "CUDNN_STATUS_SUBLIBRARY_VERSION_MISMATCH"},
      {1004, "CUDNN_STATUS_DEPRECATED"},
      {1006, "CUDNN_STATUS_SUBLIBRARY_LOADING_FAILED"},
      {2000, "CUDNN_STATUS_BAD_PARAM"},
      {2002, "CUDNN_STATUS_BAD_PARAM_NULL_POINTER"},
      {3000, "CUDNN_STATUS_NOT_SUPPORTED"},
      {3007, "CUDNN_STATUS_NOT_SUPPORTED_ARCH_MISMATCH"},
      {4000, "CUDNN_STATUS_INTERNAL_ERROR"},
      {4001, "CUDNN_STATUS_INTERNAL_ERROR_COMPILATION_FAILED"},
      {5000, "CUDNN_STATUS_EXECUTION_FAILED"},
      {5003, "CUDNN_STATUS_EXECUTION_FAILED_CUDA_DRIVER"},
      {-1, ""},
  }};
  for (const auto& [c, n] : kNames)
    if (c == code) return n;
  if (code >= 1000 && code < 6000) {
    static constexpr std::array<const char*, 5> kGroups{
        "CUDNN_STATUS_NOT_INITIALIZED", "CUDNN_STATUS_BAD_PARAM", "CUDNN_STATUS_NOT_SUPPORTED",
        "CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_EXECUTION_FAILED"};
    return std::string(kGroups[static_cast<std::size_t>(code / 1000 - 1)]) + "_*";
  }
  return "CUDNN_STATUS_UNKNOWN";
}

bool is_sticky_cuda_error(int code) {
  switch (code) {
    case cudaErrorECCUncorrectable:
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchTimeout:
    case cudaErrorAssert:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorLaunchFailure:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

std::string cuda_error_name(int code) {
  const char* name = cudaGetErrorName(static_cast<cudaError_t>(code));
  return name != nullptr ? name : fmt::format("cudaError{}", code);
}

std::string cuda_error_text(int code) {
  const char* text = cudaGetErrorString(static_cast<cudaError_t>(code));
  return fmt::format("{} ({}): {}", cuda_error_name(code), code, text != nullptr ? text : "");
}

void throw_cuda_error(int code, const char* call, const char* file, int line) {
  if (is_sticky_cuda_error(code))
    throw StickyCudaError("CUDA", code, cuda_error_name(code), call, file, line);
  throw ApiError("CUDA", code, cuda_error_name(code), call, file, line);
}

void throw_cublas_error(int code, const char* call, const char* file, int line) {
  throw_if_context_lost(call, file, line);
  throw ApiError("cuBLAS", code, cublas_status_name(code), call, file, line);
}

void throw_cudnn_error(int code, const char* call, const char* file, int line) {
  throw_if_context_lost(call, file, line);
  throw ApiError("cuDNN", code, cudnn_status_name(code), call, file, line);
}

void log_api_error(const char* api, int code, const char* call, const char* file,
                   int line) noexcept {
  std::string name = std::string_view(api) == "CUDA"     ? cuda_error_name(code)
                     : std::string_view(api) == "cuBLAS" ? cublas_status_name(code)
                                                         : cudnn_status_name(code);
  spdlog::warn("{}: {} failed: {} ({}) at {}:{}", api, call, name, code, file, line);
}

int to_library_int(std::uint64_t v, const char* what) {
  if (v > static_cast<std::uint64_t>(INT_MAX))
    throw std::overflow_error(fmt::format("{} = {} exceeds the library's int range", what, v));
  return static_cast<int>(v);
}

}  // namespace gpucheck::cuda

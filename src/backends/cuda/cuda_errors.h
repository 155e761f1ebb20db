// Checking macros for the CUDA runtime, cuBLAS, cuDNN and NVML: each failed call becomes an
// ApiError naming the API, the call, the code and its name; sticky CUDA errors get their own type.
#pragma once

#include "core/errors.h"

#include <cstdint>
#include <string>

namespace gpucheck::cuda {

// The CUDA context is unusable (illegal address, launch failure, ECC, ...): every later call
// fails too. The bench child must end with this error rather than run more cells; the context
// is never "recovered" with cudaDeviceReset, which would pull it from under cuBLAS and cuDNN.
class StickyCudaError : public DeviceLostError {
 public:
  using DeviceLostError::DeviceLostError;
};

// True for the runtime error codes that poison the context until the process ends.
bool is_sticky_cuda_error(int code);

// "cudaErrorNoDevice" for 100; from the runtime's own table.
std::string cuda_error_name(int code);
// "cudaErrorNoDevice (100): no CUDA-capable device is detected".
std::string cuda_error_text(int code);

// "CUDNN_STATUS_BAD_PARAM" for 2000; a code of a known thousand but no name as "..._*".
std::string cudnn_status_name(int code);

[[noreturn]] void throw_cuda_error(int code, const char* call, const char* file, int line);
[[noreturn]] void throw_cublas_error(int code, const char* call, const char* file, int line);
[[noreturn]] void throw_cudnn_error(int code, const char* call, const char* file, int line);
// A size a library takes as an int; throws std::overflow_error naming `what` where it does not
// fit.
int to_library_int(std::uint64_t v, const char* what);

// Destructors' variant: logs the failure (spdlog, stderr) and returns.
void log_api_error(const char* api, int code, const char* call, const char* file,
                   int line) noexcept;

}  // namespace gpucheck::cuda

// Checks a call returning cudaError_t; anything but cudaSuccess throws (StickyCudaError when
// the code poisons the context).
#define GC_CUDA_CHECK(expr)                                                           \
  do {                                                                                \
    const int gc_cuda_status_ = static_cast<int>(expr);                               \
    if (gc_cuda_status_ != 0)                                                         \
      ::gpucheck::cuda::throw_cuda_error(gc_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// For destructors and cleanup paths: never throws.
#define GC_CUDA_CHECK_NOTHROW(expr)                                                        \
  do {                                                                                     \
    const int gc_cuda_status_ = static_cast<int>(expr);                                    \
    if (gc_cuda_status_ != 0)                                                              \
      ::gpucheck::cuda::log_api_error("CUDA", gc_cuda_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GC_CUBLAS_CHECK(expr)                                                             \
  do {                                                                                    \
    const int gc_cublas_status_ = static_cast<int>(expr);                                 \
    if (gc_cublas_status_ != 0)                                                           \
      ::gpucheck::cuda::throw_cublas_error(gc_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GC_CUBLAS_CHECK_NOTHROW(expr)                                                          \
  do {                                                                                         \
    const int gc_cublas_status_ = static_cast<int>(expr);                                      \
    if (gc_cublas_status_ != 0)                                                                \
      ::gpucheck::cuda::log_api_error("cuBLAS", gc_cublas_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GC_CUDNN_CHECK(expr)                                                            \
  do {                                                                                  \
    const int gc_cudnn_status_ = static_cast<int>(expr);                                \
    if (gc_cudnn_status_ != 0)                                                          \
      ::gpucheck::cuda::throw_cudnn_error(gc_cudnn_status_, #expr, __FILE__, __LINE__); \
  } while (0)

#define GC_CUDNN_CHECK_NOTHROW(expr)                                                         \
  do {                                                                                       \
    const int gc_cudnn_status_ = static_cast<int>(expr);                                     \
    if (gc_cudnn_status_ != 0)                                                               \
      ::gpucheck::cuda::log_api_error("cuDNN", gc_cudnn_status_, #expr, __FILE__, __LINE__); \
  } while (0)

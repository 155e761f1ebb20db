// OpenCL status codes by name, and GC_CL_CHECK, which turns a failed call into an ApiError.
#pragma once

#include "backends/opencl/cl_headers.h"

#include <string>
#include <string_view>

namespace gpucheck::opencl {

// "CL_INVALID_VALUE" for -30; "CL_UNKNOWN_ERROR" for a code no OpenCL header defines.
std::string_view cl_error_name(cl_int code);

// "CL_INVALID_VALUE (-30)": how a failed query appears in probe output.
std::string cl_error_text(cl_int code);

// Throws ApiError("OpenCL", code, its name, the call, file, line).
[[noreturn]] void throw_cl_error(cl_int code, const char* call, const char* file, int line);

// Logs a failed call as a warning: for destructors, which must not throw.
void log_cl_error(cl_int code, const char* call, const char* file, int line) noexcept;

}  // namespace gpucheck::opencl

// Checks a call that returns a cl_int status; anything but CL_SUCCESS throws ApiError.
#define GC_CL_CHECK(expr)                                                           \
  do {                                                                              \
    const cl_int gc_cl_status_ = (expr);                                            \
    if (gc_cl_status_ != CL_SUCCESS)                                                \
      ::gpucheck::opencl::throw_cl_error(gc_cl_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// GC_CL_CHECK for destructors: a failure is logged, never thrown.
#define GC_CL_CHECK_NOTHROW(expr)                                                 \
  do {                                                                            \
    const cl_int gc_cl_status_ = (expr);                                          \
    if (gc_cl_status_ != CL_SUCCESS)                                              \
      ::gpucheck::opencl::log_cl_error(gc_cl_status_, #expr, __FILE__, __LINE__); \
  } while (0)

// CLBlast (libclblast.so.1), opened at run time through a typed function table. The few types
// and signatures used are declared here by hand (as clblast_c.h of CLBlast 1.5 has them), so
// the build needs no CLBlast headers and the binary starts without the library.
#pragma once

#include "backends/opencl/cl_headers.h"

#include <memory>
#include <string>

namespace gpucheck::opencl {

inline constexpr const char* kClblastSoname = "libclblast.so.1";

// clblast_c.h's enums, with the values the library expects.
enum class ClblastLayout : int { kRowMajor = 101, kColMajor = 102 };
enum class ClblastTranspose : int { kNo = 111, kYes = 112 };
enum class ClblastPrecision : int { kHalf = 16, kSingle = 32, kDouble = 64 };
using ClblastStatus = int;  // CLBlastStatusCode: 0 success, OpenCL codes, -1024.. its own

template <typename Scalar>
using ClblastGemmFn = ClblastStatus (*)(ClblastLayout layout, ClblastTranspose a_transpose,
                                        ClblastTranspose b_transpose, size_t m, size_t n, size_t k,
                                        Scalar alpha, cl_mem a, size_t a_offset, size_t a_ld,
                                        cl_mem b, size_t b_offset, size_t b_ld, Scalar beta,
                                        cl_mem c, size_t c_offset, size_t c_ld,
                                        cl_command_queue* queue, cl_event* event);

class ClblastLibrary {
 public:
  // nullptr with *error set to the dlerror() text or the missing symbols.
  static std::unique_ptr<ClblastLibrary> open(std::string* error);
  ClblastLibrary(const ClblastLibrary&) = delete;
  ClblastLibrary& operator=(const ClblastLibrary&) = delete;
  ~ClblastLibrary();

  const std::string& path() const { return path_; }

  ClblastGemmFn<float> CLBlastSgemm = nullptr;
  ClblastGemmFn<double> CLBlastDgemm = nullptr;
  ClblastGemmFn<cl_half> CLBlastHgemm = nullptr;
  ClblastStatus (*CLBlastOverrideParameters)(cl_device_id device, const char* kernel_name,
                                             ClblastPrecision precision, size_t num_parameters,
                                             const char** parameter_names,
                                             const size_t* parameter_values) = nullptr;
  ClblastStatus (*CLBlastClearCache)() = nullptr;

 private:
  explicit ClblastLibrary(void* handle) : handle_(handle) {}
  void* handle_;
  std::string path_;
};

// "CLBlastInvalidDimension" for -1017; OpenCL's names for the codes it shares with OpenCL.
std::string clblast_status_name(ClblastStatus status);

// Throws ApiError("CLBlast", status, its name, the call, file, line).
[[noreturn]] void throw_clblast_error(ClblastStatus status, const char* call, const char* file,
                                      int line);

}  // namespace gpucheck::opencl

// Checks a CLBlast call; anything but success (0) throws ApiError.
#define GC_CLBLAST_CHECK(expr)                                                                \
  do {                                                                                        \
    const ::gpucheck::opencl::ClblastStatus gc_clblast_status_ = (expr);                      \
    if (gc_clblast_status_ != 0)                                                              \
      ::gpucheck::opencl::throw_clblast_error(gc_clblast_status_, #expr, __FILE__, __LINE__); \
  } while (0)

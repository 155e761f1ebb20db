// NCCL opened at run time through the same library search as cuBLAS (--nccl PATH, LD_LIBRARY_PATH,
// the ld.so cache, the toolkit, conda, Python wheels such as torch's nvidia/nccl), with the few
// types gpucheck needs declared by hand (nccl.h is not on every build machine; a unit test checks
// them against the real header where one is installed).
#pragma once

#include "backends/cuda/library_loader.h"
#include "core/environment.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <memory>
#include <string>

namespace gpucheck::cuda {

namespace nccl {
using Result = int;  // ncclResult_t
inline constexpr Result kSuccess = 0;
inline constexpr Result kInProgress = 7;
struct CommSt;
using Comm = CommSt*;                               // ncclComm_t
using DataType = int;                               // ncclDataType_t
using RedOp = int;                                  // ncclRedOp_t
inline constexpr DataType kFloat32 = 7;             // ncclFloat32
inline constexpr RedOp kSum = 0;                    // ncclSum
inline constexpr std::size_t kUniqueIdBytes = 128;  // NCCL_UNIQUE_ID_BYTES
struct UniqueId {                                   // ncclUniqueId
  char internal[kUniqueIdBytes];
};

extern "C" {
using GetVersionFn = Result (*)(int*);
using CommInitAllFn = Result (*)(Comm*, int, const int*);
using CommDestroyFn = Result (*)(Comm);
using CommAbortFn = Result (*)(Comm);
using CommGetAsyncErrorFn = Result (*)(Comm, Result*);
using GetErrorStringFn = const char* (*)(Result);
using GetLastErrorFn = const char* (*)(Comm);
using AllReduceFn = Result (*)(const void*, void*, std::size_t, DataType, RedOp, Comm,
                               cudaStream_t);
using GroupFn = Result (*)();
using GetUniqueIdFn = Result (*)(UniqueId*);
using CommInitRankFn = Result (*)(Comm*, int, UniqueId, int);
}
}  // namespace nccl

LibrarySpec nccl_spec();

// Where the search looks, in words, for the message when no NCCL loads.
std::string describe_nccl_search(const SearchRoots& roots);

class NcclLibrary {
 public:
  // nullptr with *error naming what was searched and why each copy failed.
  static std::unique_ptr<NcclLibrary> open(const EnvMap& env, std::string* error);

  const LoadedLibrary& library() const { return lib_; }
  // "2.27.3" from ncclGetVersion (major·10000 + minor·100 + patch since 2.9).
  std::string version() const;

  // Throws ApiError("NCCL", code, its name, "<call>: <ncclGetErrorString>[; <last error>]").
  [[noreturn]] void fail(nccl::Result code, const char* call, nccl::Comm comm, const char* file,
                         int line) const;

  nccl::GetVersionFn ncclGetVersion = nullptr;
  nccl::CommInitAllFn ncclCommInitAll = nullptr;
  nccl::CommDestroyFn ncclCommDestroy = nullptr;
  nccl::CommAbortFn ncclCommAbort = nullptr;
  nccl::CommGetAsyncErrorFn ncclCommGetAsyncError = nullptr;
  nccl::GetErrorStringFn ncclGetErrorString = nullptr;
  nccl::GetLastErrorFn ncclGetLastError = nullptr;  // optional (NCCL >= 2.13)
  nccl::AllReduceFn ncclAllReduce = nullptr;
  nccl::GroupFn ncclGroupStart = nullptr;
  nccl::GroupFn ncclGroupEnd = nullptr;
  nccl::GetUniqueIdFn ncclGetUniqueId = nullptr;
  nccl::CommInitRankFn ncclCommInitRank = nullptr;

 private:
  NcclLibrary() = default;
  LoadedLibrary lib_;
};

// "ncclUnhandledCudaError" for 1; "ncclResult <n>" for codes not named here.
std::string nccl_result_name(nccl::Result r);

}  // namespace gpucheck::cuda

// Checks an NCCL call of `lib` (an NcclLibrary), naming the communicator's last error if any.
#define GC_NCCL_CHECK(lib, comm, expr)                                                        \
  do {                                                                                        \
    const int gc_nccl_status_ = static_cast<int>(expr);                                       \
    if (gc_nccl_status_ != 0) (lib).fail(gc_nccl_status_, #expr, (comm), __FILE__, __LINE__); \
  } while (0)

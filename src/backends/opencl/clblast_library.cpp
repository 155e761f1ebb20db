// dlopen of libclblast.so.1 and the names of its status codes.
#include "backends/opencl/clblast_library.h"

#include "backends/opencl/cl_errors.h"
#include "core/errors.h"
#include "core/sanitize.h"

#include <dlfcn.h>
#include <link.h>

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace gpucheck::opencl {

namespace {

struct StatusName {
  ClblastStatus code;
  std::string_view name;
};

// CLBlast's own codes (clblast_c.h); the others are OpenCL's.
constexpr std::array kClblastCodes = {
    StatusName{-1024, "CLBlastNotImplemented"},
    StatusName{-1022, "CLBlastInvalidMatrixA"},
    StatusName{-1021, "CLBlastInvalidMatrixB"},
    StatusName{-1020, "CLBlastInvalidMatrixC"},
    StatusName{-1019, "CLBlastInvalidVectorX"},
    StatusName{-1018, "CLBlastInvalidVectorY"},
    StatusName{-1017, "CLBlastInvalidDimension"},
    StatusName{-1016, "CLBlastInvalidLeadDimA"},
    StatusName{-1015, "CLBlastInvalidLeadDimB"},
    StatusName{-1014, "CLBlastInvalidLeadDimC"},
    StatusName{-1013, "CLBlastInvalidIncrementX"},
    StatusName{-1012, "CLBlastInvalidIncrementY"},
    StatusName{-1011, "CLBlastInsufficientMemoryA"},
    StatusName{-1010, "CLBlastInsufficientMemoryB"},
    StatusName{-1009, "CLBlastInsufficientMemoryC"},
    StatusName{-1008, "CLBlastInsufficientMemoryX"},
    StatusName{-1007, "CLBlastInsufficientMemoryY"},
    StatusName{-2050, "CLBlastInsufficientMemoryTemp"},
    StatusName{-2049, "CLBlastInvalidBatchCount"},
    StatusName{-2048, "CLBlastInvalidOverrideKernel"},
    StatusName{-2047, "CLBlastMissingOverrideParameter"},
    StatusName{-2046, "CLBlastInvalidLocalMemUsage"},
    StatusName{-2045, "CLBlastNoHalfPrecision"},
    StatusName{-2044, "CLBlastNoDoublePrecision"},
    StatusName{-2043, "CLBlastInvalidVectorScalar"},
    StatusName{-2042, "CLBlastInsufficientMemoryScalar"},
    StatusName{-2041, "CLBlastDatabaseError"},
    StatusName{-2040, "CLBlastUnknownError"},
    StatusName{-2039, "CLBlastUnexpectedError"},
};

template <typename Fn>
void resolve(void* handle, const char* symbol, Fn* out, std::string* missing) {
  void* p = ::dlsym(handle, symbol);
  if (p == nullptr) {
    if (!missing->empty()) *missing += ", ";
    *missing += symbol;
    return;
  }
  *out = reinterpret_cast<Fn>(p);
}

}  // namespace

std::unique_ptr<ClblastLibrary> ClblastLibrary::open(std::string* error) {
  ::dlerror();
  // RTLD_NODELETE: CLBlast keeps programs and a device cache in statics that outlive us.
  void* handle = ::dlopen(kClblastSoname, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (handle == nullptr) {
    const char* e = ::dlerror();
    *error = sanitize(e != nullptr ? e : "dlopen failed");
    return nullptr;
  }
  std::unique_ptr<ClblastLibrary> lib(new ClblastLibrary(handle));
  link_map* map = nullptr;
  if (::dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr)
    lib->path_ = sanitize(map->l_name);
  std::string missing;
  resolve(handle, "CLBlastSgemm", &lib->CLBlastSgemm, &missing);
  resolve(handle, "CLBlastDgemm", &lib->CLBlastDgemm, &missing);
  resolve(handle, "CLBlastHgemm", &lib->CLBlastHgemm, &missing);
  resolve(handle, "CLBlastOverrideParameters", &lib->CLBlastOverrideParameters, &missing);
  resolve(handle, "CLBlastClearCache", &lib->CLBlastClearCache, &missing);
  if (!missing.empty()) {
    *error = fmt::format("{}: missing symbols: {}", lib->path_, missing);
    return nullptr;
  }
  return lib;
}

ClblastLibrary::~ClblastLibrary() {
  ::dlclose(handle_);
}

std::string clblast_status_name(ClblastStatus status) {
  for (const auto& c : kClblastCodes)
    if (c.code == status) return std::string(c.name);
  return std::string(cl_error_name(status));
}

void throw_clblast_error(ClblastStatus status, const char* call, const char* file, int line) {
  throw ApiError("CLBlast", status, clblast_status_name(status), call, file, line);
}

}  // namespace gpucheck::opencl

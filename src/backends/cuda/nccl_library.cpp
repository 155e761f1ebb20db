// Loading NCCL, resolving its entry points and naming its errors.
#include "backends/cuda/nccl_library.h"

#include "core/errors.h"

#include <fmt/format.h>

namespace gpucheck::cuda {

LibrarySpec nccl_spec() {
  return {"nccl", "libnccl.so", 2, {"nvidia/nccl/lib", "nvidia/cu13/lib"}, "GPUCHECK_NCCL_LIB"};
}

std::string nccl_result_name(nccl::Result r) {
  static constexpr const char* kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  if (r >= 0 && r < 8) return kNames[r];
  return fmt::format("ncclResult {}", r);
}

std::string describe_nccl_search(const SearchRoots& roots) {
  if (roots.explicit_path) return "--nccl " + *roots.explicit_path;
  std::string where = "LD_LIBRARY_PATH";
  for (const auto& d : roots.ld_library_path)
    where += (where == "LD_LIBRARY_PATH" ? " (" : ", ") + d;
  if (!roots.ld_library_path.empty()) where += ")";
  where += ", the ld.so cache, " + roots.usr_local + "/cuda*/lib64";
  if (!roots.conda_prefix.empty()) where += ", " + roots.conda_prefix + "/lib";
  where += ", and nvidia/nccl/lib in the Python site-packages";
  for (std::size_t i = 0; i < roots.site_packages.size(); ++i)
    where += (i == 0 ? " " : ", ") + roots.site_packages[i];
  if (roots.site_packages.empty()) where += " (none found)";
  return where;
}

std::unique_ptr<NcclLibrary> NcclLibrary::open(const EnvMap& env, std::string* error) {
  std::unique_ptr<NcclLibrary> lib(new NcclLibrary());
  const LibrarySpec spec = nccl_spec();
  const SearchRoots roots = search_roots(spec, env);
  lib->lib_ = load_library(spec, roots);
  if (!lib->lib_.ok()) {
    // Name every place searched, so "not found" says where it was not found.
    *error = fmt::format("NCCL ({}) not loadable: {}; searched {}", spec.soname(),
                         lib->lib_.error.empty() ? "no copy found" : lib->lib_.error,
                         describe_nccl_search(roots));
    return nullptr;
  }
  void* h = lib->lib_.handle;
  std::string missing;
  bool ok = true;
#define GC_NCCL_RESOLVE(name) ok = resolve_symbol(h, #name, &lib->name, &missing) && ok
  GC_NCCL_RESOLVE(ncclGetVersion);
  GC_NCCL_RESOLVE(ncclCommInitAll);
  GC_NCCL_RESOLVE(ncclCommDestroy);
  GC_NCCL_RESOLVE(ncclCommAbort);
  GC_NCCL_RESOLVE(ncclCommGetAsyncError);
  GC_NCCL_RESOLVE(ncclGetErrorString);
  GC_NCCL_RESOLVE(ncclAllReduce);
  GC_NCCL_RESOLVE(ncclGroupStart);
  GC_NCCL_RESOLVE(ncclGroupEnd);
  GC_NCCL_RESOLVE(ncclGetUniqueId);
  GC_NCCL_RESOLVE(ncclCommInitRank);
#undef GC_NCCL_RESOLVE
  if (!ok) {
    *error = fmt::format("NCCL at {} lacks {}", lib->lib_.real_path, missing);
    return nullptr;
  }
  std::string optional_missing;
  resolve_symbol(h, "ncclGetLastError", &lib->ncclGetLastError, &optional_missing);
  return lib;
}

std::string NcclLibrary::version() const {
  int v = 0;
  if (ncclGetVersion(&v) != nccl::kSuccess) return "unknown";
  // Before 2.9 the code was major·1000 + minor·100 + patch.
  if (v < 20900) return fmt::format("{}.{}.{}", v / 1000, (v / 100) % 10, v % 100);
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

void NcclLibrary::fail(nccl::Result code, const char* call, nccl::Comm comm, const char* file,
                       int line) const {
  std::string text = fmt::format("{}: {}", call, ncclGetErrorString(code));
  if (ncclGetLastError != nullptr) {
    const char* last = ncclGetLastError(comm);
    if (last != nullptr && *last != '\0') text += fmt::format(" ({})", last);
  }
  throw ApiError("NCCL", code, nccl_result_name(code), text, file, line);
}

}  // namespace gpucheck::cuda

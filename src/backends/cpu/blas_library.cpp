// Opening the CPU's BLAS at run time: the search, the family (which identity and thread calls it
// has), its integer width (LP64 or ILP64) and the GEMM entry points.
#include "backends/cpu/blas_library.h"

#include "core/json_keys.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <limits>
#include <regex>
#include <stdexcept>

namespace gpucheck::cpu {

namespace k = keys;

namespace {

// CBLAS's enumerators (cblas.h; the same values in every implementation).
constexpr int kRowMajor = 101;
constexpr int kNoTrans = 111;
constexpr int kTrans = 112;

// MKL's interface layer (mkl_service.h): LP64, whatever MKL_INTERFACE_LAYER says.
constexpr int kMklInterfaceLp64 = 0;

// mkl_cbwr_get_auto_branch()'s values (mkl_types.h, MKL_CBWR_*): the code path MKL dispatches to.
std::string mkl_branch_name(int branch) {
  switch (branch) {
    case 3:
      return "compatible";
    case 4:
      return "sse2";
    case 5:
      return "sse3";
    case 6:
      return "ssse3";
    case 7:
      return "sse4_1";
    case 8:
      return "sse4_2";
    case 9:
      return "avx";
    case 10:
      return "avx2";
    case 11:
      return "avx512_mic";
    case 12:
      return "avx512";
    case 13:
      return "avx512_mic_e1";
    case 14:
      return "avx512_e1";
    default:
      return fmt::format("branch {}", branch);
  }
}

template <class Fn>
Fn symbol(void* handle, const std::string& name) {
  Fn fn = nullptr;
  resolve_optional(handle, name.c_str(), &fn);
  return fn;
}

}  // namespace

std::string_view to_string(BlasFamily family) {
  switch (family) {
    case BlasFamily::kOpenblas:
      return "openblas";
    case BlasFamily::kBlis:
      return "blis";
    case BlasFamily::kMkl:
      return "mkl";
    case BlasFamily::kOther:
      return "other";
  }
  return "other";
}

const std::vector<std::string>& blas_search_names() {
  static const std::vector<std::string> names{
      "libopenblasp.so.0",   "libopenblaso.so.0",    "libopenblas.so.0",  "libblisp.so.4",
      "libbliso.so.4",       "libblis.so.4",         "libmkl_rt.so.2",    "libmkl_rt.so",
      "libopenblas64_.so.0", "libopenblas64p_.so.0", "libopenblas64.so.0"};
  return names;
}

std::unique_ptr<BlasLibrary> BlasLibrary::open(const EnvMap& env, std::string* error,
                                               std::vector<BlasAttempt>* attempts) {
  std::vector<BlasAttempt> local;
  std::vector<BlasAttempt>& tried = attempts ? *attempts : local;
  auto it = env.find("GPUCHECK_BLAS_LIB");
  if (it != env.end() && !it->second.empty()) {
    std::string why;
    auto lib = open_one(it->second, "explicit", &why);
    if (!lib) {
      tried.push_back({it->second, why});
      *error = fmt::format("--blas {}: {}", it->second, why);
    }
    return lib;
  }
  for (const auto& name : blas_search_names()) {
    std::string why;
    if (auto lib = open_one(name, "ld.so", &why)) return lib;
    tried.push_back({name, why});
  }
  std::string names;
  for (const auto& a : tried) names += (names.empty() ? "" : ", ") + a.name;
  *error = fmt::format("no BLAS library found (tried {})", names);
  return nullptr;
}

std::unique_ptr<BlasLibrary> BlasLibrary::open_one(const std::string& what,
                                                   const std::string& source, std::string* error) {
  std::unique_ptr<BlasLibrary> blas(new BlasLibrary());
  std::vector<std::string> errors;
  if (!open_library(what, source, &blas->lib_, &errors)) {
    *error = join_errors(errors);
    return nullptr;
  }
  if (!blas->resolve(error)) return nullptr;
  blas->read_identity();
  return blas;
}

bool BlasLibrary::resolve(std::string* error) {
  void* h = lib_.handle;
  // OpenBLAS's ILP64 builds either suffix every symbol with "64_" (libopenblas64_) or keep the
  // plain names and say USE64BITINT in their configuration (Debian's libopenblas64).
  for (const char* suffix : {"", "64_"}) {
    auto config = symbol<const char* (*)()>(h, std::string("openblas_get_config") + suffix);
    if (config == nullptr) continue;
    family_ = BlasFamily::kOpenblas;
    suffix_ = suffix;
    config_ = sanitize(config() ? config() : "");
    int_bits_ = (!suffix_.empty() || config_.find("USE64BITINT") != std::string::npos) ? 64 : 32;
    openblas_set_threads_ = symbol<void (*)(int)>(h, "openblas_set_num_threads" + suffix_);
    break;
  }
  if (family_ == BlasFamily::kOther) {
    // BLIS's info calls return gint_t: read as 32-bit, as above.
    if (auto blas_int = symbol<std::int32_t (*)()>(h, "bli_info_get_blas_int_type_size")) {
      family_ = BlasFamily::kBlis;
      int_bits_ = blas_int() == 64 ? 64 : 32;
      auto int_size = symbol<std::int32_t (*)()>(h, "bli_info_get_int_type_size");
      // dim_t, the argument of its thread call, is BLIS's own integer (64-bit in most builds).
      if (int_size && int_size() == 32)
        blis_set_threads32_ = symbol<void (*)(std::int32_t)>(h, "bli_thread_set_num_threads");
      else
        blis_set_threads64_ = symbol<void (*)(std::int64_t)>(h, "bli_thread_set_num_threads");
    } else if (auto layer = symbol<int (*)(int)>(h, "MKL_Set_Interface_Layer")) {
      family_ = BlasFamily::kMkl;
      // mkl_rt's interface follows MKL_INTERFACE_LAYER unless set: ask for LP64, and keep ILP64
      // when it is what this mkl_rt insists on.
      int_bits_ = layer(kMklInterfaceLp64) == kMklInterfaceLp64 ? 32 : 64;
      mkl_set_threads_ = symbol<void (*)(int)>(h, "MKL_Set_Num_Threads");
    }
  }
  std::string missing;
  const std::string s = "cblas_sgemm" + suffix_, d = "cblas_dgemm" + suffix_;
  bool ok = int_bits_ == 64 ? resolve_symbol(h, s.c_str(), &ilp64_.sgemm, &missing) &&
                                  resolve_symbol(h, d.c_str(), &ilp64_.dgemm, &missing)
                            : resolve_symbol(h, s.c_str(), &lp64_.sgemm, &missing) &&
                                  resolve_symbol(h, d.c_str(), &lp64_.dgemm, &missing);
  if (!ok) {
    *error = fmt::format("{} lacks {}: not a CBLAS library", lib_.real_path, missing);
    return false;
  }
  return true;
}

void BlasLibrary::read_identity() {
  void* h = lib_.handle;
  switch (family_) {
    case BlasFamily::kOpenblas: {
      static const std::regex kVersion(R"(OpenBLAS\s+([0-9][0-9A-Za-z.\-]*))");
      std::smatch m;
      if (std::regex_search(config_, m, kVersion)) version_ = m[1].str();
      if (auto core = symbol<const char* (*)()>(h, "openblas_get_corename" + suffix_))
        kernel_ = sanitize(core() ? core() : "");
      if (auto parallel = symbol<int (*)()>(h, "openblas_get_parallel" + suffix_)) {
        const int p = parallel();
        threading_ = p == 0 ? "sequential" : p == 1 ? "pthreads" : p == 2 ? "openmp" : "";
      }
      break;
    }
    case BlasFamily::kBlis: {
      if (auto v = symbol<const char* (*)()>(h, "bli_info_get_version_str"))
        version_ = sanitize(v() ? v() : "");
      auto query = symbol<int (*)()>(h, "bli_arch_query_id");
      auto name = symbol<const char* (*)(int)>(h, "bli_arch_string");
      if (query && name) kernel_ = sanitize(name(query()) ? name(query()) : "");
      // gint_t results, read as 32-bit: the low half of a 64-bit gint_t is the same small value.
      auto pthreads = symbol<std::int32_t (*)()>(h, "bli_info_get_enable_pthreads");
      auto openmp = symbol<std::int32_t (*)()>(h, "bli_info_get_enable_openmp");
      if (pthreads && openmp)
        threading_ = pthreads() ? "pthreads" : openmp() ? "openmp" : "sequential";
      break;
    }
    case BlasFamily::kMkl: {
      if (auto v = symbol<void (*)(char*, int)>(h, "MKL_Get_Version_String")) {
        char buf[256] = {};
        v(buf, sizeof(buf) - 1);
        version_ = sanitize(buf);
      }
      if (auto branch = symbol<int (*)()>(h, "mkl_cbwr_get_auto_branch"))
        kernel_ = mkl_branch_name(branch());
      break;
    }
    case BlasFamily::kOther:
      break;
  }
}

bool BlasLibrary::dynamic_arch() const {
  return family_ == BlasFamily::kOpenblas && config_.find("DYNAMIC_ARCH") != std::string::npos;
}

template <class Int, class T, class Fn>
void BlasLibrary::call(Fn fn, const GemmCall& g, const T* a, const T* b, T* c) const {
  for (std::int64_t v : {g.m, g.n, g.k, g.lda, g.ldb, g.ldc})
    if (v < 0 || v > std::numeric_limits<Int>::max())
      throw std::invalid_argument(fmt::format(
          "gemm: a dimension ({}) exceeds the BLAS integer range ({}-bit)", v, int_bits_));
  auto i = [](std::int64_t v) { return static_cast<Int>(v); };
  fn(kRowMajor, kNoTrans, g.transpose_b ? kTrans : kNoTrans, i(g.m), i(g.n), i(g.k), T{1}, a,
     i(g.lda), b, i(g.ldb), T{0}, c, i(g.ldc));
}

void BlasLibrary::sgemm(const GemmCall& g, const float* a, const float* b, float* c) const {
  if (int_bits_ == 64)
    call<std::int64_t>(ilp64_.sgemm, g, a, b, c);
  else
    call<std::int32_t>(lp64_.sgemm, g, a, b, c);
}

void BlasLibrary::dgemm(const GemmCall& g, const double* a, const double* b, double* c) const {
  if (int_bits_ == 64)
    call<std::int64_t>(ilp64_.dgemm, g, a, b, c);
  else
    call<std::int32_t>(lp64_.dgemm, g, a, b, c);
}

bool BlasLibrary::has_thread_control() const {
  return openblas_set_threads_ || blis_set_threads32_ || blis_set_threads64_ || mkl_set_threads_;
}

void BlasLibrary::set_threads(int threads) const {
  if (openblas_set_threads_) openblas_set_threads_(threads);
  if (blis_set_threads32_) blis_set_threads32_(threads);
  if (blis_set_threads64_) blis_set_threads64_(threads);
  if (mkl_set_threads_) mkl_set_threads_(threads);
}

std::string BlasLibrary::describe() const {
  std::string name = family_ == BlasFamily::kOpenblas ? "OpenBLAS"
                     : family_ == BlasFamily::kBlis   ? "BLIS"
                     : family_ == BlasFamily::kMkl    ? "MKL"
                                                      : lib_.real_path;
  std::string detail;
  if (!kernel_.empty()) detail = "core: " + kernel_;
  if (!threading_.empty()) detail += (detail.empty() ? "" : ", ") + threading_;
  if (int_bits_ == 64) detail += (detail.empty() ? "" : ", ") + std::string("ILP64");
  std::string version = family_ == BlasFamily::kMkl ? "" : version_;
  return fmt::format("{}{}{}{}", name, version.empty() ? "" : " ", version,
                     detail.empty() ? "" : " (" + detail + ")");
}

nlohmann::json BlasLibrary::to_json() const {
  nlohmann::json j = {{k::kLibrary, std::string(to_string(family_))},
                      {k::kPath, lib_.path},
                      {k::kRealPath, lib_.real_path},
                      {k::kSource, lib_.source},
                      {k::kBlasIntBits, int_bits_},
                      {k::kBlasDescription, describe()}};
  if (!version_.empty()) j[k::kVersion] = version_;
  if (!kernel_.empty()) j[k::kBlasKernel] = kernel_;
  if (!config_.empty()) j[k::kBlasConfig] = config_;
  if (!threading_.empty()) j[k::kBlasThreading] = threading_;
  return j;
}

}  // namespace gpucheck::cpu

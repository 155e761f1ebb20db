// Stress plans to and from JSON, and the --duration grammar.
#include "stress/plan.h"

#include "bench/ops/gemm.h"
#include "core/backend_descriptors.h"
#include "core/duration.h"
#include "core/json_keys.h"
#include "stress/test_units.h"

#include <fmt/format.h>

#include <chrono>

#include <algorithm>

#include <charconv>
#include <cmath>
#include <stdexcept>

namespace gpucheck::stress {

namespace k = keys;

std::string_view to_string(Test t) {
  return unit_of(t).name;
}

std::optional<Test> test_from_string(std::string_view s) {
  for (const auto& unit : test_units())
    if (unit.name == s) return unit.test;
  return std::nullopt;
}

double memory_fraction_for(const StressPlan& plan, bool host_memory) {
  return plan.memory_fraction.value_or(host_memory ? kHostMemoryFraction : kGpuMemoryFraction);
}

DType default_gemm_dtype(std::string_view backend) {
  return backend == "cuda" ? DType::kBf16 : DType::kF32;
}

nlohmann::json to_json(const StressPlan& p) {
  nlohmann::json tests = nlohmann::json::array(), dtypes = nlohmann::json::array();
  for (Test t : p.tests) tests.push_back(to_string(t));
  for (DType d : p.dtypes) dtypes.push_back(to_string(d));
  nlohmann::json j = {{k::kDevice, p.device},
                      {k::kBackend, p.backend},
                      {k::kTests, tests},
                      {k::kDtypes, dtypes},
                      {k::kDurationS, p.duration_s},
                      {k::kGemmSize, p.gemm_size},
                      {k::kCheckEvery, p.check_every},
                      {k::kNoCheck, p.no_check},
                      {k::kWindowS, p.window_s},
                      {k::kSeed, p.seed},
                      {k::kThreads, p.threads}};
  if (p.memory_fraction) j[k::kMemoryFraction] = *p.memory_fraction;
  if (!p.peer.empty()) j[k::kPeer] = p.peer;
  if (p.deadline_s) j[k::kDeadlineS] = *p.deadline_s;
  return j;
}

double monotonic_now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

StressPlan plan_from_json(const nlohmann::json& j) {
  StressPlan p;
  p.device = j.at(std::string(k::kDevice)).get<std::string>();
  p.backend = j.at(std::string(k::kBackend)).get<std::string>();
  for (const auto& t : j.at(std::string(k::kTests))) {
    auto v = test_from_string(t.get<std::string>());
    if (!v) throw std::invalid_argument(fmt::format("stress plan: unknown test {}", t.dump()));
    p.tests.push_back(*v);
  }
  for (const auto& d : j.at(std::string(k::kDtypes))) {
    auto v = dtype_from_string(d.get<std::string>());
    if (!v) throw std::invalid_argument(fmt::format("stress plan: unknown dtype {}", d.dump()));
    p.dtypes.push_back(*v);
  }
  p.duration_s = j.at(std::string(k::kDurationS)).get<double>();
  p.gemm_size = j.at(std::string(k::kGemmSize)).get<std::uint64_t>();
  p.check_every = j.at(std::string(k::kCheckEvery)).get<std::uint64_t>();
  p.no_check = j.at(std::string(k::kNoCheck)).get<bool>();
  p.window_s = j.at(std::string(k::kWindowS)).get<double>();
  p.seed = j.at(std::string(k::kSeed)).get<std::uint64_t>();
  p.peer = j.value(std::string(k::kPeer), std::string());
  p.threads = j.at(std::string(k::kThreads)).get<int>();
  if (auto it = j.find(k::kMemoryFraction); it != j.end()) p.memory_fraction = it->get<double>();
  if (auto it = j.find(k::kDeadlineS); it != j.end()) p.deadline_s = it->get<double>();
  return p;
}

std::optional<double> parse_duration(std::string_view text) {
  std::string why;
  return parse_duration_s(text, &why);
}

std::optional<std::string> gemm_refusal(const StressPlan& plan, std::uint64_t memory_bytes) {
  if (std::find(plan.tests.begin(), plan.tests.end(), Test::kGemm) == plan.tests.end())
    return std::nullopt;
  std::vector<DType> dtypes = plan.dtypes;
  if (dtypes.empty()) dtypes.push_back(default_gemm_dtype(plan.backend));
  for (DType d : dtypes)
    if (backend_is_host_cpu(plan.backend) && d != DType::kF32 && d != DType::kF64)
      return fmt::format("--dtype: the CPU runs the GEMM stress in f32 and f64 only, not {}",
                         to_string(d));
  const bool host = backend_is_host_cpu(plan.backend);
  const std::uint64_t n = plan.gemm_size != 0 ? plan.gemm_size
                          : host              ? kHostGemmSize
                                              : kGpuGemmSize;
  if (n % bench::kFp8GemmMultiple != 0 &&
      std::find(dtypes.begin(), dtypes.end(), DType::kFp8) != dtypes.end())
    return fmt::format("--gemm: {}: fp8 GEMM runs sizes that are multiples of {}", n,
                       bench::kFp8GemmMultiple);
  for (DType d : dtypes) {
    // In long double: N = 2^40 squared overflows 64 bits.
    const long double need = static_cast<long double>(n) * static_cast<long double>(n) *
                             (2 * element_size(d) + element_size(gemm_output_dtype(d)));
    const long double limit =
        memory_bytes != 0 ? static_cast<long double>(memory_bytes) : 18446744073709551615.0L;
    if (need > limit)
      return fmt::format(
          "--gemm: {}: {} needs {:.4g} GiB for three {}×{} {} matrices, more than {}", n,
          plan.device, static_cast<double>(need / (1024.0L * 1024 * 1024)), n, n, to_string(d),
          memory_bytes != 0
              ? fmt::format("the {:.1f} GiB of memory it has",
                            static_cast<double>(memory_bytes) / (1024.0 * 1024 * 1024))
              : std::string("64-bit sizes hold"));
  }
  return std::nullopt;
}

void assign_copy_peers(std::vector<StressPlan>& plans) {
  std::vector<StressPlan*> gpus;
  for (auto& p : plans)
    if (p.backend == group_ops_backend() &&
        std::find(p.tests.begin(), p.tests.end(), Test::kCopy) != p.tests.end())
      gpus.push_back(&p);
  if (gpus.size() < 2) return;
  for (std::size_t i = 0; i < gpus.size(); ++i) gpus[i]->peer = gpus[(i + 1) % gpus.size()]->device;
}

}  // namespace gpucheck::stress

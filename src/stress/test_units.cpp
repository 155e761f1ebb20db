// The table of stress tests: one line per test, in the order of Test.
#include "stress/test_units.h"

#include "stress/stress_tests.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <array>
#include <stdexcept>

namespace gpucheck::stress {

namespace {

nlohmann::json gemm(StressRunContext& ctx, std::optional<DType> dtype, double end_s) {
  return run_gemm_test(ctx, dtype.value_or(DType::kF32), end_s);
}
nlohmann::json memory(StressRunContext& ctx, std::optional<DType>, double end_s) {
  return run_memory_test(ctx, end_s);
}
nlohmann::json copy(StressRunContext& ctx, std::optional<DType>, double end_s) {
  return run_copy_test(ctx, end_s);
}

constexpr std::array<TestUnit, 3> kUnits = {{
    {Test::kGemm, "gemm", true, gemm},
    {Test::kMemory, "memory", false, memory},
    {Test::kCopy, "copy", false, copy},
}};

}  // namespace

std::span<const TestUnit> test_units() {
  return kUnits;
}

const TestUnit& unit_of(Test test) {
  const auto i = static_cast<std::size_t>(test);
  if (i >= kUnits.size() || kUnits[i].test != test)
    throw std::logic_error(fmt::format("stress: no unit for test {}", i));
  return kUnits[i];
}

std::string test_names(std::string_view sep) {
  std::string out;
  for (const auto& u : kUnits) out += fmt::format("{}{}", out.empty() ? "" : sep, u.name);
  return out;
}

}  // namespace gpucheck::stress

// One unit per stress test: its name, whether it runs once per GEMM dtype, and the function that
// runs it on a device. The runner, the plan's names, the parent's count of expected records and
// the --tests flag read this table instead of switching on the test.
#pragma once

#include "core/workload.h"
#include "stress/plan.h"

#include <nlohmann/json_fwd.hpp>

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpucheck::stress {

class StressRunContext;  // stress/context.h

struct TestUnit {
  Test test = Test::kGemm;
  std::string_view name;
  // One record per GEMM dtype (runner.h's gemm_dtypes), splitting the test's share of the time.
  bool per_dtype = false;
  // Runs until end_s on the run's clock and returns the record; `dtype` is set for a per-dtype
  // test only.
  nlohmann::json (*run)(StressRunContext& ctx, std::optional<DType> dtype, double end_s) = nullptr;
};

// The units, in the order of Test (the default order of --tests).
std::span<const TestUnit> test_units();
const TestUnit& unit_of(Test test);

// The tests' names joined by `sep` ("gemm, memory, copy").
std::string test_names(std::string_view sep);

}  // namespace gpucheck::stress

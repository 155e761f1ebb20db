// Which GEMM an OpenCL device runs for a dtype (GemmTuner::tune_gemm): the library's defaults
// (--no-tune), the cache's winner, or a fresh search whose winner is then cached.
#pragma once

#include "backends/device.h"
#include "backends/opencl/gemm_tuner.h"
#include "backends/opencl/gemm_tuning_cache.h"

#include <functional>
#include <string>

namespace gpucheck::opencl {

struct GemmTuningTarget {
  TuningIdentity identity;
  GemmLimits limits;
  GemmCandidate untuned;              // what runs without tuning: the library's defaults if it can
  double default_budget_s = 20;       // when the request names none
  GemmShape shape{1024, 1024, 1024};  // the shape to tune on (fits the device's memory)
  std::function<void(const GemmCandidate&)> use;  // the device's GEMM runs this from now on
};

struct GemmChoice {
  GemmCandidate run;
  std::string state;  // "tuned", "cached" or "default"
  std::string note;   // why the defaults run although tuning was not turned off
};

// Leaves the device running the choice (through target.use) and returns it. Every message goes
// through request.log; a cache that cannot be read or written is a warning, never an error.
GemmChoice choose_gemm(DType dtype, const GemmTuningTarget& target,
                       const GemmTuningRequest& request, const GemmTrialFn& trial);

}  // namespace gpucheck::opencl

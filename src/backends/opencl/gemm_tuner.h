// The search for the fastest verified GEMM on one device and dtype within a time budget: the
// reference (what --no-tune runs) first, then seeds, neighbours of the best and random points
// of gpucheck's kernel, then the leaders timed again beside the reference. Pure logic: the
// device comes in through hooks, so the unit tests drive it with a model and a fake clock.
#pragma once

#include "backends/device.h"
#include "backends/opencl/gemm_params.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::opencl {

// A candidate: gpucheck's kernel with these parameters, or nullopt for the library's defaults.
using GemmCandidate = std::optional<GemmParams>;

struct TunerSetup {
  DType dtype = DType::kF32;
  GemmLimits limits;
  GemmShape shape{1024, 1024, 1024};  // a multiple of every tile of the space
  double budget_s = 20;     // the whole tuning but the library's first call (its kernels' build)
  GemmCandidate reference;  // what runs untuned: nullopt = the library's defaults
  bool plant_bad_candidate = false;  // the first seed's result is corrupted and reported fast
  std::uint64_t seed = 1;
};

struct TunerHooks {
  // Sets the device up for the candidate, then one verified trial (GemmTrialFn) on `shape`.
  // May throw (a build or launch the device refuses): the candidate is rejected.
  std::function<GemmTrialResult(const GemmCandidate&, const GemmShape&, int reps, bool corrupt)>
      trial;
  std::function<double()> clock;  // seconds, monotonic
};

struct TunerRejection {
  GemmCandidate candidate;
  std::string why;
};

struct TunerResult {
  GemmCandidate best;                 // the winner (nullopt: the library's defaults)
  double best_s = 0;                  // its device time per GEMM on `shape`
  std::optional<double> reference_s;  // the reference's, when it ran and verified
  GemmShape shape;                    // the shape timed (the setup's, or halved for a slow device)
  int timed = 0;                      // candidates timed and verified
  std::vector<TunerRejection> rejected;
  double search_s = 0;  // wall time of the whole tuning
  // The reference's first call: the library builds its kernels there (28 s for CLBlast on a
  // cold pocl cache), a cost --no-tune pays as well; the budget starts after it.
  double library_first_call_s = 0;
  bool found = false;  // false: nothing verified, not even the reference
};

TunerResult tune_gemm_parameters(const TunerSetup& setup, const TunerHooks& hooks);

}  // namespace gpucheck::opencl

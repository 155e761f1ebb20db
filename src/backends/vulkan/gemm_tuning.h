// Which parameters the Vulkan GEMM shader runs for a dtype (GemmTuner::tune_gemm): the defaults
// (--no-tune, a CPU implementation not asked to search), the cache's winner, or a search over
// gemm_config_candidates whose winner is cached. The cache is one JSON file per device (its UUID
// and name own it) in the user's cache directory (backends/kept_cache.h), an entry per dtype,
// made stale by another driver version or gpucheck version.
#pragma once

#include "backends/device.h"
#include "backends/kept_cache.h"
#include "backends/vulkan/gemm_config.h"

#include <filesystem>
#include <functional>
#include <string>

namespace gpucheck::vulkan {

struct TuningIdentity {
  std::string device_uuid;
  std::string device_name;
  std::string driver_version;  // as the probe decodes it, with driverInfo where there is one
  std::string gpucheck_version;
  // A digest of the GEMM shaders' SPIR-V: a choice timed on other shaders is not kept (the
  // version alone does not change between builds).
  std::string shaders;
};

std::filesystem::path tuning_cache_path(const std::filesystem::path& dir, const TuningIdentity& id);
CacheLayout tuning_cache_layout(const TuningIdentity& id);

struct GemmTuningTarget {
  TuningIdentity identity;
  GemmLimits limits;
  GemmConfig untuned;                 // the defaults: the reference every candidate must beat
  GemmShape shape{2048, 2048, 2048};  // the shape timed (fits the device's memory)
  double default_budget_s = 10;       // when the request names none
  // A CPU implementation (lavapipe): searched only when asked (--retune, --tune-budget); a
  // cached winner is used.
  bool search_only_when_asked = false;
  // Seconds of the defaults run untimed before the search, so that a GPU idling at low clocks
  // does not hand the first candidates slow times (Device::min_warmup_seconds).
  double warmup_s = 0;
  std::function<void(const GemmConfig&)> use;  // the device's GEMM runs this from now on
};

// Leaves the device running the choice (through target.use) and says what it is. Messages go
// through request.log; a cache that cannot be read or written is a warning, never an error.
GemmTuning choose_gemm_config(DType dtype, const GemmTuningTarget& target,
                              const GemmTuningRequest& request, const GemmTrialFn& trial);

}  // namespace gpucheck::vulkan

// The tuned GEMM of one OpenCL device, kept between runs: one JSON file per device (platform
// and device name) in the user's cache directory, holding an entry per dtype and the identity
// it was tuned under (driver, gpucheck and library versions), so a driver change re-tunes.
#pragma once

#include "backends/kept_cache.h"
#include "backends/opencl/gemm_tuner.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <optional>
#include <string>

namespace gpucheck::opencl {

struct TuningIdentity {
  std::string platform;        // CL_PLATFORM_NAME
  std::string device_name;     // CL_DEVICE_NAME
  std::string driver_version;  // CL_DRIVER_VERSION
  std::string gpucheck_version;
  std::string library;  // the CLBlast file the defaults come from ("" without it)
};

// Where the device's file lives: a readable stem of the device name and a hash of platform
// and device name, so that two devices never share a file and a driver update rewrites it.
std::filesystem::path tuning_cache_path(const std::filesystem::path& dir, const TuningIdentity& id);

using gpucheck::CacheRead;
using gpucheck::CacheState;

// The layout of the device's file (backends/kept_cache.h): platform and device name own it; a
// driver, gpucheck or library change makes it stale.
CacheLayout tuning_cache_layout(const TuningIdentity& id);

CacheRead read_tuning_cache(const std::filesystem::path& path, const TuningIdentity& id);

// A fresh document for the identity, without entries.
nlohmann::json new_tuning_cache(const TuningIdentity& id);

// The dtype's winner in a usable document: nullopt when there is no entry; *why set (and
// nullopt) when the entry is malformed.
std::optional<GemmCandidate> cached_candidate(const nlohmann::json& doc, DType dtype,
                                              std::string* why);

// The entry a tuning leaves: the winner, its time and the reference's, what was searched.
nlohmann::json tuning_cache_entry(const TunerResult& result, const GemmCandidate& reference,
                                  double budget_s, const std::string& tuned_at);

// How a candidate is named in records and the cache: {"impl": "kernel", "parameters": {...}}
// or {"impl": "clblast"} for the library's defaults.
nlohmann::json candidate_json(const GemmCandidate& c);

}  // namespace gpucheck::opencl

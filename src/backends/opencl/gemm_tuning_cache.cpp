// Reading is strict (an entry we cannot trust is a reason to tune, never to run it); writing is
// the caller's, through core/output_file's write_output_file (complete or untouched).
#include "backends/opencl/gemm_tuning_cache.h"

#include "backends/kept_cache.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::opencl {

namespace {

constexpr const char* kFormat = "gpucheck-opencl-gemm-tuning/1";
constexpr std::size_t kMaxTuningCacheBytes = std::size_t{1} << 20;

std::string string_at(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

nlohmann::json identity_json(const TuningIdentity& id) {
  return {{"platform", id.platform},
          {"device_name", id.device_name},
          {"driver_version", id.driver_version},
          {"gpucheck_version", id.gpucheck_version},
          {"library", id.library}};
}

}  // namespace

CacheLayout tuning_cache_layout(const TuningIdentity& id) {
  return {kFormat, identity_json(id), {"platform", "device_name"}, "dtypes", kMaxTuningCacheBytes};
}

std::filesystem::path tuning_cache_path(const std::filesystem::path& dir,
                                        const TuningIdentity& id) {
  return kept_cache_path(dir, "opencl-gemm", id.device_name, id.platform + '\n' + id.device_name);
}

nlohmann::json new_tuning_cache(const TuningIdentity& id) {
  return new_kept_cache(tuning_cache_layout(id));
}

CacheRead read_tuning_cache(const std::filesystem::path& path, const TuningIdentity& id) {
  return read_kept_cache(path, tuning_cache_layout(id));
}

std::optional<GemmCandidate> cached_candidate(const nlohmann::json& doc, DType dtype,
                                              std::string* why) {
  const auto& dtypes = doc.at("dtypes");
  auto it = dtypes.find(std::string(to_string(dtype)));
  if (it == dtypes.end()) return std::nullopt;
  if (!it->is_object()) {
    *why = fmt::format("its {} entry is not an object", to_string(dtype));
    return std::nullopt;
  }
  const std::string impl = string_at(*it, "impl");
  if (impl == "clblast") return GemmCandidate{};
  if (impl != "kernel") {
    *why = fmt::format("its {} entry names impl '{}'", to_string(dtype), impl);
    return std::nullopt;
  }
  auto params = it->find("parameters");
  std::string bad;
  auto p = params == it->end() ? std::nullopt : params_from_json(*params, &bad);
  if (!p) {
    *why = fmt::format("its {} entry's parameters are unusable: {}", to_string(dtype),
                       bad.empty() ? "missing" : bad);
    return std::nullopt;
  }
  return GemmCandidate{*p};
}

nlohmann::json candidate_json(const GemmCandidate& c) {
  if (!c) return {{"impl", "clblast"}};
  return {{"impl", "kernel"}, {"parameters", to_json(*c)}};
}

nlohmann::json tuning_cache_entry(const TunerResult& result, const GemmCandidate& reference,
                                  double budget_s, const std::string& tuned_at) {
  return tuning_entry(result, candidate_json(result.best), candidate_json(reference), budget_s,
                      tuned_at, candidate_json);
}

}  // namespace gpucheck::opencl

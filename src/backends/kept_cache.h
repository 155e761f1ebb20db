// A JSON file a backend keeps in the user's cache directory between runs (the OpenCL GEMM
// tuning, the CUDA libraries' engine and algorithm choices): one file per device, a format tag,
// the identity it was made under and an object of entries. Read through core/json_input's
// bounded reader; a file that cannot be used is set aside (PATH.bad) and rebuilt, never read
// again on every run; written whole or not at all (core/output_file).
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

// DIR/PREFIX-STEM-HASH.json: a readable stem of `readable` (a device name) and a hash of
// `hashed` (what tells devices apart), so two devices never share a file.
std::filesystem::path kept_cache_path(const std::filesystem::path& dir, std::string_view prefix,
                                      std::string_view readable, std::string_view hashed);

enum class CacheState {
  kMissing,  // no file: nothing to say
  kUsable,   // doc holds this device's entries, made under this identity
  kStale,    // this device's, made under another identity (driver, versions): rebuild
  kCorrupt,  // not a cache file we can read (not JSON, nested too deep, too large): set aside
  kForeign,  // a cache file of another device or format: set aside
};

struct CacheRead {
  CacheState state = CacheState::kMissing;
  std::string why;     // for every state but kMissing and kUsable
  nlohmann::json doc;  // kUsable: the file's document
};

// What a kept file holds: {"format": format, "identity": identity, entries: {...}}. An identity
// member named in owner_keys that differs makes the file another device's (kForeign); any other
// member that differs makes it stale.
struct CacheLayout {
  std::string format;
  nlohmann::json identity;
  std::vector<std::string> owner_keys;
  std::string entries;
  std::size_t max_bytes = std::size_t{1} << 20;
};

CacheRead read_kept_cache(const std::filesystem::path& path, const CacheLayout& layout);

// A fresh document of the layout, without entries.
nlohmann::json new_kept_cache(const CacheLayout& layout);

// The document to work on: the file's when usable, else a fresh one. A corrupt or foreign file
// is set aside first; *warning says what happened to it, naming it as `what` ("the tuning
// cache"), and stays empty when nothing is worth a warning; *note says why a stale file is
// rebuilt.
nlohmann::json open_kept_cache(const std::filesystem::path& path, const CacheLayout& layout,
                               std::string_view what, std::string* warning, std::string* note);

// Writes the document whole (creating the directory); "" or why it could not.
std::string write_kept_cache(const std::filesystem::path& path, const nlohmann::json& doc);

// Sets doc[layout entries][key] = entry and writes the document to path; "" or the warning to
// give, naming what was not cached as `what` ("the tuned gemm f32"): the write failed, or there
// is no path (no cache directory).
std::string keep_kept_entry(const std::optional<std::filesystem::path>& path, nlohmann::json& doc,
                            const std::string& entries, const std::string& key,
                            nlohmann::json entry, std::string_view what);

// A GEMM tuning search's entry, the same for every backend that tunes: `best` and `reference`
// (the candidates as the backend writes them) with their seconds, the shape timed, how many
// were timed, the budget, the search's own time, when, and the first rejections with the start
// of each reason (a build log can be long). `result` holds best_s, reference_s, shape, timed,
// search_s and rejected (each with candidate and why); candidate_json writes a candidate.
inline constexpr std::size_t kMaxRejectionsKept = 20;
inline constexpr std::size_t kMaxWhyBytes = 400;
template <class Result, class CandidateJson>
nlohmann::json tuning_entry(const Result& result, nlohmann::json best, nlohmann::json reference,
                            double budget_s, const std::string& tuned_at,
                            const CandidateJson& candidate_json) {
  best["seconds"] = result.best_s;
  if (result.reference_s) reference["seconds"] = *result.reference_s;
  best["reference"] = std::move(reference);
  best["shape"] = {{"m", result.shape.m}, {"n", result.shape.n}, {"k", result.shape.k}};
  best["timed"] = result.timed;
  best["budget_s"] = budget_s;
  best["search_s"] = result.search_s;
  best["tuned_at"] = tuned_at;
  nlohmann::json rejected = nlohmann::json::array();
  for (std::size_t i = 0; i < result.rejected.size() && i < kMaxRejectionsKept; ++i) {
    nlohmann::json r = candidate_json(result.rejected[i].candidate);
    // Cut in place: GCC 12 warns (-Warray-bounds, wrongly) on substr(...) + "..." here.
    std::string why = result.rejected[i].why;
    if (why.size() > kMaxWhyBytes) {
      why.resize(kMaxWhyBytes);
      why += "...";
    }
    r["why"] = std::move(why);
    rejected.push_back(std::move(r));
  }
  best["rejected"] = std::move(rejected);
  best["rejected_count"] = result.rejected.size();
  return best;
}

}  // namespace gpucheck

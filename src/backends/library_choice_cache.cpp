// One file per device; the entries are the searches' picks, each with the choice as records
// name it.
#include "backends/library_choice_cache.h"

#include "core/document.h"

#include <fmt/format.h>

namespace gpucheck {

namespace {

constexpr const char* kFormat = "gpucheck-library-choices/1";
constexpr std::size_t kMaxEntries = 2000;  // ~300 bytes each: well inside the 1 MiB read limit

bool names_a_choice(const nlohmann::json& c) {
  if (!c.is_object()) return false;
  auto lib = c.find("library");
  auto id = c.find("id");
  return lib != c.end() && lib->is_string() && !lib->get<std::string>().empty() && id != c.end() &&
         id->is_string() && !id->get<std::string>().empty();
}

}  // namespace

std::string choice_key(std::string_view library, std::string_view version, std::string_view op,
                       std::string_view dtype, std::string_view shape, std::string_view layout) {
  return fmt::format("{} {}|{}|{}|{}|{}", library, version, op, dtype, shape, layout);
}

void LibraryChoiceCache::open(const std::filesystem::path& dir, const ChoiceCacheIdentity& id,
                              TuningMode mode, Log log) {
  log_ = std::move(log);
  open_ = !dir.empty() && mode != TuningMode::kOff;
  if (!open_) return;
  read_ = mode != TuningMode::kRetune;
  layout_ = {kFormat,
             {{"device_uuid", id.device_uuid},
              {"device_name", id.device_name},
              {"gpucheck_version", id.gpucheck_version}},
             {"device_uuid"},
             "choices"};
  path_ = kept_cache_path(dir, "library-choices", id.device_name, id.device_uuid);
  std::string warning, note;
  doc_ = open_kept_cache(path_, layout_, "the library choice cache", &warning, &note);
  if (!warning.empty()) say(TuningLog::kWarn, warning);
  if (!note.empty()) say(TuningLog::kInfo, "searching library choices again: " + note);
}

std::optional<nlohmann::json> LibraryChoiceCache::find(const std::string& key) {
  if (!open_ || !read_) return std::nullopt;
  auto& choices = doc_["choices"];
  auto it = choices.find(key);
  if (it == choices.end()) return std::nullopt;
  auto c = it->is_object() ? it->find("choice") : it->end();
  if (!it->is_object() || c == it->end() || !names_a_choice(*c)) {
    forget(key, "it names no library and id");
    return std::nullopt;
  }
  return *c;
}

void LibraryChoiceCache::keep(const std::string& key, const nlohmann::json& choice) {
  if (!open_) return;
  auto& choices = doc_["choices"];
  // Full: the oldest picks go first (a device rarely sees this many shapes).
  while (choices.size() >= kMaxEntries && !choices.contains(key)) {
    auto oldest = choices.begin();
    for (auto it = choices.begin(); it != choices.end(); ++it)
      if (it->value("kept_at", std::string()) < oldest->value("kept_at", std::string()))
        oldest = it;
    choices.erase(oldest);
  }
  choices[key] = {{"choice", choice}, {"kept_at", utc_timestamp()}};
  write();
}

void LibraryChoiceCache::forget(const std::string& key, const std::string& why) {
  if (!open_) return;
  say(TuningLog::kWarn, fmt::format("ignoring the entry '{}' of {}: {}; it will be rewritten", key,
                                    path_.string(), why));
  doc_["choices"].erase(key);
  write();
}

void LibraryChoiceCache::write() {
  if (auto failed = write_kept_cache(path_, doc_); !failed.empty())
    say(TuningLog::kWarn, fmt::format("the library choices are not kept: {}", failed));
}

std::optional<std::size_t> pick_within_noise(const std::vector<double>& ms, double noise) {
  std::optional<std::size_t> fastest;
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i] >= 0 && (!fastest || ms[i] < ms[*fastest])) fastest = i;
  if (!fastest) return std::nullopt;
  const double limit = ms[*fastest] * (1 + noise);
  for (std::size_t i = 0; i < ms.size(); ++i)
    if (ms[i] >= 0 && ms[i] <= limit) return i;
  return fastest;
}

}  // namespace gpucheck

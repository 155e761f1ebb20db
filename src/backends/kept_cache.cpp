// Reading is strict (an entry we cannot trust is a reason to search again, never to run it);
// writing goes through core/output_file's write_output_file (complete or untouched).
#include "backends/kept_cache.h"

#include "core/json_input.h"
#include "core/output_file.h"

#include <fmt/format.h>

#include <cctype>
#include <exception>

namespace gpucheck {

namespace {

std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 1469598103934665603ull;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ull;
  return h;
}

std::string string_at(const nlohmann::json& j, const std::string& key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

std::filesystem::path kept_cache_path(const std::filesystem::path& dir, std::string_view prefix,
                                      std::string_view readable, std::string_view hashed) {
  std::string stem;
  for (char c : readable) {
    if (stem.size() >= 40) break;
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) != 0;
    if (keep)
      stem += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    else if (!stem.empty() && stem.back() != '-')
      stem += '-';
  }
  while (!stem.empty() && stem.back() == '-') stem.pop_back();
  if (stem.empty()) stem = "device";
  return dir / fmt::format("{}-{}-{:016x}.json", prefix, stem, fnv1a(hashed));
}

nlohmann::json new_kept_cache(const CacheLayout& layout) {
  return {{"format", layout.format},
          {"identity", layout.identity},
          {layout.entries, nlohmann::json::object()}};
}

CacheRead read_kept_cache(const std::filesystem::path& path, const CacheLayout& layout) {
  CacheRead r;
  KeptJsonFile file = read_kept_json_file(path, layout.max_bytes);
  if (file.outcome == KeptJsonFile::Outcome::kMissing) return r;
  if (file.outcome != KeptJsonFile::Outcome::kParsed) {
    r.state = CacheState::kCorrupt;
    r.why = file.why;
    return r;
  }
  nlohmann::json doc = std::move(file.doc);
  if (!doc.is_object()) {
    r.state = CacheState::kCorrupt;
    r.why = "it is not a JSON object";
    return r;
  }
  if (string_at(doc, "format") != layout.format) {
    r.state = CacheState::kForeign;
    r.why = fmt::format("its format is '{}', not '{}'", string_at(doc, "format"), layout.format);
    return r;
  }
  const auto ident = doc.find("identity");
  const auto entries = doc.find(layout.entries);
  if (ident == doc.end() || !ident->is_object() || entries == doc.end() || !entries->is_object()) {
    r.state = CacheState::kCorrupt;
    r.why = fmt::format("it lacks the identity or the {} object", layout.entries);
    return r;
  }
  for (const auto& key : layout.owner_keys)
    if (string_at(*ident, key) != string_at(layout.identity, key)) {
      r.state = CacheState::kForeign;
      r.why = fmt::format("it belongs to {} '{}'", key, string_at(*ident, key));
      return r;
    }
  for (const auto& [key, want] : layout.identity.items())
    if (string_at(*ident, key) != string_at(layout.identity, key)) {
      r.state = CacheState::kStale;
      r.why = fmt::format("it was made under {} '{}', this is '{}'", key, string_at(*ident, key),
                          string_at(layout.identity, key));
      return r;
    }
  r.state = CacheState::kUsable;
  r.doc = std::move(doc);
  return r;
}

nlohmann::json open_kept_cache(const std::filesystem::path& path, const CacheLayout& layout,
                               std::string_view what, std::string* warning, std::string* note) {
  CacheRead read = read_kept_cache(path, layout);
  switch (read.state) {
    case CacheState::kMissing:
      break;
    case CacheState::kUsable:
      return std::move(read.doc);
    case CacheState::kStale:
      *note = fmt::format("{} is out of date ({})", path.string(), read.why);
      break;
    case CacheState::kCorrupt:
    case CacheState::kForeign: {
      // Moved aside, not left in place: a file that cannot be used (or that crashes whatever
      // reads it) must not be read again on every run until a search happens to rewrite it.
      std::string why;
      const auto bad = set_aside_bad_file(path, &why);
      *warning = fmt::format(
          "ignoring {} {}: {}; {}, it will be rewritten", what, path.string(), read.why,
          bad ? "set aside as " + bad->string() : "it could not be set aside (" + why + ")");
      break;
    }
  }
  return new_kept_cache(layout);
}

std::string write_kept_cache(const std::filesystem::path& path, const nlohmann::json& doc) {
  try {
    std::filesystem::create_directories(path.parent_path());
    write_output_file(path.string(), doc.dump(2) + "\n", "the cache");
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::string keep_kept_entry(const std::optional<std::filesystem::path>& path, nlohmann::json& doc,
                            const std::string& entries, const std::string& key,
                            nlohmann::json entry, std::string_view what) {
  if (!path) return fmt::format("{} is not cached: neither XDG_CACHE_HOME nor HOME is set", what);
  doc[entries][key] = std::move(entry);
  if (auto failed = write_kept_cache(*path, doc); !failed.empty())
    return fmt::format("{} is not cached: {}", what, failed);
  return {};
}

}  // namespace gpucheck

// Parsing JSON that comes from outside (saved documents, --facts): bounded nesting, so no
// serializer or renderer recurses past a sane depth, a message that names the source and the
// byte where the text went wrong, and documents read from their file in pieces, never whole.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

namespace gpucheck {

// Deeper nesting than any gpucheck document has (results[i].context.nvml...: under 10).
inline constexpr std::size_t kMaxJsonDepth = 64;

// Called for each element of the top-level "results" array as soon as it is parsed, with its
// index; the element is then dropped from the returned document (which keeps an empty array),
// so a document of 250k records never exists in memory at once.
using RecordSink = std::function<void(std::size_t index, nlohmann::json&& record)>;

// Parses `text`; throws UsageError "SOURCE: not JSON: ... (byte N)" or "SOURCE: nested deeper
// than 64 levels (byte N)".
nlohmann::json parse_json_input(std::string_view text, const std::string& source,
                                const RecordSink& records = {});

// The same from a file the user named (a regular file of at most max_bytes, core/files.h),
// read in 1 MiB pieces, so a 200 MB document is never held as text.
nlohmann::json read_json_file(const std::string& path, std::size_t max_bytes, std::string_view flag,
                              const std::string& source, const RecordSink& records = {});

}  // namespace gpucheck

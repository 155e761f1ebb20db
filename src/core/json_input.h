// The one way gpucheck parses JSON it did not build in memory (saved documents, --facts, doctor's
// state file, the OpenCL tuning cache, its children's output): bounded nesting, so no copy,
// comparison, serializer or renderer recurses past a sane depth, a message that names the
// source and the byte where the text went wrong, and documents read from their file in pieces.
#pragma once

#include <nlohmann/json.hpp>

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
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

// Text from gpucheck's own children (event lines, probe sections) and from files it only peeks
// at: the value, or a discarded one (is_discarded(), is_object() false), as
// nlohmann::json::parse(text, nullptr, false) gives, when it is not JSON, holds a number out of
// range or is nested deeper than kMaxJsonDepth.
nlohmann::json parse_json_or_discarded(std::string_view text);

// A JSON file gpucheck keeps for itself between runs (doctor's state file, the OpenCL GEMM
// tuning cache). Never throws and never blocks (a FIFO is not opened for reading).
struct KeptJsonFile {
  enum class Outcome {
    kMissing,     // no such file: a fresh start
    kParsed,      // doc holds it
    kUnreadable,  // no regular file (a FIFO, a directory) or open/read failed: why says which
    kDamaged,     // a regular file, but larger than max_bytes, not JSON or nested too deep
  };
  Outcome outcome = Outcome::kMissing;
  nlohmann::json doc;
  std::string why;
};
KeptJsonFile read_kept_json_file(const std::filesystem::path& path, std::size_t max_bytes);

// Moves a damaged kept file to PATH.bad (replacing an older one), so the next write starts
// afresh and the bad one stays for a look. Returns the new path, or nullopt with *why set.
std::optional<std::filesystem::path> set_aside_bad_file(const std::filesystem::path& path,
                                                        std::string* why);

}  // namespace gpucheck

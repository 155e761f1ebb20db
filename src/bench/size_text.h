// The words sizes are written in, on the command line and in presets: counts (N or 2^K), byte
// counts with a binary suffix, and the splitting of a list. Each op's unit (bench/ops/) builds its
// own size syntax from these; every error is a UsageError naming `where` (a flag or a preset key).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

// The pieces of `text` between separators (empty pieces kept); core/text.h's trim_space trims
// them.
std::vector<std::string_view> split_text(std::string_view text, char sep);

// A count: a whole number or 2^K; nullopt with *why set when it is neither or does not fit.
std::optional<std::uint64_t> parse_count(std::string_view s, std::string* why);

// A count of 1 or more; UsageError "WHERE: 'S' is not a positive WHAT: why".
std::uint64_t positive_count(std::string_view s, std::string_view where, std::string_view what);

// Bytes: a count with an optional KiB, MiB, GiB or TiB suffix, 1 or more, within 64 bits.
std::uint64_t byte_count(std::string_view s, std::string_view where);

}  // namespace gpucheck::bench

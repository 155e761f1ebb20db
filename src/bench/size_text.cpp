// Counts and byte counts as sizes are written, with messages that name the flag or key.
#include "bench/size_text.h"

#include "core/errors.h"
#include "core/text.h"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <utility>

namespace gpucheck::bench {

std::vector<std::string_view> split_text(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    auto pos = text.find(sep);
    out.push_back(text.substr(0, pos));
    if (pos == std::string_view::npos) break;
    text.remove_prefix(pos + 1);
  }
  return out;
}

std::optional<std::uint64_t> parse_count(std::string_view s, std::string* why) {
  s = trim_space(s);
  if (s.size() > 2 && s.substr(0, 2) == "2^") {
    unsigned exp = 0;
    auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), exp);
    if (ec == std::errc::result_out_of_range || (ec == std::errc() && exp > 62)) {
      *why = "too large: the largest power is 2^62";
      return std::nullopt;
    }
    if (ec != std::errc() || p != s.data() + s.size()) {
      *why = "2^K needs a whole exponent K";
      return std::nullopt;
    }
    return std::uint64_t{1} << exp;
  }
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    *why = "too large for 64 bits";
    return std::nullopt;
  }
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) {
    *why = "a whole number or 2^K is expected";
    return std::nullopt;
  }
  return v;
}

std::uint64_t positive_count(std::string_view s, std::string_view where, std::string_view what) {
  std::string why = "it must be 1 or more";
  auto v = parse_count(s, &why);
  if (!v || *v == 0)
    throw UsageError(
        fmt::format("{}: '{}' is not a positive {}: {}", where, trim_space(s), what, why));
  return *v;
}

std::uint64_t byte_count(std::string_view item, std::string_view where) {
  item = trim_space(item);
  const std::string_view given = item;
  std::uint64_t mult = 1;
  bool suffixed = false;
  for (auto [suffix, m] : {std::pair<std::string_view, std::uint64_t>{"KiB", 1ull << 10},
                           {"MiB", 1ull << 20},
                           {"GiB", 1ull << 30},
                           {"TiB", 1ull << 40}}) {
    if (item.size() > suffix.size() && item.substr(item.size() - suffix.size()) == suffix) {
      mult = m;
      suffixed = true;
      item.remove_suffix(suffix.size());
      break;
    }
  }
  std::string why = "it must be 1 or more";
  auto v = parse_count(item, &why);
  if (!v || *v == 0) {
    if (!suffixed && !item.empty() && std::isalpha(static_cast<unsigned char>(item.back())))
      why = "bytes are a number with an optional KiB, MiB, GiB or TiB suffix";
    throw UsageError(fmt::format("{}: '{}' is not a positive byte count: {}", where, given, why));
  }
  if (*v > UINT64_MAX / mult)
    throw UsageError(fmt::format("{}: '{}' is too large for 64-bit byte counts", where, given));
  return *v * mult;
}

}  // namespace gpucheck::bench

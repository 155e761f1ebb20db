// Reading TOML tables strictly for qualify's profiles and SKU table: every key taken is
// remembered, so what is left is an unknown key, and every error names file:line and the key.
#pragma once

#include "core/errors.h"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <cstdint>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::qualify {

// "the string 'x'", "the integer 3", "a table": what a wrong value was, for messages.
std::string node_kind(const toml::node& n);
std::string join(const std::vector<std::string>& items);

// The TOML text parsed; a syntax error is a UsageError "FILE:LINE:COLUMN: not valid TOML: ...".
toml::table parse_toml(std::string_view text, const std::string& path);

// Every dot-separated part of a version parses as a long (no overflow).
inline bool version_parts_fit(std::string_view text) {
  while (true) {
    const std::size_t dot = text.find('.');
    std::string_view part = text.substr(0, dot);
    long v = 0;
    auto r = std::from_chars(part.data(), part.data() + part.size(), v);
    if (part.empty() || r.ec != std::errc() || r.ptr != part.data() + part.size()) return false;
    if (dot == std::string_view::npos) return true;
    text.remove_prefix(dot + 1);
  }
}

// One TOML table being read: remembers the keys taken, so what is left is an unknown key.
class TableReader {
 public:
  TableReader(const toml::table& table, std::string prefix, const std::string& file)
      : table_(table), prefix_(std::move(prefix)), file_(file) {}

  std::string dotted(std::string_view key) const {
    return prefix_.empty() ? std::string(key) : prefix_ + "." + std::string(key);
  }

  [[noreturn]] void fail_at(const toml::node& n, std::string_view key,
                            std::string_view expected) const {
    throw UsageError(fmt::format("{}:{}: {}: expected {}, got {}", file_, n.source().begin.line,
                                 dotted(key), expected, node_kind(n)));
  }
  [[noreturn]] void fail(std::string_view message) const {
    throw UsageError(fmt::format("{}:{}: {}{}{}", file_, table_.source().begin.line, prefix_,
                                 prefix_.empty() ? "" : ": ", message));
  }

  const toml::node* take(std::string_view key) {
    const toml::node* n = table_.get(key);
    if (n) taken_.insert(std::string(key));
    return n;
  }
  bool has(std::string_view key) const { return table_.contains(key); }

  std::optional<std::string> string(std::string_view key) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    if (!n->is_string()) fail_at(*n, key, "a string");
    return n->as_string()->get();
  }
  // A required key: missing is an error.
  std::string one_of(std::string_view key, const std::vector<std::string>& allowed) {
    return one_of_or(key, allowed, nullptr);
  }
  std::string one_of(std::string_view key, const std::vector<std::string>& allowed,
                     const std::string& dflt) {
    return one_of_or(key, allowed, &dflt);
  }
  // No std::optional<std::string> default argument: GCC 12 at -O1 warns that the destroyed
  // empty optional "may be used uninitialized" (a false positive, GCC bug 105562).
  std::string one_of_or(std::string_view key, const std::vector<std::string>& allowed,
                        const std::string* dflt) {
    const toml::node* n = take(key);
    if (!n) {
      if (dflt) return *dflt;
      fail(fmt::format("missing key '{}' (one of: {})", key, join(allowed)));
    }
    if (!n->is_string() ||
        std::find(allowed.begin(), allowed.end(), n->as_string()->get()) == allowed.end())
      fail_at(*n, key, "one of " + join(allowed));
    return n->as_string()->get();
  }
  std::optional<bool> boolean(std::string_view key) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    if (!n->is_boolean()) fail_at(*n, key, "true or false");
    return n->as_boolean()->get();
  }
  // An integer in min_value…max_value (a count that must fit the int it is stored in).
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min_value,
                                      std::int64_t max_value = INT64_MAX) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    if (!n->is_integer() || n->as_integer()->get() < min_value ||
        n->as_integer()->get() > max_value)
      fail_at(*n, key,
              max_value == INT64_MAX
                  ? fmt::format("an integer ≥ {}", min_value)
                  : fmt::format("an integer from {} to {}", min_value, max_value));
    return n->as_integer()->get();
  }
  // A finite number (TOML has inf and nan literals), above 0 when `positive`, else ≥ 0 when
  // `non_negative`.
  std::optional<double> number(std::string_view key, bool positive, bool non_negative = false) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    const char* expected = positive       ? "a finite number above 0"
                           : non_negative ? "a finite number ≥ 0"
                                          : "a finite number";
    double v = 0;
    if (n->is_integer())
      v = static_cast<double>(n->as_integer()->get());
    else if (n->is_floating_point())
      v = n->as_floating_point()->get();
    else
      fail_at(*n, key, expected);
    if (!std::isfinite(v) || (positive && !(v > 0)) || (non_negative && !(v >= 0)))
      fail_at(*n, key, expected);
    return v;
  }
  // A share of something whole (a sustained share of the start, of a line rate): a number in
  // (0, 1]; 5 would never be met, so it is refused where it is written.
  std::optional<double> fraction(std::string_view key) {
    const auto v = number(key, true);
    if (v && *v > 1)
      fail_value(key, fmt::format("expected a fraction above 0 and at most 1, got {:g}", *v));
    return v;
  }
  // A node's own line, for errors about a value that was read fine but does not fit.
  [[noreturn]] void fail_value(std::string_view key, std::string_view message) {
    const toml::node* n = table_.get(key);
    if (!n) fail(message);
    throw UsageError(
        fmt::format("{}:{}: {}: {}", file_, n->source().begin.line, dotted(key), message));
  }
  // A version as a numeric tuple: "8.0", "535.104.05", or a number (8.0 → "8.0").
  std::optional<std::string> version(std::string_view key) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    static const std::regex tuple(R"(^[0-9]+(\.[0-9]+)*$)");
    std::string text;
    if (n->is_string())
      text = n->as_string()->get();
    else if (n->is_integer())
      text = std::to_string(n->as_integer()->get());
    else if (n->is_floating_point())
      text = fmt::format("{}", n->as_floating_point()->get());
    if (!std::regex_match(text, tuple) || !version_parts_fit(text))
      fail_at(*n, key, "a version such as \"8.0\" or \"535.104\" (each part below 2^63)");
    return text;
  }

  void reject_unknown(const std::vector<std::string>& allowed) const {
    for (const auto& [key, node] : table_)
      if (!taken_.count(std::string(key.str())))
        throw UsageError(fmt::format("{}:{}: {}: unknown key (keys here: {})", file_,
                                     node.source().begin.line, dotted(key.str()), join(allowed)));
  }

 private:
  const toml::table& table_;
  std::string prefix_;
  const std::string& file_;
  std::set<std::string> taken_;
};

// A bench shape table (shape = { m = 512, ... }) read as the result record writes it: checked
// per op and normalised through the bench plan's own reader.
nlohmann::json read_shape(TableReader& req, const std::string& op, const std::string& file);

}  // namespace gpucheck::qualify

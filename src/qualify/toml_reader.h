// Reading TOML tables strictly for qualify's profiles and SKU table: every key taken is
// remembered, so what is left is an unknown key, and every error names file:line and the key.
#pragma once

#include "core/errors.h"

#include <fmt/format.h>
#include <toml++/toml.h>
#include <nlohmann/json.hpp>

#include <algorithm>
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
  std::string one_of(std::string_view key, const std::vector<std::string>& allowed,
                     std::optional<std::string> dflt = std::nullopt) {
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
  std::optional<std::int64_t> integer(std::string_view key, std::int64_t min_value) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    if (!n->is_integer() || n->as_integer()->get() < min_value)
      fail_at(*n, key, fmt::format("an integer ≥ {}", min_value));
    return n->as_integer()->get();
  }
  std::optional<double> number(std::string_view key, bool positive) {
    const toml::node* n = take(key);
    if (!n) return std::nullopt;
    double v = 0;
    if (n->is_integer())
      v = static_cast<double>(n->as_integer()->get());
    else if (n->is_floating_point())
      v = n->as_floating_point()->get();
    else
      fail_at(*n, key, positive ? "a positive number" : "a number");
    if (positive && !(v > 0)) fail_at(*n, key, "a positive number");
    return v;
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
    if (!std::regex_match(text, tuple))
      fail_at(*n, key, "a version such as \"8.0\" or \"535.104\"");
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

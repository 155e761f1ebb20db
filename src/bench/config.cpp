// Parsing size presets (TOML) and size flags, with messages that name the key or flag.
#include "bench/config.h"

#include "core/errors.h"
#include "core/files.h"
#include "core/toml_text_guard.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include <cctype>
#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

extern const unsigned char gpucheck_default_config[];
extern const unsigned long long gpucheck_default_config_size;

namespace gpucheck::bench {

namespace {

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  while (true) {
    auto pos = text.find(sep);
    out.push_back(text.substr(0, pos));
    if (pos == std::string_view::npos) break;
    text.remove_prefix(pos + 1);
  }
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// A count: an integer, or 2^K; nullopt and *why when it is neither or does not fit.
std::optional<std::uint64_t> parse_count(std::string_view s, std::string* why) {
  s = trim(s);
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

std::uint64_t positive_count(std::string_view s, std::string_view flag, std::string_view what) {
  std::string why = "it must be 1 or more";
  auto v = parse_count(s, &why);
  if (!v || *v == 0)
    throw UsageError(fmt::format("{}: '{}' is not a positive {}: {}", flag, trim(s), what, why));
  return *v;
}

GemmShape gemm_shape(std::string_view item, std::string_view flag) {
  auto parts = split(item, 'x');
  if (parts.size() == 1) {
    auto n = positive_count(parts[0], flag, "matrix size");
    return {n, n, n};
  }
  if (parts.size() != 3)
    throw UsageError(fmt::format("{}: '{}' is not MxNxK (for example 2048x2048x2048)", flag, item));
  return {positive_count(parts[0], flag, "M"), positive_count(parts[1], flag, "N"),
          positive_count(parts[2], flag, "K")};
}

ConvShape conv_shape(std::string_view item, std::string_view flag) {
  auto f = split(trim(item), ',');
  if (f.size() != 9)
    throw UsageError(fmt::format("{}: '{}' has {} fields; a conv shape is N,C,H,W,K,R,S,stride,pad",
                                 flag, item, f.size()));
  ConvShape s;
  const char* names[] = {"N", "C", "H", "W", "K", "R", "S", "stride"};
  std::uint64_t* fields[] = {&s.n, &s.c, &s.h, &s.w, &s.k, &s.r, &s.s, &s.stride};
  for (int i = 0; i < 8; ++i) *fields[i] = positive_count(f[i], flag, names[i]);
  std::string why;
  auto pad = parse_count(f[8], &why);
  if (!pad) throw UsageError(fmt::format("{}: pad '{}' is not a count: {}", flag, trim(f[8]), why));
  s.pad = *pad;
  if (s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.s)
    throw UsageError(fmt::format("{}: '{}': the filter ({}x{}) is larger than the padded input",
                                 flag, item, s.r, s.s));
  return s;
}

std::uint64_t byte_size(std::string_view item, std::string_view flag) {
  item = trim(item);
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
    throw UsageError(fmt::format("{}: '{}' is not a positive byte count: {}", flag, given, why));
  }
  if (*v > UINT64_MAX / mult)
    throw UsageError(fmt::format("{}: '{}' is too large for 64-bit byte counts", flag, given));
  return *v * mult;
}

std::vector<std::uint64_t> fields(const ExpShape& s) {
  return {s.n};
}
std::vector<std::uint64_t> fields(const GemmShape& s) {
  return {s.m, s.n, s.k};
}
std::vector<std::uint64_t> fields(const ConvShape& s) {
  return {s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad, static_cast<std::uint64_t>(s.layout)};
}
std::vector<std::uint64_t> fields(std::uint64_t bytes) {
  return {bytes};
}

// Each size once, in the order first given: a list that repeats one size (a generated config
// of 2,000,000 equal lines) would time it again and again for the same record.
template <typename T>
void drop_repeats(std::vector<T>& sizes, std::string_view what) {
  std::set<std::vector<std::uint64_t>> seen;
  std::vector<T> kept;
  for (const T& s : sizes)
    if (seen.insert(fields(s)).second) kept.push_back(s);
  if (kept.size() < sizes.size())
    spdlog::warn("{}: {} repeated size{} ignored (each size is measured once)", what,
                 sizes.size() - kept.size(), sizes.size() - kept.size() == 1 ? "" : "s");
  sizes = std::move(kept);
}

template <typename T, typename F>
std::vector<T> parse_list(std::string_view text, char sep, std::string_view flag, F one) {
  std::vector<T> out;
  for (auto item : split(text, sep)) {
    if (trim(item).empty()) continue;
    out.push_back(one(item, flag));
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no sizes given", flag));
  drop_repeats(out, flag);
  return out;
}

std::string_view type_name(const toml::node& n) {
  if (n.is_string()) return "a string";
  if (n.is_integer()) return "an integer";
  if (n.is_floating_point()) return "a float";
  if (n.is_boolean()) return "a boolean";
  if (n.is_array()) return "an array";
  if (n.is_table()) return "a table";
  return "a date or time";
}

std::string where(const std::string& source, const toml::node& n) {
  return fmt::format("{}:{}", source, n.source().begin.line);
}

// Every entry of a preset is an array whose items parse with the flag parser of the same name.
template <typename T, typename F>
std::vector<T> preset_list(const toml::node& node, const std::string& key,
                           const std::string& source, bool strings, F one) {
  const auto* arr = node.as_array();
  if (!arr)
    throw UsageError(fmt::format("{}: key '{}' must be an array", where(source, node), key));
  std::vector<T> out;
  for (const auto& item : *arr) {
    std::string text;
    if (strings && item.is_string()) {
      text = item.as_string()->get();
    } else if (!strings && item.is_integer() && item.as_integer()->get() > 0) {
      text = std::to_string(item.as_integer()->get());
    } else {
      throw UsageError(fmt::format("{}: key '{}' holds {}; expected {}", where(source, item), key,
                                   type_name(item), strings ? "strings" : "positive integers"));
    }
    try {
      out.push_back(one(text, key));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where(source, item), e.what()));
    }
  }
  drop_repeats(out, fmt::format("{}: {}", where(source, node), key));
  return out;
}

}  // namespace

std::vector<ExpShape> parse_exp_sizes(std::string_view text, std::string_view flag) {
  return parse_list<ExpShape>(text, ',', flag, [](std::string_view s, std::string_view f) {
    return ExpShape{positive_count(s, f, "element count")};
  });
}

std::vector<GemmShape> parse_gemm_shapes(std::string_view text, std::string_view flag) {
  return parse_list<GemmShape>(text, ',', flag, gemm_shape);
}

std::vector<ConvShape> parse_conv_shapes(std::string_view text, std::string_view flag) {
  return parse_list<ConvShape>(text, ';', flag, conv_shape);
}

std::vector<std::uint64_t> parse_byte_sizes(std::string_view text, std::string_view flag) {
  return parse_list<std::uint64_t>(text, ',', flag, byte_size);
}

Presets parse_presets(std::string_view toml_text, const std::string& source) {
  toml::table root;
  refuse_text_toml_parser_mishandles(toml_text, source);
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw UsageError(fmt::format("{}:{}:{}: {}", source, b.line, b.column, e.description()));
  }
  Presets presets;
  for (const auto& [name, node] : root) {
    std::string preset(name.str());
    const auto* table = node.as_table();
    if (!table)
      throw UsageError(fmt::format("{}: key '{}' must be a table of sizes ([{}])",
                                   where(source, node), preset, preset));
    SizeSet sizes;
    for (const auto& [key_name, value] : *table) {
      std::string key = preset + "." + std::string(key_name.str());
      if (key_name == "exp") {
        sizes.exp = preset_list<ExpShape>(value, key, source, false,
                                          [](std::string_view s, std::string_view f) {
                                            return ExpShape{positive_count(s, f, "element count")};
                                          });
      } else if (key_name == "gemm") {
        sizes.gemm = preset_list<GemmShape>(value, key, source, true, gemm_shape);
      } else if (key_name == "conv") {
        sizes.conv = preset_list<ConvShape>(value, key, source, true, conv_shape);
      } else if (key_name == "copy") {
        sizes.copy = preset_list<std::uint64_t>(value, key, source, false, byte_size);
      } else if (key_name == "p2p") {
        sizes.p2p = preset_list<std::uint64_t>(value, key, source, false, byte_size);
      } else if (key_name == "allreduce") {
        sizes.allreduce = preset_list<std::uint64_t>(value, key, source, false, byte_size);
      } else {
        throw UsageError(fmt::format(
            "{}: unknown key '{}' (a preset holds exp, gemm, conv, copy, p2p, allreduce)",
            where(source, value), key));
      }
    }
    presets.emplace(preset, std::move(sizes));
  }
  return presets;
}

Presets default_presets() {
  return parse_presets(std::string_view(reinterpret_cast<const char*>(gpucheck_default_config),
                                        gpucheck_default_config_size),
                       "configs/default.toml (embedded)");
}

Presets load_presets_file(const std::string& path) {
  return parse_presets(read_input_file(path, kMaxConfigBytes, "--config"), path);
}

}  // namespace gpucheck::bench

// Parsing size presets (TOML) and size flags, with messages that name the key or flag.
#include "bench/config.h"

#include "bench/ops/op_unit.h"
#include "bench/size_text.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/text.h"
#include "core/toml_text_guard.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>
#include <stdexcept>

extern const unsigned char gpucheck_default_config[];
extern const unsigned long long gpucheck_default_config_size;

namespace gpucheck::bench {

namespace {

// Each size once, in the order first given: a list that repeats one size (a generated config
// of 2,000,000 equal lines) would time it again and again for the same record. Repeats are
// dropped as they are read, so such a list never holds more than its distinct sizes.
// Past kMaxDistinctSizes the list is refused where it is read: every size is a cell of records
// kept until the document is written (50,000 sizes took 6.5 GB, 85 KB a record).
class UniqueSizes {
 public:
  explicit UniqueSizes(std::string what) : what_(std::move(what)) {}
  void add(Shape s) {
    std::string key = shape_to_json(s).dump();
    if (seen_.contains(key)) {
      ++repeats_;
      return;
    }
    if (kept_.size() == kMaxDistinctSizes)
      throw UsageError(fmt::format(
          "{}: more than {} distinct sizes; each is measured as cells of its own, so run the "
          "list in parts",
          what_, kMaxDistinctSizes));
    seen_.insert(std::move(key));
    kept_.push_back(std::move(s));
  }
  std::vector<Shape> take() {
    if (repeats_ > 0)
      spdlog::warn("{}: {} repeated size{} ignored (each size is measured once)", what_, repeats_,
                   repeats_ == 1 ? "" : "s");
    return std::move(kept_);
  }
  bool empty() const { return kept_.empty(); }

 private:
  std::string what_;
  std::set<std::string> seen_;
  std::vector<Shape> kept_;
  std::size_t repeats_ = 0;
};

const SizeSpec& spec_of(Op op) {
  const auto& spec = unit_of(op).size_spec;
  if (!spec) throw std::logic_error(fmt::format("bench: op {} takes no sizes", to_string(op)));
  return *spec;
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

// A preset's entry: an array whose items parse as the op's flag does, one item at a time.
std::vector<Shape> preset_list(const toml::node& node, const std::string& key,
                               const std::string& source, const SizeSpec& spec) {
  const auto* arr = node.as_array();
  if (!arr)
    throw UsageError(fmt::format("{}: key '{}' must be an array", where(source, node), key));
  UniqueSizes out(fmt::format("{}: {}", where(source, node), key));
  for (const auto& item : *arr) {
    std::string text;
    if (spec.toml_strings && item.is_string()) {
      text = item.as_string()->get();
    } else if (!spec.toml_strings && item.is_integer() && item.as_integer()->get() > 0) {
      text = std::to_string(item.as_integer()->get());
    } else {
      throw UsageError(fmt::format("{}: key '{}' holds {}; expected {}", where(source, item), key,
                                   type_name(item),
                                   spec.toml_strings ? "strings" : "positive integers"));
    }
    try {
      out.add(spec.parse(text, key));
    } catch (const UsageError& e) {
      throw UsageError(fmt::format("{}: {}", where(source, item), e.what()));
    }
  }
  return out.take();
}

}  // namespace

const std::vector<Shape>& SizeSet::of(Op op) const {
  static const std::vector<Shape> kNone;
  auto it = lists.find(op);
  return it == lists.end() ? kNone : it->second;
}

std::vector<Shape> parse_sizes(Op op, std::string_view text, std::string_view flag) {
  const SizeSpec& spec = spec_of(op);
  UniqueSizes out{std::string(flag)};
  for (auto item : split_text(text, spec.separator)) {
    if (trim_space(item).empty()) continue;
    out.add(spec.parse(item, flag));
  }
  if (out.empty()) throw UsageError(fmt::format("{}: no sizes given", flag));
  return out.take();
}

std::vector<std::string> size_flags() {
  std::vector<std::string> out;
  for (const auto& unit : op_units())
    if (unit.size_spec && std::find(out.begin(), out.end(), unit.size_spec->flag) == out.end())
      out.emplace_back(unit.size_spec->flag);
  return out;
}

SizeSet with_size_flags(SizeSet sizes, const std::map<std::string, std::string>& flags) {
  for (const auto& unit : op_units()) {
    if (!unit.size_spec) continue;
    const SizeSpec& spec = *unit.size_spec;
    auto it = flags.find(spec.flag);
    if (it != flags.end() && !it->second.empty()) {
      sizes.lists[unit.op] = parse_sizes(unit.op, it->second, fmt::format("--{}", spec.flag));
      sizes.given.insert(unit.op);
    }
    if (sizes.of(unit.op).empty() && spec.fallback)
      sizes.lists[unit.op] = parse_sizes(unit.op, spec.fallback, spec.key);
  }
  return sizes;
}

Presets parse_presets(std::string_view raw, const std::string& source) {
  toml::table root;
  const std::string_view toml_text = without_utf8_bom(raw);
  refuse_text_toml_parser_mishandles(toml_text, source);
  try {
    root = toml::parse(toml_text, source);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw UsageError(fmt::format("{}:{}:{}: {}", source, b.line, b.column, e.description()));
  }
  std::string keys;
  for (const auto& unit : op_units())
    if (unit.size_spec) keys += fmt::format("{}{}", keys.empty() ? "" : ", ", unit.size_spec->key);
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
      const auto units = op_units();
      const std::string_view name = key_name.str();
      auto unit = std::find_if(units.begin(), units.end(), [&](const OpUnit& u) {
        return u.size_spec && name == u.size_spec->key;
      });
      if (unit == units.end())
        throw UsageError(fmt::format("{}: unknown key '{}' (a preset holds {})",
                                     where(source, value), key, keys));
      sizes.lists[unit->op] = preset_list(value, key, source, *unit->size_spec);
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

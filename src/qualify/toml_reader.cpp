// Messages and the bench shape reader shared by the profile and SKU readers.
#include "qualify/toml_reader.h"

#include "bench/cell.h"
#include "bench/ops/op_unit.h"
#include "core/json_keys.h"
#include "core/toml_text_guard.h"

#include <algorithm>

namespace gpucheck::qualify {

namespace k = keys;

std::string node_kind(const toml::node& n) {
  switch (n.type()) {
    case toml::node_type::string:
      return fmt::format("the string '{}'", n.as_string()->get());
    case toml::node_type::integer:
      return fmt::format("the integer {}", n.as_integer()->get());
    case toml::node_type::floating_point:
      return fmt::format("the float {}", n.as_floating_point()->get());
    case toml::node_type::boolean:
      return n.as_boolean()->get() ? "true" : "false";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::table:
      return "a table";
    default:
      return "a date or time";
  }
}

std::string join(const std::vector<std::string>& items) {
  std::string out;
  for (const auto& s : items) out += (out.empty() ? "" : ", ") + s;
  return out;
}

toml::table parse_toml(std::string_view raw, const std::string& path) {
  const std::string_view text = without_utf8_bom(raw);
  refuse_text_toml_parser_mishandles(text, path);
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw UsageError(
        fmt::format("{}:{}:{}: not valid TOML: {}", path, b.line, b.column, e.description()));
  }
}

nlohmann::json read_shape(TableReader& req, const std::string& op, const std::string& file) {
  const toml::node* node = req.take("shape");
  if (!node)
    req.fail(
        fmt::format("missing key 'shape' (a table as in the result record, e.g. "
                    "shape = {{ m = 512, n = 512, k = 512 }} for gemm)"));
  if (!node->is_table()) req.fail_at(*node, "shape", "a table");
  TableReader s(*node->as_table(), req.dotted("shape"), file);
  // The op's unit says which keys its shape has (conv's stride and pad, copy's host memory and
  // the layout have defaults).
  const bench::ProfileShape& keys = bench::unit_of(*op_from_string(op)).profile_shape;
  std::vector<std::string> counts;
  for (const auto& c : keys.counts) counts.push_back(c.key);
  std::vector<std::string> allowed = counts;
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& c : keys.counts) {
    auto v = s.integer(c.key, c.min);
    if (!v && !c.dflt)
      s.fail(fmt::format("missing key '{}' (a {} shape has {})", c.key, op, join(counts)));
    shape[c.key] = v ? *v : *c.dflt;
  }
  for (const auto& n : keys.names) {
    allowed.push_back(n.key);
    if (!n.when_key.empty() &&
        std::find(n.when_values.begin(), n.when_values.end(),
                  shape.value(n.when_key, std::string())) == n.when_values.end()) {
      if (s.has(n.key)) s.fail_value(n.key, n.when_not);
      continue;
    }
    shape[n.key] = s.one_of_or(n.key, n.values, n.dflt ? &*n.dflt : nullptr);
  }
  for (const auto& f : keys.flags) {
    allowed.push_back(f.key);
    shape[f.key] = s.boolean(f.key).value_or(f.dflt);
  }
  s.reject_unknown(allowed);
  // Normalised through the bench plan's own reader, so the shape is the record's exactly.
  nlohmann::json cell = {{k::kOp, op}, {k::kDtype, "f32"}, {k::kShape, shape}};
  nlohmann::json plan = {{k::kDevice, "cpu"},
                         {k::kBackend, "cpu"},
                         {"seed", 1},
                         {"threads", 0},
                         {"policy", {{"warmup", 0}, {"min_time_s", 0.0}, {"max_time_s", 1.0}}},
                         {"cells", {cell}}};
  try {
    return bench::shape_to_json(bench::plan_from_json(plan).cells.at(0).shape);
  } catch (const std::exception& e) {
    req.fail(fmt::format("shape: {}", e.what()));
  }
}

}  // namespace gpucheck::qualify

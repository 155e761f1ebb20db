// Messages and the bench shape reader shared by the profile and SKU readers.
#include "qualify/toml_reader.h"

#include "bench/cell.h"
#include "core/json_keys.h"
#include "core/toml_text_guard.h"

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

toml::table parse_toml(std::string_view text, const std::string& path) {
  refuse_text_toml_parser_mishandles(text, path);
  try {
    return toml::parse(text, path);
  } catch (const toml::parse_error& e) {
    const auto& b = e.source().begin;
    throw UsageError(
        fmt::format("{}:{}:{}: not valid TOML: {}", path, b.line, b.column, e.description()));
  }
}

namespace {

// The keys of a bench shape, as in the result record; conv's layout, stride and pad default.
struct ShapeKeys {
  std::vector<std::string> counts;
  std::vector<std::pair<std::string, std::vector<std::string>>> names;
};

ShapeKeys shape_keys(std::string_view op) {
  if (op == "exp") return {{"n"}, {}};
  if (op == "gemm") return {{"m", "n", "k"}, {}};
  if (op == "conv")
    return {{"n", "c", "h", "w", "k", "r", "s", "stride", "pad"}, {{"layout", {"nchw", "nhwc"}}}};
  if (op == "copy")
    return {{"bytes"},
            {{"direction", {"h2d", "d2h", "d2d", "h2h", "both"}},
             {"host_memory", {"pinned", "pageable"}}}};
  if (op == "latency") return {{}, {{"mode", {"async", "round_trip"}}}};
  return {{"n", "calls"}, {}};  // seedloop (d2h_each_call below)
}

}  // namespace

nlohmann::json read_shape(TableReader& req, const std::string& op, const std::string& file) {
  const toml::node* node = req.take("shape");
  if (!node)
    req.fail(
        fmt::format("missing key 'shape' (a table as in the result record, e.g. "
                    "shape = {{ m = 512, n = 512, k = 512 }} for gemm)"));
  if (!node->is_table()) req.fail_at(*node, "shape", "a table");
  TableReader s(*node->as_table(), req.dotted("shape"), file);
  ShapeKeys keys = shape_keys(op);
  std::vector<std::string> allowed = keys.counts;
  nlohmann::json shape = nlohmann::json::object();
  for (const auto& key : keys.counts) {
    bool optional = op == "conv" && (key == "stride" || key == "pad");
    auto v = s.integer(key, key == "pad" ? 0 : 1);
    if (!v && !optional)
      s.fail(fmt::format("missing key '{}' (a {} shape has {})", key, op, join(keys.counts)));
    shape[key] = v ? *v : (key == "stride" ? 1 : 0);
  }
  for (const auto& [key, values] : keys.names) {
    allowed.push_back(key);
    bool copy_memory = key == "host_memory";
    std::string dir = shape.value("direction", "");
    if (copy_memory && dir != "h2d" && dir != "d2h") {
      if (s.has(key)) s.fail_value(key, "applies to h2d and d2h copies only");
      continue;
    }
    static const std::string kNchw = "nchw", kPinned = "pinned";
    const std::string* dflt = copy_memory ? &kPinned : key == "layout" ? &kNchw : nullptr;
    shape[key] = s.one_of_or(key, values, dflt);
  }
  if (op == "seedloop") {
    allowed.push_back("d2h_each_call");
    shape["d2h_each_call"] = s.boolean("d2h_each_call").value_or(false);
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

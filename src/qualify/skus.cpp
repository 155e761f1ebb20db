// Reading the SKU reference table and finding a device's references in it.
#include "qualify/skus.h"

#include "bench/ops/op_unit.h"
#include "qualify/toml_reader.h"

#include <cctype>

extern const unsigned char gpucheck_skus_config[];
extern const unsigned long long gpucheck_skus_config_size;

namespace gpucheck::qualify {

namespace {

// The ops a reference may name, in the order of Op.
std::vector<std::string> rated_ops() {
  std::vector<std::string> out;
  for (const auto& u : bench::op_units())
    if (u.rated) out.emplace_back(to_string(u.op));
  return out;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::vector<std::string> strings(TableReader& r, std::string_view key) {
  std::vector<std::string> out;
  const toml::node* n = r.take(key);
  if (!n) return out;
  if (!n->is_array()) r.fail_at(*n, key, "an array of strings");
  for (const auto& item : *n->as_array()) {
    if (!item.is_string()) r.fail_at(item, key, "an array of strings");
    out.push_back(item.as_string()->get());
  }
  return out;
}

Reference read_reference(TableReader& r) {
  Reference ref;
  ref.source = r.one_of("source", {"measured", "datasheet"});
  ref.op = r.one_of("op", rated_ops());
  const bool typed = bench::records_have_dtype(ref.op);
  ref.dtype = r.string("dtype").value_or(typed ? "f32" : "");
  ref.transfers = r.one_of("transfers", {"excluded", "included"}, "excluded");
  if (const toml::node* s = r.take("shape")) {
    if (!s->is_table()) r.fail_at(*s, "shape", "a table of the record's shape keys");
    for (const auto& [key, v] : *s->as_table()) {
      if (v.is_integer())
        ref.shape[std::string(key.str())] = v.as_integer()->get();
      else if (v.is_string())
        ref.shape[std::string(key.str())] = v.as_string()->get();
      else if (v.is_boolean())  // p2p: bidirectional, peer_access
        ref.shape[std::string(key.str())] = v.as_boolean()->get();
      else
        r.fail_at(v, "shape." + std::string(key.str()), "an integer, a string or a boolean");
    }
  }
  auto value = r.number("value", true);
  if (!value) r.fail("missing key 'value'");
  ref.value = *value;
  bool flops = ref.op == "gemm" || ref.op == "conv";
  ref.unit = r.one_of("unit", {flops ? "TFLOP/s" : "GB/s"});
  std::vector<std::string> keys{"source", "op", "dtype", "transfers", "shape", "value", "unit"};
  if (ref.source == "measured") {
    auto card = r.string("card"), date = r.string("date"), command = r.string("command");
    if (!card || !date || !command) r.fail("a measured reference names its card, date and command");
    ref.provenance = fmt::format("measured on {}, {}: {}", *card, *date, *command);
    keys.insert(keys.end(), {"card", "date", "command"});
  } else {
    auto src = r.string("datasheet");
    if (!src) r.fail("a datasheet reference names its datasheet (title and address)");
    ref.provenance = "datasheet: " + *src;
    keys.emplace_back("datasheet");
  }
  if (auto note = r.string("note")) ref.provenance += " (" + *note + ")";
  ref.signalling = r.number("signalling", true);
  keys.insert(keys.end(), {"note", "signalling"});
  r.reject_unknown(keys);
  return ref;
}

}  // namespace

std::vector<Sku> parse_skus(std::string_view toml_text, const std::string& path) {
  const toml::table root = parse_toml(toml_text, path);
  TableReader top(root, "", path);
  std::vector<Sku> out;
  const toml::node* list = top.take("sku");
  top.reject_unknown({"sku"});
  if (!list) return out;
  if (!list->is_array_of_tables()) top.fail_at(*list, "sku", "[[sku]] tables");
  std::size_t i = 0;
  for (const auto& node : *list->as_array()) {
    ++i;
    TableReader r(*node.as_table(), fmt::format("sku[{}]", i), path);
    Sku sku;
    sku.model = r.string("model").value_or("");
    if (sku.model.empty()) r.fail("missing key 'model'");
    for (auto& id : strings(r, "pci_device_ids")) sku.pci_device_ids.push_back(lower(id));
    sku.names = strings(r, "names");
    if (auto sms = r.integer("sm_count", 1, 1 << 20)) sku.sm_count = static_cast<int>(*sms);
    if (const toml::node* refs = r.take("reference")) {
      if (!refs->is_array_of_tables()) r.fail_at(*refs, "reference", "[[sku.reference]] tables");
      std::size_t j = 0;
      for (const auto& rn : *refs->as_array()) {
        TableReader rr(*rn.as_table(), fmt::format("sku[{}].reference[{}]", i, ++j), path);
        sku.references.push_back(read_reference(rr));
      }
    }
    r.reject_unknown({"model", "pci_device_ids", "names", "sm_count", "reference"});
    out.push_back(std::move(sku));
  }
  return out;
}

const std::vector<Sku>& builtin_skus() {
  static const std::vector<Sku> skus =
      parse_skus(std::string_view(reinterpret_cast<const char*>(gpucheck_skus_config),
                                  gpucheck_skus_config_size),
                 "configs/skus.toml");
  return skus;
}

const Sku* find_sku(const std::vector<Sku>& skus, const std::optional<std::string>& pci_device_id,
                    const std::string& name) {
  if (pci_device_id)
    for (const auto& s : skus)
      for (const auto& id : s.pci_device_ids)
        if (id == lower(*pci_device_id)) return &s;
  for (const auto& s : skus)
    for (const auto& n : s.names)
      if (n == name) return &s;
  return nullptr;
}

const Reference* find_reference(const Sku& sku, const std::string& source, const std::string& op,
                                const std::string& dtype, const nlohmann::json& shape,
                                const std::string& transfers) {
  for (const auto& r : sku.references) {
    if (r.source != source || r.op != op || r.transfers != transfers) continue;
    if (!r.dtype.empty() && bench::records_have_dtype(op) && r.dtype != dtype) continue;
    bool same = true;
    for (const auto& [key, v] : r.shape.items())
      same = same && shape.contains(key) && shape[key] == v;
    if (same) return &r;
  }
  return nullptr;
}

}  // namespace gpucheck::qualify

// A small JSON Schema validator over nlohmann::json: the schema compiled once into nodes, then
// the first problem of a value, with its JSON pointer.
#include "report/schema_check.h"

#include <fmt/format.h>

#include <cmath>
#include <deque>
#include <map>
#include <regex>
#include <stdexcept>
#include <unordered_map>
#include <vector>

extern const unsigned char gpucheck_schema_json[];
extern const unsigned long long gpucheck_schema_json_size;

namespace gpucheck::report {

namespace {

using Json = nlohmann::json;

enum TypeBit : unsigned {
  kObject = 1,
  kArray = 2,
  kString = 4,
  kBoolean = 8,
  kNull = 16,
  kNumber = 32,
  kInteger = 64
};

unsigned type_bit(const std::string& t) {
  if (t == "object") return kObject;
  if (t == "array") return kArray;
  if (t == "string") return kString;
  if (t == "boolean") return kBoolean;
  if (t == "null") return kNull;
  if (t == "number") return kNumber;
  if (t == "integer") return kInteger;
  throw std::invalid_argument("schema: unknown type " + t);
}

// An integer written as a float (1e3, 5.0) that a 64-bit integer holds: every integer gpucheck
// writes is one, and its readers convert with get<std::uint64_t>() or get<std::int64_t>(), which
// for a float outside their range is undefined behaviour (UBSan: 1.8e23 read as a shape's size).
bool is_64_bit_integer(double x) {
  return std::floor(x) == x && x >= -0x1p63 && x < 0x1p64;
}

bool has_type(const Json& v, unsigned types) {
  switch (v.type()) {
    case Json::value_t::object:
      return types & kObject;
    case Json::value_t::array:
      return types & kArray;
    case Json::value_t::string:
      return types & kString;
    case Json::value_t::boolean:
      return types & kBoolean;
    case Json::value_t::null:
      return types & kNull;
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return types & (kNumber | kInteger);
    case Json::value_t::number_float: {
      // JSON has no Inf: a literal beyond the double range (1e999) parses as one; refused.
      const double x = v.get<double>();
      if (!std::isfinite(x)) return false;
      return (types & kNumber) || ((types & kInteger) && is_64_bit_integer(x));
    }
    default:
      return false;
  }
}

std::string kind_of(const Json& v) {
  switch (v.type()) {
    case Json::value_t::null:
      return "null";
    case Json::value_t::boolean:
      return "a boolean";
    case Json::value_t::string:
      return "a string";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::object:
      return "an object";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
      return "an integer";
    case Json::value_t::number_float: {
      const double x = v.get<double>();
      if (!std::isfinite(x)) return "a number beyond the double range";
      if (std::floor(x) == x && !is_64_bit_integer(x)) return "an integer beyond 64 bits";
      return "a number";
    }
    default:
      return "something else";
  }
}

// "~" and "/" escaped as a JSON pointer's reference token needs.
std::string token(std::string_view key) {
  std::string out;
  for (char c : key) {
    if (c == '~')
      out += "~0";
    else if (c == '/')
      out += "~1";
    else
      out += c;
  }
  return out;
}

std::string short_text(const Json& v) {
  std::string s = v.dump(-1, ' ', false, Json::error_handler_t::replace);
  return s.size() > 60 ? s.substr(0, 57) + "..." : s;
}

}  // namespace

struct SchemaCheck::Node {
  bool never = false;  // the schema `false`
  const Node* ref = nullptr;
  unsigned types = 0;  // 0: any
  std::string type_text;
  const Json* enumeration = nullptr;
  const Json* constant = nullptr;
  std::optional<double> minimum, exclusive_minimum, maximum;
  std::optional<std::size_t> min_length, max_length, min_items, max_items;
  std::optional<std::regex> pattern;
  std::string pattern_text;
  std::vector<std::string> required;
  std::unordered_map<std::string, const Node*> properties;
  const Node* additional = nullptr;
  const Node* items = nullptr;
  std::vector<const Node*> all_of, any_of, one_of;
  const Node* negated = nullptr;
  const Node* if_node = nullptr;
  const Node* then_node = nullptr;
  const Node* else_node = nullptr;
};

struct SchemaCheck::Compiled {
  Json schema;
  std::deque<Node> nodes;  // stable addresses
  std::map<const Json*, const Node*> by_schema;
  const Node* root = nullptr;

  const Node* compile(const Json& s) {
    if (auto it = by_schema.find(&s); it != by_schema.end()) return it->second;
    Node& n = nodes.emplace_back();
    by_schema[&s] = &n;  // before the children: a $ref may lead back here
    if (s.is_boolean()) {
      n.never = !s.get<bool>();
      return &n;
    }
    if (!s.is_object()) return &n;
    if (auto r = s.find("$ref"); r != s.end()) {
      const std::string ref = *r;
      if (ref == "#")
        n.ref = compile(schema);
      else if (ref.starts_with("#/"))
        n.ref = compile(schema.at(Json::json_pointer(ref.substr(1))));
      else
        throw std::invalid_argument("schema: only local $ref: " + ref);
    }
    if (auto t = s.find("type"); t != s.end()) {
      for (const auto& one : t->is_array() ? *t : Json::array({*t})) {
        n.types |= type_bit(one.get<std::string>());
        n.type_text += (n.type_text.empty() ? "" : " or ") + one.get<std::string>();
      }
    }
    if (auto e = s.find("enum"); e != s.end()) n.enumeration = &*e;
    if (auto c = s.find("const"); c != s.end()) n.constant = &*c;
    auto number = [&](const char* key, std::optional<double>& into) {
      if (auto it = s.find(key); it != s.end()) into = it->get<double>();
    };
    number("minimum", n.minimum);
    number("exclusiveMinimum", n.exclusive_minimum);
    number("maximum", n.maximum);
    auto count = [&](const char* key, std::optional<std::size_t>& into) {
      if (auto it = s.find(key); it != s.end()) into = it->get<std::size_t>();
    };
    count("minLength", n.min_length);
    count("maxLength", n.max_length);
    count("minItems", n.min_items);
    count("maxItems", n.max_items);
    if (auto p = s.find("pattern"); p != s.end()) {
      n.pattern_text = *p;
      n.pattern.emplace(n.pattern_text);
    }
    if (auto r = s.find("required"); r != s.end())
      for (const auto& key : *r) n.required.push_back(key);
    if (auto p = s.find("properties"); p != s.end())
      for (const auto& [key, sub] : p->items()) n.properties[key] = compile(sub);
    if (auto a = s.find("additionalProperties"); a != s.end()) n.additional = compile(*a);
    if (auto i = s.find("items"); i != s.end()) n.items = compile(*i);
    auto list = [&](const char* key, std::vector<const Node*>& into) {
      if (auto it = s.find(key); it != s.end())
        for (const auto& sub : *it) into.push_back(compile(sub));
    };
    list("allOf", n.all_of);
    list("anyOf", n.any_of);
    list("oneOf", n.one_of);
    if (auto x = s.find("not"); x != s.end()) n.negated = compile(*x);
    if (auto x = s.find("if"); x != s.end()) n.if_node = compile(*x);
    if (auto x = s.find("then"); x != s.end()) n.then_node = compile(*x);
    if (auto x = s.find("else"); x != s.end()) n.else_node = compile(*x);
    return &n;
  }
};

SchemaCheck::SchemaCheck(Json schema) : compiled_(std::make_unique<Compiled>()) {
  compiled_->schema = std::move(schema);
  compiled_->root = compiled_->compile(compiled_->schema);
  if (auto defs = compiled_->schema.find("$defs"); defs != compiled_->schema.end())
    for (const auto& def : *defs) compiled_->compile(def);
}

SchemaCheck::~SchemaCheck() = default;

const SchemaCheck& SchemaCheck::gpucheck() {
  static const SchemaCheck check(Json::parse(std::string_view(
      reinterpret_cast<const char*>(gpucheck_schema_json), gpucheck_schema_json_size)));
  return check;
}

std::optional<SchemaProblem> SchemaCheck::first_problem(const Json& value) const {
  std::string pointer;
  SchemaProblem problem;
  if (check(*compiled_->root, value, pointer, &problem)) return std::nullopt;
  return problem;
}

std::optional<SchemaProblem> SchemaCheck::first_problem(const Json& value, std::string_view def,
                                                        const std::string& at) const {
  const Json& defs = compiled_->schema.at("$defs");
  const Node* node = compiled_->by_schema.at(&defs.at(std::string(def)));
  std::string pointer = at;
  SchemaProblem problem;
  if (check(*node, value, pointer, &problem)) return std::nullopt;
  return problem;
}

bool SchemaCheck::check(const Node& n, const Json& v, std::string& pointer,
                        SchemaProblem* problem) const {
  auto fail = [&](std::string message) {
    if (problem) *problem = {pointer, std::move(message)};
    return false;
  };
  if (n.never) return fail("no value is allowed here");
  if (n.ref && !check(*n.ref, v, pointer, problem)) return false;
  if (n.types && !has_type(v, n.types))
    return fail(fmt::format("expected {}, got {}", n.type_text, kind_of(v)));
  if (n.enumeration) {
    bool ok = false;
    for (const auto& option : *n.enumeration) ok = ok || option == v;
    if (!ok)
      return fail(fmt::format("{} is not one of {}", short_text(v), short_text(*n.enumeration)));
  }
  if (n.constant && *n.constant != v)
    return fail(fmt::format("expected {}, got {}", short_text(*n.constant), short_text(v)));
  if (v.is_number()) {
    const double x = v.get<double>();
    if (n.minimum && !(x >= *n.minimum))
      return fail(fmt::format("{} is below the minimum {}", short_text(v), *n.minimum));
    if (n.exclusive_minimum && !(x > *n.exclusive_minimum))
      return fail(fmt::format("{} is not above {}", short_text(v), *n.exclusive_minimum));
    if (n.maximum && !(x <= *n.maximum))
      return fail(fmt::format("{} is above the maximum {}", short_text(v), *n.maximum));
  } else if (v.is_string()) {
    const auto& text = v.get_ref<const std::string&>();
    if (n.min_length && text.size() < *n.min_length)
      return fail(fmt::format("shorter than {} characters", *n.min_length));
    if (n.max_length && text.size() > *n.max_length)
      return fail(fmt::format("longer than {} characters", *n.max_length));
    if (n.pattern && !std::regex_search(text, *n.pattern))
      return fail(fmt::format("{} does not match /{}/", short_text(v), n.pattern_text));
  } else if (v.is_array()) {
    if (n.min_items && v.size() < *n.min_items)
      return fail(fmt::format("fewer than {} items", *n.min_items));
    if (n.max_items && v.size() > *n.max_items)
      return fail(fmt::format("more than {} items", *n.max_items));
    if (n.items) {
      const std::size_t len = pointer.size();
      for (std::size_t i = 0; i < v.size(); ++i) {
        pointer += '/';
        pointer += std::to_string(i);
        if (!check(*n.items, v[i], pointer, problem)) return false;
        pointer.resize(len);
      }
    }
  } else if (v.is_object()) {
    for (const auto& key : n.required)
      if (!v.contains(key)) return fail(fmt::format("the required key \"{}\" is missing", key));
    if (!n.properties.empty() || n.additional) {
      const std::size_t len = pointer.size();
      for (const auto& [key, sub] : v.items()) {
        const Node* rule = nullptr;
        if (auto p = n.properties.find(key); p != n.properties.end()) rule = p->second;
        const bool additional = !rule && n.additional;
        if (additional) rule = n.additional;
        if (!rule) continue;
        pointer += '/';
        pointer += token(key);
        if (additional && rule->never) return fail("an unknown key");
        if (!check(*rule, sub, pointer, problem)) return false;
        pointer.resize(len);
      }
    }
  }
  for (const Node* sub : n.all_of)
    if (!check(*sub, v, pointer, problem)) return false;
  if (!n.any_of.empty()) {
    bool ok = false;
    for (const Node* sub : n.any_of) ok = ok || check(*sub, v, pointer, nullptr);
    if (!ok) return fail("matches none of the allowed forms (anyOf)");
  }
  if (!n.one_of.empty()) {
    int matched = 0;
    for (const Node* sub : n.one_of) matched += check(*sub, v, pointer, nullptr) ? 1 : 0;
    if (matched != 1)
      return fail(fmt::format("matches {} of the forms where one is expected (oneOf)", matched));
  }
  if (n.negated && check(*n.negated, v, pointer, nullptr))
    return fail("matches a form that is not allowed (not)");
  if (n.if_node) {
    const bool holds = check(*n.if_node, v, pointer, nullptr);
    const Node* branch = holds ? n.then_node : n.else_node;
    if (branch && !check(*branch, v, pointer, problem)) return false;
  }
  return true;
}

}  // namespace gpucheck::report

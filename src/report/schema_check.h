// Checks JSON documents against gpucheck's own schema (schema/gpucheck.schema.json, embedded at
// build time), so report show and compare read only documents whose every field has the type
// the views expect. Implements the JSON Schema 2020-12 keywords that schema uses: type, enum,
// const, properties, required, additionalProperties, items, minItems, maxItems, minimum,
// exclusiveMinimum, maximum, minLength, maxLength, pattern, allOf, anyOf, oneOf, not, if/then/
// else and local $ref. (Debian's valijson predates 2020-12 and pulls in Qt and Poco.)
#pragma once

#include <nlohmann/json.hpp>

#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck::report {

struct SchemaProblem {
  std::string pointer;  // JSON pointer of the offending value, "" for the root
  std::string message;  // what was expected
};

class SchemaCheck {
 public:
  // Compiles the schema once (every keyword looked up at construction, $ref resolved), so a
  // document of 250,000 records is checked in about a second.
  explicit SchemaCheck(nlohmann::json schema);
  ~SchemaCheck();
  SchemaCheck(const SchemaCheck&) = delete;
  SchemaCheck& operator=(const SchemaCheck&) = delete;

  // gpucheck's schema, embedded (parsed once).
  static const SchemaCheck& gpucheck();

  // The first problem of `value` against the whole schema, or against $defs/<def>; nullopt
  // when valid. `at` prefixes the pointers (a record checked alone: "/results/17").
  std::optional<SchemaProblem> first_problem(const nlohmann::json& value) const;
  std::optional<SchemaProblem> first_problem(const nlohmann::json& value, std::string_view def,
                                             const std::string& at = "") const;

 private:
  struct Node;
  struct Compiled;
  bool check(const Node& node, const nlohmann::json& value, std::string& pointer,
             SchemaProblem* problem) const;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace gpucheck::report

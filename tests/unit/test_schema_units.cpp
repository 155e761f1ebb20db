// The document's schema restates three facts of the op units: which ops a record may name, which
// ops' records must carry a dtype (OpUnit::has_dtype) and which ops a sweep runs
// (OpUnit::sweep). The schema is a JSON file for other tools to read, so it cannot ask the units;
// this holds the two equal, naming the op that drifted.
#include "bench/ops/op_unit.h"
#include "core/workload.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>

namespace {

using namespace gpucheck;
using Json = nlohmann::json;
using Names = std::set<std::string>;

Json schema() {
  std::ifstream in(std::string(GPUCHECK_SOURCE_DIR) + "/schema/gpucheck.schema.json");
  return Json::parse(in);
}

Names names(const Json& enum_list) {
  Names out;
  for (const auto& v : enum_list) out.insert(v.get<std::string>());
  return out;
}

template <typename Pred>
Names units_where(Pred pred) {
  Names out;
  for (const auto& unit : bench::op_units())
    if (pred(unit)) out.insert(std::string(to_string(unit.op)));
  return out;
}

// The record's `if op in [...] then required [dtype]` clause.
const Json* dtype_clause(const Json& record) {
  for (const auto& clause : record.at("allOf")) {
    const auto then = clause.find("then");
    if (then == clause.end() || !then->contains("required")) continue;
    if (names(then->at("required")) == Names{"dtype"}) return &clause;
  }
  return nullptr;
}

TEST(SchemaUnits, EveryOpARecordNamesIsAUnitOrTheNetworkTest) {
  const Json s = schema();
  Names expected = units_where([](const bench::OpUnit&) { return true; });
  expected.insert("net");  // bench --ops net's records: a link between hosts, not a device op
  EXPECT_EQ(names(s.at("$defs").at("record").at("properties").at("op").at("enum")), expected);
}

TEST(SchemaUnits, TheOpsWhoseRecordsNeedADtypeAreThoseWhoseUnitHasOne) {
  const Json s = schema();
  const Json* clause = dtype_clause(s.at("$defs").at("record"));
  ASSERT_NE(clause, nullptr) << "no `then: required [dtype]` clause in $defs/record/allOf";
  EXPECT_EQ(names(clause->at("if").at("properties").at("op").at("enum")),
            units_where([](const bench::OpUnit& u) { return u.has_dtype; }));
}

TEST(SchemaUnits, TheSweepsOpsAreThoseWhoseUnitCanBeSwept) {
  const Json s = schema();
  EXPECT_EQ(names(s.at("$defs").at("sweep").at("properties").at("op").at("enum")),
            units_where([](const bench::OpUnit& u) { return u.sweep.has_value(); }));
}

}  // namespace

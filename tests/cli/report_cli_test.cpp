// `gpucheck report compare` and `report show` end to end on real CPU bench documents: a planted
// 3x slowdown is a REGRESSION (exit 1), a file against itself is all SAME (exit 0), two real
// consecutive runs pass at 10 %, another schema version is exit 2, MISSING/NEW, --match name.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// A real CPU bench: exp and GEMM, compute-bound and on one thread, so other work on a shared
// machine moves their medians least; repetitions of about a millisecond, so a preempted one is
// a few times the median, not a hundred.
Json cpu_bench() {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp,gemm", "--dtype", "f32", "--exp",
                         "2^20", "--gemm", "256", "--threads", "1", "--warmup", "2", "--min-time",
                         "0.2", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return Json::parse(r.out);
}

// The same records, every ok one 3x slower.
Json slowed(Json doc) {
  for (auto& rec : doc["results"]) {
    if (rec["status"] != "ok") continue;
    rec["throughput"]["value"] = rec["throughput"]["value"].get<double>() / 3;
    for (const char* k : {"median", "min", "max", "stddev"})
      rec["time_s"][k] = rec["time_s"][k].get<double>() * 3;
  }
  return doc;
}

std::string save(const std::string& name, const Json& doc) {
  return write_temp_file(name, doc.dump());
}

Json compare(const std::vector<std::string>& args, int expected_exit) {
  std::vector<std::string> all{"report", "compare"};
  all.insert(all.end(), args.begin(), args.end());
  all.push_back("--json");
  auto r = run_gpucheck(all);
  EXPECT_EQ(r.exit_code, expected_exit) << r.err;
  return r.exit_code == 2 ? Json() : Json::parse(r.out);
}

class ReportCli : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { base_ = new Json(cpu_bench()); }
  static void TearDownTestSuite() { delete base_; }
  static Json* base_;
};
Json* ReportCli::base_ = nullptr;

TEST_F(ReportCli, PlantedSlowdownIsARegression) {
  std::string base = save("base.json", *base_);
  std::string slow = save("slow.json", slowed(*base_));
  Json doc = compare({base, slow}, 1);
  EXPECT_EQ(doc["command"], "report");
  const Json& c = doc["comparison"];
  EXPECT_EQ(c["verdict"], "regression");
  EXPECT_EQ(c["summary"]["regression"], 2);  // exp and GEMM
  for (const auto& row : c["rows"]) EXPECT_NEAR(row["change"].get<double>(), -2.0 / 3, 1e-9);
  EXPECT_EQ(c["base"]["path"], base);
  auto table = run_gpucheck({"report", "compare", base, slow});
  EXPECT_EQ(table.exit_code, 1);
  EXPECT_THAT(table.out, HasSubstr("REGRESSION"));
  // The other way round it is an improvement, and not a failure.
  EXPECT_EQ(compare({slow, base}, 0)["comparison"]["summary"]["improvement"], 2);
}

TEST_F(ReportCli, FileAgainstItselfIsAllSame) {
  std::string base = save("self.json", *base_);
  const Json c = compare({base, base}, 0)["comparison"];
  EXPECT_EQ(c["summary"]["same"], c["rows"].size());
  EXPECT_EQ(c["verdict"], "ok");
}

TEST_F(ReportCli, TwoRealRunsPassAtTenPercent) {
  std::string first = save("first.json", *base_);
  std::string second = save("second.json", cpu_bench());
  const Json c = compare({first, second, "--tolerance", "10%"}, 0)["comparison"];
  EXPECT_EQ(c["summary"]["regression"], 0) << c.dump(1);
  EXPECT_DOUBLE_EQ(c["tolerance"].get<double>(), 0.10);
}

TEST_F(ReportCli, OtherSchemaVersionAndBadInputAreExit2) {
  Json other = *base_;
  other["schema"] = "gpucheck/2";
  std::string base = save("base.json", *base_);
  auto r = run_gpucheck({"report", "compare", base, save("v2.json", other)});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("has schema 'gpucheck/2'; this gpucheck reads gpucheck/1 only"));
  EXPECT_EQ(run_gpucheck({"report", "show", save("v2.json", other)}).exit_code, 2);
  EXPECT_EQ(
      run_gpucheck({"report", "compare", base, write_temp_file("x.json", "not json")}).exit_code,
      2);
  EXPECT_EQ(run_gpucheck({"report", "compare", base, "/nonexistent.json"}).exit_code, 2);
  EXPECT_EQ(run_gpucheck({"report", "compare", base, base, "--tolerance", "lots"}).exit_code, 2);
  Json probe = Json::parse(run_gpucheck({"probe", "--json"}).out);
  auto no_results = run_gpucheck({"report", "compare", base, save("probe.json", probe)});
  EXPECT_EQ(no_results.exit_code, 2);
  EXPECT_THAT(no_results.err, HasSubstr("holds no bench results"));
  EXPECT_EQ(run_gpucheck({"report"}).exit_code, 2);
}

TEST_F(ReportCli, MissingAndNewRecords) {
  Json fewer = *base_;
  Json extra = fewer["results"][0];
  fewer["results"].erase(fewer["results"].begin());
  extra["shape"]["n"] = 12345;
  fewer["results"].push_back(extra);
  std::string base = save("base.json", *base_);
  std::string changed = save("changed.json", fewer);
  const Json c = compare({base, changed}, 0)["comparison"];
  EXPECT_EQ(c["summary"]["missing"], 1);
  EXPECT_EQ(c["summary"]["new"], 1);
  EXPECT_EQ(compare({base, changed, "--fail-on-missing"}, 1)["comparison"]["verdict"], "missing");
}

TEST_F(ReportCli, MatchByNameForAnotherMachinesBaseline) {
  Json a = *base_, b = *base_;
  for (auto& r : a["results"]) r["device_uuid"] = "GPU-aaaa";
  for (auto& r : b["results"]) r["device_uuid"] = "GPU-bbbb";
  std::string pa = save("a.json", a), pb = save("b.json", b);
  const Json by_id = compare({pa, pb}, 0)["comparison"];
  EXPECT_EQ(by_id["summary"]["same"], 0);
  EXPECT_EQ(by_id["summary"]["missing"], a["results"].size());
  const Json by_name = compare({pa, pb, "--match", "name"}, 0)["comparison"];
  EXPECT_EQ(by_name["summary"]["same"], a["results"].size());
  EXPECT_EQ(by_name["match"], "name");
}

TEST_F(ReportCli, ComparisonMatchesTheSchema) {
  std::string base = save("base.json", *base_);
  auto r =
      run_program("python3", {std::string(GPUCHECK_SOURCE_DIR) + "/tests/cli/validate_schema.py",
                              std::string(GPUCHECK_SOURCE_DIR) + "/schema/gpucheck.schema.json",
                              "--", GPUCHECK_BINARY, "report", "compare", base,
                              save("slow.json", slowed(*base_)), "--json"});
  if (r.exit_code == 77) GTEST_SKIP() << "python3-jsonschema is not installed";
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(ReportCli, ShowRendersASavedDocumentInEveryFormat) {
  std::string base = save("base.json", *base_);
  auto json = run_gpucheck({"report", "show", base, "--json"});
  ASSERT_EQ(json.exit_code, 0) << json.err;
  EXPECT_EQ(Json::parse(json.out), *base_);
  auto md = run_gpucheck({"report", "show", base, "--format", "md"});
  EXPECT_EQ(md.exit_code, 0);
  EXPECT_THAT(md.out, HasSubstr("| device | dtype | size |"));
  EXPECT_THAT(md.out, HasSubstr("| cpu | f32 |"));
  auto csv = run_gpucheck({"report", "show", base, "--format", "csv"});
  EXPECT_EQ(csv.exit_code, 0);
  EXPECT_THAT(csv.out, HasSubstr(",cpu,exp,"));  // backend, op
  auto table = run_gpucheck({"report", "show", base, "-o", write_temp_file("shown.txt", "")});
  EXPECT_EQ(table.exit_code, 0);
  EXPECT_EQ(table.out, "");
}

}  // namespace

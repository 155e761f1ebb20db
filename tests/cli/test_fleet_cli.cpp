// `gpucheck report fleet DIR|DOC...` end to end: 64 documents in a directory (exit 1 with
// --fail-on-outlier, 0 without), the same as separate arguments, and bad input (exit 2).
#include "../fixtures/fleet/make_fleet.h"
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <set>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class FleetCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("gpucheck_fleet_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "docs");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::vector<std::string> write_fleet() {
    std::vector<std::string> paths;
    for (const auto& doc : gpucheck::testing::planted_fleet_64()) {
      const auto p = dir_ / "docs" / (doc["host"]["hostname"].get<std::string>() + ".json");
      std::ofstream(p) << doc.dump();
      paths.push_back(p.string());
    }
    return paths;
  }
  fs::path dir_;
};

TEST_F(FleetCli, ADirectoryOfSixtyFourDocumentsFlagsTheTwoPlantedNodes) {
  write_fleet();
  auto r =
      run_gpucheck({"report", "fleet", (dir_ / "docs").string(), "--json", "--fail-on-outlier"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["schema"], "gpucheck/1");
  EXPECT_EQ(doc["fleet"]["fail_on_outlier"], true);
  std::set<std::string> hosts;
  for (const auto& o : doc["fleet"]["outliers"]) hosts.insert(o["hostname"].get<std::string>());
  EXPECT_EQ(hosts, (std::set<std::string>{"node17", "node42"}));

  r = run_gpucheck({"report", "fleet", (dir_ / "docs").string()});
  EXPECT_EQ(r.exit_code, 0) << r.err;  // outliers are reported; only --fail-on-outlier fails
  EXPECT_THAT(r.out, HasSubstr("fleet outliers"));
  EXPECT_THAT(r.out, HasSubstr("node42"));
  // Outliers first, a closing summary line last.
  EXPECT_LT(r.out.find("fleet outliers"), r.out.find("fleet nodes"));
  EXPECT_THAT(r.out, ::testing::EndsWith("fleet: 2 outliers, 64 nodes, 30 groups, 64 documents\n"));
}

TEST_F(FleetCli, DocumentsGivenOneByOneGiveTheSameVerdict) {
  std::vector<std::string> args{"report", "fleet"};
  for (const auto& p : write_fleet()) args.push_back(p);
  args.insert(args.end(), {"--json", "--fail-on-outlier"});
  auto r = run_gpucheck(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Json::parse(r.out)["fleet"]["summary"]["outliers"], 2);
}

TEST_F(FleetCli, BadInputIsUsageErrorNamingTheFile) {
  const auto junk = dir_ / "docs" / "junk.json";
  std::ofstream(junk) << "{\"schema\": \"other/1\"}";
  auto r = run_gpucheck({"report", "fleet", (dir_ / "docs").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("junk.json"));
  // A valid doctor document, so the refusal is fleet's, not the schema check's.
  std::ofstream(junk)
      << R"({"schema":"gpucheck/1","command":"doctor","provenance":{"gpucheck_version":"0.1.0",)"
      << R"("git_commit":"x","time":"2025-01-01T00:00:00Z","argv":[],"environment":{},)"
      << R"("backends_built":["cpu"]},"checks":[]})";
  r = run_gpucheck({"report", "fleet", junk.string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no bench results"));
  fs::create_directories(dir_ / "empty");
  r = run_gpucheck({"report", "fleet", (dir_ / "empty").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("holds no *.json document"));
}

}  // namespace

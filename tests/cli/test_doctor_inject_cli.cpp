// `gpucheck doctor --inject` end to end on a system without any NVIDIA GPU or driver (this
// development VM's own probe): the injected faults decide the exit code as real ones would
// (--quick: 0 keep, 1 remove, 2 could not decide), every output says injected, the state file
// keeps none of them, and a bad fault word is a usage error (exit 2) naming the accepted ones.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using Json = nlohmann::json;

const std::string kFacts =
    (fs::path(GPUCHECK_FIXTURES_DIR) / "doctor" / "base_probe.json").string();

// This test's own directory in the run's temporary one: root/, a system without any file but
// the marker that makes it, and room for a state file.
fs::path test_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const fs::path keep(write_temp_file(std::string("inject_") + info->name() + "/root/.keep", ""));
  return keep.parent_path().parent_path();
}

// doctor on that system: --quick, or the full list without the load run and the frameworks.
RunResult doctor(bool quick, std::vector<std::string> extra) {
  std::vector<std::string> args{"doctor", "--facts", kFacts, "--sysroot",
                                (test_dir() / "root").string()};
  if (quick)
    args.push_back("--quick");
  else
    args.insert(args.end(), {"--no-load", "--no-frameworks"});
  args.insert(args.end(), extra.begin(), extra.end());
  return run_gpucheck(args);
}

std::string state() {
  return (test_dir() / "state.json").string();
}

const Json* check_of(const Json& doc, const std::string& id) {
  for (const auto& c : doc["checks"])
    if (c["id"] == id) return &c;
  return nullptr;
}

TEST(InjectCli, QuickIsHealthyWithoutAndUnhealthyWithAnInjectedFault) {
  auto r = doctor(true, {"--no-state", "--format", "oneline"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = doctor(true, {"--no-state", "--format", "oneline", "--inject", "xid:79"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x1: injected"));
  EXPECT_THAT(r.err, HasSubstr("not read from this machine"));
}

TEST(InjectCli, QuickKeepsANodeWhoseInjectedXidIsAProgramsFault) {
  // Xid 13 is a program's illegal address: INFO, so the node stays in (exit 0).
  auto r = doctor(true, {"--no-state", "--json", "--inject", "xid:13"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["injected"], Json::array({"xid:13"}));
  EXPECT_EQ(doc["health"]["verdict"], "healthy");
  ASSERT_NE(check_of(doc, "nvidia_xid"), nullptr);
  EXPECT_EQ((*check_of(doc, "nvidia_xid"))["status"], "info");
}

TEST(InjectCli, QuickJsonMarksTheDocumentAndEachInjectedCheck) {
  auto r = doctor(true, {"--no-state", "--json", "--inject",
                         "gpu-lost,nvlink-down,ecc-dbe,fm-down,row-remap-pending"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["injected"],
            Json::array({"gpu-lost", "nvlink-down", "ecc-dbe", "fm-down", "row-remap-pending"}));
  EXPECT_EQ(doc["health"]["verdict"], "unhealthy");
  EXPECT_EQ(doc["health"]["exit_code"], 1);
  const std::pair<const char*, const char*> expected[] = {
      {"cuda_devices", "GC-CUDA-GPU-MISSING"},
      {"nvlink_links", "GC-NVLINK-DOWN"},
      {"nvidia_ecc", "GC-ECC-UNCORRECTABLE"},  // the first named of the check's two
      {"nvswitch_fabric_manager", "GC-FABRIC-MANAGER-DOWN"}};
  for (const auto& [id, code] : expected) {
    const Json* c = check_of(doc, id);
    ASSERT_NE(c, nullptr) << id;
    EXPECT_EQ((*c)["status"], "fail") << id;
    EXPECT_EQ((*c)["code"], code) << id;
    EXPECT_EQ((*c)["injected"], true) << id;
    EXPECT_TRUE(c->contains("recovery_action")) << id;
  }
  // Checks that were not injected are the machine's own and say nothing of it.
  for (const auto& c : doc["checks"]) {
    if (c.contains("injected")) {
      EXPECT_EQ(c["injected"], true);
    }
  }
  EXPECT_FALSE(check_of(doc, "opencl_loader")->contains("injected"));
  EXPECT_GE(doc["provenance"]["duration_s"].get<double>(), 0.0);
}

TEST(InjectCli, FullDoctorExitsOneWithTheBannerInTextAndHtml) {
  auto r = doctor(false, {"--inject", "nvlink-down"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("INJECTED: doctor --inject nvlink-down"));
  EXPECT_THAT(r.out, HasSubstr("injected nvlink-down"));
  r = doctor(false, {"--inject", "nvlink-down", "--format", "html"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("<li class=\"warn\">INJECTED: doctor --inject nvlink-down"));
  r = doctor(false, {});
  EXPECT_THAT(r.out, Not(HasSubstr("INJECTED")));
}

TEST(InjectCli, PrometheusLabelsEverySeriesInjected) {
  auto r = doctor(true, {"--no-state", "--format", "prometheus", "--inject", "ecc-dbe"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  std::istringstream lines(r.out);
  std::size_t series = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] == '#') continue;
    ++series;
    EXPECT_THAT(line, HasSubstr("injected=\"true\"")) << line;
  }
  EXPECT_GT(series, 20u);
  EXPECT_THAT(r.out, HasSubstr("gpucheck_health_status{check=\"nvidia_ecc\",code=\"GC-ECC-"
                               "UNCORRECTABLE\",action=\"reset_gpu\",severity=\"fail\","
                               "injected=\"true\"} 20\n"));
  EXPECT_THAT(r.out, HasSubstr("gpucheck_run_duration_seconds{command=\"doctor\",injected="));
  r = doctor(true, {"--no-state", "--format", "prometheus"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("injected")));
}

TEST(InjectCli, NfdFileCarriesTheInjectedLabel) {
  auto r = doctor(true, {"--no-state", "--format", "nfd", "--inject", "fm-down"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("gpucheck.injected=true\n"));
  EXPECT_THAT(r.out, HasSubstr("gpucheck.health=fail\n"));
  EXPECT_THAT(r.out, HasSubstr("gpucheck.check.nvswitch_fabric_manager=fail\n"));
  r = doctor(false, {"--format", "nfd"});
  EXPECT_THAT(r.out, Not(HasSubstr("injected")));
}

TEST(InjectCli, TheStateFileKeepsNoInjectedEvent) {
  auto r = doctor(true, {"--state", state(), "--format", "oneline", "--inject", "xid:79"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  // Had the Xid been kept, the next run would fail until --ack.
  r = doctor(true, {"--state", state(), "--format", "oneline"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(state());
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), Not(HasSubstr("GC-XID")));
}

TEST(InjectCli, BadFaultWordsAreUsageErrorsNamingTheAcceptedWords) {
  for (const bool quick : {true, false})
    for (const std::string bad : {"gpu-gone", "xid:", "xid:99999999999", "xid:79,bogus"}) {
      auto r = doctor(quick, {"--no-state", "--inject", bad});
      EXPECT_EQ(r.exit_code, 2) << bad << r.out;
      EXPECT_THAT(r.err, HasSubstr("--inject: '")) << bad;
      EXPECT_THAT(r.err, HasSubstr("xid:N (N from 1 to 999), gpu-lost, nvlink-down, ecc-dbe, "
                                   "row-remap-pending, fm-down"))
          << bad;
      EXPECT_EQ(r.out, "") << bad;
    }
}

}  // namespace

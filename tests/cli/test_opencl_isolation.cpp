// A crashing or hanging ICD is named: the OpenCL probe child fails, each ICD is probed alone,
// the fake ICD is the culprit and pocl is listed as fine; probe still exits 0.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

namespace fs = std::filesystem;

constexpr const char* kPoclIcd = "/etc/OpenCL/vendors/pocl.icd";

// A vendors directory holding fake.icd (naming the fake ICD) and a copy of pocl.icd.
class FakeAndPocl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kPoclIcd)) GTEST_SKIP() << "pocl is not installed";
    std::string tmpl = (fs::temp_directory_path() / "gpucheck-vendors-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    std::ofstream(dir_ + "/fake.icd") << GPUCHECK_FAKE_ICD << "\n";
    fs::copy_file(kPoclIcd, dir_ + "/pocl.icd");
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  nlohmann::json opencl_section(const std::string& fault) {
    // 6 s: pocl alone takes ~1.7 s to enumerate on a loaded 2-core machine, and the hang test
    // waits this long twice (the whole probe, then the per-ICD re-run).
    auto r = run_gpucheck({"probe", "--json", "--probe-timeout", "6"},
                          {{"OCL_ICD_VENDORS", dir_},
                           {"OCL_ICD_FILENAMES", std::nullopt},
                           {"OPENCL_VENDOR_PATH", std::nullopt},
                           {fault, "1"}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto doc = nlohmann::json::parse(r.out);
    for (const auto& b : doc["backends"])
      if (b["name"] == "opencl") return b;
    ADD_FAILURE() << "no opencl section";
    return {};
  }

  void expect_fake_named(const nlohmann::json& s, const std::string& what) {
    SCOPED_TRACE(s.dump(2));
    EXPECT_EQ(s["status"], "failed");
    const auto& iso = s["icd_isolation"];
    EXPECT_EQ(iso["culprits"], nlohmann::json::array({dir_ + "/fake.icd"}));
    EXPECT_EQ(iso["fine"], nlohmann::json::array({dir_ + "/pocl.icd"}));
    for (const auto& e : iso["icds"]) {
      if (e["icd"] == dir_ + "/fake.icd") {
        EXPECT_EQ(e["outcome"], "failed");
        EXPECT_THAT(e["what"].get<std::string>(), HasSubstr(what));
      } else {
        EXPECT_EQ(e["outcome"], "ok");
        EXPECT_GE(e["platforms"].get<int>(), 1);
      }
    }
    EXPECT_THAT(s["reason"].get<std::string>(), HasSubstr("ICD culprit: " + dir_ + "/fake.icd"));
  }

  std::string dir_;
};

}  // namespace

TEST_F(FakeAndPocl, CrashingIcdIsNamedAndPoclIsFine) {
  expect_fake_named(opencl_section("FAKE_ICD_CRASH"), "signal 11");
}

TEST_F(FakeAndPocl, HangingIcdIsNamedAndPoclIsFine) {
  expect_fake_named(opencl_section("FAKE_ICD_HANG"), "timed out");
}

TEST_F(FakeAndPocl, HealthyIcdsNeedNoIsolation) {
  auto s = opencl_section("FAKE_ICD_NOTHING");
  EXPECT_EQ(s["status"], "available") << s.dump(2);
  EXPECT_FALSE(s.contains("icd_isolation"));
}

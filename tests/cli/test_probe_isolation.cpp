// A crashing, hanging or flooding backend costs its own section, never the report.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>

using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;

namespace {

nlohmann::json backend(const nlohmann::json& doc, const std::string& name) {
  for (const auto& b : doc["backends"])
    if (b["name"] == name) return b;
  ADD_FAILURE() << "no backend section " << name;
  return {};
}

}  // namespace

TEST(ProbeIsolation, CrashAndHangAreFailedSectionsAndExitZero) {
  auto start = std::chrono::steady_clock::now();
  // 3 s: the real cpu backend's child (it loads the BLAS) must answer in time on a loaded machine.
  auto r = run_gpucheck({"probe", "--json", "--probe-timeout", "3"},
                        {{"GPUCHECK_TEST_BACKENDS", "crash,hang,weird"}});
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);

  auto crash = backend(doc, "test_crash");
  EXPECT_EQ(crash["status"], "failed");
  EXPECT_THAT(crash["reason"].get<std::string>(), HasSubstr("signal 11"));

  auto hang = backend(doc, "test_hang");
  EXPECT_EQ(hang["status"], "failed");
  EXPECT_THAT(hang["reason"].get<std::string>(), HasSubstr("timed out after 3 s"));

  EXPECT_EQ(backend(doc, "cpu")["status"], "available");
  EXPECT_EQ(backend(doc, "test_weird")["status"], "available");
  EXPECT_EQ(backend(doc, "metal")["status"], "not_built");
  EXPECT_TRUE(doc.contains("cpu"));
  // Children run in parallel: the hang's 3 s timeout bounds the whole probe.
  EXPECT_LT(seconds, 10.0);
}

// Apart from the hang's short timeout: under a sanitizer on a loaded machine, writing 17 MiB
// can itself take longer than 3 s, and the section must fail for its size, not its time.
TEST(ProbeIsolation, AFloodingChildIsAFailedSectionForItsSize) {
  auto r = run_gpucheck({"probe", "--json", "--probe-timeout", "60"},
                        {{"GPUCHECK_TEST_BACKENDS", "flood"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto flood = backend(nlohmann::json::parse(r.out), "test_flood");
  EXPECT_EQ(flood["status"], "failed");
  EXPECT_THAT(flood["reason"].get<std::string>(), HasSubstr("more than"));
}

TEST(ProbeIsolation, WithoutTestVariableNoTestBackendsAppear) {
  auto r = run_gpucheck({"probe", "--json"}, {{"GPUCHECK_TEST_BACKENDS", std::nullopt}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  for (const auto& b : doc["backends"])
    EXPECT_THAT(b["name"].get<std::string>(), ::testing::Not(HasSubstr("test_")));
}

TEST(ProbeIsolation, LogsNeverMixIntoJson) {
  auto r = run_gpucheck({"probe", "--json", "-vv", "--probe-timeout", "1"},
                        {{"GPUCHECK_TEST_BACKENDS", "crash"}});
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_TRUE(nlohmann::json::accept(r.out)) << r.out;
  EXPECT_THAT(r.err, HasSubstr("probe child"));
}

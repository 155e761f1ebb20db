// configs/qualify/opencl.toml passes on this machine's OpenCL (pocl in CI), with JUnit valid
// against the XSD. pocl's kernel cache is the one the OpenCL tests share in the build tree.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace {

using gpucheck::testing::have_program;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(QualifyOpenclCli, OpenclProfilePasses) {
  auto version = run_gpucheck({"--version"});
  if (version.out.find("opencl") == std::string::npos) GTEST_SKIP() << "built without OpenCL";
  // build/src/gpucheck -> build/tests/pocl-cache, as tests/CMakeLists.txt sets for the others.
  const auto cache =
      std::filesystem::path(GPUCHECK_BINARY).parent_path().parent_path() / "tests/pocl-cache";
  std::string junit = write_temp_file("opencl.xml", "");
  // qualify tunes OpenCL's GEMM as bench does: a small budget, a fresh cache.
  const auto xdg = std::filesystem::path(junit).parent_path() / "qualify-xdg-cache";
  std::filesystem::remove_all(xdg);
  auto r = run_gpucheck(
      {"qualify", "--profile", std::string(GPUCHECK_SOURCE_DIR) + "/configs/qualify/opencl.toml",
       "--junit", junit, "--json", "--tune-budget", "1"},
      {{"POCL_CACHE_DIR", cache.string()}, {"XDG_CACHE_HOME", xdg.string()}});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  int gemm_records = 0;
  // Kept in a variable: a range-for over a member of a temporary dangles before C++23.
  const Json doc = Json::parse(r.out);
  for (const auto& rec : doc["results"])
    if (rec["backend"] == "opencl" && rec["op"] == "gemm") {
      EXPECT_EQ(rec["context"].value("tuning", ""), "tuned") << rec.dump();
      ++gemm_records;
    }
  EXPECT_GT(gemm_records, 0) << r.out;
  EXPECT_TRUE(std::filesystem::exists(xdg / "gpucheck"));
  const Json& q = doc["qualify"];
  EXPECT_EQ(q["verdict"], "met");
  for (const auto& v : q["verdicts"])
    if (v["kind"] == "bench") {
      EXPECT_THAT(v["device"].get<std::string>(), HasSubstr("opencl"));
    }
  if (!have_program("xmllint")) GTEST_SKIP() << "xmllint (libxml2-utils) is not installed";
  auto x = run_program("xmllint", {"--noout", "--schema",
                                   std::string(GPUCHECK_FIXTURES_DIR) + "/junit/junit.xsd", junit});
  EXPECT_EQ(x.exit_code, 0) << x.err;
}

}  // namespace

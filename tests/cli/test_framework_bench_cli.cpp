// `gpucheck bench --framework` end to end: the real Debian torch (a CPU build) beside gpucheck's
// own CPU kernels, verified by gpucheck, with its ratio in the JSON and the table; bad input
// (unknown names, a framework or interpreter not there, a hanging interpreter) with its exit code.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR) / "framework_bench";

bool debian_torch() {
  return fs::exists("/usr/lib/python3/dist-packages/torch/version.py") &&
         fs::exists("/usr/bin/python3");
}

// Tiny sizes: a test, not a benchmark.
std::vector<std::string> quick(const std::vector<std::string>& args) {
  std::vector<std::string> out{"bench",    "--device", "cpu",      "--reps", "2",
                               "--warmup", "1",        "--rounds", "1",      "--exp",
                               "4096",     "--gemm",   "48x40x32", "--conv", "2,3,6,6,4,3,3,1,1",
                               "--copy",   "4096"};
  out.insert(out.end(), args.begin(), args.end());
  return out;
}

// The environment of a shell with only the system's python3.
std::map<std::string, std::optional<std::string>> system_python_env() {
  return {{"PATH", "/usr/bin:/bin"},
          {"VIRTUAL_ENV", std::nullopt},
          {"CONDA_PREFIX", std::nullopt},
          {"PYTHONPATH", std::nullopt},
          {"HOME", "/nonexistent-home"}};
}

// One run of the real torch (its import alone takes seconds), read three ways: the records,
// the table of the saved document and the schema.
TEST(FrameworkBenchCli, DebianTorchRunsBesideGpucheckOnTheCpuAndIsVerified) {
  if (!debian_torch()) GTEST_SKIP() << "Debian's python3-torch is not installed";
  // The seed loop's size is fixed (230,400 floats, 1000 calls): the unit test runs it smaller.
  auto args = quick(
      {"--framework", "torch", "--ops", "exp,gemm,conv,copy", "--dtype", "f32,f64", "--json"});
  auto r = run_gpucheck(args, system_python_env());
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json results = Json::parse(r.out)["results"];
  std::size_t own = 0, torch = 0, ratios = 0;
  for (const auto& rec : results) {
    SCOPED_TRACE(rec.dump());
    if (!rec.contains("framework")) {
      ++own;
      continue;
    }
    ++torch;
    EXPECT_EQ(rec["framework"]["name"], "torch");
    EXPECT_EQ(rec["framework"]["interpreter"], "/usr/bin/python3");
    EXPECT_EQ(rec["device"], "cpu");
    EXPECT_THAT(rec["impl"].get<std::string>(), HasSubstr("torch 1."));
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_LE(rec["verification"]["max_rel_error"].get<double>(),
              rec["verification"]["tolerance"].get<double>());
    if (rec.contains("vs_gpucheck")) {
      ++ratios;
      EXPECT_GT(rec["vs_gpucheck"]["ratio"].get<double>(), 0.0);
      EXPECT_NE(rec["vs_gpucheck"]["impl"], rec["impl"]);
    }
  }
  // exp and gemm in f32 and f64, conv in two layouts (gpucheck's CPU conv is f32 only: its f64
  // is unsupported, and so torch's too is asked for but compared with nothing), and the copy.
  EXPECT_GE(own, 7u);
  EXPECT_GE(torch, 7u);
  EXPECT_EQ(ratios, 7u);

  const std::string saved = write_temp_file("framework_bench.json", r.out);
  auto table = run_gpucheck({"report", "show", saved});
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("cpu torch"));
  EXPECT_THAT(table.out, HasSubstr("torch f32 gemm: "));
  EXPECT_THAT(table.out, HasSubstr("gpucheck's openblas"));

  auto schema =
      run_program("python3", {std::string(GPUCHECK_SOURCE_DIR) + "/tests/cli/validate_schema.py",
                              std::string(GPUCHECK_SOURCE_DIR) + "/schema/gpucheck.schema.json",
                              "--", GPUCHECK_BINARY, "report", "show", saved, "--json"});
  if (schema.exit_code != 77) {
    EXPECT_EQ(schema.exit_code, 0) << schema.err;
  }
}

TEST(FrameworkBenchCli, BadNamesAndInterpretersAreUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--framework", "pytorch"}, "unknown framework 'pytorch'"},
      {{"--framework", ","}, "--framework: empty list"},
      {{"--framework", "torch", "--python", "/nonexistent/python3"}, "not an executable file"},
      {{"--python", "/usr/bin/python3"}, "--python: only with --framework"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.says);
    auto r = run_gpucheck(quick(c.args));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
  }
}

TEST(FrameworkBenchCli, ANamedFrameworkThatIsNotInstalledExitsThree) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is absent";
  auto r = run_gpucheck(quick({"--framework", "tensorflow", "--python", "/usr/bin/python3", "--ops",
                               "exp", "--json"}),
                        system_python_env());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot import tensorflow"));
  // gpucheck's own records are still there.
  EXPECT_FALSE(Json::parse(r.out)["results"].empty());
}

TEST(FrameworkBenchCli, AHangingInterpreterIsKilledAndTheRunFails) {
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_gpucheck(
      quick({"--framework", "torch", "--python", (kFixtures / "interpreters" / "hang").string(),
             "--framework-timeout", "1.5", "--ops", "exp", "--dtype", "f32", "--json"}));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 20);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  bool failed = false;
  const Json doc = Json::parse(r.out);  // alive through the loop
  for (const auto& rec : doc["results"])
    if (rec.contains("framework")) {
      failed = true;
      EXPECT_EQ(rec["status"], "failed");
      EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("killed"));
    }
  EXPECT_TRUE(failed);
}

// A TMPDIR that is not there: gpucheck's own records stay, the framework is unavailable and says
// why (it was rc 70 with every record lost).
TEST(FrameworkBenchCli, NoTemporaryDirectoryKeepsTheCpuRecords) {
  auto env = system_python_env();
  env["TMPDIR"] = "/nonexistent/gpucheck-tmp";
  auto r = run_gpucheck(
      quick({"--framework", "torch", "--python", (kFixtures / "interpreters" / "hang").string(),
             "--ops", "exp", "--dtype", "f32", "--json"}),
      env);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("no temporary directory"));
  EXPECT_THAT(r.err, HasSubstr("/nonexistent/gpucheck-tmp"));
  const Json doc = Json::parse(r.out);
  ASSERT_FALSE(doc["results"].empty());
  for (const auto& rec : doc["results"]) EXPECT_FALSE(rec.contains("framework")) << rec.dump();
}

// SIGTERM while the framework's child runs: its job directory (inputs of up to 1 GiB) goes too.
TEST(FrameworkBenchCli, SigtermLeavesNoJobDirectoryBehind) {
  const fs::path tmp =
      fs::path(::testing::TempDir()) / ("gpucheck-fw-sigterm-" + std::to_string(::getpid()));
  fs::remove_all(tmp);
  fs::create_directories(tmp);
  const char* saved = std::getenv("TMPDIR");
  const std::string keep = saved ? saved : "";
  ::setenv("TMPDIR", tmp.c_str(), 1);
  const pid_t pid = gpucheck::testing::spawn_gpucheck(
      quick({"--framework", "torch", "--python", (kFixtures / "interpreters" / "hang").string(),
             "--framework-timeout", "60", "--ops", "exp", "--dtype", "f32", "--json"}),
      "GPUCHECK_TEST_MARKER=fw-sigterm-" + std::to_string(::getpid()), (tmp / "out").string());
  if (saved)
    ::setenv("TMPDIR", keep.c_str(), 1);
  else
    ::unsetenv("TMPDIR");
  ASSERT_GT(pid, 0);
  const auto job_dirs = [&] {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(tmp))
      n += e.path().filename().string().starts_with("gpucheck-framework-");
    return n;
  };
  for (int i = 0; i < 600 && job_dirs() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_EQ(job_dirs(), 1u) << "the framework's child never started";
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(::kill(pid, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 128 + SIGTERM) << status;
  EXPECT_EQ(job_dirs(), 0u);
  fs::remove_all(tmp);
}

}  // namespace

// `gpucheck doctor` asking each framework itself (framework_query), end to end: the real Debian
// python3-torch (a CPU-only build) answers in a child of /usr/bin/python3 and agrees with the
// files' verdict; fake interpreters (tests/fixtures/framework_query) that hang, crash, print
// garbage or claim a GPU the files deny; an environment another user can write, run as root;
// --no-frameworks and --sysroot start no child.
#include "run_gpucheck.h"

#include "../process_gone.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR);
const std::string kNoGpuFacts = (kFixtures / "doctor" / "base_probe.json").string();

Json check_of(const Json& doc, const std::string& id) {
  for (const auto& c : doc.at("checks"))
    if (c.at("id") == id) return c;
  return Json();
}

// The entries the children answered for one environment prefix.
std::vector<Json> entries_of(const Json& doc, const std::string& prefix) {
  std::vector<Json> out;
  for (const auto& e : doc.at("framework_queries").at("entries"))
    if (e.at("prefix") == prefix) out.push_back(e);
  return out;
}

// A Python environment whose interpreter is one of the fake ones, with a CPU-only torch in its
// site-packages (what the files say), in a fresh directory of this test owned by this user.
class FakeEnv : public ::testing::Test {
 protected:
  void make(const std::string& interpreter) {
    // Lower case and digits: a path mixing cases and digits at length is redacted from the
    // environment the checks see, as secret-looking.
    static int made = 0;
    prefix_ = fs::path(::testing::TempDir()) /
              ("gpucheck-fq-" + std::to_string(::getpid()) + "-" + std::to_string(++made));
    fs::remove_all(prefix_);
    fs::create_directories(prefix_ / "bin");
    fs::copy_file(kFixtures / "framework_query" / interpreter, prefix_ / "bin" / "python3");
    fs::permissions(prefix_ / "bin" / "python3", fs::perms(0755));
    const fs::path torch = site() / "torch";
    fs::create_directories(torch);
    std::ofstream(torch / "version.py") << "__version__ = '2.11.0+cpu'\ncuda = None\nhip = None\n";
    std::ofstream(torch / "__init__.py") << "";
    for (fs::path p = prefix_; p != prefix_.parent_path(); p = p.parent_path())
      fs::permissions(p, fs::perms(0755));
    for (const auto& d : fs::recursive_directory_iterator(prefix_))
      if (d.is_directory()) fs::permissions(d.path(), fs::perms(0755));
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(prefix_, ec);
  }
  fs::path site() const { return prefix_ / "lib" / "python3.12" / "site-packages"; }
  bool started() const { return fs::exists(prefix_ / "started"); }
  std::map<std::string, std::optional<std::string>> env() const {
    return {{"PATH", (prefix_ / "bin").string() + ":/usr/bin:/bin"},
            {"VIRTUAL_ENV", std::nullopt},
            {"CONDA_PREFIX", std::nullopt},
            {"PYTHONPATH", std::nullopt},
            {"HOME", "/nonexistent-home"},
            {"GPUCHECK_TEST_SECRET_TOKEN", "do-not-pass"}};
  }
  // doctor with saved facts (no probing), the two checks and the given extra arguments.
  gpucheck::testing::RunResult doctor(std::vector<std::string> extra = {}) const {
    std::vector<std::string> args{"doctor",    "--json", "--facts",
                                  kNoGpuFacts, "--only", "framework_torch,framework_query"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gpucheck(args, env());
  }
  fs::path prefix_;
};

TEST(FrameworkQueryCli, RealDebianTorchAnswersCpuOnlyAndAgrees) {
  const auto probe = run_program("/usr/bin/python3", {"-c", "import torch"});
  if (probe.exit_code != 0)
    GTEST_SKIP() << "/usr/bin/python3 cannot import torch (Debian's python3-torch is not "
                    "installed): "
                 << probe.err;
  auto r = run_gpucheck(
      {"doctor", "--json", "--facts", kNoGpuFacts, "--only", "framework_torch,framework_query"},
      {{"PATH", "/usr/bin:/bin"},
       {"VIRTUAL_ENV", std::nullopt},
       {"CONDA_PREFIX", std::nullopt},
       {"PYTHONPATH", std::nullopt},
       {"HOME", "/nonexistent-home"}});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("status", ""), "pass") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("torch (/usr/bin/python3): reports torch 1."));
  EXPECT_THAT(c.value("finding", ""),
              HasSubstr("no GPU (AssertionError: Torch not compiled with CUDA enabled)"));
  EXPECT_THAT(c.value("finding", ""), HasSubstr("its 64x64 matmul on cpu verified"));
  EXPECT_THAT(c.value("finding", ""), HasSubstr("agrees with framework_torch (no GPU use)"));
  const auto entries = entries_of(doc, "/usr");
  ASSERT_EQ(entries.size(), 1u) << doc["framework_queries"].dump(2);
  const Json& mm = entries[0]["answer"]["matmul"];
  EXPECT_EQ(mm.value("verified", false), true);
  EXPECT_EQ(mm.value("wrong", -1), 0);
  EXPECT_FALSE(mm.contains("result")) << "the numbers are checked, not kept";
  // The files' verdict it agrees with: a CPU-only build.
  EXPECT_THAT(check_of(doc, "framework_torch").value("finding", ""), HasSubstr("a CPU-only build"));
}

TEST_F(FakeEnv, HangingChildIsKilledAtTheBudgetAndDoctorFinishes) {
  make("hang");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = doctor({"--framework-timeout", "2"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(took, 2 + 6.0) << "doctor waits for the budget, not for the child";
  EXPECT_TRUE(started());
  const Json doc = Json::parse(r.out);
  const auto entries = entries_of(doc, prefix_.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("status", ""), "timed_out") << entries[0].dump(2);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("status", ""), "warn") << c.dump(2);
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-QUERY-TIMEOUT");
  EXPECT_THAT(c.value("finding", ""), HasSubstr("timed out after 2 s and was killed"));
  EXPECT_THAT(c.value("fix", ""), HasSubstr("--framework-timeout"));
}

TEST_F(FakeEnv, CrashingChildIsReportedWithItsSignalAndLastWords) {
  make("crash");
  auto r = doctor();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  const auto entries = entries_of(doc, prefix_.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("status", ""), "crashed") << entries[0].dump(2);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("status", ""), "warn") << c.dump(2);
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-QUERY-CRASHED");
  EXPECT_THAT(c.value("finding", ""), HasSubstr("killed by signal 11 (SIGSEGV"));
  EXPECT_THAT(c.value("finding", ""), HasSubstr("Fatal Python error: Segmentation fault"));
}

TEST_F(FakeEnv, GarbageOutputIsNoAnswer) {
  make("garbage");
  auto r = doctor();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  const auto entries = entries_of(doc, prefix_.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("status", ""), "no_answer") << entries[0].dump(2);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-QUERY-CRASHED") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("wrote no JSON answer, only \"Python 3.12.3"));
}

TEST_F(FakeEnv, AnswerThatDisagreesWithTheFilesIsAWarning) {
  make("gpu_answer");
  auto r = doctor({"--fail-on", "warn"});
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  const auto entries = entries_of(doc, prefix_.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("status", ""), "answered") << entries[0].dump(2);
  EXPECT_EQ(entries[0]["answer"]["matmul"].value("verified", false), true);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("status", ""), "warn") << c.dump(2);
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-DISAGREES");
  EXPECT_THAT(c.value("finding", ""),
              HasSubstr("framework_torch says it will not use the GPU, torch itself does"));
}

TEST_F(FakeEnv, ChildGetsOnlyWhatAFrameworkNeedsAndNoStdin) {
  make("garbage");
  // An interpreter that writes down its environment and what its stdin gave.
  std::ofstream(prefix_ / "bin" / "python3", std::ios::trunc)
      << "#!/bin/sh\nd=$(dirname \"$0\")/..\nenv >\"$d/env.txt\"\n"
         "if read -r line; then echo \"stdin:$line\"; else echo stdin:eof; fi >>\"$d/env.txt\"\n";
  auto vars = env();
  vars["CUDA_VISIBLE_DEVICES"] = "0";
  vars["CUDA_LOGIN_TOKEN"] = "do-not-pass-1";  // a framework prefix, but a credential's name
  vars["AWS_SECRET_ACCESS_KEY"] = "do-not-pass-2";
  vars["SSH_AUTH_SOCK"] = "/tmp/agent.sock";
  auto r =
      run_gpucheck({"doctor", "--json", "--facts", kNoGpuFacts, "--only", "framework_query"}, vars);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::ifstream in(prefix_ / "env.txt");
  const std::string seen((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_THAT(seen, HasSubstr("PYTHONDONTWRITEBYTECODE=1"));
  EXPECT_THAT(seen, HasSubstr("XLA_PYTHON_CLIENT_PREALLOCATE=false"));
  EXPECT_THAT(seen, HasSubstr("CUDA_VISIBLE_DEVICES=0"));
  EXPECT_THAT(seen, HasSubstr("PATH=" + (prefix_ / "bin").string()));
  EXPECT_THAT(seen, HasSubstr("stdin:eof"));
  for (const char* hidden : {"do-not-pass", "SSH_AUTH_SOCK", "GPUCHECK_TEST_SECRET_TOKEN"})
    EXPECT_THAT(seen, Not(HasSubstr(hidden))) << seen;
}

TEST_F(FakeEnv, WorldWritableSitePackagesIsNotStartedAsRoot) {
  make("gpu_answer");
  fs::permissions(site(), fs::perms(0777));
  // --uid 0 judges as root where the test does not run as root (it can only add strictness).
  auto r = doctor({"--uid", "0"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(started())
      << "the interpreter ran although another user can write its site-packages";
  const Json doc = Json::parse(r.out);
  const auto entries = entries_of(doc, prefix_.string());
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0].value("status", ""), "refused") << entries[0].dump(2);
  const Json c = check_of(doc, "framework_query");
  EXPECT_EQ(c.value("status", ""), "warn") << c.dump(2);
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-UNSAFE-ENV");
  EXPECT_THAT(c.value("finding", ""), HasSubstr(site().string() + " is writable by every user"));
}

TEST_F(FakeEnv, NoFrameworksAndSysrootStartNoChild) {
  make("gpu_answer");
  auto r = doctor({"--no-frameworks"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(started());
  Json c = check_of(Json::parse(r.out), "framework_query");
  EXPECT_EQ(c.value("status", ""), "skip") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("--no-frameworks"));

  r = doctor({"--sysroot", (kFixtures / "frameworks" / "torch_cpu").string()});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(started());
  c = check_of(Json::parse(r.out), "framework_query");
  EXPECT_EQ(c.value("status", ""), "skip") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("under --sysroot"));
}

// `{}` lacks every field doctor compares: it agrees with nothing.
TEST_F(FakeEnv, AnEmptyAnswerIsNoPass) {
  make("empty_answer");
  auto r = doctor();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json c = check_of(Json::parse(r.out), "framework_query");
  EXPECT_EQ(c.value("status", ""), "warn") << c.dump(2);
  EXPECT_EQ(c.value("code", ""), "GC-FRAMEWORK-QUERY-CRASHED");
  EXPECT_THAT(c.value("finding", ""),
              HasSubstr(prefix_.string() + "/bin/python3): answered without version, gpus, "
                                           "matmul and without an error"));
}

TEST_F(FakeEnv, SecretsInAChildsWordsAreRedactedInEveryFormat) {
  make("secret_crash");
  for (const char* format : {"--json", "--format=table", "--format=markdown"}) {
    std::vector<std::string> args{"doctor",    format,   "--facts",
                                  kNoGpuFacts, "--only", "framework_torch,framework_query"};
    auto r = run_gpucheck(args, env());
    ASSERT_EQ(r.exit_code, 0) << format << r.out << r.err;
    EXPECT_THAT(r.out, HasSubstr("pypi.example.com")) << format;
    for (const char* secret : {"hunter2pw", "alice", "ghp_abcdef"})
      EXPECT_THAT(r.out + r.err, Not(HasSubstr(secret))) << format;
  }
}

TEST_F(FakeEnv, AChildThatClosesItsOutputAndSleepsEndsAtTheBudgetWithItsGrandchild) {
  make("sleeper");
  const auto t0 = std::chrono::steady_clock::now();
  auto r = doctor({"--framework-timeout", "2"});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(took, 2 + 8.0) << "doctor waits for the budget, not 60 s more";
  const Json c = check_of(Json::parse(r.out), "framework_query");
  EXPECT_THAT(c.value("finding", ""), HasSubstr("timed out after 2 s and was killed"));
  EXPECT_THAT(c.value("finding", ""), Not(HasSubstr("did not end after SIGKILL")));
  int child = 0, grandchild = 0;
  std::ifstream(prefix_ / "pids") >> child >> grandchild;
  ASSERT_GT(grandchild, 0);
  gpucheck::testing::processes_gone(child, grandchild);
  EXPECT_TRUE(gpucheck::testing::process_gone(child));
  EXPECT_TRUE(gpucheck::testing::process_gone(grandchild)) << "the grandchild outlived doctor";
}

// std::regex recursed once a character over the spaces after the key, and the stack ran out.
TEST_F(FakeEnv, APyvenvCfgWithALongRunOfSpacesIsReadNotACrash) {
  make("gpu_answer");
  std::ofstream(prefix_ / "pyvenv.cfg")
      << "home = /usr/bin\ninclude-system-site-packages" << std::string(65000, ' ') << "= false\n";
  auto r = doctor({"--no-frameworks"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_FALSE(check_of(Json::parse(r.out), "framework_torch").is_null());
}

TEST(FrameworkQueryCli, FrameworkTimeoutIsReadAsADuration) {
  auto r = run_gpucheck({"doctor", "--framework-timeout", "0", "--list"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--framework-timeout"));
  r = run_gpucheck({"doctor", "--framework-timeout", "1m", "--list"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace

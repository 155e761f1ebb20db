// Asking the frameworks themselves, in parts: the matmul's expected numbers, what a child is
// told (environment), which paths another user can write (the root guard), what a child's end
// becomes (answered, timed out, crashed, no answer) and the plan: which environments get a child.
#include "doctor/framework_query.h"

#include "scratch_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>

namespace gpucheck::doctor {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using Json = nlohmann::json;

TEST(FrameworkQuery, ExpectedMatmulIsTheProductOfTheScriptsInputs) {
  const auto c = expected_query_matmul();
  const int n = kQueryMatmulN;
  ASSERT_EQ(c.size(), static_cast<std::size_t>(n * n));
  // Row 0, column 0 by hand: a[0][k] = ((5k) % 7 - 3) / 4, b[k][0] = ((2k) % 5 - 2) / 2.
  double c00 = 0;
  for (int k = 0; k < n; ++k) c00 += ((5 * k) % 7 - 3) / 4.0 * (((2 * k) % 5 - 2) / 2.0);
  EXPECT_EQ(c[0], c00);
  // Not a degenerate matrix: its entries differ, and every one is a multiple of 1/8 (exact in
  // f32 whatever precision the framework picks).
  std::size_t distinct = 0;
  for (std::size_t i = 1; i < c.size(); ++i) distinct += c[i] != c[0];
  EXPECT_GT(distinct, c.size() / 2);
  for (double v : c) EXPECT_EQ(v * 8, std::round(v * 8));
  // The script carries the same formula and size.
  const std::string script = framework_query_script();
  EXPECT_THAT(script, HasSubstr("N = 64\n"));
  EXPECT_THAT(script, HasSubstr("((i * 3 + k * 5) % 7 - 3) / 4.0"));
  EXPECT_THAT(script, HasSubstr("((k * 2 + j * 7) % 5 - 2) / 2.0"));
}

TEST(FrameworkQuery, ChildEnvironmentKeepsWhatFrameworksReadAndNoCredential) {
  const EnvMap env{{"PATH", "/usr/bin"},
                   {"HOME", "/home/a"},
                   {"LD_LIBRARY_PATH", "/opt/cuda/lib64"},
                   {"CUDA_VISIBLE_DEVICES", "1"},
                   {"PYTHONPATH", "/src"},
                   {"KERAS_BACKEND", "jax"},
                   {"XLA_PYTHON_CLIENT_PREALLOCATE", "true"},
                   {"LC_ALL", "C.UTF-8"},
                   {"CUDA_API_TOKEN", "secret"},
                   {"AWS_SECRET_ACCESS_KEY", "secret"},
                   {"GITHUB_TOKEN", "secret"},
                   {"SSH_AUTH_SOCK", "/run/agent"},
                   {"DISPLAY", ":0"}};
  const auto child = framework_child_environment(env);
  for (const char* kept : {"PATH", "HOME", "LD_LIBRARY_PATH", "CUDA_VISIBLE_DEVICES", "PYTHONPATH",
                           "KERAS_BACKEND", "LC_ALL"})
    EXPECT_EQ(child.at(kept), env.at(kept)) << kept;
  for (const char* dropped :
       {"CUDA_API_TOKEN", "AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK", "DISPLAY"})
    EXPECT_EQ(child.count(dropped), 0u) << dropped;
  EXPECT_EQ(child.at("PYTHONDONTWRITEBYTECODE"), "1");
  EXPECT_EQ(child.at("XLA_PYTHON_CLIENT_PREALLOCATE"), "false");
  EXPECT_EQ(child.at("TF_FORCE_GPU_ALLOW_GROWTH"), "true");
}

class WritableByOthers : public testing::ScratchRoot {};

TEST_F(WritableByOthers, NamesWorldAndGroupWritablePathsAndSparesStickyParents) {
  if (::geteuid() != 0) GTEST_SKIP() << "judged for root: files a test user owns all count";
  // root_ sits under the temporary directory: sticky and world-writable, which is no reason.
  const fs::path venv = root_ / "venv";
  const fs::path site = venv / "lib" / "python3.12" / "site-packages";
  fs::create_directories(site);
  for (fs::path p = site; p != root_.parent_path(); p = p.parent_path())
    fs::permissions(p, fs::perms(0755));
  bool warn = true;
  EXPECT_TRUE(writable_by_others({site.string(), venv.string()}, &warn).empty());
  EXPECT_FALSE(warn);

  fs::permissions(site, fs::perms(0777));
  auto reasons = writable_by_others({venv.string(), site.string()}, &warn);
  ASSERT_EQ(reasons.size(), 1u) << ::testing::PrintToString(reasons);
  EXPECT_EQ(reasons[0], site.string() + " is writable by every user");
  EXPECT_TRUE(warn);

  // Sticky does not protect the directory itself: anyone may add a .pth file to it.
  fs::permissions(site, fs::perms(01777));
  EXPECT_EQ(writable_by_others({site.string()}, &warn).size(), 1u);
  // Above a checked path, a writable directory lets others rename what it holds.
  fs::permissions(site, fs::perms(0755));
  fs::permissions(venv / "lib", fs::perms(0775));
  ASSERT_EQ(::chown((venv / "lib").c_str(), 0, 100), 0);
  reasons = writable_by_others({site.string()}, &warn);
  ASSERT_EQ(reasons.size(), 1u) << ::testing::PrintToString(reasons);
  EXPECT_EQ(reasons[0], (venv / "lib").string() + " is writable by group 100");
  // Owned by another user: a reason, not a warning of its own (a user's own venv).
  fs::permissions(venv / "lib", fs::perms(0755));
  ASSERT_EQ(::chown((venv / "lib").c_str(), 1000, 0), 0);
  reasons = writable_by_others({site.string()}, &warn);
  ASSERT_EQ(reasons.size(), 1u);
  EXPECT_EQ(reasons[0], (venv / "lib").string() + " is owned by uid 1000");
  EXPECT_FALSE(warn);
  // A link is judged where it points and where it lies.
  fs::create_directory_symlink(site, root_ / "link");
  ASSERT_EQ(::chown((venv / "lib").c_str(), 0, 0), 0);
  fs::permissions(root_, fs::perms(0777));  // the link's own directory, not sticky
  reasons = writable_by_others({(root_ / "link").string()}, &warn);
  EXPECT_THAT(::testing::PrintToString(reasons),
              HasSubstr(root_.string() + " is writable by every user"));
}

FrameworkQuery query(std::string framework = "torch") {
  FrameworkQuery q;
  q.framework = std::move(framework);
  q.prefix = "/opt/venv";
  q.origin = "PATH /opt/venv/bin/python3";
  q.python = "/opt/venv/bin/python3";
  return q;
}

ChildResult exited(std::string out, int code = 0) {
  ChildResult r;
  r.end = ChildResult::End::kExited;
  r.exit_code = code;
  r.out = std::move(out);
  r.seconds = 1.5;
  return r;
}

std::string answer_line(std::vector<double> numbers) {
  Json a = {{"framework", "torch"},
            {"version", "2.11.0+cu130"},
            {"gpus", Json::array({{{"name", "NVIDIA H100"}, {"cc", "9.0"}}})},
            {"no_gpu_reason", "line one\nline two"},
            {"matmul", {{"device", "cuda:0"}, {"on_gpu", true}, {"n", 64}, {"result", numbers}}}};
  return "noise a library printed\n" + a.dump() + "\n";
}

TEST(FrameworkQueryEntry, ChecksTheNumbersAndKeepsNoneOfThem) {
  auto numbers = expected_query_matmul();
  Json e = framework_query_entry(query(), exited(answer_line(numbers)), 30);
  EXPECT_EQ(e["status"], "answered");
  EXPECT_EQ(e["answer"]["matmul"]["verified"], true);
  EXPECT_EQ(e["answer"]["matmul"]["wrong"], 0);
  EXPECT_FALSE(e["answer"]["matmul"].contains("result"));
  EXPECT_EQ(e["answer"]["no_gpu_reason"], "line one / line two") << "one line a string";

  numbers[5] += 0.5;
  numbers[77] = std::nan("");
  e = framework_query_entry(query(), exited(answer_line(numbers)), 30);
  EXPECT_EQ(e["answer"]["matmul"]["verified"], false);
  EXPECT_EQ(e["answer"]["matmul"]["wrong"], 2);

  numbers.resize(10);
  e = framework_query_entry(query(), exited(answer_line(numbers)), 30);
  EXPECT_EQ(e["answer"]["matmul"]["verified"], false);
  EXPECT_THAT(e["answer"]["matmul"].value("problem", ""), HasSubstr("10 numbers, not 4096"));
}

TEST(FrameworkQueryEntry, EachEndOfAChildHasItsStatus) {
  ChildResult hung;
  hung.end = ChildResult::End::kTimedOut;
  hung.err = "Traceback\n  loading\n";
  Json e = framework_query_entry(query(), hung, 30);
  EXPECT_EQ(e["status"], "timed_out");
  EXPECT_THAT(e.value("reason", ""), HasSubstr("timed out after 30 s"));
  EXPECT_EQ(e["stderr_tail"], "Traceback /   loading");

  ChildResult crashed;
  crashed.end = ChildResult::End::kSignaled;
  crashed.signal = 11;
  e = framework_query_entry(query(), crashed, 30);
  EXPECT_EQ(e["status"], "crashed");
  EXPECT_THAT(e.value("reason", ""), HasSubstr("SIGSEGV"));

  e = framework_query_entry(query(), exited("{not json\n", 1), 30);
  EXPECT_EQ(e["status"], "no_answer");
  EXPECT_THAT(e.value("reason", ""), HasSubstr("exited with status 1"));
  EXPECT_THAT(e.value("reason", ""), HasSubstr("{not json"));

  FrameworkQuery refused = query();
  refused.refused = "not started as root: ...";
  refused.refused_status = CheckStatus::kWarn;
  e = framework_query_entry(refused, ChildResult{}, 30);
  EXPECT_EQ(e["status"], "refused");
  EXPECT_EQ(e["unsafe"], true);

  FrameworkQuery none = query();
  none.python.clear();
  e = framework_query_entry(none, ChildResult{}, 30);
  EXPECT_EQ(e["status"], "no_interpreter");
}

class FrameworkQueryPlan : public testing::ScratchRoot {
 protected:
  SystemView view() const {
    SystemView v;
    v.root = root_;
    v.env = {{"PATH", "/opt/venv/bin:/usr/bin:/bin"}, {"HOME", "/home/nobody"}};
    return v;
  }
};

TEST_F(FrameworkQueryPlan, NoFrameworkMeansNoChildAndNoWait) {
  write("usr/lib/python3/dist-packages/numpy/__init__.py", "");
  write("opt/venv/lib/python3.12/site-packages/requests/__init__.py", "");
  write("opt/venv/bin/python3", "#!/bin/sh\n");
  const auto plan = plan_framework_queries(view(), false);
  EXPECT_TRUE(plan.empty());
  const auto t0 = std::chrono::steady_clock::now();
  const Json section = run_framework_queries(plan, {}, 30);
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 0.5);
  EXPECT_EQ(section["ran"], true);
  EXPECT_TRUE(section["entries"].empty());
}

TEST_F(FrameworkQueryPlan, OneChildPerFrameworkFoundWithTheEnvironmentsInterpreter) {
  write("opt/venv/lib/python3.12/site-packages/torch/version.py", "__version__ = '2.11.0+cpu'\n");
  write("opt/venv/lib/python3.12/site-packages/jax/version.py", "_version = '0.7.2'\n");
  write("opt/venv/lib/python3.12/site-packages/jax-0.7.2.dist-info/METADATA",
        "Name: jax\nVersion: 0.7.2\n");
  write("opt/venv/bin/python3", "#!/bin/sh\n");
  fs::permissions(root_ / "opt/venv/bin/python3", fs::perms(0755));
  const auto plan = plan_framework_queries(view(), false);
  ASSERT_EQ(plan.size(), 2u);
  EXPECT_EQ(plan[0].framework, "torch");
  EXPECT_EQ(plan[1].framework, "jax");
  for (const auto& q : plan) {
    EXPECT_EQ(q.prefix, "/opt/venv");
    EXPECT_EQ(q.python, "/opt/venv/bin/python3");
    EXPECT_TRUE(q.refused.empty());
  }
  // As root: a standard library moved by PYTHONHOME into a directory everyone can write is a
  // reason not to start it.
  fs::create_directories(root_ / "pyhome");
  fs::permissions(root_ / "pyhome", fs::perms(0777));
  SystemView v = view();
  v.env["PYTHONHOME"] = "/pyhome";  // a path of the view, under its root
  const auto as_root = plan_framework_queries(v, true);
  ASSERT_EQ(as_root.size(), 2u);
  EXPECT_EQ(as_root[0].refused_status, CheckStatus::kWarn);
  EXPECT_THAT(as_root[0].refused,
              HasSubstr((root_ / "pyhome").string() + " is writable by every user"));
  // No interpreter that may be run: planned, to be reported, never started.
  fs::permissions(root_ / "opt/venv/bin/python3", fs::perms(0644));
  EXPECT_EQ(plan_framework_queries(view(), false).at(0).python, "");
}

}  // namespace
}  // namespace gpucheck::doctor

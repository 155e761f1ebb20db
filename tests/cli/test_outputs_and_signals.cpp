// Nothing half-written. -o is written complete or not at all (a usage error or a
// signal leaves the previous file), write errors on stdout are exit 2 with the reason, and
// SIGINT/SIGTERM/SIGHUP stop the bench child too and exit 128 + the signal.
#include "run_gpucheck.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::spawn_gpucheck;
using gpucheck::testing::write_small_document;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::size_t files_in(const fs::path& dir) {
  std::size_t n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

TEST(Outputs, AUsageErrorLeavesThePreviousOutput) {
  const std::string good = write_temp_file("keep/good.json", "previous document");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--exp", "0", "-o", good});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(slurp(good), "previous document");
  EXPECT_EQ(files_in(fs::path(good).parent_path()), 1u);
}

TEST(Outputs, WriteFailuresSayWhy) {
  auto r =
      run_gpucheck({"bench", "--device", "cpu", "--exp", "1024", "-o", "/nonexistent-dir/x.json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot write '/nonexistent-dir/x.json' (directory "
                               "'/nonexistent-dir'): No such file or directory"));
  const std::string dir = fs::path(write_temp_file("adir/x", "")).parent_path();
  // A valid document, so the refusal is the output's, not the schema check's.
  r = run_gpucheck({"report", "show", write_small_document(), "-o", dir});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("Is a directory"));
}

// A run that completes (exit 0 or 1) replaces the file it names whole, even with nothing to
// print: a healthy doctor --quick's oneline view is empty, and the old FAIL line must not stay.
TEST(Outputs, ACompletedRunReplacesTheFileEvenWhenItsViewIsEmpty) {
  const std::string file = write_temp_file("healthy/o2.txt", "FAIL stale content\n");
  const std::string root = fs::path(write_temp_file("healthy/root/.keep", "")).parent_path();
  const std::string facts = std::string(GPUCHECK_FIXTURES_DIR) + "/doctor/base_probe.json";
  auto r = run_gpucheck({"doctor", "--quick", "--facts", facts, "--sysroot", root, "--no-state",
                         "--format", "oneline", "-o", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(file), "");
  EXPECT_EQ(r.out, "");  // silence on stdout when healthy, as node-problem-detector expects
  EXPECT_THAT(r.err, HasSubstr("wrote " + file));
}

// -o's extension picks the format unless --format (or --json) says; an unknown extension keeps
// the default; a known one that contradicts --format is exit 2, the old file kept.
TEST(Outputs, TheFileNamesExtensionPicksTheFormat) {
  const std::string doc = write_small_document("formats/doc.json");
  const std::string dir = fs::path(doc).parent_path();
  for (const auto& [name, starts] :
       std::vector<std::pair<std::string, std::string>>{{"x.json", "{"},
                                                        {"x.HTML", "<!DOCTYPE html>"},
                                                        {"x.csv", "device,"},
                                                        {"x.md", "- **gpucheck bench"},
                                                        {"x.prom", "#"}}) {
    auto r = run_gpucheck({"report", "show", doc, "-o", dir + "/" + name});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(slurp(dir + "/" + name).rfind(starts, 0), 0u) << name << ":\n"
                                                            << slurp(dir + "/" + name);
  }
  EXPECT_EQ(nlohmann::json::parse(slurp(dir + "/x.json")).at("command"), "bench");
  // The DaemonSet's temporary name: --format decides.
  auto r = run_gpucheck({"report", "show", doc, "-o", dir + "/out.42.tmp", "--format", "csv"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(slurp(dir + "/out.42.tmp"), slurp(dir + "/x.csv"));
  // No known extension, no --format: the table, as before.
  r = run_gpucheck({"report", "show", doc, "-o", dir + "/shown.txt"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(slurp(dir + "/shown.txt"), HasSubstr("bench"));
  EXPECT_NE(slurp(dir + "/shown.txt").rfind("{", 0), 0u);
  // A contradiction is a usage error that leaves the old file.
  const std::string kept = write_temp_file("formats/kept.json", "previous");
  for (const auto& flag :
       std::vector<std::vector<std::string>>{{"--format", "table"}, {"--format", "html"}}) {
    std::vector<std::string> args{"report", "show", doc, "-o", kept};
    args.insert(args.end(), flag.begin(), flag.end());
    r = run_gpucheck(args);
    EXPECT_EQ(r.exit_code, 2) << flag[1];
    EXPECT_THAT(r.err, HasSubstr("is named for json but --format asks for " + flag[1]));
  }
  r = run_gpucheck({"report", "show", doc, "-o", dir + "/y.html", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(slurp(kept), "previous");
}

// bench -o x.json writes JSON (it wrote the text table), and the run's closing line and where
// the document went are still said, on stderr.
TEST(Outputs, BenchToAJsonFileWritesJsonAndSaysWhatItWrote) {
  const std::string file = write_temp_file("bench/oops.json", "");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--exp", "1024", "--reps", "1",
                         "--warmup", "0", "--rounds", "1", "-o", file});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(slurp(file));
  EXPECT_EQ(doc.at("command"), "bench");
  EXPECT_THAT(r.err, ::testing::ContainsRegex("bench: [0-9]+ records: [0-9]+ ok"));
  EXPECT_THAT(r.err, HasSubstr("wrote " + file + "\n"));
  EXPECT_EQ(r.out, "");
  auto shown = run_gpucheck({"report", "show", file});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  // --quiet: errors only.
  r = run_gpucheck({"report", "show", file, "-o", file + ".md", "--quiet"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
}

// report show of a file that is not JSON says so in words, without nlohmann's exception text.
TEST(Outputs, ReportShowOfATextFileSaysItIsNotJson) {
  const std::string text = write_temp_file("text/oops.json", "bench: 34 records: 34 ok\n");
  auto r = run_gpucheck({"report", "show", text});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("not JSON: line 1, column 1"));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("json.exception")));
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("parse_error")));
}

// Runs gpucheck through sh so stdout can be redirected or closed.
int shell_status(const std::string& script, std::string* err) {
  const std::string err_file = write_temp_file("shell.err", "");
  const std::string cmd = script + " 2>" + err_file;
  int status = std::system(cmd.c_str());
  *err = slurp(err_file);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(Outputs, StdoutWriteErrorsAreExit2WithTheReason) {
  std::string err;
  const std::string bin = GPUCHECK_BINARY;
  EXPECT_EQ(shell_status(bin + " doctor --list >/dev/full", &err), 2);
  EXPECT_THAT(err, HasSubstr("cannot write to stdout: No space left on device"));
  EXPECT_EQ(shell_status(bin + " probe --json --probe-timeout 20 >/dev/full", &err), 2);
  EXPECT_THAT(err, HasSubstr("No space left on device"));
  EXPECT_EQ(shell_status(bin + " doctor --list >&-", &err), 2);
  EXPECT_THAT(err, HasSubstr("cannot write to stdout: it is closed"));
}

// Child processes of gpucheck that carry `marker` in their environment.
std::vector<pid_t> processes_with(const std::string& marker) {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::string env = slurp(e.path() / "environ");
    if (env.find(marker) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

class Signals : public ::testing::TestWithParam<int> {};

TEST_P(Signals, StopTheChildKeepThePreviousOutputAndExit128PlusTheSignal) {
  const int sig = GetParam();
  const std::string out = write_temp_file("signal/out.json", "previous document");
  const std::string marker =
      "GPUCHECK_TEST_MARKER=signal" + std::to_string(sig) + "-" + std::to_string(::getpid());
  const pid_t pid = spawn_gpucheck(
      {"bench", "--device", "cpu", "--ops", "gemm", "--dtype", "f32", "--gemm", "512", "--min-time",
       "60", "--max-time", "60", "--rounds", "1", "--threads", "1", "-o", out},
      marker);
  ASSERT_GT(pid, 0);
  // Wait until the bench child runs (it inherits the marker), then signal the parent only.
  bool child_running = false;
  for (int i = 0; i < 300 && !child_running; ++i) {
    std::this_thread::sleep_for(100ms);
    child_running = processes_with(marker).size() >= 2;
  }
  ASSERT_TRUE(child_running) << "the bench child never started";
  std::this_thread::sleep_for(500ms);
  const auto t0 = std::chrono::steady_clock::now();
  ASSERT_EQ(::kill(pid, sig), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 128 + sig);
  EXPECT_EQ(slurp(out), "previous document");
  EXPECT_EQ(files_in(fs::path(out).parent_path()), 1u);
  // The child is gone too (reaped by init once killed; give it a moment).
  std::vector<pid_t> left;
  for (int i = 0; i < 50; ++i) {
    left = processes_with(marker);
    if (left.empty()) break;
    std::this_thread::sleep_for(100ms);
  }
  EXPECT_TRUE(left.empty()) << left.size() << " process(es) of the run survived";
}

INSTANTIATE_TEST_SUITE_P(Stop, Signals, ::testing::Values(SIGINT, SIGTERM, SIGHUP),
                         [](const auto& info) { return std::string(sigabbrev_np(info.param)); });

}  // namespace

// Hostile inputs end to end: documents whose hostnames and device names carry terminal escapes
// and forged lines through `report show/compare/fleet`, `report fleet --details`, a stress child
// stopped alone (FAIL, not PASS), the parent reaping its child when stopped, and an .icd FIFO.
#include "../fixtures/fleet/make_fleet.h"
#include "run_gpucheck.h"
#include "stress_cli_util.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::spawn_gpucheck;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using namespace std::chrono_literals;

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// A fresh directory for one test, removed at its end.
class HostileViewsCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("gpucheck_hostile_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const Json& doc) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << doc.dump();
    return p.string();
  }
  fs::path dir_;
};

// Bytes a terminal acts on: C0 but the line feed, DEL, C1 (C2 80-9F), bidi overrides (E2 80 AA-AE).
bool has_raw_control(const std::string& s) {
  for (std::size_t i = 0; i < s.size(); ++i) {
    const auto c = static_cast<unsigned char>(s[i]);
    const auto n = i + 1 < s.size() ? static_cast<unsigned char>(s[i + 1]) : 0;
    const auto t = i + 2 < s.size() ? static_cast<unsigned char>(s[i + 2]) : 0;
    if ((c < 0x20 && c != '\n') || c == 0x7F || (c == 0xC2 && n >= 0x80 && n <= 0x9F) ||
        (c == 0xE2 && n == 0x80 && t >= 0xAA && t <= 0xAE))
      return true;
  }
  return false;
}

bool has_line_starting(const std::string& out, const std::string& text) {
  std::istringstream lines(out);
  for (std::string l; std::getline(lines, l);)
    if (l.starts_with(text)) return true;
  return false;
}

Json hostile_bench(const std::string& host, const std::string& device_name, double factor) {
  Json doc = gpucheck::testing::make_fleet(
      1, [=](int, const std::string&, std::size_t) { return factor; })[0];
  doc["host"]["hostname"] = host;
  for (auto& r : doc["results"]) r["device_name"] = device_name;
  return doc;
}

TEST_F(HostileViewsCli, ReportViewsEscapeControlCharactersOfLoadedDocuments) {
  const std::string a =
      write("a.json", hostile_bench("evil\x1b[2J\x1b]0;pwned\x07", "GPU\x1b[31m\xC2\x9B", 1.0));
  const std::string b =
      write("b.json", hostile_bench("x\nfleet: 0 outliers, 99 nodes", "GPU\xE2\x80\xAEzz|p", 0.99));
  const std::vector<std::vector<std::string>> commands{
      {"report", "show", a}, {"report", "compare", a, b}, {"report", "fleet", a, b}};
  for (const auto& command : commands) {
    for (const char* format : {"table", "markdown"}) {
      auto args = command;
      args.insert(args.end(), {"--format", format, "--details"});
      SCOPED_TRACE(args[1] + " " + format);
      auto r = run_gpucheck(args, {{"COLUMNS", "200"}});
      ASSERT_LE(r.exit_code, 1) << r.err;  // compare: exit 1 is a regression, not an error
      EXPECT_FALSE(has_raw_control(r.out)) << r.out;
      EXPECT_FALSE(has_line_starting(r.out, "fleet: 0 outliers, 99 nodes")) << r.out;
    }
  }
  auto r = run_gpucheck({"report", "show", a, "--format", "table"});
  EXPECT_THAT(r.out, HasSubstr("evil\\x1b[2J\\x1b]0;pwned\\x07"));
}

// The closing line offers --details, and --details is accepted: it adds the groups.
TEST_F(HostileViewsCli, ReportFleetAcceptsTheDetailsItOffers) {
  const std::string a = write("a.json", hostile_bench("node1", "GPU", 1.0));
  const std::string b = write("b.json", hostile_bench("node2", "GPU", 1.0));
  auto plain = run_gpucheck({"report", "fleet", a, b});
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_THAT(plain.out, HasSubstr("--details"));
  EXPECT_THAT(plain.out, Not(HasSubstr("fleet groups")));
  auto details = run_gpucheck({"report", "fleet", a, b, "--details"});
  ASSERT_EQ(details.exit_code, 0) << details.err;
  EXPECT_THAT(details.out, HasSubstr("fleet groups"));
  EXPECT_THAT(details.out, Not(HasSubstr(": --details")));
}

// Processes that carry `marker` in their environment and `arg` in their command line.
std::vector<pid_t> processes_with(const std::string& marker, const std::string& arg = "") {
  std::vector<pid_t> out;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (slurp(e.path() / "environ").find(marker) == std::string::npos) continue;
    std::string cmdline = slurp(e.path() / "cmdline");
    if (!arg.empty() && cmdline.find(arg) == std::string::npos) continue;
    out.push_back(std::stoi(name));
  }
  return out;
}

// Waits up to 30 s for a process with the marker (and arg) to appear; -1 when none did.
pid_t wait_for_process(const std::string& marker, const std::string& arg) {
  for (int i = 0; i < 300; ++i) {
    auto found = processes_with(marker, arg);
    if (!found.empty()) return found.front();
    std::this_thread::sleep_for(100ms);
  }
  return -1;
}

// Someone sends SIGTERM to the stress child alone (the OOM killer's cousin, an operator's
// kill of the wrong pid): the run was cut short while gpucheck was not stopped, so it FAILs
// and names the tests that never ran, instead of PASS with exit 0.
TEST_F(HostileViewsCli, AStressChildStoppedAloneFailsNamingTheTestsThatDidNotRun) {
  const std::string marker = "GPUCHECK_TEST_MARKER=alone-" + std::to_string(::getpid());
  const std::string out = (dir_ / "stress.json").string();
  const pid_t pid = spawn_gpucheck(
      gpucheck::testing::stress_quick(
          {"stress", "--device", "cpu", "--tests", "gemm,memory,copy", "--duration", "60s"}, 2),
      marker, out);
  ASSERT_GT(pid, 0);
  const pid_t child = wait_for_process(marker, std::string("__child\0stress", 14));
  if (child < 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, nullptr, 0);
    FAIL() << "the stress child never started";
  }
  std::this_thread::sleep_for(1500ms);  // into its GEMM test
  ASSERT_EQ(::kill(child, SIGTERM), 0);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  const Json doc = Json::parse(slurp(out));
  EXPECT_EQ(doc["stress"]["verdict"], "fail");
  EXPECT_FALSE(doc["stress"].contains("stopped_by"));  // gpucheck itself was not stopped
  const Json& cpu = gpucheck::testing::stress_device(doc, "cpu");
  EXPECT_EQ(cpu["verdict"], "fail");
  EXPECT_EQ(cpu["stopped_by"], "SIGTERM");
  std::string reasons;
  for (const auto& r : cpu["reasons"]) reasons += r.get<std::string>() + "\n";
  EXPECT_THAT(reasons, HasSubstr("started: the stress child was stopped by SIGTERM while gpucheck "
                                 "was not"));
  EXPECT_THAT(reasons, HasSubstr("memory, copy did not run"));
}

// Stopped by SIGTERM, gpucheck reaps its killed child before it exits: under an init that does
// not reap (a container's PID 1), a child left to it would stay a zombie. The test stands in for
// that init as the child subreaper: anything gpucheck leaves behind becomes the test's child.
TEST_F(HostileViewsCli, StoppedBySigtermGpucheckReapsItsChildBeforeExiting) {
  ASSERT_EQ(::prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
  const std::string marker = "GPUCHECK_TEST_MARKER=reap-" + std::to_string(::getpid());
  const pid_t pid = spawn_gpucheck(
      {"bench", "--device", "cpu", "--ops", "gemm", "--dtype", "f32", "--gemm", "512", "--min-time",
       "60", "--max-time", "60", "--rounds", "1", "--threads", "1"},
      marker, (dir_ / "bench.out").string());
  ASSERT_GT(pid, 0);
  const bool child_running = wait_for_process(marker, std::string("__child\0bench", 13)) > 0;
  if (child_running) {
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(::kill(pid, SIGTERM), 0);
  } else {
    ::kill(pid, SIGKILL);
  }
  int status = 0;
  EXPECT_EQ(::waitpid(pid, &status, 0), pid);
  // Right after gpucheck's exit: no child of it was handed to us, dead or alive.
  const pid_t left = ::waitpid(-1, nullptr, WNOHANG);
  const int left_errno = errno;
  ::prctl(PR_SET_CHILD_SUBREAPER, 0);
  for (int i = 0; i < 50 && ::waitpid(-1, nullptr, WNOHANG) >= 0; ++i)  // tidy up after a failure
    std::this_thread::sleep_for(100ms);
  ASSERT_TRUE(child_running) << "the bench child never started";
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 143);
  EXPECT_EQ(left, -1) << "gpucheck exited before its child was gone (pid " << left << ")";
  EXPECT_EQ(left_errno, ECHILD);
}

constexpr const char* kPoclIcd = "/etc/OpenCL/vendors/pocl.icd";

// A vendors directory holding pocl's .icd and a FIFO named evil.icd: ocl-icd's plain fopen of
// the FIFO would wait for a writer for ever. The probe finishes, enumerates pocl, and names it.
TEST_F(HostileViewsCli, AnIcdFifoIsNamedAndTheLoaderNeverOpensIt) {
  if (!fs::exists(kPoclIcd)) GTEST_SKIP() << "pocl is not installed";
  const std::string vendors = (dir_ / "vendors").string();
  fs::create_directories(vendors);
  fs::copy_file(kPoclIcd, vendors + "/pocl.icd");
  ASSERT_EQ(::mkfifo((vendors + "/evil.icd").c_str(), 0600), 0);
  const std::map<std::string, std::optional<std::string>> env{{"OCL_ICD_VENDORS", vendors},
                                                              {"OCL_ICD_FILENAMES", std::nullopt}};
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_gpucheck({"probe", "--json", "--probe-timeout", "12"}, env);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  Json opencl;
  for (const auto& b : doc["backends"])
    if (b["name"] == "opencl") opencl = b;
  if (opencl.value("status", "") == "not_built") GTEST_SKIP() << "no OpenCL backend";
  EXPECT_EQ(opencl["status"], "available") << opencl.value("reason", "");
  EXPECT_LT(wall, 12.0);
  bool named = false;
  for (const auto& f : opencl["icd_files"])
    if (f.value("path", "") == vendors + "/evil.icd") {
      named = true;
      EXPECT_THAT(f.value("error", ""), HasSubstr("it is a FIFO, not a regular file"));
    }
  EXPECT_TRUE(named) << opencl["icd_files"].dump(1);

  // doctor's opencl_icd_loads names it, with the fix.
  r = run_gpucheck({"doctor", "--only", "opencl_icd_loads", "--json", "--probe-timeout", "12"},
                   env);
  const Json d = Json::parse(r.out);
  ASSERT_EQ(d["checks"].size(), 1u) << r.out;
  EXPECT_EQ(d["checks"][0]["status"], "fail");
  EXPECT_THAT(d["checks"][0]["finding"].get<std::string>(),
              HasSubstr(vendors + "/evil.icd: it is a FIFO"));
  EXPECT_THAT(d["checks"][0]["fix"].get<std::string>(), HasSubstr("sudo rm -r " + vendors));
}

}  // namespace

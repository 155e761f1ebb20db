// `gpucheck doctor --quick` as a node health check, end to end: exit 0/1/2, the one line of at
// most 80 characters (nothing on success unless asked), the hard --timeout naming the checks that
// did not answer (a FIFO in a fabricated root blocks a check's read as a wedged driver's /proc
// file would), FAIL outranking unknown, and Xid events kept in the state file until --ack.
#include "doctor/health.h"
#include "run_gpucheck.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

const std::string kFacts =
    (fs::path(GPUCHECK_FIXTURES_DIR) / "doctor" / "base_probe.json").string();

// A fabricated system, fresh per test.
class QuickCli : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("gpucheck_quick_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root");
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void write(const std::string& rel, const std::string& text) {
    const fs::path p = dir_ / "root" / rel;
    fs::create_directories(p.parent_path());
    std::ofstream(p) << text;
  }
  // A FIFO with no writer: opening it for reading blocks until the deadline.
  void fifo(const std::string& rel) {
    const fs::path p = dir_ / "root" / rel;
    fs::create_directories(p.parent_path());
    ASSERT_EQ(::mkfifo(p.c_str(), 0600), 0);
  }
  // An NVIDIA GPU on the PCI bus held by nouveau: nouveau_module, nvidia_kernel_module and
  // nvidia_device_nodes FAIL.
  void plant_nouveau() {
    write("sys/bus/pci/devices/0000:17:00.0/vendor", "0x10de\n");
    write("sys/bus/pci/devices/0000:17:00.0/class", "0x030200\n");
    write("proc/modules", "nouveau 2826240 0 - Live 0x0000000000000000\n");
  }
  RunResult quick(std::vector<std::string> extra,
                  const std::map<std::string, std::optional<std::string>>& env = {}) {
    std::vector<std::string> args{"doctor", "--quick",   "--facts",
                                  kFacts,   "--sysroot", (dir_ / "root").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gpucheck(args, env);
  }
  std::string state() const { return (dir_ / "state.json").string(); }
  fs::path dir_;
};

TEST_F(QuickCli, HealthyPrintsNothingUnlessAsked) {
  auto r = quick({"--no-state", "--format", "oneline"});
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");
  r = quick({"--no-state", "--format", "oneline", "--ok-line"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, fmt::format("OK {} checks\n", gpucheck::doctor::quick_check_ids().size()));
}

TEST_F(QuickCli, RunsOnlyTheQuickChecksAndSaysSoInJson) {
  auto r = quick({"--no-state", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["checks"].size(), gpucheck::doctor::quick_check_ids().size());
  for (const auto& c : doc["checks"]) {
    EXPECT_NE(c["id"], "pcie_link_under_load");
    EXPECT_NE(c["id"], "clocks_under_load");
  }
  EXPECT_EQ(doc["health"]["verdict"], "healthy");
  EXPECT_EQ(doc["health"]["exit_code"], 0);
  EXPECT_EQ(doc["health"]["quick"], true);
  EXPECT_EQ(doc["health"]["timeout_s"], 30);
}

TEST_F(QuickCli, AFailIsOneLineNamingTheCheck) {
  plant_nouveau();
  auto r = quick({"--no-state", "--format", "oneline"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  ASSERT_FALSE(r.out.empty());
  EXPECT_EQ(r.out.back(), '\n');
  const std::string line = r.out.substr(0, r.out.size() - 1);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_LE(line.size(), 80u);
  // Three checks fail (no /dev/nvidia* nodes either); after the code, the second and third are
  // counted to leave the finding room.
  EXPECT_THAT(line, StartsWith("FAIL GC-NOUVEAU-LOADED: nouveau_module+2: the open-source "
                               "nouveau driver is"));
}

TEST_F(QuickCli, AnUnreadableKernelLogIsSkipNotUnhealthy) {
  // No /dev/kmsg here and dmesg is not tried under a sysroot: SKIP with the reason, exit 0.
  auto r = quick({"--no-state", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const Json parsed = Json::parse(r.out); const auto& c : parsed["checks"])
    if (c["id"] == "nvidia_xid") {
      EXPECT_EQ(c["status"], "skip");
      EXPECT_THAT(c["finding"].get<std::string>(), HasSubstr("/dev/kmsg"));
    }
}

TEST_F(QuickCli, ACheckThatHangsIsNamedAndExitsTwoAtTheTimeout) {
  write("dev/kmsg", "6,1,1,-;nothing from NVIDIA\n");
  const auto start = std::chrono::steady_clock::now();
  auto r = quick({"--no-state", "--format", "oneline", "--timeout", "2"},
                 {{"GPUCHECK_TEST_HANG", "nvidia_xid"}});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("UNKNOWN no answer within 2 s: nvidia_xid,nvlink_links,"));
  EXPECT_GE(took, 1.9);
  EXPECT_LT(took, 10.0);  // a loaded 2-core CI machine: the bound is the point, not the slack
}

TEST_F(QuickCli, AFifoUnderTheSysrootIsRefusedNotWaitedOn) {
  write("dev/kmsg", "6,1,1,-;nothing from NVIDIA\n");
  fifo("proc/sys/kernel/random/boot_id");  // nvidia_xid reads it after the log
  const auto start = std::chrono::steady_clock::now();
  auto r = quick({"--no-state", "--format", "oneline", "--timeout", "20"});
  const double took =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_LT(took, 15.0);
}

TEST_F(QuickCli, AFailOutranksACheckThatDidNotAnswer) {
  plant_nouveau();
  write("dev/kmsg", "6,1,1,-;nothing from NVIDIA\n");
  auto r =
      quick({"--no-state", "--json", "--timeout", "2"}, {{"GPUCHECK_TEST_HANG", "nvidia_xid"}});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["health"]["verdict"], "unhealthy");
  EXPECT_EQ(doc["health"]["failing"],
            Json({"nouveau_module", "nvidia_kernel_module", "nvidia_device_nodes"}));
  EXPECT_EQ(doc.at("health").at("unanswered").at(0), "nvidia_xid");
  // The checks that answered are in the document; the silent ones are not made up.
  for (const auto& c : doc["checks"]) EXPECT_NE(c["id"], "nvidia_xid");
}

TEST_F(QuickCli, AnXidFailsUntilAcknowledgedThenNotAgain) {
  write("proc/sys/kernel/random/boot_id", "0d8f-boot\n");
  write("dev/kmsg",
        "4,1100,9000000,-;NVRM: Xid (PCI:0000:17:00): 79, pid=2211, name=python3, GPU has "
        "fallen off the bus.\n");
  const std::vector<std::string> args{"--state", state(), "--format", "oneline"};
  auto r = quick(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x1: NVIDIA Xid errors"));
  // Nothing new in the log, but the event is unacknowledged: still unhealthy.
  r = quick(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out,
              StartsWith("FAIL GC-DOCTOR-UNACKNOWLEDGED: nvidia_xid: unacknowledged since "));

  r = run_gpucheck({"doctor", "--ack", "nvidia_xid", "--state", state()});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("nvidia_xid: 1 event acknowledged"));
  r = quick(args);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "");

  // A new Xid line fails again.
  write("dev/kmsg",
        "4,1100,9000000,-;NVRM: Xid (PCI:0000:17:00): 79, pid=2211, name=python3, GPU has "
        "fallen off the bus.\n4,1200,9900000,-;NVRM: Xid (PCI:0000:17:00): 48, DBE.\n");
  r = quick(args);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 48 x1: new NVIDIA Xid"));
}

// Under --sysroot without --facts the backends are not probed: their children would judge this
// host's drivers (its Mesa ICDs) against the sysroot's files (no etc/OpenCL/vendors) and FAIL.
TEST_F(QuickCli, UnderASysrootTheBackendChecksSkipInsteadOfJudgingThisHost) {
  auto r = run_gpucheck({"doctor", "--sysroot", (dir_ / "root").string(), "--only",
                         "opencl_loader,opencl_vendors_dir,opencl_icd_loads", "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const Json doc = Json::parse(r.out);
  ASSERT_EQ(doc["checks"].size(), 3u);
  for (const auto& c : doc["checks"]) {
    SCOPED_TRACE(c["id"].get<std::string>());
    EXPECT_EQ(c["status"], "skip");
    EXPECT_THAT(c["finding"].get<std::string>(), HasSubstr("under --sysroot the backends are not"));
  }
}

TEST_F(QuickCli, BadAckAndBadStateAreUsageErrors) {
  auto r = run_gpucheck({"doctor", "--ack", "bogus", "--state", state()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--ack: unknown check id bogus"));
  // JSON of another kind is someone else's file (a damaged state file is set aside instead).
  std::ofstream(state()) << R"({"schema": "gpucheck/1"})";
  r = quick({"--state", state(), "--format", "oneline"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is not a gpucheck state file"));
}

}  // namespace

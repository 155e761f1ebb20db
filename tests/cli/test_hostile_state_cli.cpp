// `gpucheck doctor --quick` and `--ack` against a state file that is hostile or broken: nested
// 100,000 deep (it crashed both), malformed Xid counters (which turned nvidia_xid into SKIP and
// the node healthy with Xid 79 lines in its log), one that doubled with every new event, one of
// 20,000 events (judged past the 30 s timeout), a FIFO, a directory, a file too large, and a
// state that cannot be written (which cost the run its health line).
#include "run_gpucheck.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
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
using ::testing::Not;
using ::testing::StartsWith;
using Json = nlohmann::json;

// A node whose kernel log holds `lines` Xid 79 lines of one GPU, and its state file.
class HostileState : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::path(::testing::TempDir()) /
           ("gpucheck_hostile_" + std::string(info->name()) + "_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_ / "root/proc/sys/kernel/random");
    fs::create_directories(dir_ / "root/dev");
    std::ofstream(dir_ / "root/proc/sys/kernel/random/boot_id") << "b1\n";
    log_xids(0);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  void log_xids(int lines) {
    std::ofstream kmsg(dir_ / "root/dev/kmsg");
    kmsg << "6,1,1,-;nothing from NVIDIA\n";
    for (int i = 0; i < lines; ++i)
      kmsg << fmt::format(
          "4,{},{},-;NVRM: Xid (PCI:0000:17:00): 79, pid={}, GPU has fallen off "
          "the bus.\n",
          i + 2, 1000 * i, 100 + i);
  }
  void write_state(const std::string& text) { std::ofstream(state()) << text; }
  RunResult doctor(const std::vector<std::string>& extra, const std::string& state_path) {
    std::vector<std::string> args{
        "doctor",    "--quick",
        "--facts",   (fs::path(GPUCHECK_FIXTURES_DIR) / "doctor/base_probe.json").string(),
        "--sysroot", (dir_ / "root").string(),
        "--state",   state_path};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_gpucheck(args);
  }
  RunResult quick(const std::vector<std::string>& extra = {"--format", "oneline"}) {
    return doctor(extra, state());
  }
  RunResult ack() { return run_gpucheck({"doctor", "--ack", "nvidia_xid", "--state", state()}); }
  Json saved() const { return Json::parse(std::ifstream(state())); }
  std::string state() const { return (dir_ / "state.json").string(); }
  std::string bad() const { return state() + ".bad"; }
  fs::path dir_;
};

TEST_F(HostileState, NestedFarTooDeepIsSetAsideAndRebuiltNotACrash) {
  const std::string deep =
      "{\"schema\":\"gpucheck-state/1\",\"checks\":{\"nvidia_xid\":" + std::string(100000, '[') +
      std::string(100000, ']') + "}}";
  write_state(deep);
  auto r = ack();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(r.err, HasSubstr("set aside as '" + bad() + "'"));
  EXPECT_THAT(r.err, HasSubstr("nvidia_xid: 0 events acknowledged"));

  write_state(deep);
  log_xids(1);
  r = quick();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x1: NVIDIA Xid errors"));
  EXPECT_THAT(r.err, HasSubstr("nested deeper than 64 levels"));
  std::ifstream in(bad());
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), deep);
  EXPECT_EQ(saved()["checks"]["nvidia_xid"]["counts"]["0000:17:00 79"], 1);
}

TEST_F(HostileState, MalformedCountsAreReportedAndTheLogJudgedAfresh) {
  write_state(R"({"schema":"gpucheck-state/1","checks":{"nvidia_xid":
      {"boot_id":"b1","counts":{"0000:17:00 79":"eighteen"}}},"events":[]})");
  log_xids(18);
  auto r = quick({"--json"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_EQ(doc["health"]["failing"], Json({"nvidia_xid"}));
  EXPECT_THAT(doc["health"]["line"].get<std::string>(),
              StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x18"));
  EXPECT_THAT(doc["health"]["state_damage"].get<std::string>(),
              HasSubstr("what nvidia_xid keeps has counts that are not all whole numbers"));
  for (const auto& c : doc["checks"]) {
    if (c["id"] == "nvidia_xid") {
      EXPECT_THAT(c["finding"].get<std::string>(), HasSubstr("the state file was damaged"));
    }
  }
  EXPECT_TRUE(fs::exists(bad()));
  // Rebuilt: the next run judges against the counts this one saw.
  EXPECT_EQ(saved()["checks"]["nvidia_xid"]["counts"]["0000:17:00 79"], 18);
  r = quick();
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out,
              StartsWith("FAIL GC-DOCTOR-UNACKNOWLEDGED: nvidia_xid: unacknowledged since "));
  EXPECT_THAT(r.err, Not(HasSubstr("damaged")));
}

// The kernel log wrapped between two runs: its three Xid 79 lines were dropped and three new
// ones of the same GPU logged. Equal counts per GPU and code read "no new NVIDIA Xid error"
// (exit 0); the last line kept in the state file finds them. After an --ack, a count planted
// above what the log holds hides nothing either.
TEST_F(HostileState, NewXidLinesAfterTheLogWrappedFailTheNode) {
  auto log_seq = [&](int from, int to) {
    std::ofstream kmsg(dir_ / "root/dev/kmsg");
    for (int seq = from; seq <= to; ++seq)
      kmsg << fmt::format(
          "4,{},{},-;NVRM: Xid (PCI:0000:17:00): 79, pid={}, GPU has fallen off the bus.\n", seq,
          1000 * seq, seq);
  };
  log_seq(10, 12);
  EXPECT_EQ(quick().exit_code, 1);
  EXPECT_EQ(ack().exit_code, 0);
  log_seq(13, 15);
  auto r = quick();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x3"));

  EXPECT_EQ(ack().exit_code, 0);
  Json planted = saved();
  planted["checks"]["nvidia_xid"].erase("last");
  planted["checks"]["nvidia_xid"]["counts"]["0000:17:00 79"] = 50;
  write_state(planted.dump());
  log_seq(16, 17);
  r = quick();
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x2"));
}

TEST_F(HostileState, EachEventHoldsOnlyItsOwnFinding) {
  for (int run = 1; run <= 5; ++run) {
    log_xids(run);
    auto r = quick();
    EXPECT_EQ(r.exit_code, 1) << r.err;
  }
  const Json events = saved()["events"];
  ASSERT_EQ(events.size(), 5u);
  for (const auto& e : events) {
    EXPECT_THAT(e["finding"].get<std::string>(), StartsWith("Xid 79 ×1: "));
    EXPECT_THAT(e["finding"].get<std::string>(), Not(HasSubstr("unacknowledged")));
  }
  EXPECT_LT(fs::file_size(state()), 4096u);
  auto r = ack();
  EXPECT_THAT(r.err, HasSubstr("nvidia_xid: 5 events acknowledged"));
}

// Guards against a fold that is quadratic in the events (it once took past the 30 s timeout).
// A bare wall-clock limit tuned on a fast machine failed on a slower CI machine under ASan (21.6 s
// against 20 s), and a wall-clock ratio of two runs moves with whatever else ctest runs beside
// them, so the bound compares the CPU time gpucheck spent (its own and its children's, from
// getrusage) on 20,000 events with the same run over a tenth of them. A linear fold spends at most
// ten times as much (less, as start-up is shared); a quadratic one a hundred times the events'
// share, well past 25x whenever 2,000 events cost a third of a run, on any machine and under any
// sanitizer.
TEST_F(HostileState, TwentyThousandEventsAreFoldedAndJudgedInTime) {
  const auto state_of = [](int n) {
    Json events = Json::array();
    for (int i = 0; i < n; ++i)
      events.push_back(
          {{"check", "nvidia_xid"},
           {"status", "fail"},
           {"finding", fmt::format("Xid 79 ×1: NVIDIA Xid errors in the kernel log ({})", i)},
           {"time", fmt::format("2026-01-01T00:00:{:05}Z", i)}});
    return Json{{"schema", "gpucheck-state/1"}, {"events", events}}.dump();
  };
  const auto children_cpu_s = [] {
    rusage u{};
    ::getrusage(RUSAGE_CHILDREN, &u);
    const auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + t.tv_usec / 1e6; };
    return s(u.ru_utime) + s(u.ru_stime);
  };
  const auto timed_quick = [&](int n) {
    write_state(state_of(n));
    const double before = children_cpu_s();
    auto r = quick({"--json", "--timeout", "300"});
    return std::make_pair(std::move(r), children_cpu_s() - before);
  };
  const auto [calibration, tenth] = timed_quick(2000);
  EXPECT_EQ(calibration.exit_code, 1) << calibration.err;
  const auto [r, whole] = timed_quick(20000);
  EXPECT_LT(whole, 25 * tenth) << "CPU seconds: 20,000 events " << whole << ", 2,000 events "
                               << tenth;
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const Json doc = Json::parse(r.out);
  EXPECT_THAT(
      doc["health"]["line"].get<std::string>(),
      StartsWith("FAIL GC-DOCTOR-UNACKNOWLEDGED: nvidia_xid: unacknowledged since 2026-01-01T00"));
  const Json after = saved();
  EXPECT_EQ(after["events"].size(), 32u);
  EXPECT_EQ(after["events"][0]["count"], 20000 - 32 + 1);
  EXPECT_EQ(doc["health"]["unacknowledged"][0]["count"], 20000 - 32 + 1);
  EXPECT_LT(fs::file_size(state()), 32u << 10);
  auto acked = ack();
  EXPECT_THAT(acked.err, HasSubstr("nvidia_xid: 20000 events acknowledged"));
}

TEST_F(HostileState, AFifoADirectoryOrAFileTooLargeIsNamed) {
  ASSERT_EQ(::mkfifo(state().c_str(), 0600), 0);
  const auto start = std::chrono::steady_clock::now();
  auto r = quick();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot use '" + state() + "' as the state file: it is a FIFO"));
  EXPECT_THAT(r.err, Not(HasSubstr("Success")));
  r = ack();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("it is a FIFO"));
  fs::remove(state());

  fs::create_directories(state());
  r = quick();
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("it is a directory"));
  fs::remove(state());

  // Larger than any state file gpucheck writes (an older one that doubled): set aside unread.
  write_state("{}");
  fs::resize_file(state(), 20u << 20);
  r = quick();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("was damaged (it is 20971520 bytes; the limit is"));
  EXPECT_EQ(fs::file_size(bad()), 20u << 20);
  EXPECT_EQ(saved()["schema"], "gpucheck-state/1");
}

TEST_F(HostileState, AStateThatCannotBeSavedStillGivesTheVerdict) {
  // A file only root could write to, or for root a place nothing can be created in.
  std::string path = state();
  if (::geteuid() == 0) {
    path = "/proc/gpucheck-hostile-state.json";
  } else {
    write_state(R"({"schema":"gpucheck-state/1"})");
    fs::permissions(state(), fs::perms::owner_read);
  }
  log_xids(2);
  auto r = doctor({"--format", "oneline"}, path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, StartsWith("FAIL GC-XID-HARDWARE: nvidia_xid: Xid 79 x2"));
  EXPECT_THAT(r.err, HasSubstr("the state was not saved"));
  r = doctor({"--json"}, path);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(Json::parse(r.out)["health"]["state_saved"], false);
}

}  // namespace

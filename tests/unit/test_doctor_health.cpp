// doctor as a health check: the quick list, the verdict (FAIL outranks unknown), the one line of
// at most 80 characters, the state file's events and acknowledgement, and nvidia_xid judged as
// deltas against the counts it kept on the last run of the same boot.
#include "doctor/checks.h"
#include "doctor/health.h"
#include "doctor/health_state.h"
#include "doctor/registry.h"
#include "host/kernel_log.h"
#include "scratch_root.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <fstream>

namespace gpucheck::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;
using Json = nlohmann::json;

CheckResult result(std::string id, CheckStatus status, std::string finding) {
  CheckResult r;
  r.id = std::move(id);
  r.status = status;
  r.finding = std::move(finding);
  return r;
}

TEST(QuickChecks, AreRegisteredAndNeedNoLoad) {
  for (auto id : quick_check_ids()) {
    EXPECT_NE(find_check(id), nullptr) << id;
    EXPECT_NE(id, "pcie_link_under_load");
    EXPECT_NE(id, "clocks_under_load");
  }
  EXPECT_GE(quick_check_ids().size(), 20u);
}

TEST(HealthVerdict, FailOutranksUnansweredAndSkipIsHealthy) {
  const std::vector<CheckResult> skips{
      result("nvidia_xid", CheckStatus::kSkip, "not observable here: the kernel log"),
      result("cpu_isa", CheckStatus::kWarn, "no AVX2")};
  EXPECT_EQ(judge_health(skips, {}, false).health, Health::kHealthy);
  EXPECT_EQ(judge_health(skips, {}, true).health, Health::kUnhealthy);  // --fail-on warn

  auto unknown = judge_health(skips, {"nvidia_ecc", "cudnn_library"}, false);
  EXPECT_EQ(unknown.health, Health::kUnknown);
  EXPECT_EQ(unknown.unanswered, (std::vector<std::string>{"nvidia_ecc", "cudnn_library"}));
  EXPECT_EQ(health_exit_code(unknown.health), ExitCode::kUsage);

  auto with_fail = skips;
  with_fail.push_back(result("nvidia_ecc", CheckStatus::kFail, "a row remap is pending"));
  auto v = judge_health(with_fail, {"cudnn_library"}, false);
  EXPECT_EQ(v.health, Health::kUnhealthy);
  EXPECT_EQ(health_exit_code(v.health), ExitCode::kFailed);
  EXPECT_EQ(v.failing, std::vector<std::string>{"nvidia_ecc"});
  EXPECT_EQ(v.unanswered, std::vector<std::string>{"cudnn_library"});
}

TEST(HealthVerdict, AProbeChildThatTimedOutLeavesItsChecksUnanswered) {
  const std::vector<CheckResult> rs{result(
      "nvidia_ecc", CheckStatus::kSkip,
      "not observable here: the CUDA probe failed before it described the driver: probe child "
      "timed out after 14.5 s and was killed")};
  auto v = judge_health(rs, {}, false);
  EXPECT_EQ(v.health, Health::kUnknown);
  EXPECT_EQ(v.unanswered, std::vector<std::string>{"nvidia_ecc"});
}

TEST(Oneline, NamesFailingChecksAndFirstFindingInEightyAsciiBytes) {
  HealthVerdict v;
  v.health = Health::kUnhealthy;
  v.failing = {"nvidia_ecc", "nvidia_xid"};
  v.first_code = "GC-ECC-REMAP-PENDING";
  v.first_finding =
      "cuda3 (NVIDIA H100 80GB HBM3, 0000:9b:00.0): a row remap is pending (needs a GPU reset); "
      "cuda5 (NVIDIA H100 80GB HBM3, 0000:bb:00.0): 2 uncorrectable ECC errors since the driver "
      "loaded";
  const std::string line = oneline(v, 23, 30);
  EXPECT_LE(line.size(), kOnelineMax);
  EXPECT_THAT(
      line, StartsWith("FAIL GC-ECC-REMAP-PENDING: nvidia_ecc,nvidia_xid: cuda3 0000:9b:00.0: a"));
  EXPECT_TRUE(line.ends_with("...")) << line;
  EXPECT_EQ(line.find('\n'), std::string::npos);
}

TEST(Oneline, ManyFailingIdsAreCountedToLeaveTheFindingRoom) {
  HealthVerdict v;
  v.health = Health::kUnhealthy;
  v.failing = {"nouveau_module", "nvidia_kernel_module", "nvidia_device_nodes", "cuda_devices"};
  v.first_finding = "nouveau holds the GPU";
  EXPECT_EQ(oneline(v, 23, 30), "FAIL nouveau_module+3: nouveau holds the GPU");
  v.first_code = "GC-NOUVEAU-LOADED";
  EXPECT_EQ(oneline(v, 23, 30), "FAIL GC-NOUVEAU-LOADED: nouveau_module+3: nouveau holds the GPU");
}

TEST(Oneline, UnknownNamesTheSilentChecksAndOkSaysHowMany) {
  HealthVerdict v;
  v.health = Health::kUnknown;
  v.unanswered = {"nvidia_kernel_module", "nvidia_device_nodes"};
  EXPECT_EQ(oneline(v, 7, 3),
            "UNKNOWN no answer within 3 s: nvidia_kernel_module,nvidia_device_nodes");
  EXPECT_EQ(oneline(HealthVerdict{}, 23, 30), "OK 23 checks");
}

TEST(Oneline, FitLineMakesOnePrintableAsciiLine) {
  EXPECT_EQ(fit_line("a\nb\tc\x01 d", 80), "a b c d");
  EXPECT_EQ(fit_line("GPU \xc3\xa9t\xc3\xa9", 80), "GPU ?t?");
  EXPECT_EQ(fit_line("Xid 79 \xc3\x97"
                     "2",
                     80),
            "Xid 79 x2");
  const std::string cut = fit_line(std::string(100, 'x'), 80);
  EXPECT_EQ(cut.size(), 80u);
  EXPECT_TRUE(cut.ends_with("..."));
}

class HealthStateTest : public testing::ScratchRoot {};

TEST_F(HealthStateTest, AnEventStaysUntilAcknowledgedAndCleanRunsKeepIt) {
  const auto path = root_ / "state" / "state.json";
  auto s = HealthState::load(path);  // no file yet: empty
  EXPECT_TRUE(s.saved_checks().empty());

  std::vector<CheckResult> run1{result("nvidia_xid", CheckStatus::kFail, "Xid 79 ×1")};
  run1[0].state = {{"counts", {{"0000:17:00 79", 1}}}};
  auto raised = s.apply(run1, "2025-01-01T00:00:00Z");
  ASSERT_EQ(raised.size(), 1u);
  EXPECT_EQ(run1[0].status, CheckStatus::kFail);
  s.save(path);

  // Next run: nothing new (delta zero, so the check passes) but the event is unacknowledged.
  auto s2 = HealthState::load(path);
  EXPECT_EQ(s2.saved_checks()["nvidia_xid"]["counts"]["0000:17:00 79"], 1);
  std::vector<CheckResult> run2{result("nvidia_xid", CheckStatus::kPass, "no new Xid")};
  run2[0].state = run1[0].state;
  EXPECT_TRUE(s2.apply(run2, "2025-01-01T00:05:00Z").empty());
  EXPECT_EQ(run2[0].status, CheckStatus::kFail);
  EXPECT_THAT(run2[0].finding, HasSubstr("unacknowledged since 2025-01-01T00:00:00Z: Xid 79"));
  EXPECT_THAT(run2[0].fix, HasSubstr("gpucheck doctor --ack nvidia_xid"));
  EXPECT_EQ(s2.acknowledge("nvidia_xid", "2025-01-01T00:06:00Z"), 1u);
  EXPECT_EQ(s2.acknowledge("nvidia_xid", "2025-01-01T00:06:01Z"), 0u);
  s2.save(path);

  auto s3 = HealthState::load(path);
  EXPECT_TRUE(s3.unacknowledged().empty());
  std::vector<CheckResult> run3{result("nvidia_xid", CheckStatus::kPass, "no new Xid")};
  run3[0].state = run1[0].state;
  s3.apply(run3, "2025-01-01T00:10:00Z");
  EXPECT_EQ(run3[0].status, CheckStatus::kPass);
}

TEST_F(HealthStateTest, PersistentFailuresRaiseNoEventAndBadFilesAreUsageErrors) {
  const auto path = root_ / "state.json";
  auto s = HealthState::load(path);
  // A check without kept state (a pending remap) fails on its own every run: no event.
  std::vector<CheckResult> run{result("nvidia_ecc", CheckStatus::kFail, "a row remap is pending")};
  EXPECT_TRUE(s.apply(run, "t").empty());
  EXPECT_TRUE(s.unacknowledged().empty());

  write("state.json", "{\"schema\": \"something-else\"}");
  EXPECT_THROW(HealthState::load(path), UsageError);
  // A damaged state file is set aside instead (tests/unit/test_hostile_state.cpp).
  write("state.json", "not json");
  EXPECT_THAT(HealthState::load(path).damage(), HasSubstr("not JSON"));
}

TEST_F(HealthStateTest, DefaultPathIsTheFirstWritablePlace) {
  const auto xdg = root_ / "xdg";
  EXPECT_EQ(default_state_path({{"XDG_STATE_HOME", xdg.string()}, {"HOME", "/home/u"}}),
            xdg / "gpucheck" / "state.json");
  const auto p = default_state_path({{"HOME", (root_ / "home").string()}});
  ASSERT_TRUE(p.has_value());
  const bool var_lib = ::access("/var/lib", W_OK) == 0;
  EXPECT_EQ(*p, var_lib ? std::filesystem::path("/var/lib/gpucheck/state.json")
                        : root_ / "home" / ".local" / "state" / "gpucheck" / "state.json");
}

class XidDeltaTest : public testing::ScratchRoot {
 protected:
  SystemView view(const Json& saved = Json::object()) {
    SystemView v;
    v.root = root_;
    v.saved_state = saved;
    return v;
  }
  static std::string xid(int seq, int code, const char* pci = "0000:17:00") {
    return fmt::format("4,{},{},-;NVRM: Xid (PCI:{}): {}, pid=1, name=python3, details\n", seq,
                       seq * 1000, pci, code);
  }
};

TEST_F(XidDeltaTest, OnlyGrowthWithinOneBootIsJudged) {
  write("proc/sys/kernel/random/boot_id", "boot-a\n");
  write("dev/kmsg", xid(1, 79));
  auto first = check_nvidia_xid(view());
  EXPECT_EQ(first.status, CheckStatus::kFail);
  EXPECT_EQ(first.state["boot_id"], "boot-a");
  EXPECT_EQ(first.state["counts"]["0000:17:00 79"], 1);

  // The same line again: reported before, so PASS, naming the earlier one.
  auto again = check_nvidia_xid(view({{"nvidia_xid", first.state}}));
  EXPECT_EQ(again.status, CheckStatus::kPass);
  EXPECT_THAT(again.finding, HasSubstr("no new NVIDIA Xid error"));
  EXPECT_THAT(again.finding, HasSubstr("Xid 79 ×1"));

  // One new program fault beside it: judged alone (INFO), the old hardware Xid is history.
  write("dev/kmsg", xid(1, 79) + xid(2, 13));
  auto grown = check_nvidia_xid(view({{"nvidia_xid", first.state}}));
  EXPECT_EQ(grown.status, CheckStatus::kInfo);
  EXPECT_THAT(grown.finding, HasSubstr("Xid 13 ×1: new NVIDIA Xid errors"));

  // Another boot: the kept counts belong to the last one, so the line is new again.
  write("proc/sys/kernel/random/boot_id", "boot-b\n");
  write("dev/kmsg", xid(1, 79));
  EXPECT_EQ(check_nvidia_xid(view({{"nvidia_xid", first.state}})).status, CheckStatus::kFail);
}

// The log wrapped: the three lines seen last time are gone, three new Xid 79 lines of the same
// GPU took their place. Equal counts per GPU and code said "nothing new"; the last line kept
// finds them.
TEST_F(XidDeltaTest, NewLinesAfterTheLogWrappedAreFound) {
  write("proc/sys/kernel/random/boot_id", "boot-a\n");
  write("dev/kmsg", xid(1, 79) + xid(2, 79) + xid(3, 79));
  const auto first = check_nvidia_xid(view());
  ASSERT_EQ(first.status, CheckStatus::kFail);
  write("dev/kmsg", xid(4, 79) + xid(5, 79) + xid(6, 79));
  const auto wrapped = check_nvidia_xid(view({{"nvidia_xid", first.state}}));
  EXPECT_EQ(wrapped.status, CheckStatus::kFail) << wrapped.finding;
  EXPECT_THAT(wrapped.finding, HasSubstr("Xid 79 ×3"));
  // Half wrapped: one old line left, two new after it.
  write("dev/kmsg", xid(3, 79) + xid(4, 79) + xid(5, 79));
  const auto half = check_nvidia_xid(view({{"nvidia_xid", first.state}}));
  EXPECT_THAT(half.finding, HasSubstr("Xid 79 ×2: new NVIDIA Xid errors"));
  // Nothing new after the kept line: PASS, naming the earlier ones.
  write("dev/kmsg", xid(2, 79) + xid(3, 79));
  EXPECT_EQ(check_nvidia_xid(view({{"nvidia_xid", first.state}})).status, CheckStatus::kPass);
}

// A state file of an older gpucheck holds counts only: a count above what the log holds means
// the log dropped lines, so its lines are judged, not hidden.
TEST_F(XidDeltaTest, ACountAboveWhatTheLogHoldsHidesNothing) {
  write("proc/sys/kernel/random/boot_id", "boot-a\n");
  write("dev/kmsg", xid(40, 79) + xid(41, 79) + xid(42, 79));
  const Json saved{{"boot_id", "boot-a"}, {"counts", {{"0000:17:00 79", 100}}}};
  const auto r = check_nvidia_xid(view({{"nvidia_xid", saved}}));
  EXPECT_EQ(r.status, CheckStatus::kFail) << r.finding;
  EXPECT_THAT(r.finding, HasSubstr("Xid 79 ×3"));
  // A count the log does hold still marks its oldest lines as judged.
  const Json two{{"boot_id", "boot-a"}, {"counts", {{"0000:17:00 79", 2}}}};
  EXPECT_THAT(check_nvidia_xid(view({{"nvidia_xid", two}})).finding, HasSubstr("Xid 79 ×1"));
}

// A saved kmsg is a plain file: it was read in 16 KiB pieces, each made a line, so an Xid 79
// line across the boundary read as "Xid 7" (WARN) and the node passed as healthy.
TEST_F(XidDeltaTest, ALineAcrossA16KiBReadIsOneLine) {
  const std::string line = xid(2, 79);
  const std::string head = "6,1,1,-;";
  // "7" is the last byte of the first 16 KiB, "9" the first of the next.
  const std::size_t code_at = line.find("): 79") + 3;
  const std::string filler = head + std::string(16384 - code_at - 1 - head.size() - 1, 'x') + "\n";
  ASSERT_EQ(filler.size() + code_at + 1, 16384u);
  write("dev/kmsg", filler + line);
  const auto r = check_nvidia_xid(view());
  EXPECT_EQ(r.status, CheckStatus::kFail) << r.finding;
  EXPECT_THAT(r.finding, HasSubstr("Xid 79 ×1"));
  EXPECT_THAT(r.finding, ::testing::Not(HasSubstr("Xid 7 ")));
}

// A saved log larger than is read: its newest whole lines are judged (the Xid at its end), the
// part before them is said, and no line is cut into a phantom Xid.
TEST_F(XidDeltaTest, ALogLargerThanIsReadIsJudgedByItsTail) {
  std::string text = xid(1, 48);  // in the part not read
  const std::string filler = "6,2,2,-;NVRM: " + std::string(200, 'y') + "\n";
  while (text.size() < host::kMaxKernelLogBytes + (1u << 20)) text += filler;
  text += xid(3, 79);
  write("dev/kmsg", text);
  const auto r = check_nvidia_xid(view());
  EXPECT_EQ(r.status, CheckStatus::kFail) << r.finding;
  EXPECT_THAT(r.finding, HasSubstr("Xid 79 ×1: NVIDIA Xid errors"));
  EXPECT_THAT(r.finding, ::testing::Not(HasSubstr("Xid 48")));
  EXPECT_THAT(r.finding, HasSubstr("bytes were not judged"));
  const host::KernelLog log = host::read_kernel_log(root_.string());
  ASSERT_TRUE(log.text.has_value());
  EXPECT_EQ(log.skipped_bytes + log.text->size(), text.size());
  EXPECT_TRUE(log.text->starts_with("6,2,2,-;"));  // whole lines only
}

}  // namespace
}  // namespace gpucheck::doctor

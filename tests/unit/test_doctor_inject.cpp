// doctor --inject: the words it accepts and refuses, and the result each fault gives (the code,
// severity, repair and recovery actions a real fault of its kind gets), marked injected.
#include "core/errors.h"
#include "doctor/inject.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpucheck::doctor {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string refusal(const std::vector<std::string>& values) {
  try {
    parse_injected_faults(values);
  } catch (const UsageError& e) {
    return e.what();
  }
  return "accepted";
}

CheckResult only_result(const std::vector<std::string>& values) {
  const auto results = injected_results(parse_injected_faults(values));
  EXPECT_EQ(results.size(), 1u);
  return results.empty() ? CheckResult{} : results.front();
}

TEST(DoctorInject, ParsesEveryWordAndXids) {
  const auto faults = parse_injected_faults(
      {"xid:79", "gpu-lost", "nvlink-down", "ecc-dbe", "fm-down", "row-remap-pending", "xid:13"});
  ASSERT_EQ(faults.size(), 7u);
  EXPECT_EQ(faults[0].word, "xid:79");
  EXPECT_EQ(faults[0].xid, 79);
  EXPECT_EQ(faults[1].word, "gpu-lost");
  EXPECT_EQ(faults[1].xid, 0);
  EXPECT_EQ(faults[6].xid, 13);
  EXPECT_TRUE(parse_injected_faults({}).empty());
}

TEST(DoctorInject, AWordNamedTwiceCountsOnce) {
  EXPECT_EQ(parse_injected_faults({"xid:79", "xid:79", "fm-down", "fm-down"}).size(), 2u);
}

TEST(DoctorInject, BadWordsAreRefusedNamingTheAcceptedOnes) {
  for (const std::string bad : {"gpu-gone", "xid:", "xid", "xid:abc", "xid:79x", "xid:0", "xid:-1",
                                "xid:1000", "xid:99999999999", "XID:79", " xid:79", ""}) {
    const std::string why = refusal({bad});
    EXPECT_THAT(why, StartsWith("--inject: '" + bad + "'")) << bad;
    for (const char* word :
         {"xid:N", "gpu-lost", "nvlink-down", "ecc-dbe", "row-remap-pending", "fm-down"})
      EXPECT_THAT(why, HasSubstr(word)) << bad;
  }
  EXPECT_EQ(refusal({"xid:1", "xid:999"}), "accepted");
}

struct Expected {
  std::string word, check, code, action, recovery;
  CheckStatus status;
};

TEST(DoctorInject, EachFaultGivesItsChecksCodeSeverityAndActions) {
  const Expected cases[] = {
      {"xid:79", "nvidia_xid", "GC-XID-HARDWARE", "drain_and_diagnose", "DRAIN_AND_RESET",
       CheckStatus::kFail},
      {"xid:119", "nvidia_xid", "GC-XID-HARDWARE", "drain_and_diagnose", "DRAIN_AND_RESET",
       CheckStatus::kFail},
      // An Xid neither the hardware's nor a program's: the driver's, WARN.
      {"xid:32", "nvidia_xid", "GC-XID-DRIVER", "update_driver_or_library", "GPU_RESET",
       CheckStatus::kWarn},
      // A program's own fault (an illegal address): INFO with the check's own code.
      {"xid:13", "nvidia_xid", "GC-NVIDIA-XID", "none", "NONE", CheckStatus::kInfo},
      {"gpu-lost", "cuda_devices", "GC-CUDA-GPU-MISSING", "drain_and_diagnose", "NODE_REBOOT",
       CheckStatus::kFail},
      {"nvlink-down", "nvlink_links", "GC-NVLINK-DOWN", "replace_hardware", "DRAIN_P2P",
       CheckStatus::kFail},
      {"ecc-dbe", "nvidia_ecc", "GC-ECC-UNCORRECTABLE", "reset_gpu", "GPU_RESET",
       CheckStatus::kFail},
      {"row-remap-pending", "nvidia_ecc", "GC-ECC-REMAP-PENDING", "reset_gpu", "GPU_RESET",
       CheckStatus::kFail},
      {"fm-down", "nvswitch_fabric_manager", "GC-FABRIC-MANAGER-DOWN", "fix_config", "NONE",
       CheckStatus::kFail},
  };
  for (const auto& e : cases) {
    const CheckResult r = only_result({e.word});
    EXPECT_EQ(r.id, e.check) << e.word;
    EXPECT_EQ(r.status, e.status) << e.word;
    EXPECT_TRUE(r.injected) << e.word;
    const nlohmann::json j = r.to_json();
    EXPECT_EQ(j["code"], e.code) << e.word;
    EXPECT_EQ(j["action"], e.action) << e.word;
    EXPECT_EQ(j["recovery_action"], e.recovery) << e.word;
    EXPECT_EQ(j["injected"], true) << e.word;
    EXPECT_THAT(r.finding, HasSubstr("injected")) << e.word;
    EXPECT_THAT(r.evidence.front(), HasSubstr("not read from this machine")) << e.word;
    if (r.status == CheckStatus::kFail || r.status == CheckStatus::kWarn) {
      EXPECT_FALSE(r.fix.empty()) << e.word;
    }
  }
}

// Two faults of one check are one result, judged as the check judges several findings: the
// worst decides, the first of the worst names the code, both are said.
TEST(DoctorInject, FaultsOfOneCheckAreCombined) {
  CheckResult ecc = only_result({"row-remap-pending", "ecc-dbe"});
  EXPECT_EQ(ecc.code().code, "GC-ECC-REMAP-PENDING");
  EXPECT_THAT(ecc.finding, HasSubstr("ecc-dbe"));
  EXPECT_THAT(ecc.finding, HasSubstr("row-remap-pending"));
  CheckResult xid = only_result({"xid:13", "xid:79"});
  EXPECT_EQ(xid.status, CheckStatus::kFail);
  EXPECT_THAT(xid.finding, StartsWith("Xid 13 ×1, Xid 79 ×1: injected"));
}

TEST(DoctorInject, ReplacesTheChecksResultOrAddsItAndAnswersItsDeadline) {
  CheckResult xid = pass("no NVIDIA Xid error in the kernel log");
  xid.id = "nvidia_xid";
  CheckResult isa = pass("AVX2");
  isa.id = "cpu_isa";
  std::vector<CheckResult> results{xid, isa};
  std::vector<std::string> not_run{"cuda_devices", "nvidia_ecc"};
  apply_injected(results, not_run, parse_injected_faults({"xid:79", "gpu-lost"}));
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].id, "nvidia_xid");
  EXPECT_EQ(results[0].status, CheckStatus::kFail);
  EXPECT_TRUE(results[0].injected);
  EXPECT_EQ(results[1].id, "cpu_isa");
  EXPECT_FALSE(results[1].injected);
  EXPECT_EQ(results[2].id, "cuda_devices");
  EXPECT_EQ(not_run, std::vector<std::string>{"nvidia_ecc"});
}

TEST(DoctorInject, NothingInjectedChangesNothing) {
  CheckResult isa = pass("AVX2");
  isa.id = "cpu_isa";
  std::vector<CheckResult> results{isa};
  std::vector<std::string> not_run{"nvidia_ecc"};
  apply_injected(results, not_run, {});
  ASSERT_EQ(results.size(), 1u);
  EXPECT_FALSE(results[0].injected);
  EXPECT_FALSE(results[0].to_json().contains("injected"));
  EXPECT_EQ(not_run.size(), 1u);
}

}  // namespace
}  // namespace gpucheck::doctor

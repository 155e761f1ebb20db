// stress's telemetry notes judge NVLink counters by kind and by rate, as doctor's nvlink_errors
// does: the healthy band per link, DCGM's 100/s per GPU, replays and recoveries named as failures.
#include "core/json_keys.h"
#include "core/json_keys_nvlink.h"
#include "stress/verdict.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

namespace k = gpucheck::keys;
using gpucheck::stress::judge_device;
using gpucheck::stress::VerdictInput;
using ::testing::HasSubstr;
using Json = nlohmann::json;

// 18 active links read 60 s apart (600 samples of 100 ms), with the CRC-data and replay growth
// given; the other kinds do not grow.
VerdictInput run_with(std::uint64_t crc_data, std::uint64_t replay) {
  auto counters = [](std::uint64_t crc, std::uint64_t rep) {
    return Json{{std::string(k::kCounterNvlinkErrors), crc + rep},
                {std::string(k::kCounterNvlinkReplay), rep},
                {std::string(k::kCounterNvlinkRecovery), 0},
                {std::string(k::kCounterNvlinkCrcFlit), 0},
                {std::string(k::kCounterNvlinkCrcData), crc},
                {std::string(k::kCounterNvlinkEccData), 0},
                {std::string(k::kCounterNvlinkActiveLinks), 18}};
  };
  VerdictInput in;
  in.device = "cuda0";
  in.telemetry =
      Json{{k::kSamples, 600},
           {k::kIntervalMs, 100},
           {k::kCounters,
            {{k::kBefore, counters(1000, 0)}, {k::kAfter, counters(1000 + crc_data, replay)}}}};
  return in;
}

std::string nvlink_note(const VerdictInput& in) {
  for (const auto& n : judge_device(in, {}).notes)
    if (n.rfind("NVLink", 0) == 0 || n.find("nvlink") != std::string::npos) return n;
  return {};
}

}  // namespace

TEST(StressNvlinkNotes, GrowthWithinTheBandSaysItsRates) {
  // 540 in 60 s: 9/s on the GPU, 0.5/s per link.
  const std::string note = nvlink_note(run_with(540, 0));
  EXPECT_THAT(note, HasSubstr("NVLink: 18 active links, CRC-data +540 (9.0/s on the GPU, "
                              "0.5/s per link on average)"));
  EXPECT_THAT(note, HasSubstr("within the healthy 20/s per link (DCGM's limit 100/s)"));
}

TEST(StressNvlinkNotes, AboveTheBandAndAtDcgmsLimitAreSaid) {
  // 30/s per link on average: 540/s on the GPU, above DCGM's 100/s.
  EXPECT_THAT(nvlink_note(run_with(18 * 30 * 60, 0)), HasSubstr("reaches DCGM's limit of 100/s"));
  // 25/s per link only for a GPU with fewer links: 2 links at 50/s on the GPU.
  VerdictInput few = run_with(50 * 60, 0);
  (*few.telemetry)[k::kCounters][k::kAfter][std::string(k::kCounterNvlinkActiveLinks)] = 2;
  EXPECT_THAT(nvlink_note(few), HasSubstr("CRC-data above the healthy 20/s per link"));
}

TEST(StressNvlinkNotes, AReplayIsNamedAsDcgmsFailureAndNothingGrownSaysNothing) {
  EXPECT_THAT(nvlink_note(run_with(0, 1)), HasSubstr("replay +1, recovery +0 (DCGM: a failure"));
  EXPECT_EQ(nvlink_note(run_with(0, 0)), "");
}

TEST(StressNvlinkNotes, AnOlderChildWithOnlyTheTotalKeepsTheTotalsNote) {
  VerdictInput in;
  in.device = "cuda0";
  in.telemetry = Json{{k::kCounters,
                       {{k::kBefore, {{std::string(k::kCounterNvlinkErrors), 5}}},
                        {k::kAfter, {{std::string(k::kCounterNvlinkErrors), 9}}}}}};
  EXPECT_EQ(nvlink_note(in), "nvlink_errors grew by 4");
}

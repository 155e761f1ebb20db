// stress's pure parts: durations, plans, planted-fault specs, windows, telemetry summaries, the
// verdict rules on fabricated records, the result comparisons, the Xid lines, and the CPU's
// checksum and memory-test primitives against the shared math.
#include "backends/cpu/cpu_stress.h"
#include "backends/registry.h"
#include "bench/inputs.h"
#include "bench/ops/gemm.h"
#include "core/json_keys.h"
#include "core/json_keys_stress.h"
#include "host/kernel_log.h"
#include "stress/faults.h"
#include "stress/plan.h"
#include "stress/result_match.h"
#include "stress/telemetry.h"
#include "stress/test_units.h"
#include "stress/throughput_windows.h"
#include "stress/verdict.h"

#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <unistd.h>

namespace {

using namespace gpucheck;
using namespace gpucheck::stress;
namespace k = keys;
using Json = nlohmann::json;

// ---------------------------------------------------------------- plans and specs

TEST(StressDuration, SecondsMinutesHoursAndBareNumbers) {
  EXPECT_EQ(parse_duration("90s"), 90.0);
  EXPECT_EQ(parse_duration("5m"), 300.0);
  EXPECT_EQ(parse_duration("1h"), 3600.0);
  EXPECT_EQ(parse_duration("2.5m"), 150.0);
  EXPECT_EQ(parse_duration("7"), 7.0);
  for (const char* bad : {"", "s", "0s", "-5s", "5x", "5 s", "1e999s", "m5", "nan"})
    EXPECT_FALSE(parse_duration(bad).has_value()) << bad;
}

TEST(StressPlan, RoundTripsThroughJson) {
  StressPlan p;
  p.device = "cuda1";
  p.backend = "cuda";
  p.tests = {stress::Test::kMemory, stress::Test::kGemm};
  p.dtypes = {DType::kBf16, DType::kF64};
  p.duration_s = 12.5;
  p.gemm_size = 4096;
  p.memory_fraction = 0.5;
  p.check_every = 77;
  p.no_check = true;
  p.window_s = 3;
  p.seed = 9;
  p.threads = 2;
  p.peer = "cuda1";
  const StressPlan q = plan_from_json(to_json(p));
  EXPECT_EQ(q.peer, "cuda1");
  EXPECT_EQ(to_json(q), to_json(p));
  EXPECT_EQ(q.tests, p.tests);
  EXPECT_EQ(q.memory_fraction, 0.5);
  p.memory_fraction.reset();
  EXPECT_FALSE(plan_from_json(to_json(p)).memory_fraction.has_value());
}

// The table of tests in the order of Test: names both ways, GEMM alone once per dtype.
TEST(StressTestUnits, OneLinePerTestInTheOrderOfTest) {
  ASSERT_EQ(test_units().size(), 3u);
  for (const auto& u : test_units()) {
    EXPECT_EQ(&unit_of(u.test), &u);
    EXPECT_EQ(test_from_string(to_string(u.test)), u.test);
    EXPECT_NE(u.run, nullptr) << u.name;
    EXPECT_EQ(u.per_dtype, u.test == stress::Test::kGemm) << u.name;
  }
  EXPECT_EQ(test_names(","), "gemm,memory,copy");
  EXPECT_FALSE(test_from_string("Gemm").has_value());
  EXPECT_THROW(unit_of(static_cast<stress::Test>(7)), std::logic_error);
}

TEST(StressFaults, SpecNamesDeviceKindAndCount) {
  auto f = faults_for("cpu:gemm_bit@5,opencl0:hang,cpu:die", "cpu");
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].kind, FaultKind::kGemmBit);
  EXPECT_EQ(f[0].at, 5u);
  EXPECT_EQ(f[1].kind, FaultKind::kDie);
  EXPECT_EQ(f[1].at, 1u);
  auto o = faults_for("cpu:gemm_bit@5,opencl0:memory_word", "opencl0");
  ASSERT_EQ(o.size(), 1u);
  EXPECT_EQ(o[0].kind, FaultKind::kMemoryWord);
  EXPECT_TRUE(faults_for("", "cpu").empty());
  EXPECT_THROW(faults_for("cpu-gemm_bit", "cpu"), std::invalid_argument);
  EXPECT_THROW(faults_for("cpu:melt", "cpu"), std::invalid_argument);
  EXPECT_THROW(faults_for("cpu:hang@x", "cpu"), std::invalid_argument);
  auto peer = faults_for("cuda1:peer_byte", "cuda1");
  ASSERT_EQ(peer.size(), 1u);
  EXPECT_EQ(peer[0].kind, FaultKind::kPeerByte);
  EXPECT_EQ(peer[0].at, 3u);
  auto copy = faults_for("cuda0:copy_byte@7,cuda1:copy_byte", "cuda0");
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(copy[0].kind, FaultKind::kCopyByte);
  EXPECT_EQ(copy[0].at, 7u);
  auto skip = faults_for("cpu:copy_skip", "cpu");
  ASSERT_EQ(skip.size(), 1u);
  EXPECT_EQ(skip[0].kind, FaultKind::kCopySkip);
  EXPECT_EQ(skip[0].at, 3u);
}

TEST(StressPlanPeers, CudaGpusWithACopyTestFormARing) {
  auto plan = [](std::string device, std::string backend, std::vector<stress::Test> tests) {
    StressPlan p;
    p.device = std::move(device);
    p.backend = std::move(backend);
    p.tests = std::move(tests);
    return p;
  };
  const std::vector<stress::Test> all{stress::Test::kGemm, stress::Test::kMemory,
                                      stress::Test::kCopy};
  std::vector<StressPlan> plans{plan("cpu", "cpu", all), plan("cuda0", "cuda", all),
                                plan("opencl1", "opencl", all), plan("cuda1", "cuda", all),
                                plan("cuda2", "cuda", all)};
  stress::assign_copy_peers(plans);
  EXPECT_EQ(plans[0].peer, "");
  EXPECT_EQ(plans[1].peer, "cuda1");
  EXPECT_EQ(plans[2].peer, "");
  EXPECT_EQ(plans[3].peer, "cuda2");
  EXPECT_EQ(plans[4].peer, "cuda0");
  // One GPU, or GPUs without the copy test: no peers.
  std::vector<StressPlan> one{plan("cuda0", "cuda", all)};
  stress::assign_copy_peers(one);
  EXPECT_EQ(one[0].peer, "");
  std::vector<StressPlan> gemm_only{plan("cuda0", "cuda", {stress::Test::kGemm}),
                                    plan("cuda1", "cuda", {stress::Test::kGemm})};
  stress::assign_copy_peers(gemm_only);
  EXPECT_EQ(gemm_only[0].peer, "");
}

// ---------------------------------------------------------------- windows

TEST(StressWindows, CloseAtTheFirstReportAfterTheirEndAndMergeAShortTail) {
  WindowTracker w(0, 10);
  for (int t = 1; t <= 23; ++t) w.add(t, t <= 10 ? 100 : 50);  // the second window is slower
  auto windows = w.finish(23.5);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_DOUBLE_EQ(windows[0].length_s, 10);
  EXPECT_DOUBLE_EQ(windows[0].rate(), 100);
  // 10..20 closes at 20; 20..23.5 is shorter than half a window: merged into it.
  EXPECT_DOUBLE_EQ(windows[1].start_s, 10);
  EXPECT_DOUBLE_EQ(windows[1].length_s, 13.5);
  EXPECT_DOUBLE_EQ(windows[1].amount, 13 * 50);
  EXPECT_DOUBLE_EQ(w.total(), 1000 + 650);
}

// The burst is the work of the first half second (through the first report at or after it)
// over that report's time; the ratio is the sustained rate over it.
TEST(StressWindows, BurstIsTheFirstHalfSecondAndTheRatioSustainedOverBurst) {
  WindowTracker w(100, 10);
  // Fast at first (40 a tenth of a second to 0.5 s), then 10 a tenth of a second.
  for (int i = 1; i <= 200; ++i) w.add(100 + 0.1 * i, i <= 5 ? 40 : 10);
  EXPECT_FALSE(WindowTracker(0, 10).burst().has_value());
  const auto burst = w.burst();
  ASSERT_TRUE(burst.has_value());
  EXPECT_DOUBLE_EQ(burst->start_s, 100);
  EXPECT_NEAR(burst->length_s, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(burst->amount, 200);
  EXPECT_NEAR(burst->rate(), 400, 1e-6);
  const auto windows = w.finish(120);
  const Json j = throughput_json(w.total(), 20, windows, 1, "GB/s", burst);
  EXPECT_NEAR(j[k::kBurst].get<double>(), 400, 1e-6);
  EXPECT_NEAR(j[k::kBurstS].get<double>(), 0.5, 1e-9);
  const double sustained = (5 * 40 + 195 * 10) / 20.0;
  EXPECT_DOUBLE_EQ(j[k::kValue].get<double>(), sustained);
  EXPECT_NEAR(j[k::kSustainedOverBurst].get<double>(), sustained / 400, 1e-9);
  // A report that comes late closes the burst at its own time, its work inside.
  WindowTracker slow(0, 10);
  slow.add(0.3, 30);
  slow.add(0.9, 60);
  slow.add(1.5, 60);
  ASSERT_TRUE(slow.burst().has_value());
  EXPECT_DOUBLE_EQ(slow.burst()->length_s, 0.9);
  EXPECT_DOUBLE_EQ(slow.burst()->amount, 90);
  // A run shorter than half a second has no burst, and its record no burst keys.
  WindowTracker short_run(0, 10);
  short_run.add(0.2, 5);
  EXPECT_FALSE(short_run.burst().has_value());
  const Json none = throughput_json(5, 0.2, short_run.finish(0.2), 1, "GB/s", short_run.burst());
  EXPECT_FALSE(none.contains(k::kBurst));
  EXPECT_FALSE(none.contains(k::kSustainedOverBurst));
}

TEST(StressWindows, ClocksComeFromTheSamplesInsideEachWindow) {
  std::vector<Window> windows{{0, 10, 1, {}}, {10, 10, 1, {}}, {20, 10, 1, {}}};
  std::vector<TelemetrySample> samples;
  for (double t : {1.0, 2.0, 11.0}) samples.push_back({t, t < 10 ? 1800.0 : 900.0, {}, {}, {}, {}});
  annotate_clocks(windows, samples);
  EXPECT_DOUBLE_EQ(*windows[0].sm_clock_mhz, 1800);
  EXPECT_DOUBLE_EQ(*windows[1].sm_clock_mhz, 900);
  EXPECT_FALSE(windows[2].sm_clock_mhz.has_value());
  const Json j = throughput_json(30, 30, windows, 1, "GB/s");
  EXPECT_DOUBLE_EQ(j[k::kValue].get<double>(), 1);
  EXPECT_EQ(j[k::kWindows].size(), 3u);
  EXPECT_EQ(j[k::kWindows][1][k::kSmClockMhz], 900);
}

// ---------------------------------------------------------------- telemetry

TEST(StressTelemetry, SummaryCountsReasonTimeAndCounterDeltas) {
  TelemetryInput in;
  in.interval_ms = 100;
  for (int i = 0; i < 10; ++i) {
    TelemetrySample s;
    s.t_s = i * 0.1;
    s.sm_clock_mhz = 1000 + 100 * i;
    s.temperature_c = 60 + i;
    s.power_w = 500;
    s.clock_events =
        i < 3 ? clock_event::kSwPowerCap | clock_event::kHwSlowdown : clock_event::kSwPowerCap;
    in.samples.push_back(s);
  }
  in.before = {{"ecc_volatile_uncorrected", 2}, {"pcie_replay", 10}};
  in.after = {{"ecc_volatile_uncorrected", 3}, {"pcie_replay", 4}, {"only_after", 1}};
  in.max_sm_clock_mhz = 1980;
  const Json j = summarize_telemetry(in);
  EXPECT_EQ(j[k::kSamples], 10);
  EXPECT_DOUBLE_EQ(j[k::kSmClockMhz][k::kMin].get<double>(), 1000);
  EXPECT_DOUBLE_EQ(j[k::kSmClockMhz][k::kMax].get<double>(), 1900);
  EXPECT_DOUBLE_EQ(j[k::kSmClockMhz][k::kMean].get<double>(), 1450);
  EXPECT_DOUBLE_EQ(j[k::kClocksEventReasons]["sw_power_cap"].get<double>(), 1.0);
  EXPECT_DOUBLE_EQ(j[k::kClocksEventReasons]["hw_slowdown"].get<double>(), 0.3);
  EXPECT_FALSE(j[k::kClocksEventReasons].contains("gpu_idle"));
  EXPECT_EQ(j[k::kCounters][k::kDelta]["ecc_volatile_uncorrected"], 1);
  EXPECT_EQ(j[k::kCounters][k::kDelta]["pcie_replay"], 4);  // went down: a reset, count after
  EXPECT_FALSE(j[k::kCounters][k::kDelta].contains("only_after"));
  EXPECT_FALSE(j.contains(k::kMemClockMhz));
}

// ---------------------------------------------------------------- verdicts

Json ok_record(const char* test, std::vector<double> windows = {10, 10}) {
  Json w = Json::array();
  for (std::size_t i = 0; i < windows.size(); ++i)
    w.push_back({{k::kStartS, 10.0 * i}, {k::kValue, windows[i]}, {k::kSmClockMhz, 1700}});
  return {{k::kTest, test},
          {k::kStatus, "ok"},
          {k::kThroughput, {{k::kValue, 10}, {k::kUnit, "TFLOP/s"}, {k::kWindows, w}}}};
}

Json telemetry(std::map<std::string, std::uint64_t> before,
               std::map<std::string, std::uint64_t> after, Json reasons = Json::object()) {
  return {{k::kCounters, {{k::kBefore, before}, {k::kAfter, after}}},
          {k::kClocksEventReasons, reasons},
          {k::kMaxSmClockMhz, 1980}};
}

VerdictInput healthy() {
  VerdictInput in;
  in.device = "cuda0";
  in.records = {ok_record("gemm"), ok_record("memory")};
  in.expected_records = 2;
  in.telemetry =
      telemetry({{"ecc_volatile_uncorrected", 0}, {"remap_pending", 0}},
                {{"ecc_volatile_uncorrected", 0}, {"remap_pending", 0}, {"remap_failure", 0}},
                {{"sw_power_cap", 12.0}});
  in.telemetry_expected = true;
  in.xid_readable = true;
  return in;
}

std::string status_of(const DeviceVerdict& v, const std::string& id) {
  for (const auto& r : v.rules)
    if (r.id == id) return r.status;
  return "absent";
}

TEST(StressVerdict, AHealthyRunPassesAndNotesThePowerCap) {
  const auto v = judge_device(healthy(), {});
  EXPECT_TRUE(v.pass);
  EXPECT_TRUE(v.reasons.empty());
  for (const char* id : {"started", "results", "xid", "ecc", "row_remap", "thermal", "power_brake",
                         "clock_floor", "throughput_windows"})
    EXPECT_EQ(status_of(v, id), "pass") << id;
  ASSERT_EQ(v.notes.size(), 1u);
  EXPECT_NE(v.notes[0].find("power cap"), std::string::npos);
}

TEST(StressVerdict, EachFaultFailsWithItsOwnReason) {
  struct Case {
    const char* rule;
    std::function<void(VerdictInput&)> spoil;
    const char* words;
  };
  const std::vector<Case> cases = {
      {"started", [](auto& in) { in.child_failure = "the stress child killed by signal 9"; },
       "signal 9"},
      {"results",
       [](auto& in) {
         in.records[0][k::kStatus] = "mismatch";
         in.records[0][k::kReason] = "1 of 40 results differed from the first";
       },
       "1 of 40 results"},
      {"results", [](auto& in) { in.records.pop_back(); }, "1 of 2 tests reported no result"},
      {"results",
       [](auto& in) {
         in.records[0][k::kChecking] = {{k::kNoCheck, true}};
       },
       "not checked"},
      {"xid",
       [](auto& in) {
         in.xids.push_back({79, "0000:17:00", " GPU has fallen off the bus.", std::nullopt, ""});
       },
       "Xid 79"},
      {"ecc",
       [](auto& in) { (*in.telemetry)[k::kCounters][k::kAfter]["ecc_volatile_uncorrected"] = 2; },
       "2 new uncorrectable"},
      {"row_remap", [](auto& in) { (*in.telemetry)[k::kCounters][k::kAfter]["remap_pending"] = 1; },
       "pending"},
      {"thermal", [](auto& in) { (*in.telemetry)[k::kClocksEventReasons]["hw_slowdown"] = 0.4; },
       "hw_slowdown for 0.4 s"},
      {"power_brake",
       [](auto& in) { (*in.telemetry)[k::kClocksEventReasons]["hw_power_brake_slowdown"] = 2.0; },
       "power brake"},
      {"clock_floor",
       [](auto& in) { in.records[0][k::kThroughput][k::kWindows][1][k::kSmClockMhz] = 800; },
       "800 MHz"},
      {"throughput_windows",
       [](auto& in) {
         in.records[1] = ok_record("memory", {10, 9.5, 8.9});
       },
       "11.0 % below"},
  };
  for (const auto& c : cases) {
    VerdictInput in = healthy();
    c.spoil(in);
    const auto v = judge_device(in, {});
    EXPECT_FALSE(v.pass) << c.rule;
    EXPECT_EQ(status_of(v, c.rule), "fail") << c.rule;
    ASSERT_FALSE(v.reasons.empty()) << c.rule;
    std::string all;
    for (const auto& r : v.reasons) all += r + "\n";
    EXPECT_NE(all.find(c.words), std::string::npos) << c.rule << ": " << all;
    // Only the spoiled rule fails.
    for (const auto& r : v.rules) {
      if (r.id != c.rule) {
        EXPECT_NE(r.status, "fail") << c.rule << " also failed " << r.id;
      }
    }
  }
}

TEST(StressVerdict, WhatCannotBeObservedIsSkippedNeverPassed) {
  VerdictInput in = healthy();
  in.xid_readable = false;
  in.xid_unreadable_why = "/dev/kmsg (Operation not permitted)";
  in.telemetry.reset();
  const auto v = judge_device(in, {});
  EXPECT_TRUE(v.pass);  // a skip does not fail a device...
  EXPECT_EQ(status_of(v, "xid"), "skip");
  for (const char* id : {"ecc", "row_remap", "thermal", "power_brake", "clock_floor"})
    EXPECT_EQ(status_of(v, id), "skip") << id;
  // ...and a CPU without telemetry has no telemetry rules at all.
  in.telemetry_expected = false;
  EXPECT_EQ(status_of(judge_device(in, {}), "ecc"), "absent");
  // A 9.5 % drop is within the 10 % rule; a single window is not judged.
  VerdictInput w = healthy();
  w.records = {ok_record("gemm", {10, 9.05}), ok_record("memory", {10})};
  EXPECT_EQ(status_of(judge_device(w, {}), "throughput_windows"), "pass");
}

TEST(StressVerdict, AnXidOutsideTheFleetListIsANoteNotAFailure) {
  VerdictInput in = healthy();
  in.xids.push_back({13, "0000:17:00", " Graphics Exception", std::nullopt, ""});
  const auto v = judge_device(in, {});
  EXPECT_TRUE(v.pass);
  EXPECT_EQ(v.notes.size(), 2u);
}

// ---------------------------------------------------------------- comparisons

TEST(StressCompare, BitwiseCountsEveryDifferingElement) {
  std::vector<std::uint16_t> a(10000, 0x3C00), b = a;
  EXPECT_EQ(compare_bitwise(a.data(), b.data(), a.size(), 2).count, 0u);
  b[4097] ^= 1;
  b[9999] ^= 0x8000;
  const auto d = compare_bitwise(a.data(), b.data(), a.size(), 2);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.first_index, 4097u);
}

TEST(StressCompare, ToleranceAcceptsRoundingAndCatchesAWrongElement) {
  const GemmShape s{8, 8, 64};
  auto in = bench::make_gemm_inputs(DType::kF32, s, 1);
  bench::HostBuffer ref = bench::make_output(DType::kF32, 64),
                    got = bench::make_output(DType::kF32, 64);
  for (std::size_t i = 0; i < 64; ++i) {
    double c = 0;
    for (std::size_t l = 0; l < 64; ++l) c += in.a.get((i / 8) * 64 + l) * in.b.get(l * 8 + i % 8);
    ref.set(i, c);
    got.set(i, c * (1 + 1e-7));  // a rounding-sized difference
  }
  ToleranceCompare cmp(s, in.a, in.b, DType::kF32);
  EXPECT_EQ(cmp.compare(ref, got).count, 0u);
  got.set(17, ref.get(17) + 1.0);
  got.set(40, std::numeric_limits<double>::quiet_NaN());
  const auto d = cmp.compare(ref, got);
  EXPECT_EQ(d.count, 2u);
  EXPECT_EQ(d.first_index, 17u);
}

// ---------------------------------------------------------------- kernel log

TEST(StressXid, LinesParseAndMatchTheDeviceByPciAddress) {
  const auto xids = host::parse_xids(
      "6,1,2,-;NVRM: Xid (PCI:0000:17:00): 79, pid=1234, GPU has fallen off the bus.\n"
      "[ 12.5] NVRM: Xid (PCI:0000:00:06): 48, An uncorrectable double bit error\n"
      "unrelated line\n");
  ASSERT_EQ(xids.size(), 2u);
  EXPECT_EQ(xids[0].code, 79);
  EXPECT_EQ(xids[0].pci, "0000:17:00");
  EXPECT_TRUE(host::same_pci_device(xids[0].pci, "00000000:17:00.0"));
  EXPECT_TRUE(host::same_pci_device(xids[1].pci, "0000:00:06.0"));
  EXPECT_FALSE(host::same_pci_device(xids[1].pci, "0000:00:07.0"));
  EXPECT_FALSE(host::same_pci_device("garbage", "0000:00:07.0"));
}

TEST(StressXid, AWatchSeesOnlyWhatIsWrittenAfterItBegan) {
  const std::string root = ::testing::TempDir() + "/stress_kmsg_root_" + std::to_string(::getpid());
  std::filesystem::create_directories(root + "/dev");
  const std::string kmsg = root + "/dev/kmsg";
  std::ofstream(kmsg) << "6,1,1,-;NVRM: Xid (PCI:0000:17:00): 79, before the run\n";
  host::KernelLogWatch watch(root);
  ASSERT_TRUE(watch.readable()) << watch.why();
  std::ofstream(kmsg, std::ios::app) << "6,2,2,-;NVRM: Xid (PCI:0000:17:00): 48, during it\n";
  const auto xids = host::parse_xids(watch.read_new());
  ASSERT_EQ(xids.size(), 1u);
  EXPECT_EQ(xids[0].code, 48);
  // A root without a kmsg: unreadable, with why, never an error.
  host::KernelLogWatch none(root + "/nowhere");
  EXPECT_FALSE(none.readable());
  EXPECT_NE(none.why().find("/dev/kmsg"), std::string::npos);
  EXPECT_TRUE(none.read_new().empty());
  std::filesystem::remove_all(root);
}

// ---------------------------------------------------------------- CPU primitives

TEST(StressCpuPrimitives, ChecksumIsTheSumOfTheSharedTerms) {
  std::vector<std::uint64_t> w(100003);
  std::iota(w.begin(), w.end(), 7);
  std::uint64_t expect = 0;
  for (std::size_t i = 0; i < w.size(); ++i) expect += stress_math::checksum_term(w[i], i);
  EXPECT_EQ(cpu::checksum_words(w.data(), w.size(), 2), expect);
  // Two opposite flips of one bit in two words do not cancel.
  w[10] ^= 1u << 4;
  w[20] ^= 1u << 4;
  EXPECT_NE(cpu::checksum_words(w.data(), w.size(), 2), expect);
}

TEST(StressCpuPrimitives, MemtestWritesChecksAndFindsTheLowestBadWord) {
  namespace sm = stress_math;
  std::vector<std::uint64_t> w(70001);
  std::uint64_t result[2] = {0, std::numeric_limits<std::uint64_t>::max()};
  const MemPattern none{}, rnd{sm::PatternKind::kRandom, 42},
      addr{sm::PatternKind::kAddress, ~0ull};
  cpu::memtest_words(w.data(), w.size(), 1000, none, rnd, result, 2);
  EXPECT_EQ(w[5], sm::pattern_value(sm::PatternKind::kRandom, 42, 1005));
  cpu::memtest_words(w.data(), w.size(), 1000, rnd, addr, result, 2);
  EXPECT_EQ(result[0], 0u);
  EXPECT_EQ(w[5], 1005 ^ ~0ull);
  w[60000] ^= 1;
  w[123] ^= 2;
  cpu::memtest_words(w.data(), w.size(), 1000, addr, none, result, 2);
  EXPECT_EQ(result[0], 2u);
  EXPECT_EQ(result[1], 1123u);
}

TEST(StressCpuPrimitives, TheDeviceInterfaceGivesTheSameAnswers) {
  auto backend = make_backend("cpu", {});
  auto dev = backend->open_device("cpu", {});
  StressOps* ops = dev->stress_ops();
  ASSERT_NE(ops, nullptr);
  std::vector<std::uint64_t> host(4099);
  std::iota(host.begin(), host.end(), 1);
  auto buf = dev->allocate(host.size() * 8);
  dev->upload(*buf, host.data(), host.size() * 8);
  auto sums = dev->allocate(16);
  ops->checksum(*buf, host.size(), *sums, 1);
  std::uint64_t got[2] = {};
  dev->download(got, *sums, 16);
  EXPECT_EQ(got[1], cpu::checksum_words(host.data(), host.size(), 1));
  const std::uint64_t word = 0xABCD;
  ops->upload_at(*buf, 8 * 4098, &word, 8);
  std::uint64_t back = 0;
  ops->download_at(&back, *buf, 8 * 4098, 8);
  EXPECT_EQ(back, 0xABCDu);
  EXPECT_THROW(ops->upload_at(*buf, 8 * 4099, &word, 8), std::logic_error);
  const MemoryInfo m = ops->memory_info();
  EXPECT_TRUE(m.host_memory);
  EXPECT_GT(m.free_bytes, 0u);
}

}  // namespace

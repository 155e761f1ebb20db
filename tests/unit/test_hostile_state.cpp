// Files gpucheck keeps for itself, written by someone hostile or broken: nesting far past any
// sane depth (which crashed whatever copied or serialised it), a FIFO or directory in the file's
// place, a file too large, malformed counters, and a state file of many events (which doubled
// with every new one and was judged in quadratic time). Each is read without a crash or a hang,
// set aside when damaged, and bounded when merely long.
#include "core/errors.h"
#include "core/json_input.h"
#include "doctor/check.h"
#include "doctor/health_state.h"
#include "scratch_root.h"
#if GPUCHECK_HAVE_OPENCL
#include "backends/opencl/gemm_choice.h"
#include "backends/opencl/gemm_tuning_cache.h"
#endif

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace gpucheck {
namespace {

namespace fs = std::filesystem;
using doctor::CheckResult;
using doctor::CheckStatus;
using doctor::HealthState;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

// `depth` arrays inside each other, in a key of an otherwise ordinary object.
std::string nested(std::size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string usage_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

// ---------------------------------------------------------------- the reader

class KeptJson : public testing::ScratchRoot {};

TEST_F(KeptJson, EveryOutcomeIsToldApartWithoutBlocking) {
  using Outcome = KeptJsonFile::Outcome;
  EXPECT_EQ(read_kept_json_file(root_ / "none.json", 1024).outcome, Outcome::kMissing);

  write("good.json", R"({"a": [1, 2]})");
  auto r = read_kept_json_file(root_ / "good.json", 1024);
  ASSERT_EQ(r.outcome, Outcome::kParsed) << r.why;
  EXPECT_EQ(r.doc["a"][1], 2);

  write("deep.json", "{\"a\": " + nested(100000) + "}");
  r = read_kept_json_file(root_ / "deep.json", 1 << 20);
  EXPECT_EQ(r.outcome, Outcome::kDamaged);
  EXPECT_THAT(r.why, HasSubstr("nested deeper than 64 levels"));

  write("bad.json", "{\"a\": ");
  r = read_kept_json_file(root_ / "bad.json", 1024);
  EXPECT_EQ(r.outcome, Outcome::kDamaged);
  EXPECT_THAT(r.why, HasSubstr("not JSON"));

  // Too large is judged by its size, never read: a sparse file of 5 MiB costs nothing.
  write("big.json", "{}");
  fs::resize_file(root_ / "big.json", 5u << 20);
  r = read_kept_json_file(root_ / "big.json", 1 << 20);
  EXPECT_EQ(r.outcome, Outcome::kDamaged);
  EXPECT_THAT(r.why, HasSubstr("5242880 bytes; the limit is 1048576"));

  ASSERT_EQ(::mkfifo((root_ / "fifo").c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  r = read_kept_json_file(root_ / "fifo", 1024);
  EXPECT_EQ(r.outcome, Outcome::kUnreadable);
  EXPECT_EQ(r.why, "it is a FIFO");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  r = read_kept_json_file(root_, 1024);
  EXPECT_EQ(r.outcome, Outcome::kUnreadable);
  EXPECT_EQ(r.why, "it is a directory");
}

TEST_F(KeptJson, ChildTextTooDeepIsDiscardedNotParsed) {
  EXPECT_TRUE(parse_json_or_discarded("{\"event\": " + nested(100000) + "}").is_discarded());
  EXPECT_TRUE(parse_json_or_discarded("not json").is_discarded());
  EXPECT_TRUE(parse_json_or_discarded("[1e999]").is_discarded());
  EXPECT_EQ(parse_json_or_discarded(R"({"event":"cell"})")["event"], "cell");
}

TEST_F(KeptJson, ABadFileIsSetAsideBesideItself) {
  write("cache.json", "garbage");
  std::string why;
  auto bad = set_aside_bad_file(root_ / "cache.json", &why);
  ASSERT_TRUE(bad.has_value()) << why;
  EXPECT_EQ(*bad, root_ / "cache.json.bad");
  EXPECT_FALSE(fs::exists(root_ / "cache.json"));
  EXPECT_EQ(slurp(*bad), "garbage");
  EXPECT_FALSE(set_aside_bad_file(root_ / "cache.json", &why).has_value());
  EXPECT_THAT(why, HasSubstr("No such file"));
}

// ---------------------------------------------------------------- doctor's state file

class StateFile : public testing::ScratchRoot {
 protected:
  fs::path path() const { return root_ / "state.json"; }
  fs::path bad() const { return root_ / "state.json.bad"; }
  void write_state(const Json& doc) { write("state.json", doc.dump()); }
  // nvidia_xid's result as the check leaves it: the counts it judged against, its verdict.
  static CheckResult xid(CheckStatus status, const std::string& finding, long long lines) {
    CheckResult r;
    r.id = "nvidia_xid";
    r.status = status;
    r.finding = finding;
    r.state = {{"boot_id", "b1"}, {"counts", {{"0000:17:00 79", lines}}}};
    return r;
  }
};

TEST_F(StateFile, NestingFarTooDeepIsSetAsideNotCrashedOn) {
  write("state.json",
        R"({"schema":"gpucheck-state/1","checks":{"nvidia_xid":)" + nested(100000) + "}}");
  const std::string before = slurp(path());
  HealthState s = HealthState::load(path());
  EXPECT_THAT(s.damage(), HasSubstr("nested deeper than 64 levels"));
  EXPECT_THAT(s.damage(), HasSubstr("set aside as '" + bad().string() + "'"));
  EXPECT_FALSE(fs::exists(path()));
  EXPECT_EQ(slurp(bad()), before);
  EXPECT_TRUE(s.saved_checks().empty());
  EXPECT_TRUE(s.unacknowledged().empty());
}

TEST_F(StateFile, MalformedCountersAreDroppedSoTheCheckJudgesTheWholeLog) {
  Json good_event = {
      {"check", "nvidia_ecc"}, {"status", "fail"}, {"finding", "a remap"}, {"time", "t0"}};
  for (const Json& kept : {Json{{"boot_id", "b1"}, {"counts", "eighteen"}},
                           Json{{"boot_id", "b1"}, {"counts", {{"0000:17:00 79", "18"}}}},
                           Json{{"boot_id", 7}, {"counts", Json::object()}}, Json::array()}) {
    write_state({{"schema", "gpucheck-state/1"},
                 {"checks", {{"nvidia_xid", kept}, {"other", {{"x", 1}}}}},
                 {"events", {good_event}}});
    HealthState s = HealthState::load(path());
    EXPECT_THAT(s.damage(), HasSubstr("what nvidia_xid keeps")) << kept;
    EXPECT_TRUE(fs::exists(bad()));
    // What was sound is kept: the other check's counters, the event.
    EXPECT_FALSE(s.saved_checks().contains("nvidia_xid"));
    EXPECT_TRUE(s.saved_checks().contains("other"));
    ASSERT_EQ(s.unacknowledged().size(), 1u);

    // The check judged against no counters fails on the log's lines; the damage is in its result
    // and raises no event of its own.
    std::vector<CheckResult> results{xid(CheckStatus::kFail, "Xid 79 ×18: NVIDIA Xid errors", 18)};
    auto raised = s.apply(results, "t1");
    ASSERT_EQ(raised.size(), 1u);
    EXPECT_EQ(raised[0].finding, "Xid 79 ×18: NVIDIA Xid errors");
    EXPECT_EQ(results[0].status, CheckStatus::kFail);
    EXPECT_THAT(results[0].finding, HasSubstr("the state file was damaged and set aside"));
    EXPECT_THAT(results[0].evidence.back(), HasSubstr(bad().string()));
    s.save(path());
    HealthState again = HealthState::load(path());
    EXPECT_EQ(again.damage(), "");
    EXPECT_EQ(again.saved_checks()["nvidia_xid"]["counts"]["0000:17:00 79"], 18);
    fs::remove(bad());
  }
}

TEST_F(StateFile, AStateThatWasDamagedWithNothingFoundIsAWarning) {
  write("state.json", "{\"schema\":\"gpucheck-state/1\",\"events\":{}}");
  HealthState s = HealthState::load(path());
  EXPECT_THAT(s.damage(), HasSubstr("\"events\" is not an array"));
  std::vector<CheckResult> results{xid(CheckStatus::kPass, "no NVIDIA Xid error", 0)};
  EXPECT_TRUE(s.apply(results, "t1").empty());
  EXPECT_EQ(results[0].status, CheckStatus::kWarn);
  EXPECT_FALSE(results[0].fix.empty());
}

TEST_F(StateFile, MalformedEventsAreDroppedAndTheRestKept) {
  write_state({{"schema", "gpucheck-state/1"},
               {"events",
                {{{"check", "nvidia_xid"}, {"finding", 5}},
                 {{"status", "fail"}},
                 {{"check", "nvidia_xid"}, {"status", "melted"}},
                 {{"check", "nvidia_xid"}, {"count", 0}},
                 "text",
                 {{"check", "nvidia_xid"}, {"status", "warn"}, {"finding", "kept"}}}}});
  HealthState s = HealthState::load(path());
  EXPECT_THAT(s.damage(), HasSubstr("its event 0 has a \"finding\" that is not a string"));
  ASSERT_EQ(s.unacknowledged().size(), 1u);
  EXPECT_EQ(s.unacknowledged()[0].finding, "kept");
}

TEST_F(StateFile, WhatIsNoStateFileIsRefusedAndLeftAlone) {
  ASSERT_EQ(::mkfifo(path().c_str(), 0600), 0);
  const auto t0 = std::chrono::steady_clock::now();
  std::string m = usage_message([&] { HealthState::load(path()); });
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  EXPECT_THAT(m, HasSubstr("it is a FIFO"));
  EXPECT_THAT(m, Not(HasSubstr("Success")));
  EXPECT_TRUE(fs::exists(path()));
  fs::remove(path());

  fs::create_directories(path());
  m = usage_message([&] { HealthState::load(path()); });
  EXPECT_THAT(m, HasSubstr("it is a directory"));
  fs::remove(path());

  // JSON of another kind is someone else's file: refused, never moved.
  write("state.json", R"({"schema":"gpucheck/1","results":[]})");
  m = usage_message([&] { HealthState::load(path()); });
  EXPECT_THAT(m, HasSubstr("is not a gpucheck state file"));
  EXPECT_TRUE(fs::exists(path()));
  EXPECT_FALSE(fs::exists(bad()));
}

// A count of 2^63 or more was read as a negative number (every later line "new", or with a
// wrapped sum none): counts and event counts above 2^53 are damage, set aside.
TEST_F(StateFile, CountsOf2To63AndAboveAreDamageNotNegative) {
  write("state.json",
        R"({"schema":"gpucheck-state/1","checks":{"nvidia_xid":{"boot_id":"b1","counts":)"
        R"({"0000:17:00 79":9223372036854775808}}}})");
  HealthState s = HealthState::load(path());
  EXPECT_THAT(s.damage(), HasSubstr("whole numbers up to 2^53"));
  EXPECT_FALSE(s.saved_checks().contains("nvidia_xid"));
  fs::remove(bad());

  write("state.json",
        R"({"schema":"gpucheck-state/1","events":[{"check":"nvidia_xid","status":"fail",)"
        R"("finding":"Xid 79","time":"t0","count":18446744073709551615,"last_time":"t1"}]})");
  HealthState e = HealthState::load(path());
  EXPECT_THAT(e.damage(), HasSubstr("count that is no whole number from 1 to 2^53"));
  EXPECT_TRUE(e.unacknowledged().empty());
}

TEST_F(StateFile, AFileTooLargeIsSetAsideUnread) {
  write("state.json", "{}");
  fs::resize_file(path(), doctor::kMaxStateBytes + 1);
  HealthState s = HealthState::load(path());
  EXPECT_THAT(s.damage(), HasSubstr(std::to_string(doctor::kMaxStateBytes + 1) + " bytes"));
  EXPECT_TRUE(fs::exists(bad()));
}

TEST_F(StateFile, ANewEventKeepsOnlyItsOwnFindingSoTheFileGrowsLinearly) {
  std::vector<std::size_t> sizes;
  for (int run = 1; run <= 6; ++run) {
    HealthState s = HealthState::load(path());
    std::vector<CheckResult> results{xid(
        CheckStatus::kFail, fmt::format("Xid 79 ×1: new NVIDIA Xid errors (run {})", run), run)};
    auto raised = s.apply(results, fmt::format("t{}", run));
    ASSERT_EQ(raised.size(), 1u);
    EXPECT_EQ(raised[0].finding, fmt::format("Xid 79 ×1: new NVIDIA Xid errors (run {})", run));
    if (run > 1) {
      EXPECT_THAT(results[0].finding, HasSubstr("unacknowledged since t1"));
    }
    s.save(path());
    sizes.push_back(fs::file_size(path()));
  }
  for (const auto& e : HealthState::load(path()).unacknowledged())
    EXPECT_THAT(e.finding, Not(HasSubstr("unacknowledged")));
  // Each run adds one event of the same size: equal steps, not doubling.
  const std::size_t step = sizes[1] - sizes[0];
  for (std::size_t i = 2; i < sizes.size(); ++i) EXPECT_LE(sizes[i] - sizes[i - 1], step + 8);
}

TEST_F(StateFile, ManyEventsAreFoldedIntoTheOldestAndJudgedInLinearTime) {
  constexpr std::size_t kEvents = 20000;
  Json events = Json::array();
  for (std::size_t i = 0; i < kEvents; ++i)
    events.push_back({{"check", "nvidia_xid"},
                      {"status", i == 5 ? "fail" : "warn"},
                      {"finding", fmt::format("Xid 13 ×1: NVIDIA Xid errors ({})", i)},
                      {"time", fmt::format("t{:05}", i)}});
  events.push_back({{"check", "nvidia_xid"}, {"finding", "old"}, {"acknowledged", "t"}});
  write_state({{"schema", "gpucheck-state/1"}, {"events", events}});
  const auto t0 = std::chrono::steady_clock::now();
  HealthState s = HealthState::load(path());
  EXPECT_EQ(s.damage(), "");
  auto open = s.unacknowledged();
  ASSERT_EQ(open.size(), doctor::kMaxOpenEvents);
  EXPECT_EQ(open[0].count, kEvents - doctor::kMaxOpenEvents + 1);
  EXPECT_EQ(open[0].time, "t00000");
  EXPECT_EQ(open[0].status, CheckStatus::kFail);  // the worst of those folded
  EXPECT_EQ(open.back().time, fmt::format("t{:05}", kEvents - 1));

  std::vector<CheckResult> results{xid(CheckStatus::kPass, "no new NVIDIA Xid error", 0)};
  s.apply(results, "now");
  EXPECT_EQ(results[0].status, CheckStatus::kFail);
  EXPECT_THAT(results[0].finding,
              HasSubstr(fmt::format("unacknowledged since t00000: Xid 13 ×1: NVIDIA Xid errors "
                                    "(0) (+{} later events, the last at t{:05})",
                                    kEvents - 1, kEvents - 1)));
  EXPECT_LT(results[0].finding.size(), 400u);
  EXPECT_LT(results[0].evidence.size(), 12u);
  EXPECT_EQ(s.acknowledge("nvidia_xid", "later"), kEvents);
  s.save(path());
  EXPECT_LT(fs::file_size(path()), 32u << 10);
  // A bound against the old stall (200,000 events took 58 s): 0.26 s in the release build; ASan
  // + UBSan run the same work about 40 times slower (11.6 s beside other tests on 2 cores), so
  // only that build gets a wider bound.
#if defined(__SANITIZE_ADDRESS__)
  constexpr auto kBound = std::chrono::seconds(60);
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  constexpr auto kBound = std::chrono::seconds(60);
#else
  constexpr auto kBound = std::chrono::seconds(10);
#endif
#else
  constexpr auto kBound = std::chrono::seconds(10);
#endif
  EXPECT_LT(std::chrono::steady_clock::now() - t0, kBound);
}

// ---------------------------------------------------------------- the OpenCL tuning cache

#if GPUCHECK_HAVE_OPENCL

class TuningCacheFile : public testing::ScratchRoot {
 protected:
  opencl::TuningIdentity id() const {
    return {"Portable Computing Language", "pthread-cpu", "3.1", "0.9.0", ""};
  }
  // Tunes f32 against a trial that always verifies; the warnings come back.
  std::vector<std::string> choose(opencl::GemmChoice* choice) {
    std::vector<std::string> warnings;
    opencl::GemmTuningTarget t;
    t.identity = id();
    t.limits.max_work_group = 1024;
    t.limits.max_items[0] = t.limits.max_items[1] = 1024;
    t.limits.local_mem_bytes = 49152;
    t.default_budget_s = 0.02;
    t.shape = {64, 64, 64};
    t.use = [](const opencl::GemmCandidate&) {};
    GemmTuningRequest req;
    req.mode = TuningMode::kAuto;
    req.cache_dir = root_.string();
    req.log = [&](TuningLog l, const std::string& m) {
      if (l == TuningLog::kWarn) warnings.push_back(m);
    };
    *choice = opencl::choose_gemm(DType::kF32, t, req, [](const GemmShape&, int, bool) {
      return GemmTrialResult{true, 0.001, "", 0};
    });
    return warnings;
  }
};

TEST_F(TuningCacheFile, AKeyNestedFarTooDeepIsSetAsideAndTheCacheRebuilt) {
  const fs::path path = opencl::tuning_cache_path(root_, id());
  Json doc = opencl::new_tuning_cache(id());
  std::string text = doc.dump();
  text.insert(text.size() - 1, ",\"x\":" + nested(400000));
  write(path.filename().string(), text);
  auto read = opencl::read_tuning_cache(path, id());
  EXPECT_EQ(read.state, opencl::CacheState::kCorrupt);
  EXPECT_THAT(read.why, HasSubstr("nested deeper than 64 levels"));

  opencl::GemmChoice choice;
  auto warnings = choose(&choice);
  EXPECT_EQ(choice.state, "tuned");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("nested deeper"));
  EXPECT_THAT(warnings[0], HasSubstr("set aside as " + path.string() + ".bad"));
  EXPECT_EQ(slurp(path.string() + ".bad"), text);
  EXPECT_EQ(opencl::read_tuning_cache(path, id()).state, opencl::CacheState::kUsable);
  EXPECT_TRUE(choose(&choice).empty());
  EXPECT_EQ(choice.state, "cached");
}

#endif  // GPUCHECK_HAVE_OPENCL

}  // namespace
}  // namespace gpucheck

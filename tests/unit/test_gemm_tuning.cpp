// GEMM tuning without a device: the kernel's parameter space, the search driven by a
// model of a device and a fake clock, the cache file and the choice between cache and search.
#if GPUCHECK_HAVE_OPENCL

#include "backends/opencl/gemm_choice.h"
#include "backends/opencl/gemm_params.h"
#include "backends/opencl/gemm_tuner.h"
#include "backends/opencl/gemm_tuning_cache.h"
#include "core/files.h"
#include "core/output_file.h"
#include "scratch_root.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <set>
#include <stdexcept>
#include <utility>

namespace gpucheck::opencl {
namespace {

// A cache file as gpucheck writes it (its directory created first).
void save(const std::filesystem::path& p, std::string_view text) {
  std::filesystem::create_directories(p.parent_path());
  gpucheck::write_output_file(p.string(), text, "test");
}

using ::testing::HasSubstr;

GemmLimits gpu_limits() {
  GemmLimits l;
  l.max_work_group = 1024;
  l.max_items[0] = l.max_items[1] = 1024;
  l.local_mem_bytes = 49152;
  return l;
}

GemmLimits cpu_limits() {
  GemmLimits l;
  l.max_work_group = 4096;
  l.max_items[0] = l.max_items[1] = 4096;
  l.local_mem_bytes = 1 << 20;
  l.cpu = true;
  return l;
}

const DType kDtypes[] = {DType::kF32, DType::kF64, DType::kF16};

TEST(GemmParams, SeedsSamplesAndNeighboursAreValid) {
  std::mt19937_64 rng(7);
  for (const GemmLimits& limits : {gpu_limits(), cpu_limits()})
    for (DType dt : kDtypes) {
      SCOPED_TRACE(std::string(to_string(dt)) + (limits.cpu ? " cpu" : " gpu"));
      const auto s = seeds(limits, dt);
      ASSERT_FALSE(s.empty());
      for (const auto& p : s) EXPECT_EQ(invalid_reason(p, limits, dt), std::nullopt) << describe(p);
      EXPECT_EQ(default_params(limits, dt), s.front());
      std::set<GemmParams> distinct;
      for (int i = 0; i < 300; ++i) {
        auto p = sample(rng, limits, dt);
        ASSERT_TRUE(p.has_value());
        EXPECT_EQ(invalid_reason(*p, limits, dt), std::nullopt) << describe(*p);
        distinct.insert(*p);
        for (const auto& q : neighbours(*p, limits, dt)) {
          EXPECT_EQ(invalid_reason(q, limits, dt), std::nullopt) << describe(q);
          EXPECT_NE(q, *p);
        }
      }
      EXPECT_GT(distinct.size(), 100u);  // a search space, not a handful of points
    }
}

TEST(GemmParams, InvalidReasonNamesTheRule) {
  GemmParams p;  // 64x64 tile, 8x8 items, runs of 4: valid on a GPU
  EXPECT_EQ(invalid_reason(p, gpu_limits(), DType::kF32), std::nullopt);
  GemmLimits small = gpu_limits();
  small.max_work_group = 32;
  EXPECT_THAT(*invalid_reason(p, small, DType::kF32), HasSubstr("work-group limit 32"));
  small = gpu_limits();
  small.local_mem_bytes = 1024;
  EXPECT_THAT(*invalid_reason(p, small, DType::kF32), HasSubstr("local memory"));
  GemmParams q = p;
  q.mwg = 48;
  EXPECT_THAT(*invalid_reason(q, gpu_limits(), DType::kF32), HasSubstr("MWG=48"));
  q = p;
  q.vwn = 16;
  EXPECT_THAT(*invalid_reason(q, gpu_limits(), DType::kF32), HasSubstr("NDIM*VWN"));
  q = p;
  q.sa = false;  // KVA and PADA mean nothing then
  q.kva = 2;
  EXPECT_THAT(*invalid_reason(q, gpu_limits(), DType::kF32), HasSubstr("without SA"));
}

TEST(GemmParams, JsonRoundTripAndStrictReading) {
  GemmParams p{128, 64, 32, 16, 8, 4, 8, 2, 1, true, false, true};
  std::string why;
  auto back = params_from_json(to_json(p), &why);
  ASSERT_TRUE(back.has_value()) << why;
  EXPECT_EQ(*back, p);
  auto j = to_json(p);
  j.erase("KWG");
  EXPECT_FALSE(params_from_json(j, &why));
  EXPECT_THAT(why, HasSubstr("KWG"));
  j = to_json(p);
  j["MWG"] = 48;
  EXPECT_FALSE(params_from_json(j, &why));
  EXPECT_THAT(why, HasSubstr("MWG=48"));
  j = to_json(p);
  j["EXTRA"] = 1;
  EXPECT_FALSE(params_from_json(j, &why));
  EXPECT_FALSE(params_from_json(nlohmann::json::array(), &why));
}

TEST(GemmParams, BuildOptionsAndLaunch) {
  GemmParams p{64, 32, 16, 8, 4, 2, 4, 1, 0, true, true, false};
  const std::string o = build_options(p, DType::kF16, true, false, true);
  for (const char* want :
       {"-DGC_F16", "-DMWG=64", "-DNWG=32", "-DKWG=16", "-DMDIM=8", "-DNDIM=4", "-DVWM=2",
        "-DVWN=4", "-DSA=1", "-DSB=1", "-DMFIRST=0", "-DPF=0", "-DBT=1", "-DEDGE=0", "-DGALIGN=1"})
    EXPECT_THAT(o, HasSubstr(want));
  EXPECT_THAT(build_options(p, DType::kF32, false, true, false), HasSubstr("-DGALIGN=0"));
  // Runs start on vector boundaries only where every leading dimension and offset allows it:
  // KVA for a staged A, VWN for B (unless transposed: read one element at a time) and C.
  p.kva = 4;  // VWN is 4 as well
  EXPECT_TRUE(vector_aligned(p, false, {64, 0, 32, 128, 32, 4}));
  EXPECT_FALSE(vector_aligned(p, false, {66, 0, 32, 128, 32, 4}));  // lda
  EXPECT_FALSE(vector_aligned(p, false, {64, 2, 32, 128, 32, 4}));  // A's offset
  EXPECT_FALSE(vector_aligned(p, false, {64, 0, 30, 128, 32, 4}));  // ldb
  EXPECT_TRUE(vector_aligned(p, true, {64, 0, 30, 127, 32, 4}));    // Bᵀ: element by element
  EXPECT_FALSE(vector_aligned(p, true, {64, 0, 30, 127, 32, 6}));   // C's offset
  p.sa = false;                                                     // A read element by element
  EXPECT_TRUE(vector_aligned(p, false, {65, 3, 32, 128, 32, 4}));
  EXPECT_TRUE(fits_tiles(p, 128, 64, 32));
  EXPECT_FALSE(fits_tiles(p, 100, 64, 32));
  auto l = launch_size(p, 100, 70);  // 2 groups down m, 3 across n
  EXPECT_EQ(l.local[0], 4u);
  EXPECT_EQ(l.local[1], 8u);
  EXPECT_EQ(l.global[0], 3u * 4);
  EXPECT_EQ(l.global[1], 2u * 8);
  p.mfirst = true;
  l = launch_size(p, 100, 70);
  EXPECT_EQ(l.global[0], 2u * 4);
  EXPECT_EQ(l.global[1], 3u * 8);
}

// ---------------------------------------------------------------- the search, on a model

// A device whose GEMM time is a smooth function of the parameters (fastest at MWG=NWG=128,
// KWG=16, runs of 4), with a build cost the first time a candidate runs and a clock that
// advances by what each trial would take.
struct ModelDevice {
  double reference_s = 0.010;
  double build_s = 0.5;
  double reference_build_s = 0;  // the library's own kernels, built on its first call
  double verify_s = 0;           // the host's check of each trial's result
  double now = 0;
  int trials = 0;
  std::set<GemmParams> built;
  std::function<double(const GemmParams&)> time_of = [](const GemmParams& p) {
    auto off = [](double v, double best) { return std::abs(std::log2(v / best)); };
    return 0.004 *
           (1 + 0.3 * off(p.mwg, 128) + 0.3 * off(p.nwg, 128) + 0.2 * off(p.kwg, 16) +
            0.1 * off(p.vwm, 4) + 0.1 * off(p.vwn, 4) + (p.sa ? 0 : 0.5) + (p.sb ? 0 : 0.5));
  };
  std::function<bool(const GemmParams&)> wrong = [](const GemmParams&) { return false; };

  TunerHooks hooks() {
    TunerHooks h;
    h.clock = [this] { return now; };
    h.trial = [this](const GemmCandidate& c, const GemmShape& shape, int reps, bool corrupt) {
      ++trials;
      const double scale =
          static_cast<double>(shape.m) * shape.n * shape.k / (1024.0 * 1024 * 1024);
      double t = (c ? time_of(*c) : reference_s) * scale;
      const double before = now;
      if (c && built.insert(*c).second) now += build_s;
      if (!c) now += std::exchange(reference_build_s, 0.0);
      now += t;  // the untimed first run
      GemmTrialResult r;
      r.first_run_s = now - before;
      now += t * reps + verify_s;
      r.seconds = t;
      r.verified = !corrupt && !(c && wrong(*c));
      if (!r.verified) r.detail = "element 7 is off";
      return r;
    };
    return h;
  }
};

TunerSetup gpu_setup(double budget) {
  TunerSetup s;
  s.limits = gpu_limits();
  s.shape = {1024, 1024, 1024};
  s.budget_s = budget;
  return s;
}

TEST(GemmTuner, FindsAVerifiedWinnerAtLeastAsFastAsTheReferenceWithinTheBudget) {
  ModelDevice dev;
  const TunerSetup setup = gpu_setup(20);
  const TunerResult r = tune_gemm_parameters(setup, dev.hooks());
  ASSERT_TRUE(r.found);
  ASSERT_TRUE(r.best.has_value());  // the model's kernel beats its reference
  ASSERT_TRUE(r.reference_s.has_value());
  EXPECT_LE(r.best_s, *r.reference_s);
  EXPECT_NEAR(r.best_s, dev.time_of(*r.best), 1e-12);
  EXPECT_GT(r.timed, 10);
  // The budget covers the tuning after the library's first call, and most of it is used.
  EXPECT_LE(r.search_s - r.library_first_call_s, setup.budget_s);
  EXPECT_GT(r.search_s, setup.budget_s * 0.5);
}

TEST(GemmTuner, TheReferenceWinsWhenNothingBeatsIt) {
  ModelDevice dev;
  dev.time_of = [](const GemmParams&) { return 0.050; };
  const TunerResult r = tune_gemm_parameters(gpu_setup(5), dev.hooks());
  ASSERT_TRUE(r.found);
  EXPECT_FALSE(r.best.has_value());
  EXPECT_DOUBLE_EQ(r.best_s, *r.reference_s);
}

TEST(GemmTuner, APlantedWrongCandidateIsNeverChosen) {
  ModelDevice dev;
  TunerSetup setup = gpu_setup(10);
  setup.plant_bad_candidate = true;
  const GemmParams planted = seeds(setup.limits, setup.dtype).front();
  // The planted seed is by far the fastest: only its verification can keep it out.
  dev.time_of = [planted](const GemmParams& p) { return p == planted ? 0.0001 : 0.004; };
  const TunerResult r = tune_gemm_parameters(setup, dev.hooks());
  ASSERT_TRUE(r.found);
  EXPECT_NE(r.best, GemmCandidate{planted});
  bool rejected = false;
  for (const auto& x : r.rejected)
    if (x.candidate == GemmCandidate{planted}) {
      rejected = true;
      EXPECT_THAT(x.why, HasSubstr("verification failed"));
    }
  EXPECT_TRUE(rejected);
}

TEST(GemmTuner, WrongAndFailingCandidatesAreRejected) {
  ModelDevice dev;
  dev.wrong = [](const GemmParams& p) { return p.mwg == 128; };  // the model's best tiles
  TunerHooks hooks = dev.hooks();
  auto trial = hooks.trial;
  hooks.trial = [trial](const GemmCandidate& c, const GemmShape& s, int reps, bool corrupt) {
    if (c && c->nwg == 128) throw std::runtime_error("clBuildProgram failed: too many registers");
    return trial(c, s, reps, corrupt);
  };
  const TunerResult r = tune_gemm_parameters(gpu_setup(20), hooks);
  ASSERT_TRUE(r.found);
  ASSERT_TRUE(r.best.has_value());
  EXPECT_NE(r.best->mwg, 128u);
  EXPECT_NE(r.best->nwg, 128u);
  bool saw_throw = false, saw_wrong = false;
  for (const auto& x : r.rejected) {
    saw_throw = saw_throw || x.why.find("too many registers") != std::string::npos;
    saw_wrong = saw_wrong || x.why.find("verification failed: element 7") != std::string::npos;
  }
  EXPECT_TRUE(saw_throw);
  EXPECT_TRUE(saw_wrong);
}

TEST(GemmTuner, NothingVerifiesNothingIsFound) {
  ModelDevice dev;
  dev.reference_s = 0.01;
  TunerHooks hooks = dev.hooks();
  hooks.trial = [&dev](const GemmCandidate&, const GemmShape&, int, bool) {
    dev.now += 0.1;
    return GemmTrialResult{false, 0.001, "all wrong", 0};
  };
  const TunerResult r = tune_gemm_parameters(gpu_setup(2), hooks);
  EXPECT_FALSE(r.found);
  EXPECT_FALSE(r.best.has_value());
  EXPECT_FALSE(r.rejected.empty());
}

// pocl: seconds of build per new candidate, a host check of every result, and the library's
// kernels built on its first call; the search took 49 s of a 20 s budget before these counted.
TEST(GemmTuner, CostlyBuildsAndTheReferenceStayWithinTheBudget) {
  ModelDevice dev;
  dev.build_s = 3;
  dev.reference_build_s = 4;
  dev.verify_s = 0.5;
  const TunerResult r = tune_gemm_parameters(gpu_setup(20), dev.hooks());
  EXPECT_TRUE(r.found);
  EXPECT_GE(r.timed, 2);  // the reference and at least one candidate
  EXPECT_GE(r.library_first_call_s, 4.0);
  EXPECT_LE(r.search_s - r.library_first_call_s, 20.0);
}

TEST(GemmTuner, ASlowDeviceIsTunedOnASmallerShape) {
  ModelDevice dev;
  dev.reference_s = 1.0;  // per GEMM of 1024: far beyond a 20 s budget's share
  const TunerResult r = tune_gemm_parameters(gpu_setup(20), dev.hooks());
  EXPECT_LT(r.shape.m, 1024u);
  EXPECT_EQ(r.shape.m, r.shape.n);
  EXPECT_GE(r.shape.m, 256u);
}

// ---------------------------------------------------------------- the cache file

class TuningCache : public gpucheck::testing::ScratchRoot {
 protected:
  TuningIdentity id() const {
    return {"Portable Computing Language", "pthread-cpu", "3.1", "0.9.0",
            "/lib/libclblast.so.1.5.3"};
  }
  TunerResult result() const {
    TunerResult r;
    r.best = GemmParams{};
    r.best_s = 0.002;
    r.reference_s = 0.003;
    r.shape = {1024, 1024, 1024};
    r.timed = 12;
    r.found = true;
    r.rejected.push_back(
        {GemmParams{32, 32, 16, 8, 8, 4, 4, 1, 0, true, true, false}, "verification failed"});
    return r;
  }
};

TEST_F(TuningCache, AnEntryWrittenIsReadBack) {
  const auto path = tuning_cache_path(root_, id());
  nlohmann::json doc = new_tuning_cache(id());
  doc["dtypes"]["f32"] = tuning_cache_entry(result(), std::nullopt, 20, "2026-11-26T00:00:00Z");
  save(path, doc.dump(2));
  CacheRead r = read_tuning_cache(path, id());
  ASSERT_EQ(r.state, CacheState::kUsable) << r.why;
  std::string why;
  auto c = cached_candidate(r.doc, DType::kF32, &why);
  ASSERT_TRUE(c.has_value()) << why;
  EXPECT_EQ(*c, GemmCandidate{GemmParams{}});
  EXPECT_FALSE(cached_candidate(r.doc, DType::kF64, &why).has_value());
  EXPECT_TRUE(why.empty());
  const auto& e = r.doc["dtypes"]["f32"];
  EXPECT_EQ(e["reference"]["impl"], "clblast");
  EXPECT_DOUBLE_EQ(e["reference"]["seconds"].get<double>(), 0.003);
  EXPECT_EQ(e["rejected"][0]["why"], "verification failed");
  // Only the file itself is left in the directory: no temporary beside it.
  int files = 0;
  for (const auto& f : std::filesystem::directory_iterator(root_)) (void)f, ++files;
  EXPECT_EQ(files, 1);
}

TEST_F(TuningCache, PathsAreStablePerDeviceAndIgnoreTheDriver) {
  TuningIdentity a = id(), b = id(), other = id();
  b.driver_version = "4.0";
  other.device_name = "pthread-other";
  EXPECT_EQ(tuning_cache_path(root_, a), tuning_cache_path(root_, b));
  EXPECT_NE(tuning_cache_path(root_, a), tuning_cache_path(root_, other));
  EXPECT_THAT(tuning_cache_path(root_, a).filename().string(), HasSubstr("pthread-cpu"));
}

TEST_F(TuningCache, CorruptForeignAndStaleFilesAreToldApart) {
  const auto path = tuning_cache_path(root_, id());
  EXPECT_EQ(read_tuning_cache(path, id()).state, CacheState::kMissing);
  save(path, "{\"format\": \"gpucheck-opencl-gemm-tuning/1\", \"identi");
  EXPECT_EQ(read_tuning_cache(path, id()).state, CacheState::kCorrupt);
  save(path, "{\"format\": \"something-else/3\"}");
  EXPECT_EQ(read_tuning_cache(path, id()).state, CacheState::kForeign);
  TuningIdentity other = id();
  other.device_name = "Tesla V100";
  save(path, new_tuning_cache(other).dump());
  CacheRead r = read_tuning_cache(path, id());
  EXPECT_EQ(r.state, CacheState::kForeign);
  EXPECT_THAT(r.why, HasSubstr("Tesla V100"));
  TuningIdentity newer = id();
  newer.driver_version = "3.2";
  save(path, new_tuning_cache(newer).dump());
  r = read_tuning_cache(path, id());
  EXPECT_EQ(r.state, CacheState::kStale);
  EXPECT_THAT(r.why, HasSubstr("driver_version '3.2'"));
  nlohmann::json doc = new_tuning_cache(id());
  doc["dtypes"]["f32"] = {{"impl", "kernel"}, {"parameters", {{"MWG", 48}}}};
  save(path, doc.dump());
  r = read_tuning_cache(path, id());
  ASSERT_EQ(r.state, CacheState::kUsable);
  std::string why;
  EXPECT_FALSE(cached_candidate(r.doc, DType::kF32, &why).has_value());
  EXPECT_THAT(why, HasSubstr("unusable"));
}

// ---------------------------------------------------------------- cache or search

class GemmChoiceTest : public TuningCache {
 protected:
  struct Run {
    GemmChoice choice;
    std::vector<std::string> warnings, infos, progress;
    std::vector<double> budgets;
    int trials = 0;
  };
  Run choose(TuningMode mode, const TuningIdentity& identity,
             std::optional<double> budget_s = std::nullopt) {
    Run run;
    GemmTuningTarget t;
    t.identity = identity;
    t.limits = gpu_limits();
    t.untuned = std::nullopt;
    t.default_budget_s = 0.05;
    t.shape = {256, 256, 256};
    GemmCandidate used;
    t.use = [&used](const GemmCandidate& c) { used = c; };
    GemmTuningRequest req;
    req.mode = mode;
    req.budget_s = budget_s;
    req.cache_dir = root_.string();
    req.log = [&run](TuningLog l, const std::string& m) {
      (l == TuningLog::kWarn ? run.warnings : run.infos).push_back(m);
    };
    req.progress = [&run](const std::string& m, double budget_s) {
      run.progress.push_back(m);
      run.budgets.push_back(budget_s);
    };
    // Gpucheck's kernel with 128-wide tiles is the fastest here; CLBlast's defaults are slow.
    GemmTrialFn trial = [&](const GemmShape&, int, bool corrupt) {
      ++run.trials;
      double t = !used ? 0.01 : used->mwg == 128 ? 0.001 : 0.005;
      return GemmTrialResult{!corrupt, t, corrupt ? "planted" : "", 0};
    };
    run.choice = choose_gemm(DType::kF32, t, req, trial);
    EXPECT_EQ(used, run.choice.run);  // the device is left running the choice
    return run;
  }
};

TEST_F(GemmChoiceTest, NoTuneRunsTheDefaultsAndTouchesNoCache) {
  Run r = choose(TuningMode::kOff, id());
  EXPECT_EQ(r.choice.state, "default");
  EXPECT_FALSE(r.choice.run.has_value());
  EXPECT_EQ(r.trials, 0);
  EXPECT_TRUE(std::filesystem::is_empty(root_));
}

TEST_F(GemmChoiceTest, TunesOnceThenReadsTheCacheUntilRetuneOrADriverChange) {
  Run first = choose(TuningMode::kAuto, id());
  EXPECT_EQ(first.choice.state, "tuned");
  ASSERT_TRUE(first.choice.run.has_value());
  EXPECT_EQ(first.choice.run->mwg, 128u);
  EXPECT_GT(first.trials, 1);
  ASSERT_EQ(first.progress.size(), 1u);
  EXPECT_THAT(first.progress[0], HasSubstr("tuning gemm f32"));
  // The budget comes as a number, the same the words say.
  ASSERT_EQ(first.budgets.size(), 1u);
  EXPECT_GT(first.budgets[0], 0);
  EXPECT_THAT(first.progress[0], HasSubstr(fmt::format("(up to {:.0f} s)", first.budgets[0])));
  EXPECT_TRUE(first.warnings.empty());
  ASSERT_TRUE(std::filesystem::exists(tuning_cache_path(root_, id())));

  Run second = choose(TuningMode::kAuto, id());
  EXPECT_EQ(second.choice.state, "cached");
  EXPECT_EQ(second.choice.run, first.choice.run);
  EXPECT_EQ(second.trials, 0);
  EXPECT_TRUE(second.progress.empty());

  Run again = choose(TuningMode::kRetune, id());
  EXPECT_EQ(again.choice.state, "tuned");
  EXPECT_GT(again.trials, 1);

  TuningIdentity new_driver = id();
  new_driver.driver_version = "3.2";
  Run after_update = choose(TuningMode::kAuto, new_driver);
  EXPECT_EQ(after_update.choice.state, "tuned");
  EXPECT_TRUE(after_update.warnings.empty());
  ASSERT_FALSE(after_update.infos.empty());
  EXPECT_THAT(after_update.infos.front(), HasSubstr("driver_version"));
  EXPECT_EQ(choose(TuningMode::kAuto, new_driver).choice.state, "cached");
}

TEST_F(GemmChoiceTest, ACorruptOrForeignFileIsIgnoredWithAWarningAndRewritten) {
  const auto path = tuning_cache_path(root_, id());
  for (const std::string& text : {std::string("not json at all"),
                                  new_tuning_cache({"other", "device", "1", "2", "3"}).dump()}) {
    save(path, text);
    Run r = choose(TuningMode::kAuto, id());
    EXPECT_EQ(r.choice.state, "tuned");
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_THAT(r.warnings[0], HasSubstr("ignoring the tuning cache"));
    EXPECT_THAT(r.warnings[0], HasSubstr("rewritten"));
    EXPECT_EQ(read_tuning_cache(path, id()).state, CacheState::kUsable);
    EXPECT_EQ(choose(TuningMode::kAuto, id()).choice.state, "cached");
  }
}

TEST_F(GemmChoiceTest, AnUnwritableCacheIsAWarningNotAFailure) {
  const auto blocker = root_ / "file";
  write("file", "x");
  GemmTuningTarget t;
  t.identity = id();
  t.limits = gpu_limits();
  t.default_budget_s = 0.05;
  t.shape = {256, 256, 256};
  t.use = [](const GemmCandidate&) {};
  std::vector<std::string> warnings;
  GemmTuningRequest req;
  req.mode = TuningMode::kAuto;
  req.cache_dir = (blocker / "sub").string();  // under a file: cannot be created
  req.log = [&](TuningLog l, const std::string& m) {
    if (l == TuningLog::kWarn) warnings.push_back(m);
  };
  GemmChoice c = choose_gemm(DType::kF32, t, req, [](const GemmShape&, int, bool) {
    return GemmTrialResult{true, 0.001, "", 0};
  });
  EXPECT_EQ(c.state, "tuned");
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_THAT(warnings[0], HasSubstr("not cached"));
}

}  // namespace
}  // namespace gpucheck::opencl

#endif  // GPUCHECK_HAVE_OPENCL

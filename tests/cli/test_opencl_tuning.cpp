// GEMM tuning on opencl0 (pocl in CI), end to end: a small budget tunes and caches (a plain run
// too, within the CPU device's default budget),
// the next run reads the cache, --no-tune runs the library's defaults, --retune searches again,
// a corrupt cache is ignored with a warning and rewritten, a planted wrong candidate is never
// chosen, conv runs the tuned GEMM, probe and doctor never tune, and gpucheck's kernel verifies
// across its parameters (GPUCHECK_TEST_GEMM_PARAMS).
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

bool have_opencl0() {
  auto r = run_gpucheck({"probe", "--json"});
  if (r.exit_code != 0) return false;
  for (const Json parsed = Json::parse(r.out); const auto& b : parsed["backends"])
    if (b["name"] == "opencl")
      for (const auto& d : b.value("devices", Json::array()))
        if (d["device"] == "opencl0") return true;
  return false;
}

// A fresh XDG_CACHE_HOME for one test.
fs::path fresh_cache_home(const std::string& name) {
  fs::path p =
      fs::temp_directory_path() / ("gpucheck-tuning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(p);
  fs::create_directories(p);
  return p;
}

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The one tuning file gpucheck keeps for opencl0 under the cache home.
fs::path cache_file(const fs::path& home) {
  std::vector<fs::path> files;
  if (fs::exists(home / "gpucheck"))
    for (const auto& e : fs::directory_iterator(home / "gpucheck")) files.push_back(e.path());
  EXPECT_EQ(files.size(), 1u);
  return files.empty() ? fs::path() : files.front();
}

std::vector<std::string> bench(std::vector<std::string> extra) {
  std::vector<std::string> a = {"bench",    "--device",  "opencl0", "--no-baseline",
                                "--ops",    "gemm,conv", "--dtype", "f32",
                                "--gemm",   "96x80x72",  "--conv",  "2,3,9,11,4,3,3,2,1",
                                "--layout", "nhwc",      "--reps",  "2",
                                "--warmup", "1",         "--json",  "-v"};
  a.insert(a.end(), extra.begin(), extra.end());
  return a;
}

// The device-time records of opencl0, every one ok and verified.
std::vector<Json> records(const RunResult& r) {
  std::vector<Json> v;
  for (const Json parsed = Json::parse(r.out); const auto& rec : parsed["results"]) {
    if (rec["backend"] != "opencl" || rec["transfers"] != "excluded") continue;
    EXPECT_EQ(rec["status"], "ok") << rec.dump();
    v.push_back(rec);
  }
  EXPECT_FALSE(v.empty()) << r.err;
  return v;
}

// Every GEMM and conv record says the same tuning state and parameters; returns the parameters.
Json tuning_of(const std::vector<Json>& recs, const std::string& state) {
  Json params;
  for (const auto& rec : recs) {
    SCOPED_TRACE(rec.dump());
    const Json& ctx = rec["context"];
    EXPECT_EQ(ctx.value("tuning", ""), state);
    if (params.is_null()) params = ctx["tuning_parameters"];
    EXPECT_EQ(ctx["tuning_parameters"], params);
    const bool kernel = params["impl"] == "kernel";
    EXPECT_EQ(rec["impl"], rec["op"] == "gemm" ? (kernel ? "kernel" : "clblast")
                                               : (kernel ? "im2col+kernel" : "im2col+clblast"));
  }
  return params;
}

TEST(OpenClTuning, TunesCachesAndObeysNoTuneRetuneAndACorruptCache) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  const fs::path home = fresh_cache_home("cycle");
  const std::map<std::string, std::optional<std::string>> env = {{"XDG_CACHE_HOME", home.string()}};

  // 1. A small budget, with a planted wrong candidate among the seeds.
  auto env_plant = env;
  env_plant["GPUCHECK_TEST_PLANT_TUNE"] = "wrong";
  RunResult first = run_gpucheck(bench({"--tune-budget", "2"}), env_plant);
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_THAT(first.err, HasSubstr("tuned gemm f32"));
  const Json tuned = tuning_of(records(first), "tuned");
  const fs::path file = cache_file(home);
  ASSERT_FALSE(file.empty());
  const std::string cached_text = slurp(file);
  const Json doc = Json::parse(cached_text);
  EXPECT_EQ(doc["format"], "gpucheck-opencl-gemm-tuning/1");
  const Json& entry = doc["dtypes"]["f32"];
  EXPECT_EQ(entry["impl"], tuned["impl"]);
  // At least as fast as the defaults, measured in the same search.
  EXPECT_LE(entry["seconds"].get<double>(), entry["reference"]["seconds"].get<double>());
  EXPECT_EQ(entry["reference"]["impl"], "clblast");
  bool planted_rejected = false;
  for (const auto& r : entry["rejected"])
    if (r["why"].get<std::string>().starts_with("verification failed")) {
      planted_rejected = true;
      EXPECT_NE(r.value("parameters", Json()), tuned.value("parameters", Json()))
          << "a candidate that failed verification was chosen";
    }
  EXPECT_TRUE(planted_rejected) << entry.dump();

  // 2. The same command again: read from the cache, nothing searched, nothing rewritten.
  RunResult second = run_gpucheck(bench({}), env);
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_EQ(tuning_of(records(second), "cached"), tuned);
  EXPECT_THAT(second.err, Not(HasSubstr("tuned gemm")));
  EXPECT_EQ(slurp(file), cached_text);

  // 3. --no-tune: CLBlast's defaults, the cache untouched.
  RunResult plain = run_gpucheck(bench({"--no-tune"}), env);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(tuning_of(records(plain), "default"), Json({{"impl", "clblast"}}));
  EXPECT_EQ(slurp(file), cached_text);

  // 4. --retune: searched again although the cache has an entry.
  RunResult again = run_gpucheck(bench({"--retune", "--tune-budget", "1"}), env);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  tuning_of(records(again), "tuned");
  EXPECT_NE(slurp(file), cached_text);

  // 5. A corrupt cache: a warning naming it, a search, the file rewritten whole. No flag: a CPU
  // device is searched within its own small default budget, as a first bench searches it.
  std::ofstream(file, std::ios::trunc) << "{\"format\": \"gpucheck-opencl-gemm-tuning/1\", \"dty";
  RunResult repaired = run_gpucheck(bench({}), env);
  ASSERT_EQ(repaired.exit_code, 0) << repaired.err;
  EXPECT_THAT(repaired.err, HasSubstr("tuned gemm f32"));
  EXPECT_THAT(repaired.err, HasSubstr("ignoring the tuning cache"));
  EXPECT_THAT(repaired.err, HasSubstr(file.string()));
  tuning_of(records(repaired), "tuned");
  const Json rewritten = Json::parse(slurp(file), nullptr, false);
  ASSERT_FALSE(rewritten.is_discarded());
  EXPECT_TRUE(rewritten["dtypes"].contains("f32"));
  EXPECT_EQ(rewritten["dtypes"]["f32"].value("budget_s", 0.0), 5.0) << rewritten.dump();
  fs::remove_all(home);
}

TEST(OpenClTuning, ContradictoryFlagsAreUsageErrors) {
  for (const auto& flags :
       std::vector<std::vector<std::string>>{{"--no-tune", "--retune"},
                                             {"--no-tune", "--tune-budget", "5"},
                                             {"--tune-budget", "0"}}) {
    std::vector<std::string> args = {"bench", "--device", "cpu", "--ops", "gemm"};
    args.insert(args.end(), flags.begin(), flags.end());
    EXPECT_EQ(run_gpucheck(args).exit_code, 2) << flags[0] << " " << flags[1];
  }
}

TEST(OpenClTuning, ProbeAndDoctorNeverTune) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  const fs::path home = fresh_cache_home("probe");
  const std::map<std::string, std::optional<std::string>> env = {{"XDG_CACHE_HOME", home.string()}};
  EXPECT_EQ(run_gpucheck({"probe", "--json"}, env).exit_code, 0);
  run_gpucheck({"doctor", "--json", "--no-load"}, env);
  EXPECT_FALSE(fs::exists(home / "gpucheck"));
  fs::remove_all(home);
}

// gpucheck's kernel across its parameters (staged or direct A and B, vector runs, padding,
// group order, the next slice prefetched or not, whole-vector or element-wise global access, index
// checks, a transposed B through NHWC conv) and dtypes, each run verified.
TEST(OpenClTuning, TheKernelVerifiesAcrossItsParameters) {
  if (!have_opencl0()) GTEST_SKIP() << "no opencl0 here";
  const fs::path home = fresh_cache_home("params");
  struct Case {
    const char* params;
    const char* dtypes;
  };
  const Case cases[] = {
      {R"({"MWG":64,"NWG":64,"KWG":16,"MDIM":8,"NDIM":8,"VWM":4,"VWN":4,"KVA":4,"PADA":2,"SA":1,"SB":1,"MFIRST":0,"PF":1})",
       "f32,f16"},
      {R"({"MWG":32,"NWG":64,"KWG":8,"MDIM":4,"NDIM":16,"VWM":2,"VWN":2,"KVA":2,"PADA":1,"SA":1,"SB":0,"MFIRST":1,"PF":1})",
       "f32,f64"},
      {R"({"MWG":16,"NWG":32,"KWG":16,"MDIM":8,"NDIM":2,"VWM":1,"VWN":16,"KVA":1,"PADA":0,"SA":0,"SB":1,"MFIRST":0,"PF":0})",
       "f16"},
      {R"({"MWG":64,"NWG":32,"KWG":8,"MDIM":8,"NDIM":4,"VWM":2,"VWN":4,"KVA":1,"PADA":0,"SA":0,"SB":1,"MFIRST":0,"PF":1})",
       "f32"},
      {R"({"MWG":4,"NWG":64,"KWG":16,"MDIM":1,"NDIM":1,"VWM":1,"VWN":16,"KVA":1,"PADA":0,"SA":0,"SB":0,"MFIRST":1,"PF":0})",
       "f32,f64"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.params);
    RunResult r = run_gpucheck(
        {"bench", "--device", "opencl0", "--no-baseline", "--ops", "gemm,conv", "--dtype", c.dtypes,
         "--gemm", "96x80x72,64x64x64,50x36x38", "--conv", "2,3,9,11,4,3,3,2,1", "--layout",
         "nchw,nhwc", "--reps", "1", "--warmup", "0", "--json"},
        {{"XDG_CACHE_HOME", home.string()}, {"GPUCHECK_TEST_GEMM_PARAMS", c.params}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto recs = records(r);
    for (const auto& rec : recs) {
      EXPECT_EQ(rec["context"]["tuning_parameters"]["parameters"], Json::parse(c.params));
      EXPECT_TRUE(rec.contains("verification")) << rec.dump();
      if (rec["dtype"] == "f16") {
        EXPECT_EQ(rec["compute_type"], "f32") << rec.dump();
      }
    }
  }
  // Parameters the device cannot run are refused with the rule they break, not run.
  RunResult bad = run_gpucheck(
      {"bench", "--device", "opencl0", "--no-baseline", "--ops", "gemm", "--dtype", "f32", "--gemm",
       "64", "--reps", "1", "--json"},
      {{"XDG_CACHE_HOME", home.string()},
       {"GPUCHECK_TEST_GEMM_PARAMS",
        R"({"MWG":64,"NWG":64,"KWG":16,"MDIM":8,"NDIM":8,"VWM":4,"VWN":16,"KVA":1,"PADA":0,"SA":1,"SB":1,"MFIRST":0,"PF":0})"}});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_THAT(bad.out, HasSubstr("NDIM*VWN"));
  fs::remove_all(home);
}

}  // namespace

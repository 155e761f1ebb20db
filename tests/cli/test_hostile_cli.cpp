// Hostile values at the command line end as exit 2 with a clear message, never as a hang, an
// instant "timeout", a device FAIL or lost data: nested-quantifier regexes, time values that
// overflow the clocks, GEMMs the device cannot run, two outputs naming one file, help written
// to a full disk, empty and dangling output names, secrets under recorded names, repeated sizes.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::RunResult;
using gpucheck::testing::write_small_document;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
namespace fs = std::filesystem;

const std::string kBinary = GPUCHECK_BINARY;

std::string slurp(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// gpucheck under coreutils' timeout: a hang fails the test (exit 124) instead of stalling it.
RunResult run_bounded(int seconds, const std::vector<std::string>& args) {
  std::vector<std::string> full{std::to_string(seconds), kBinary};
  full.insert(full.end(), args.begin(), args.end());
  return run_program("timeout", full);
}

TEST(HostileCli, NestedQuantifiersInNameRegexNeitherHangNorCrash) {
  // ((.*)*)*x kept std::regex busy past 30 s on an 8-character CPU name ("AMD EPYC").
  for (const char* pattern : {"((.*)*)*x", "(a*)*"}) {
    const std::string profile = write_temp_file(
        "redos.toml", std::string("[[require]]\nkind = \"device\"\ndevice = \"cpu\"\n"
                                  "name_regex = \"") +
                          pattern + "\"\n");
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_bounded(30, {"qualify", "--profile", profile, "--json"});
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << pattern << ": " << r.exit_code << r.err;
    EXPECT_LT(s, 20) << pattern;
    const Json doc = Json::parse(r.out);
    EXPECT_EQ(doc["qualify"]["verdicts"][0]["verdict"] == "met", std::string(pattern) == "(a*)*")
        << pattern;
  }
  const std::string bad = write_temp_file(
      "lookahead.toml", "[[require]]\nkind = \"device\"\nname_regex = \"H1(?=00)\"\n");
  auto r = run_gpucheck({"qualify", "--profile", bad, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("lookahead.toml:3:17: require[1].name_regex: expected an "
                               "ECMAScript regex"));
  EXPECT_THAT(r.err, HasSubstr("look-around"));
}

TEST(HostileCli, TimesThatOverflowAreExit2NamingTheMaximum) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{
           {{"doctor", "--quick", "--timeout", "1e10"},
            "--timeout: must be more than 0 and at most "
            "604800 seconds (7 days), not 1e10"},
           {{"bench", "--device", "cpu", "--max-time", "9e9"}, "--max-time: must be more than 0"},
           {{"bench", "--device", "cpu", "--min-time", "1e300"}, "--min-time: must be 0 or more"},
           {{"stress", "--device", "cpu", "--duration", "1e300"},
            "--duration: must be more than 0"},
           {{"stress", "--device", "cpu", "--duration", "1e308h"}, "not 1e308h"},
           {{"stress", "--device", "cpu", "--duration", "nan"}, "--duration: must be"},
           {{"stress", "--device", "cpu", "--hang-timeout", "1e10"}, "--hang-timeout: must be"},
           {{"stress", "--device", "cpu", "--hang-timeout", "-1"}, "--hang-timeout: must be"},
           {{"stress", "--device", "cpu", "--window", "inf"}, "--window: must be"},
           {{"stress", "--device", "cpu", "--probe-timeout", "nan"}, "at most 86400 seconds"},
           {{"stress", "--device", "cpu", "--probe-timeout", "1e10"}, "at most 86400 seconds"}}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_gpucheck(c.args);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 2) << c.args[c.args.size() - 2] << " " << c.args.back() << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.message)) << c.args.back();
    EXPECT_LT(s, 5) << "refused before any work: " << c.args.back();
  }
  const std::string profile = write_temp_file(
      "huge_time.toml",
      "[bench]\nmax_time_s = 1e300\n\n[[require]]\nkind = \"backend\"\nname = \"cpu\"\n"
      "available = true\n");
  auto r = run_gpucheck({"qualify", "--profile", profile, "--json"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("huge_time.toml:2: bench.max_time_s: must be more than 0 and at "
                               "most 604800 seconds"));
  for (const char* command : {"stress", "bench", "doctor"}) {
    auto help = run_gpucheck({command, "--help"});
    EXPECT_EQ(help.exit_code, 0);
    std::string words;  // the help wrapped to the terminal, its lines joined again
    std::istringstream in(help.out);
    for (std::string w; in >> w;) words += w + " ";
    EXPECT_THAT(words, HasSubstr("at most 604800 seconds (7 days)")) << command;
  }
}

TEST(HostileCli, AGemmTheDeviceCannotRunIsABadFlagBeforeAnyChild) {
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--gemm", "1048576"}, "--gemm: 1048576: cpu needs"},  // the largest size accepted
           {{"--gemm", "1099511627776"}, "--gemm: Value 1099511627776 not in range 1 to 1048576"},
           {{"--dtype", "f16"}, "--dtype: the CPU runs the GEMM stress in f32 and f64 only"},
           {{"--dtype", "f32,bf16"}, "not bf16"}}) {
    std::vector<std::string> full{"stress", "--device", "cpu", "--duration", "2s", "--json"};
    full.insert(full.end(), args.begin(), args.end());
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_gpucheck(full);
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.exit_code, 2) << args[1] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(message));
    EXPECT_TRUE(r.out.empty()) << "no document: nothing ran";
    EXPECT_LT(s, 1.5) << "no child started";
  }
}

TEST(HostileCli, TwoOutputsNamingOneFileAreExit2) {
  const std::string out = write_temp_file("same/out.json", "previous");
  const std::string link = (fs::path(out).parent_path() / "alias.xml").string();
  fs::remove(link);
  fs::create_symlink(out, link);
  const std::string profile = std::string(GPUCHECK_SOURCE_DIR) + "/configs/qualify/cpu-only.toml";
  for (const auto& junit : {out, link}) {
    auto r = run_gpucheck({"qualify", "--profile", profile, "--junit", junit, "-o", out});
    EXPECT_EQ(r.exit_code, 2) << junit;
    EXPECT_THAT(r.err, HasSubstr("-o/--output and --junit name the same file"));
  }
  EXPECT_EQ(slurp(out), "previous");
  auto r = run_gpucheck({"doctor", "--only", "env_visible_devices", "--state", out, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-o/--output and --state name the same file"));
}

TEST(HostileCli, HelpAndVersionToAFullDiskAreNotExit0) {
  for (const char* args : {"--help", "--version", "stress --help", "qualify -h"}) {
    auto r = run_program("sh", {"-c", kBinary + " " + args + " >/dev/full"});
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("cannot write to stdout: No space left on device")) << args;
  }
}

TEST(HostileCli, AnEmptyOutputNameIsExit2NotStdout) {
  auto r = run_gpucheck({"report", "show", write_small_document(), "-o", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("an empty file name"));
  EXPECT_TRUE(r.out.empty());
  r = run_gpucheck({"qualify", "--profile", "cpu-only", "--junit", ""});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--junit: an empty file name"));
}

TEST(HostileCli, OutputOverAnotherUsersFileKeepsOwnerAndMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file of another user";
  const std::string theirs = write_temp_file("owned/theirs.json", "old");
  ASSERT_EQ(::chown(theirs.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(theirs.c_str(), 0640), 0);
  auto r = run_gpucheck({"report", "show", write_small_document(), "--json", "-o", theirs});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  struct stat st {};
  ASSERT_EQ(::stat(theirs.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_THAT(slurp(theirs), HasSubstr("gpucheck/1"));
}

TEST(HostileCli, ADanglingOutputLinkWritesItsTarget) {
  const fs::path dir = fs::path(write_temp_file("dangling/keep", "")).parent_path();
  fs::remove(dir / "link.json");
  fs::remove(dir / "target.json");
  fs::create_symlink("target.json", dir / "link.json");
  auto r = run_gpucheck(
      {"report", "show", write_small_document(), "--json", "-o", (dir / "link.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_THAT(slurp(dir / "target.json"), HasSubstr("gpucheck/1"));
}

TEST(HostileCli, SecretsUnderRecordedNamesAreRedactedByShape) {
  const std::string ghp = "ghp_" + std::string("A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp",
                         "4096", "--reps", "2", "--warmup", "0", "--rounds", "1", "--json"},
                        {{"CUDA_CACHE_PATH", "/home/u/.nv/" + ghp},
                         {"NCCL_NET_PLUGIN_PASS", "s3cretPass"},
                         {"GPUCHECK_API_PW", "s3cretPw"},
                         {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,token=s3cretTok"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out + r.err, Not(HasSubstr("s3cret")));
  EXPECT_THAT(r.out + r.err, Not(HasSubstr(ghp)));
  const Json env = Json::parse(r.out)["provenance"]["environment"];
  EXPECT_EQ(env.value("CUDA_CACHE_PATH", ""), "/home/u/.nv/(redacted)");
  EXPECT_EQ(env.value("NCCL_NET_PLUGIN_PASS", ""), "(set, not recorded)");
  EXPECT_EQ(env.value("GPUCHECK_API_PW", ""), "(set, not recorded)");
  EXPECT_EQ(env.value("PYTORCH_CUDA_ALLOC_CONF", ""), "expandable_segments:True,token=(redacted)");
}

TEST(HostileCli, RepeatedConfigSizesAreMeasuredOnce) {
  std::string config = "[tiny]\nexp = [";
  for (int i = 0; i < 20000; ++i) config += "4096,";
  config += "2048, 4096]\n";
  auto r =
      run_gpucheck({"bench", "--device", "cpu", "--config", write_temp_file("rep.toml", config),
                    "--size", "tiny", "--ops", "exp", "--dtype", "f32", "--reps", "1", "--warmup",
                    "0", "--rounds", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json results = Json::parse(r.out)["results"];
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["shape"]["n"], 4096);
  EXPECT_EQ(results[1]["shape"]["n"], 2048);
  EXPECT_THAT(r.err, HasSubstr("20000 repeated sizes ignored"));
}

}  // namespace

// Hostile values at the command line and in profiles, as pure functions: the linear-time
// regex matcher, the one duration reader, secrets found by their shape, repeated sizes, GEMM
// plans a device cannot run, a SIGKILL's likely cause, and output files (same file twice,
// dangling links, another user's file).
#include "app/progress.h"
#include "bench/config.h"
#include "core/duration.h"
#include "core/environment.h"
#include "core/errors.h"
#include "core/output_file.h"
#include "core/safe_regex.h"
#include "qualify/profile.h"
#include "report/text_layout.h"
#include "stress/kill_reason.h"
#include "stress/plan.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace {

using gpucheck::RegexError;
using gpucheck::SafeRegex;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

bool search(const std::string& pattern, const std::string& text) {
  auto re = SafeRegex::compile(pattern);
  if (const auto* e = std::get_if<RegexError>(&re)) ADD_FAILURE() << pattern << ": " << e->message;
  const auto* m = std::get_if<SafeRegex>(&re);
  return m && m->search(text);
}

RegexError error_of(const std::string& pattern) {
  auto re = SafeRegex::compile(pattern);
  if (const auto* e = std::get_if<RegexError>(&re)) return *e;
  ADD_FAILURE() << pattern << " compiled";
  return {};
}

TEST(SafeRegex, NestedQuantifiersRunInLinearTime) {
  // Each of these takes std::regex (or any backtracking matcher) exponential time on a text
  // that almost matches; here 100,000 characters take milliseconds.
  const std::string as(100000, 'a');
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(search("(.*)*x", as));
  EXPECT_FALSE(search("(a+)+b", as));
  EXPECT_FALSE(search("(a|a)*b", as));
  EXPECT_TRUE(search("(a*)*", as));
  EXPECT_FALSE(search("((a*)*(a+)+)*b", as));
  EXPECT_FALSE(search("(((a?)*)+)*c", as));
  EXPECT_TRUE(search("(.*)*x", as + "x"));
  EXPECT_TRUE(search("^(a|aa)+$", as));
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 5.0);
}

TEST(SafeRegex, DevicePatternsMatchAsStdRegexDoes) {
  const std::vector<std::string> names{"NVIDIA H100 80GB HBM3",
                                       "NVIDIA A100-SXM4-40GB",
                                       "NVIDIA GeForce RTX 4090",
                                       "cpu",
                                       "",
                                       "Intel(R) Xeon(R) Platinum 8480+",
                                       "pthread-AMD EPYC 9654",
                                       "Tesla V100-PCIE-16GB",
                                       "H100.x"};
  const std::vector<std::string> patterns{"H100|H200",
                                          "^NVIDIA",
                                          "GB$",
                                          "A100-SXM4-(40|80)GB$",
                                          "[Hh]1[0-9]0",
                                          "\\bH100\\b",
                                          "RTX 40[0-9]0",
                                          "H\\d{3}",
                                          "0{2,3}",
                                          "[^a-zA-Z ]{4}",
                                          "Xeon\\(R\\)",
                                          "\\.x$",
                                          "(?:A|H)100",
                                          "V100.*16",
                                          ".*?EPYC",
                                          "^$",
                                          "Platinum \\d+\\+",
                                          "\\s\\w+$",
                                          "[-.]",
                                          "(a|b|c)+",
                                          "^(cpu|cuda[0-9]+)$",
                                          "H1{0,}0+",
                                          "\\x41100",
                                          "[\\d]{2}GB",
                                          "\\BVIDIA",
                                          "x?",
                                          "0{2}",
                                          "RTX|"};
  for (const auto& p : patterns) {
    const std::regex ref(p, std::regex::ECMAScript);
    for (const auto& n : names)
      EXPECT_EQ(search(p, n), std::regex_search(n, ref)) << "/" << p << "/ on '" << n << "'";
  }
}

TEST(SafeRegex, WhatItCannotDoIsRefusedWithItsPlace) {
  struct Case {
    std::string pattern;
    std::size_t offset;
    std::string message;
  };
  for (const auto& c : std::vector<Case>{{"H100(", 4, "an unclosed group"},
                                         {"ab(?=c)", 2, "look-around"},
                                         {"(a)\\1", 3, "back-references"},
                                         {"a**", 2, "a quantifier right after another"},
                                         {"*a", 0, "nothing to repeat"},
                                         {"x[z-a]", 2, "a range out of order"},
                                         {"a{3,1}", 1, "m below n"},
                                         {"a{99999}", 2, "a repeat count of at most 1000"},
                                         {"a)", 1, "an unmatched ')'"},
                                         {"[abc", 0, "an unclosed class"},
                                         {"\\q", 0, "an unknown escape"},
                                         {"^*", 1, "an anchor cannot be repeated"},
                                         {"(((((((((a)))))))))", 8, "nested at most 8"}}) {
    const RegexError e = error_of(c.pattern);
    EXPECT_EQ(e.offset, c.offset) << c.pattern;
    EXPECT_THAT(e.message, HasSubstr(c.message)) << c.pattern;
  }
  EXPECT_THAT(error_of("(a{1000}){1000}").message, HasSubstr("expand to at most"));
  EXPECT_THAT(error_of(std::string(300, 'a')).message, HasSubstr("at most 256 characters"));
}

TEST(HostileProfileUnits, NestedQuantifiersLoadAndBadPatternsNameFileLineColumn) {
  namespace q = gpucheck::qualify;
  auto profile = [](const std::string& value) {
    return "[[require]]\nkind = \"device\"\nname_regex = " + value + "\n";
  };
  q::Profile p = q::parse_profile(profile("\"(.*)*x\""), "p.toml");
  EXPECT_EQ(p.requirements.at(0).name_regex, "(.*)*x");
  auto error = [&](const std::string& value) {
    try {
      q::parse_profile(profile(value), "p.toml");
    } catch (const gpucheck::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  // The value's quote is column 14; the pattern's third character is column 17.
  EXPECT_THAT(error("\"ab(?=c)\""), HasSubstr("p.toml:3:17: require[1].name_regex: expected an "
                                              "ECMAScript regex"));
  EXPECT_THAT(error("'ab(?=c)'"), HasSubstr("p.toml:3:17:"));
  // A basic string's escaped backslash takes two columns of the file.
  EXPECT_THAT(error("\"\\\\d(?=c)\""), HasSubstr("p.toml:3:18:"));
  EXPECT_THAT(error("\"\\\\d(?=c)\""), HasSubstr("(at character 3 of the pattern)"));
}

TEST(HostileProfileUnits, TimesBeyondTheMaximumAreRefusedWithTheirLine) {
  namespace q = gpucheck::qualify;
  const std::string req = "\n[[require]]\nkind = \"backend\"\nname = \"cpu\"\navailable = true\n";
  for (const auto& [body, expect] : std::vector<std::pair<std::string, std::string>>{
           {"[bench]\nmax_time_s = 1e300",
            "p.toml:2: bench.max_time_s: must be more than 0 and "
            "at most 604800 seconds (7 days)"},
           {"[bench]\nmin_time_s = 1e10", "p.toml:2: bench.min_time_s: must be 0 or more"}}) {
    try {
      q::parse_profile(body + req, "p.toml");
      ADD_FAILURE() << body;
    } catch (const gpucheck::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr(expect));
    }
  }
  for (const char* d : {"1e300", "1e308h", "nan", "-5s", "inf"}) {
    try {
      q::parse_profile(std::string("[[require]]\nkind = \"stress\"\nduration = \"") + d + "\"\n",
                       "p.toml");
      ADD_FAILURE() << d;
    } catch (const gpucheck::UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("p.toml:3: require[1].duration: must be more than 0"));
    }
  }
}

TEST(Duration, OneGrammarWithAMaximum) {
  std::string why;
  EXPECT_EQ(gpucheck::parse_duration_s("90", &why), 90.0);
  EXPECT_EQ(gpucheck::parse_duration_s("90s", &why), 90.0);
  EXPECT_EQ(gpucheck::parse_duration_s("2.5m", &why), 150.0);
  EXPECT_EQ(gpucheck::parse_duration_s("1h", &why), 3600.0);
  EXPECT_EQ(gpucheck::parse_duration_s("168h", &why), gpucheck::kMaxDurationS);
  EXPECT_EQ(gpucheck::parse_duration_s("0", &why, {gpucheck::kMaxDurationS, true}), 0.0);
  for (const char* bad : {"1e10", "9e9", "1e300", "1e308h", "1e999", "nan", "inf", "-inf", "-5",
                          "0", "0s", "604801", "169h", "", "s", "5x", "1e", " 5"}) {
    EXPECT_FALSE(gpucheck::parse_duration_s(bad, &why).has_value()) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
  gpucheck::parse_duration_s("1e10", &why);
  EXPECT_EQ(why, "must be more than 0 and at most 604800 seconds (7 days), not 1e10");
  gpucheck::parse_duration_s("2d", &why);
  EXPECT_THAT(why, HasSubstr("'2d' is not a duration"));
  EXPECT_FALSE(gpucheck::parse_duration_s("90000", &why, {gpucheck::kMaxProbeTimeoutS, false}));
  EXPECT_THAT(why, HasSubstr("at most 86400 seconds (a day)"));
  EXPECT_TRUE(gpucheck::duration_refusal(1e300).has_value());
  EXPECT_FALSE(gpucheck::duration_refusal(20).has_value());
}

// The progress line's time: rounded once, so 119.6 s never reads "1 min 60 s".
TEST(Duration, ElapsedTextCarriesItsRounding) {
  using gpucheck::elapsed_text;
  EXPECT_EQ(elapsed_text(119.6), "2 min 0 s");
  EXPECT_EQ(elapsed_text(59.7), "1 min 0 s");
  EXPECT_EQ(elapsed_text(0.2), "1 s");
  EXPECT_EQ(elapsed_text(45.4), "45 s");
  EXPECT_EQ(elapsed_text(3599.7), "1 h 0 min");
  EXPECT_EQ(elapsed_text(7170), "2 h 0 min");  // 119.5 min
  EXPECT_EQ(elapsed_text(3900), "1 h 5 min");
  EXPECT_EQ(elapsed_text(std::nan("")), "1 s");
}

// The progress line keeps its times first, so an 80-column terminal that cuts the line short
// still shows the estimate.
TEST(Duration, TheProgressEstimateSurvivesANarrowTerminal) {
  gpucheck::app::ProgressState s;
  s.position = "opencl0 12/48";
  s.what = "gemm f32 m=4096 n=4096 k=4096, transfers included, after the tuning of its kernel";
  s.done = 12;
  s.total = 48;
  const std::string line = gpucheck::report::shorten(gpucheck::app::progress_text(s, 30), 79);
  EXPECT_THAT(line, ::testing::StartsWith("[opencl0 12/48] 30 s elapsed \xC2\xB7 about 1 min 30 s "
                                          "left \xC2\xB7 gemm f32"));
}

TEST(SecretShapes, CredentialNamesByTheirParts) {
  for (const char* name : {"NCCL_NET_PLUGIN_PASS", "GPUCHECK_API_PW", "SITE_PWD", "MY_PASSPHRASE",
                           "CUDA_API_TOKEN", "NCCL_KEY"})
    EXPECT_TRUE(gpucheck::is_credential_name(name)) << name;
  for (const char* name : {"PWD", "OLDPWD", "CUDA_BYPASS", "NCCL_COMPASS", "CUDA_VISIBLE_DEVICES",
                           "PYTORCH_CUDA_ALLOC_CONF", "CUDA_CACHE_PATH"})
    EXPECT_FALSE(gpucheck::is_credential_name(name)) << name;
  // A signed URL's signature grants access: Azure's sig=, S3's X-Amz-Signature=.
  for (const char* name : {"sig", "X-Amz-Signature", "X_GOOG_SIG"})
    EXPECT_TRUE(gpucheck::is_credential_name(name)) << name;
  EXPECT_FALSE(gpucheck::is_credential_name("NCCL_SIGNAL_DEBUG"));
}

TEST(SecretShapes, ValuesRedactedByShape) {
  using gpucheck::redact_secret_values;
  const std::string ghp = "ghp_" + std::string("A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
  EXPECT_EQ(redact_secret_values("/cache/" + ghp + "/nv"), "/cache/(redacted)/nv");
  EXPECT_EQ(redact_secret_values("xoxb-123456789012-abcdefABCDEF"), "(redacted)");
  EXPECT_EQ(redact_secret_values("id=AKIAIOSFODNN7EXAMPLE"), "id=(redacted)");
  EXPECT_EQ(redact_secret_values("expandable_segments:True,token=abc123"),
            "expandable_segments:True,token=(redacted)");
  EXPECT_EQ(redact_secret_values("user=bob;password=hunter2;x=1"),
            "user=bob;password=(redacted);x=1");
  EXPECT_EQ(redact_secret_values("k:Zx8Qm2Lp9Vt4Rw7Yn3Bc6Hd1Jf5Gs0Ka"), "k:(redacted)");
  // Base64 with '/' and '+' (an AWS secret access key), which the token pass cut into pieces.
  EXPECT_EQ(redact_secret_values("wJ2lrXUtnFEMI/K7MDENG/bPxRfiCYzx8Q1pLw+3"), "(redacted)");
  EXPECT_EQ(redact_secret_values("k=v,s:wJ2lrXUtnFEMI/K7MDENG/bPxRfiCYzx8Q1pLw+3=="),
            "k=v,s:(redacted)");
  EXPECT_EQ(redact_secret_values("https://a.blob.core.windows.net/c/x?sv=2021-08-06&sig=Zx3kQp9"),
            "https://a.blob.core.windows.net/c/x?sv=2021-08-06&sig=(redacted)");
  // What GPU set-ups hold stays as it is.
  for (const char* kept :
       {"GPU-3b5f3c1e-8d2a-4b6c-9e0f-1a2b3c4d5e6f",
        "MIG-GPU-3b5f3c1e-8d2a-4b6c-9e0f-1a2b3c4d5e6f/1/0",
        "/opt/nvidia/hpc_sdk/Linux_x86_64/23.11/compilers/lib:/usr/local/cuda-12.2/lib64",
        "/nix/store/3x8v7kq2wz1m9d0f4h6j5l7n8p0r2s4t-cuda-12.2/lib",
        "expandable_segments:True,max_split_size_mb:128", "0,1,2,3",
        "sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", "PCI_BUS_ID",
        "--xla_gpu_autotune_level=2"})
    EXPECT_EQ(redact_secret_values(kept), kept);
}

TEST(SecretShapes, RecordedEnvironmentKeepsNoPlantedSecret) {
  const std::string ghp = "ghp_" + std::string("A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8");
  const gpucheck::EnvMap env{
      {"CUDA_CACHE_PATH", "/home/u/" + ghp},
      {"NCCL_NET_PLUGIN_PASS", "s3cretPass"},
      {"GPUCHECK_API_PW", "s3cretPw"},
      {"PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True,token=s3cretTok"},
      {"CUDA_VISIBLE_DEVICES", "GPU-3b5f3c1e-8d2a-4b6c-9e0f-1a2b3c4d5e6f"}};
  const auto rec = gpucheck::recorded_environment(env);
  for (const auto& [name, value] : rec) {
    EXPECT_THAT(value, Not(HasSubstr("s3cret"))) << name;
    EXPECT_THAT(value, Not(HasSubstr(ghp))) << name;
  }
  EXPECT_EQ(rec.at("NCCL_NET_PLUGIN_PASS"), gpucheck::kSetNotRecorded);
  EXPECT_EQ(rec.at("GPUCHECK_API_PW"), gpucheck::kSetNotRecorded);
  EXPECT_EQ(rec.at("CUDA_VISIBLE_DEVICES"), "GPU-3b5f3c1e-8d2a-4b6c-9e0f-1a2b3c4d5e6f");
}

TEST(RepeatedSizes, EachSizeOnceInTheOrderFirstGiven) {
  using namespace gpucheck::bench;
  using gpucheck::ExpShape;
  using gpucheck::Op;
  auto n = [](const Shape& s) { return std::get<ExpShape>(s).n; };
  auto e = parse_sizes(Op::kExp, "4096,1024,4096,2^12,1024,8192", "--exp");
  ASSERT_EQ(e.size(), 3u);
  EXPECT_EQ(n(e[0]), 4096u);
  EXPECT_EQ(n(e[1]), 1024u);
  EXPECT_EQ(n(e[2]), 8192u);
  EXPECT_EQ(parse_sizes(Op::kCopy, "1MiB,1048576,2MiB", "--copy").size(), 2u);
  EXPECT_EQ(parse_sizes(Op::kGemm, "512,512x512x512,64x512x512", "--gemm").size(), 2u);
  std::string many = "[small]\nexp = [";
  for (int i = 0; i < 5000; ++i) many += "4096, ";
  many += "8192]\ngemm = [\"256\", \"256x256x256\"]\n";
  Presets p = parse_presets(many, "many.toml");
  ASSERT_EQ(p["small"].of(Op::kExp).size(), 2u);
  EXPECT_EQ(n(p["small"].of(Op::kExp)[0]), 4096u);
  EXPECT_EQ(n(p["small"].of(Op::kExp)[1]), 8192u);
  EXPECT_EQ(p["small"].of(Op::kGemm).size(), 1u);
}

// 50,000 distinct sizes took 6.5 GB (85 KB a record): past kMaxDistinctSizes the list is a
// usage error naming its flag, on the command line and in a presets file alike.
TEST(RepeatedSizes, MoreDistinctSizesThanTheBoundAreRefused) {
  using namespace gpucheck::bench;
  using gpucheck::Op;
  std::string list;
  for (std::size_t i = 1; i <= kMaxDistinctSizes; ++i) list += std::to_string(i * 1024) + ",";
  EXPECT_EQ(parse_sizes(Op::kExp, list, "--exp").size(), kMaxDistinctSizes);
  list += "1";
  try {
    parse_sizes(Op::kExp, list, "--exp");
    ADD_FAILURE() << "no error";
  } catch (const gpucheck::UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("--exp: more than 4096 distinct sizes"));
  }
  std::string preset = "[big]\nexp = [" + list + "]\n";
  EXPECT_THROW(parse_presets(preset, "big.toml"), gpucheck::UsageError);
}

// A presets file saved with a UTF-8 byte order mark (as Windows editors write it) is read.
TEST(RepeatedSizes, APresetsFileWithAByteOrderMarkIsRead) {
  using namespace gpucheck::bench;
  const Presets p = parse_presets("\xEF\xBB\xBF[small]\nexp = [4096]\n", "bom.toml");
  EXPECT_EQ(p.at("small").of(gpucheck::Op::kExp).size(), 1u);
}

TEST(StressPlanChecks, AGemmTheDeviceCannotRunIsABadFlag) {
  namespace s = gpucheck::stress;
  s::StressPlan p;
  p.device = "cpu";
  p.backend = "cpu";
  p.tests = {s::Test::kGemm, s::Test::kMemory};
  const std::uint64_t gib16 = std::uint64_t{16} << 30;
  EXPECT_FALSE(s::gemm_refusal(p, gib16).has_value());
  p.dtypes = {gpucheck::DType::kF16};
  EXPECT_THAT(s::gemm_refusal(p, gib16).value_or(""), HasSubstr("f32 and f64 only, not f16"));
  p.tests = {s::Test::kMemory};
  EXPECT_FALSE(s::gemm_refusal(p, gib16).has_value());  // no GEMM: its dtype is not used
  p.tests = {s::Test::kGemm};
  p.dtypes = {};
  p.gemm_size = std::uint64_t{1} << 40;
  EXPECT_THAT(s::gemm_refusal(p, gib16).value_or(""), HasSubstr("--gemm: 1099511627776"));
  EXPECT_THAT(s::gemm_refusal(p, 0).value_or(""), HasSubstr("64-bit sizes"));
  p.gemm_size = 40000;  // 3 × 6.4 GB in f32
  EXPECT_THAT(s::gemm_refusal(p, gib16).value_or(""), HasSubstr("16.0 GiB of memory it has"));
  p.backend = "cuda";
  p.device = "cuda0";
  p.dtypes = {gpucheck::DType::kF16};
  p.gemm_size = 8192;
  EXPECT_FALSE(s::gemm_refusal(p, std::uint64_t{80} << 30).has_value());
}

TEST(KillReason, TheOutOfMemoryKillerIsNamed) {
  namespace s = gpucheck::stress;
  const std::string log =
      "6,100,5,-;eth0: link up\n"
      "3,101,6,-;Out of memory: Killed process 4242 (gpucheck) total-vm:9000000kB\n";
  EXPECT_EQ(s::oom_kill_line(log).value_or(""),
            "Out of memory: Killed process 4242 (gpucheck) total-vm:9000000kB");
  EXPECT_FALSE(s::oom_kill_line("6,1,2,-;nothing here\n").has_value());
  EXPECT_THAT(s::sigkill_explanation(log, true, 0, 0),
              HasSubstr("out-of-memory killer ended it, not a device fault"));
  const std::uint64_t gib = std::uint64_t{1} << 30;
  const std::string why = s::sigkill_explanation("", false, 19 * gib / 10, 2 * gib);
  EXPECT_THAT(why, HasSubstr("asked for 1.9 GiB of host memory with 2.0 GiB available"));
  EXPECT_THAT(why, HasSubstr("likely the out-of-memory killer"));
  EXPECT_THAT(why, HasSubstr("could not be read"));
}

class OutputFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    // A directory of this process's own: ctest runs the fixture's tests side by side.
    dir_ = fs::path(::testing::TempDir()) / ("hostile_cli_outputs_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string slurp(const fs::path& p) {
    std::ifstream in(p);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  fs::path dir_;
};

TEST_F(OutputFiles, TwoOutputsNamingOneFileAreRefused) {
  const std::string a = (dir_ / "a.json").string();
  std::ofstream(a) << "x";
  fs::create_symlink(a, dir_ / "link");
  fs::create_hard_link(a, dir_ / "hard");
  EXPECT_TRUE(gpucheck::same_file(a, (dir_ / "link").string()));
  EXPECT_TRUE(gpucheck::same_file(a, (dir_ / "hard").string()));
  EXPECT_TRUE(gpucheck::same_file((dir_ / "new.xml").string(), (dir_ / "." / "new.xml").string()));
  EXPECT_FALSE(gpucheck::same_file(a, (dir_ / "new.xml").string()));
  EXPECT_THROW(
      gpucheck::check_distinct_outputs({{"-o/--output", a}, {"--junit", (dir_ / "link").string()}}),
      gpucheck::UsageError);
  EXPECT_NO_THROW(gpucheck::check_distinct_outputs({{"-o/--output", a}, {"--junit", ""}}));
}

TEST_F(OutputFiles, ADanglingLinksTargetIsWrittenAndTheLinkStays) {
  fs::create_symlink("target.json", dir_ / "link.json");
  gpucheck::write_output_file((dir_ / "link.json").string(), "doc\n", "-o/--output");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link.json"));
  EXPECT_EQ(slurp(dir_ / "target.json"), "doc\n");
}

TEST_F(OutputFiles, AnotherUsersFileKeepsItsOwnerAndMode) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to make a file of another user";
  const fs::path f = dir_ / "theirs.json";
  std::ofstream(f) << "old";
  ASSERT_EQ(::chown(f.c_str(), 65534, 65534), 0);
  ASSERT_EQ(::chmod(f.c_str(), 0600), 0);
  gpucheck::write_output_file(f.string(), "new\n", "-o/--output");
  struct stat st {};
  ASSERT_EQ(::stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_uid, 65534u);
  EXPECT_EQ(st.st_gid, 65534u);
  EXPECT_EQ(st.st_mode & 07777, 0600u);
  EXPECT_EQ(slurp(f), "new\n");
}

}  // namespace

// Output for people, end to end: help layout and value names, -V and --version -v, --color and
// NO_COLOR, the width from COLUMNS, probe's --list/--device/--full, report show of a saved
// document, and progress lines in a log.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using ::testing::HasSubstr;
using ::testing::Not;

const std::string kFixtures = GPUCHECK_FIXTURES_DIR;
const std::string kH200 = kFixtures + "/doctor/probe_gpu_h200.json";

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

std::size_t columns(const std::string& line) {
  std::size_t n = 0;
  for (char c : line) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  return n;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// Every command's --help.
const std::vector<std::vector<std::string>> kHelps{{"--help"},
                                                   {"probe", "--help"},
                                                   {"bench", "--help"},
                                                   {"doctor", "--help"},
                                                   {"qualify", "--help"},
                                                   {"stress", "--help"},
                                                   {"report", "--help"},
                                                   {"report", "show", "--help"},
                                                   {"report", "compare", "--help"},
                                                   {"report", "fleet", "--help"}};

TEST(Help, UsageNamesGpucheckAndEveryLineFitsInHundredColumns) {
  for (const auto& args : kHelps) {
    auto r = run_gpucheck(args);
    ASSERT_EQ(r.exit_code, 0) << args[0];
    EXPECT_THAT(r.out, HasSubstr("Usage: gpucheck")) << args[0];
    EXPECT_THAT(r.out, Not(HasSubstr(GPUCHECK_BINARY))) << "the build path leaked into " << args[0];
    EXPECT_THAT(r.out, Not(HasSubstr("src/gpucheck"))) << "the build path leaked into " << args[0];
    for (const auto& l : lines_of(r.out)) EXPECT_LE(columns(l), 100u) << l;
    // The exit-code table once, under the top-level help only.
    EXPECT_EQ(count(r.out, "Exit codes"), args.size() == 1 ? 1u : 0u) << args[0];
  }
}

TEST(Help, ValueNamesSayWhatTheyTake) {
  auto r = run_gpucheck({"bench", "--help"});
  for (const char* want : {"--device DEVICES", "--size SIZE", "--min-time SECONDS", "--config FILE",
                           "-o,--output FILE", "--copy BYTES", "--color WHEN"})
    EXPECT_THAT(r.out, HasSubstr(want));
  // A positional by its name alone (CLI11 wrote "BASE... NEW FILE ... REQUIRED").
  const auto compare = run_gpucheck({"report", "compare", "--help"}).out;
  EXPECT_THAT(compare, HasSubstr("Usage: gpucheck report compare [OPTIONS] BASE... NEW\n"));
  EXPECT_THAT(compare, HasSubstr("\n  BASE... NEW "));
  EXPECT_THAT(compare, Not(HasSubstr("NEW FILE")));
}

TEST(Version, DashCapitalVIsVersion) {
  auto a = run_gpucheck({"-V"});
  auto b = run_gpucheck({"--version"});
  EXPECT_EQ(a.exit_code, 0);
  EXPECT_EQ(a.out, b.out);
  EXPECT_THAT(a.out, ::testing::StartsWith("gpucheck "));
}

TEST(Version, VerboseListsTheStackOneLineEach) {
  auto r = run_gpucheck({"--version", "-v"}, {{"GPUCHECK_TEST_BACKENDS", std::nullopt}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_GE(lines.size(), 9u) << r.out;
  for (const char* label : {"NVIDIA driver", "CUDA driver API", "CUDA runtime", "cuBLAS", "cuDNN",
                            "NVML", "OpenCL loader"})
    EXPECT_EQ(count(r.out, std::string(label) + " "), 1u) << label << "\n" << r.out;
  // This VM has no NVIDIA driver: said so, not left blank.
  EXPECT_THAT(r.out,
              ::testing::MatchesRegex("(.|\n)*NVIDIA driver +(not found: .+|[0-9.]+ .*)(.|\n)*"));
}

TEST(Color, AlwaysNeverAndNoColor) {
  auto always = run_gpucheck({"report", "show", kH200, "--color", "always"});
  EXPECT_THAT(always.out, HasSubstr("\x1b["));
  auto never = run_gpucheck({"report", "show", kH200, "--color", "never"});
  EXPECT_THAT(never.out, Not(HasSubstr("\x1b[")));
  // auto: stdout is a pipe here, so no colour either way.
  auto automatic = run_gpucheck({"report", "show", kH200}, {{"NO_COLOR", "1"}});
  EXPECT_THAT(automatic.out, Not(HasSubstr("\x1b[")));
  EXPECT_EQ(run_gpucheck({"report", "show", kH200, "--color", "sometimes"}).exit_code, 2);
}

TEST(Color, NoColorWinsOnATerminal) {
  if (!gpucheck::testing::have_program("script")) GTEST_SKIP() << "script(1) not installed";
  std::string cmd = std::string(GPUCHECK_BINARY) + " report show " + kH200;
  auto colour = gpucheck::testing::run_program("script", {"-qec", cmd, "/dev/null"});
  EXPECT_THAT(colour.out, HasSubstr("\x1b["));
  auto plain =
      gpucheck::testing::run_program("script", {"-qec", cmd, "/dev/null"}, {{"NO_COLOR", "1"}});
  EXPECT_THAT(plain.out, Not(HasSubstr("\x1b[1m")));
}

// gpucheck run with no controlling terminal (setsid), as under cron or CI.
RunResult run_detached(const std::vector<std::string>& args,
                       const std::map<std::string, std::optional<std::string>>& env) {
  std::vector<std::string> argv{"-w", GPUCHECK_BINARY};
  argv.insert(argv.end(), args.begin(), args.end());
  return gpucheck::testing::run_program("setsid", argv, env);
}

std::size_t widest_line(const std::string& text) {
  std::size_t widest = 0;
  for (const auto& l : lines_of(text)) widest = std::max(widest, columns(l));
  return widest;
}

TEST(Width, ColumnsSetsTheWidthAndAPipeWithoutATerminalGetsEighty) {
  auto narrow = run_gpucheck({"report", "show", kH200}, {{"COLUMNS", "60"}});
  EXPECT_LE(widest_line(narrow.out), 60u);
  auto piped = run_detached({"report", "show", kH200}, {{"COLUMNS", std::nullopt}});
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_LE(widest_line(piped.out), 80u);
  EXPECT_GT(widest_line(piped.out), 60u);
}

// `gpucheck probe | head` in a terminal: laid out for that terminal, not for 100 columns.
TEST(Width, APipeInATerminalTakesTheTerminalsWidth) {
  if (!gpucheck::testing::have_program("script")) GTEST_SKIP() << "script(1) not installed";
  const std::string cmd = "stty cols 64; env -u COLUMNS " + std::string(GPUCHECK_BINARY) +
                          " report show " + kH200 + " | cat; env -u COLUMNS " + GPUCHECK_BINARY +
                          " bench --help | cat";
  auto r = gpucheck::testing::run_program("script", {"-qec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_THAT(r.out, HasSubstr("--device"));
  for (const auto& l : lines_of(r.out)) {
    std::string line = l;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    EXPECT_LE(columns(line), 64u) << line;
  }
}

// Help at 80 columns, with value names alone: no CLI11 type tokens (FILE:FILE, N:NONNEGATIVE=0,
// PATH:{auto,net}, "... REQUIRED").
TEST(Help, FitsEightyColumnsAndNamesValuesWithoutTypeTokens) {
  for (const auto& args : kHelps) {
    auto r = run_gpucheck(args, {{"COLUMNS", "80"}});
    ASSERT_EQ(r.exit_code, 0) << args[0];
    for (const auto& l : lines_of(r.out)) {
      EXPECT_LE(columns(l), 80u) << l;
      for (const char* noise :
           {":FILE", ":DIR", ":NONNEGATIVE", ":POSITIVE", ":{", "REQUIRED", "=0 "})
        EXPECT_THAT(l, Not(HasSubstr(noise))) << args[0];
    }
  }
  auto bench = run_gpucheck({"bench", "--help"}, {{"COLUMNS", "80"}});
  EXPECT_THAT(bench.out, HasSubstr("--blas FILE "));
  EXPECT_THAT(bench.out, HasSubstr("--transport auto|net "));
  EXPECT_THAT(bench.out, HasSubstr("(default 0)"));  // --threads' default, in words
}

TEST(ProbeViews, ListIsOneLinePerDevice) {
  auto r = run_gpucheck({"report", "show", kH200, "-L"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto lines = lines_of(r.out);
  ASSERT_EQ(lines.size(), 3u) << r.out;  // cpu, opencl0 (pocl), opencl1 (the H200)
  EXPECT_THAT(lines[2], HasSubstr("opencl1"));
  EXPECT_THAT(lines[2], HasSubstr("NVIDIA H200"));
  EXPECT_THAT(lines[2], HasSubstr("UUID GPU-0a3df10b-faf5-5512-4744-8c9f8b5bb5da"));
}

TEST(ProbeViews, DeviceShowsOneDeviceAndAnUnknownOneIsAUsageError) {
  auto r = run_gpucheck({"report", "show", kH200, "--device", "opencl1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NVIDIA H200"));
  EXPECT_THAT(r.out, Not(HasSubstr("pocl")));
  auto stable = run_gpucheck({"report", "show", kH200, "--device", "opencl:0000:00:06.0"});
  EXPECT_EQ(stable.out, r.out);
  auto bad = run_gpucheck({"report", "show", kH200, "--device", "cuda7"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_THAT(bad.err, HasSubstr("cuda7"));
  EXPECT_THAT(bad.err, HasSubstr("opencl1"));
}

// --full prints every field: every key and every scalar of the document appears (the H200's
// OpenCL-only document and the 2x H100 machine's whole probe).
class FullView : public ::testing::TestWithParam<std::string> {};

TEST_P(FullView, PrintsEveryField) {
  auto r = run_gpucheck({"report", "show", GetParam(), "--full"}, {{"COLUMNS", "200"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(GetParam());
  auto doc = nlohmann::json::parse(in);
  std::size_t checked = 0;
  // Milliwatts read as watts (70138 mW: "70.1 W"); every other integer is printed as it is
  // (byte sizes keep their exact count beside the human one).
  auto shown = [](const std::string& key, const nlohmann::json& v) {
    const bool mw = key.size() > 3 && key.compare(key.size() - 3, 3, "_mw") == 0;
    if (!mw) return v.dump();
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.1f W", v.get<double>() / 1e3);
    return std::string(buf);
  };
  std::function<void(const std::string&, const nlohmann::json&)> walk =
      [&](const std::string& key, const nlohmann::json& v) {
        if (v.is_object()) {
          for (const auto& [k, child] : v.items()) {
            EXPECT_THAT(r.out, HasSubstr(k)) << "key " << k;
            // A packed OpenCL version's "raw" is the "version" beside it, which is printed.
            if (k == "raw" && v.contains("version")) continue;
            walk(k, child);
          }
        } else if (v.is_array()) {
          for (const auto& e : v) walk(key, e);
        } else if (v.is_string() && !v.get<std::string>().empty()) {
          // A long value wraps (a long word is split); its first word's start is on some line.
          std::string s = v.get<std::string>();
          EXPECT_THAT(r.out, HasSubstr(s.substr(0, std::min<std::size_t>(s.find(' '), 60)))) << s;
          ++checked;
        } else if (v.is_number_integer()) {
          EXPECT_THAT(r.out, HasSubstr(shown(key, v))) << key << " " << v;
          ++checked;
        }
      };
  walk("", doc);
  EXPECT_GT(checked, 500u);
  EXPECT_THAT(r.out, Not(HasSubstr("].")));  // no a.b[3].c keys
}

INSTANTIATE_TEST_SUITE_P(ProbeViews, FullView,
                         ::testing::Values(kH200, kFixtures + "/views/probe_h100x2.json"));

// report show of a saved 2-GPU probe prints what probe printed there: the golden summary (the
// view the probe command writes), at the width COLUMNS gives; a pipe with no terminal gets 80.
TEST(ProbeViews, ReportShowOfASavedProbeIsProbesSummary) {
  const std::string doc = kFixtures + "/views/probe_h100x2.json";
  for (const char* width : {"80", "120"}) {
    auto r = run_gpucheck({"report", "show", doc}, {{"COLUMNS", width}});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    std::ifstream golden(kFixtures + "/views/probe_h100x2.w" + width + ".txt");
    std::stringstream want;
    want << golden.rdbuf();
    EXPECT_EQ(r.out, want.str()) << "COLUMNS=" << width;
  }
  auto pipe = run_detached({"report", "show", doc}, {{"COLUMNS", std::nullopt}});
  ASSERT_EQ(pipe.exit_code, 0) << pipe.err;
  EXPECT_LE(lines_of(pipe.out).size(), 50u) << pipe.out;
  EXPECT_THAT(pipe.out, HasSubstr("driver 580.159.04"));
  EXPECT_THAT(pipe.out, HasSubstr("NVIDIA H100 80GB HBM3"));
}

TEST(Progress, ALineEveryIntervalWhenStderrIsALog) {
  // A 10 ms interval: the two tiny cells end at their repetition cap in about 0.1 s on a quiet
  // machine, long before --min-time, so a longer interval printed nothing there.
  auto r = run_gpucheck(
      {"bench", "--device", "cpu", "--ops", "exp,gemm", "--dtype", "f32", "--exp", "4096", "--gemm",
       "64", "--min-time", "0.6", "--warmup", "0", "--json", "-o", "/dev/null"},
      {{"GPUCHECK_PROGRESS_SECONDS", "0.01"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("gpucheck: bench: [cpu "));
  EXPECT_THAT(r.err, HasSubstr("/6]"));  // two cells will run, three rounds each
  EXPECT_THAT(r.err, HasSubstr("elapsed"));
  EXPECT_THAT(r.err, Not(HasSubstr("\x1b[K")));  // not a terminal: lines, not a redrawn line
  auto quiet = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--exp", "4096", "--reps",
                             "3", "--quiet", "--json", "-o", "/dev/null"},
                            {{"GPUCHECK_PROGRESS_SECONDS", "0.01"}});
  EXPECT_THAT(quiet.err, Not(HasSubstr("gpucheck: bench: [")));
}

// Dropped cells (defaults the device cannot run) are not counted: of GEMM's default dtypes
// (f32, tf32, f16, bf16, f64) the CPU runs f32 and f64, so its count is 2, not 5.
TEST(Progress, CountsOnlyTheCellsThatRun) {
  if (!gpucheck::testing::have_program("script")) GTEST_SKIP() << "script(1) not installed";
  std::string cmd = std::string(GPUCHECK_BINARY) +
                    " bench --device cpu --ops gemm --gemm 32 --reps 1 --warmup 0 --json"
                    " -o /dev/null";
  auto r = gpucheck::testing::run_program("script", {"-qec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // "[cpu 1/2] 1 s elapsed · gemm f32 32x32x32": the times first, the cell's words last.
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\\[cpu 1/2\\] [^\r]* gemm f32 32x32x32"));
  EXPECT_THAT(r.out, ::testing::ContainsRegex("\\[cpu 2/2\\] [^\r]* gemm f64 32x32x32"));
  EXPECT_THAT(r.out, Not(HasSubstr("/5]")));
}

}  // namespace

// `gpucheck bench` end to end on the CPU: verified records, planted errors, bad input, exit codes.
#include "run_gpucheck.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <regex>
#include <set>

#include <sys/stat.h>

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;

namespace {

// Small and quick: the sizes of a test, not of a benchmark.
std::vector<std::string> quick(std::vector<std::string> args) {
  for (const char* a : {"--reps", "2", "--warmup", "1", "--exp", "100003", "--gemm", "96x80x72",
                        "--conv", "2,3,9,11,4,3,3,2,1", "--copy", "65536", "--json"})
    args.emplace_back(a);
  return args;
}

nlohmann::json records(const std::string& out) {
  return nlohmann::json::parse(out)["results"];
}

}  // namespace

TEST(BenchCli, CpuRecordsAreVerifiedOk) {
  auto r = run_gpucheck(quick({"bench", "--device", "cpu"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results = records(r.out);
  std::set<std::string> seen;
  for (const auto& rec : results) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["status"], "ok");
    EXPECT_EQ(rec["transfers"], "excluded");
    EXPECT_GT(rec["time_s"]["median"].get<double>(), 0.0);
    EXPECT_EQ(rec["time_s"]["reps"], 2);
    EXPECT_GT(rec["throughput"]["value"].get<double>(), 0.0);
    EXPECT_LE(rec["verification"]["max_rel_error"].get<double>(),
              rec["verification"]["tolerance"].get<double>());
    EXPECT_FALSE(rec.contains("speedup_vs_cpu"));
    seen.insert(rec["op"].get<std::string>() + "/" + rec.value("dtype", "-") + "/" +
                rec["shape"].value("layout", ""));
  }
  EXPECT_EQ(seen, (std::set<std::string>{"exp/f32/", "exp/f64/", "gemm/f32/", "gemm/f64/",
                                         "conv/f32/nchw", "conv/f32/nhwc", "copy/-/"}));
}

TEST(BenchCli, PlantedWrongValueIsMismatchAndExitOne) {
  for (std::string kind : {"wrong", "nan"}) {
    SCOPED_TRACE(kind);
    auto r = run_gpucheck(quick({"bench", "--device", "cpu", "--ops", "exp,gemm,conv"}),
                          {{"GPUCHECK_TEST_PLANT", kind}});
    ASSERT_EQ(r.exit_code, 1) << r.err;
    auto results = records(r.out);
    ASSERT_EQ(results.size(), 6u);  // exp and gemm in f32 and f64, conv in two layouts
    for (const auto& rec : results) {
      EXPECT_EQ(rec["status"], "mismatch") << rec.dump();
      EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("verification failed"));
      EXPECT_TRUE(rec["verification"].contains("first_bad_index"));
    }
  }
}

TEST(BenchCli, ExplicitUnsupportedDtypeIsRecordedNotRun) {
  auto r = run_gpucheck(quick({"bench", "--device", "cpu", "--ops", "gemm", "--dtype", "f16,f32"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results = records(r.out);
  ASSERT_EQ(results.size(), 2u);
  EXPECT_EQ(results[0]["dtype"], "f16");
  EXPECT_EQ(results[0]["status"], "unsupported");
  EXPECT_THAT(results[0]["reason"].get<std::string>(), HasSubstr("f32 and f64"));
  EXPECT_EQ(results[1]["status"], "ok");
}

// fp8 is a GEMM dtype of CUDA's (8.9+): the CPU records why it has none, for every op asked.
TEST(BenchCli, Fp8OnTheCpuIsUnsupportedWithTheReason) {
  auto r = run_gpucheck(quick({"bench", "--device", "cpu", "--ops", "gemm,exp", "--dtype", "fp8"}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results = records(r.out);
  ASSERT_EQ(results.size(), 2u) << r.out;
  for (const auto& rec : results) {
    SCOPED_TRACE(rec.dump());
    EXPECT_EQ(rec["dtype"], "fp8");
    EXPECT_EQ(rec["status"], "unsupported");
  }
  EXPECT_THAT(results[0]["reason"].get<std::string>(), HasSubstr("no FP8 GEMM on the CPU"));
  EXPECT_THAT(results[1]["reason"].get<std::string>(), HasSubstr("f32 and f64"));
}

TEST(BenchCli, AbsurdSizeIsSkippedBeforeAllocation) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "gemm", "--dtype", "f32", "--gemm",
                         "1000000x1000000x1000000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = records(r.out).at(0);
  EXPECT_EQ(rec["status"], "skipped");
  // Three 10^12-element f32 matrices, on the "device" and in host memory: both are the RAM.
  EXPECT_EQ(rec["bytes_needed"].get<std::uint64_t>(), 2 * 3 * 4000000000000ull);
  EXPECT_GT(rec["bytes_limit"].get<std::uint64_t>(), 0u);
  EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("MemAvailable"));
}

TEST(BenchCli, SizesBeyond64BitsAreSkipped) {
  auto r = run_gpucheck(
      {"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f64", "--exp", "2^62", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto rec = records(r.out).at(0);
  EXPECT_EQ(rec["status"], "skipped");
  EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("overflow"));
}

TEST(BenchCli, BadValuesAreUsageErrorsNamingTheFlag) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  std::vector<Case> cases = {
      {{"--gemm", "12x34"}, "--gemm"},
      {{"--gemm", "axbxc"}, "--gemm"},
      {{"--conv", "1,2,3,4,5,6,7,8"}, "has 8 fields"},
      {{"--conv", "1,1,2,2,1,5,5,1,0"}, "larger than the padded input"},
      {{"--exp", "0"}, "--exp"},
      {{"--copy", "12XB"}, "--copy"},
      {{"--ops", "fft"}, "--ops"},
      {{"--dtype", "f8"}, "--dtype"},
      {{"--layout", "nc"}, "--layout"},
      {{"--size", "huge"}, "--size"},
      {{"--reps", "0"}, "--reps"},
      {{"--min-time", "-1"}, "--min-time"},
      {{"--max-time", "0"}, "--max-time"},
      {{"--threads", "-2"}, "--threads"},
      {{"--config", "/no/such/file.toml"}, "/no/such/file.toml"},
      {{"--device", "gpu0"}, "valid devices here: cpu, all"},
      {{"--device", "metal0"}, "valid devices"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args{"bench"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto r = run_gpucheck(args);
    SCOPED_TRACE(c.args[0] + " " + c.args[1]);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.expect));
    EXPECT_TRUE(r.out.empty());
  }
}

// Short usage errors for odd values: --threads -1 named a 309-digit range, --python "" silently
// meant "search", and "all,all" was accepted by bench while stress refused it. Each is exit 2 with
// a message of one short line, in bench and stress alike.
TEST(BenchCli, OutOfRangeEmptyAndRepeatedValuesAreShortUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string expect;
  };
  const std::vector<Case> cases = {
      {{"bench", "--threads", "-1"}, "Value -1 not in range 0 to 65536"},
      {{"stress", "--threads", "-1"}, "Value -1 not in range 0 to 65536"},
      {{"stress", "--gemm", "-1"}, "Value -1 not in range 1 to 1048576"},
      {{"bench", "--framework", "torch", "--python", ""}, "an empty interpreter path"},
      {{"bench", "--device", "all,all"}, "--device: 'all' is named twice"},
      {{"stress", "--device", "all,all", "--duration", "1s"}, "--device: 'all' is named twice"},
  };
  for (const auto& c : cases) {
    auto r = run_gpucheck(c.args);
    SCOPED_TRACE(c.args[0] + " " + c.args[1] + " " + c.args[2]);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.expect));
    EXPECT_LT(r.err.size(), 300u) << r.err;  // no 309-digit bound
    EXPECT_TRUE(r.out.empty());
  }
}

TEST(BenchCli, ConfigSyntaxErrorNamesFileLineColumn) {
  auto path = write_temp_file("broken.toml", "[small]\nexp = [1048576\ngemm = 3\n");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, ::testing::MatchesRegex(".*broken\\.toml:[0-9]+:[0-9]+: .*"));
}

TEST(BenchCli, ConfigUnknownKeyNamesDottedKeyAndLine) {
  auto path = write_temp_file("unknown.toml", "[small]\nexp = [1024]\n\n[medium]\nfft = [4]\n");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--config", path, "--size", "medium"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown.toml:5"));
  EXPECT_THAT(r.err, HasSubstr("'medium.fft'"));
}

TEST(BenchCli, ConfigWrongTypeNamesKey) {
  auto path = write_temp_file("types.toml", "[small]\ngemm = [512]\n");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--config", path});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("small.gemm"));
  EXPECT_THAT(r.err, HasSubstr("expected strings"));
}

TEST(BenchCli, ConfigReplacesPresets) {
  auto path = write_temp_file("tiny.toml", "[tiny]\nexp = [4096]\n");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--config", path, "--size", "tiny", "--ops",
                         "exp", "--reps", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto results = records(r.out);
  ASSERT_EQ(results.size(), 2u);  // f32 and f64
  EXPECT_EQ(results[0]["shape"]["n"], 4096);
}

TEST(BenchCli, MissingDeviceOfBuiltBackendExitsThree) {
  // The crash backend's probe dies, so its device is not there: exit 3, not 2.
  auto r = run_gpucheck(quick({"bench", "--device", "test_crash0", "--probe-timeout", "5"}),
                        {{"GPUCHECK_TEST_BACKENDS", "crash"}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_THAT(r.err, HasSubstr("test_crash0"));
}

TEST(BenchCli, ChildThatWritesNoRecordExitsThree) {
  // The weird backend lists a device but cannot open it: its bench child dies recordless.
  auto r = run_gpucheck(quick({"bench", "--device", "test_weird0", "--no-baseline"}),
                        {{"GPUCHECK_TEST_BACKENDS", "weird"}});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto doc = nlohmann::json::parse(r.out);
  EXPECT_THAT(doc["errors"].dump(), HasSubstr("no record"));
  for (const auto& rec : doc["results"]) EXPECT_EQ(rec["status"], "failed");
}

TEST(BenchCli, UnwritableOutputIsUsageErrorBeforeAnyWork) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "-o", "/nonexistent/x.json"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST(BenchCli, NoProgressLineWhenStderrIsNotATerminal) {
  auto r = run_gpucheck(quick({"bench", "--device", "cpu", "--ops", "exp"}));
  ASSERT_EQ(r.exit_code, 0);
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("[cpu 1/")));
}

TEST(BenchCli, ProgressLineWhenStderrIsATerminal) {
  if (!gpucheck::testing::have_program("script")) GTEST_SKIP() << "script(1) not installed";
  std::string cmd = std::string(GPUCHECK_BINARY) +
                    " bench --device cpu --ops exp --exp 4096 --reps 1 --json -o /dev/null";
  // script(1) runs the command on a pseudo-terminal, as a person's shell would.
  auto r = gpucheck::testing::run_program("script", {"-qec", cmd, "/dev/null"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  // Of exp's default dtypes the CPU runs f32 and f64: the count holds the cells that run.
  EXPECT_THAT(r.out,
              ::testing::ContainsRegex("\\[cpu 1/2\\] [0-9]+ s elapsed [^\r]* exp f32 n=4096"));
}

// No --size, size flag or --config: the document says which sizes each device got and why, and
// the records are exactly those sizes (the small one in f32 only where a larger was chosen).
TEST(BenchCli, DefaultSizesArePerDeviceAndTheDocumentSaysWhich) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "gemm", "--dtype", "f32,f64",
                         "--reps", "1", "--warmup", "0", "--rounds", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_TRUE(doc.contains("default_sizes")) << r.out.substr(0, 2000);
  const auto& gemm = doc["default_sizes"]["cpu"]["gemm"];
  EXPECT_THAT(gemm["why"].get<std::string>(), HasSubstr("f32 limit"));
  const auto sizes = gemm["sizes"].get<std::vector<std::string>>();
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(sizes.front(), "512x512x512");
  std::multiset<std::string> seen;
  for (const auto& rec : doc["results"]) {
    const auto& s = rec["shape"];
    const std::string size =
        fmt::format("{}x{}x{}", s["m"].get<int>(), s["n"].get<int>(), s["k"].get<int>());
    EXPECT_NE(std::find(sizes.begin(), sizes.end(), size), sizes.end()) << size;
    seen.insert(size + "/" + rec["dtype"].get<std::string>());
  }
  // The small size in f32 only when a larger one was chosen; each size in both dtypes otherwise.
  EXPECT_EQ(seen.count("512x512x512/f32"), 1u);
  EXPECT_EQ(seen.count("512x512x512/f64"), sizes.size() == 1 ? 1u : 0u);
  for (std::size_t i = 1; i < sizes.size(); ++i) EXPECT_EQ(seen.count(sizes[i] + "/f64"), 1u);
  // The HTML page shows them too: device, op, sizes and why.
  const std::string doc_file = write_temp_file("default_sizes/run.json", r.out);
  auto html = run_gpucheck({"report", "show", doc_file, "--format", "html"});
  ASSERT_EQ(html.exit_code, 0) << html.err;
  EXPECT_THAT(html.out, HasSubstr("sizes chosen for each device"));
  EXPECT_THAT(html.out,
              ::testing::ContainsRegex("<td>cpu</td><td>gemm</td><td>512x512x512[^<]*</td><td>[^<]*"
                                       "f32 limit"));

  // A preset or a size flag: one size for every device, as before, and no account of sizes.
  for (const auto& flag :
       std::vector<std::vector<std::string>>{{"--size", "small"}, {"--gemm", "64"}}) {
    std::vector<std::string> args = {"bench", "--device", "cpu", "--ops",    "gemm", "--dtype",
                                     "f32",   "--reps",   "1",   "--warmup", "0",    "--json"};
    args.insert(args.end(), flag.begin(), flag.end());
    auto p = run_gpucheck(args);
    ASSERT_EQ(p.exit_code, 0) << p.err;
    EXPECT_FALSE(nlohmann::json::parse(p.out).contains("default_sizes")) << flag[0];
  }
}

// GPUCHECK_TRACE_FILE: a line per cell round, its phases adding up to its total, and a result
// that repeats its cell's checked bits says so in the record.
TEST(BenchCli, TheTraceFileHasALinePerCellRoundWhosePhasesAddUp) {
  const std::string trace = write_temp_file("trace/phases.txt", "");
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp",
                         "65536", "--reps", "3", "--rounds", "3", "--warmup", "0", "--json"},
                        {{"GPUCHECK_TRACE_FILE", trace}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::ifstream in(trace);
  std::string line;
  int lines = 0;
  while (std::getline(in, line)) {
    ++lines;
    EXPECT_THAT(
        line,
        HasSubstr("device=cpu cell=\"exp f32 n=65536\" round=" + std::to_string(lines) + "/3"));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(line, m, std::regex(" total=([0-9.]+)"))) << line;
    const double total = std::stod(m[1]);
    double phases = 0;
    int printed = 1;  // the total
    const std::regex phase(" (inputs|setup|poison|prep|reps|back|verify|tune|rest)=([0-9.]+)");
    for (auto it = std::sregex_iterator(line.begin(), line.end(), phase);
         it != std::sregex_iterator(); ++it, ++printed)
      phases += std::stod((*it)[2]);
    // Each figure is printed to the millisecond: half of one per figure is rounding alone.
    EXPECT_NEAR(phases, total, 0.0005 * printed + 0.01 * total) << line;
  }
  EXPECT_EQ(lines, 3);
  const auto doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["results"].size(), 1u);
  // The CPU's exp is deterministic: rounds 2 and 3 repeat round 1's bits; the record keeps the
  // outcome of the one full check.
  EXPECT_EQ(doc["results"][0]["status"], "ok");
  EXPECT_THAT(doc["results"][0]["verification"]["detail"].get<std::string>(),
              HasSubstr("all 65536 elements within"));
}

// A trace path nobody can write (a FIFO without a reader, a directory) is dropped: the run
// neither hangs nor fails.
TEST(BenchCli, AnUnwritableTraceFileNeitherHoldsNorFailsTheRun) {
  const std::string dir = write_temp_file("trace/unwritable/keep", "");
  const std::string fifo = dir.substr(0, dir.rfind('/')) + "/fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  for (const std::string& path : {fifo, dir.substr(0, dir.rfind('/'))}) {
    auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp",
                           "4096", "--reps", "1", "--warmup", "0", "--json"},
                          {{"GPUCHECK_TRACE_FILE", path}});
    EXPECT_EQ(r.exit_code, 0) << path << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["results"][0]["status"], "ok") << path;
  }
}

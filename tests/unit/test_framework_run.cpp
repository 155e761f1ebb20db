// bench's framework children (bench/framework_run.h): the real Debian torch on the CPU, the
// embedded driver's CuPy and JAX paths on numpy stand-ins of their APIs, and interpreters that
// hang, crash, print garbage or return short arrays. gpucheck verifies every output itself.
#include "bench/framework_run.h"

#include "../process_gone.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <stdlib.h>
#include <unistd.h>

namespace {

namespace fs = std::filesystem;
using gpucheck::DType;
using gpucheck::Layout;
using gpucheck::Op;
using gpucheck::bench::Cell;
using gpucheck::bench::FrameworkJob;
using gpucheck::bench::FrameworkRun;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR) / "framework_bench";
const std::string kSystemPython = "/usr/bin/python3";

Cell cell(Op op, DType dtype, gpucheck::bench::Shape shape) {
  Cell c;
  c.op = op;
  c.dtype = dtype;
  c.shape = std::move(shape);
  c.explicit_request = true;  // named: "unsupported" is reported, not left out
  return c;
}

gpucheck::ConvShape conv(Layout layout) {
  gpucheck::ConvShape s{2, 3, 6, 6, 4, 3, 3, 1, 1};
  s.layout = layout;
  return s;
}

FrameworkJob job(const std::string& framework, const std::string& python,
                 const std::string& device = "cpu") {
  FrameworkJob j;
  j.framework = framework;
  j.python = python;
  j.device = device;
  j.backend = device == "cpu" ? "cpu" : "cuda";
  j.device_name = "test device";
  j.policy.warmup = 1;
  j.policy.reps = 4;  // 2 rounds of 2, as the engine splits them
  j.policy.rounds = 2;
  j.seed = 7;
  j.threads = 1;
  j.startup_timeout = std::chrono::seconds(60);
  return j;
}

bool python_has(const std::string& module) {
  const std::string cmd = kSystemPython + " -c 'import " + module + "' >/dev/null 2>&1";
  return fs::exists(kSystemPython) && std::system(cmd.c_str()) == 0;
}

// The records of one workload, keyed "op dtype transfers" (+ layout for conv).
std::map<std::string, Json> by_key(const FrameworkRun& run) {
  std::map<std::string, Json> out;
  for (const auto& r : run.records) {
    std::string key =
        r.value("op", "") + " " + r.value("dtype", "-") + " " + r.value("transfers", "");
    if (r["shape"].contains("layout")) key += " " + r["shape"]["layout"].get<std::string>();
    if (r["shape"].contains("direction")) key += " " + r["shape"]["direction"].get<std::string>();
    out[key] = r;
  }
  return out;
}

// The flags of this machine's CPU (the first "flags" line of /proc/cpuinfo).
std::set<std::string> cpu_flags() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("flags")) continue;
    std::istringstream words(line.substr(line.find(':') + 1));
    std::set<std::string> flags;
    for (std::string w; words >> w;) flags.insert(w);
    return flags;
  }
  return {};
}

// Torch 1.13's rule (mkldnn_bf16_device_check): its CPU bf16 GEMM goes through oneDNN, which
// sums in f32, only with AVX-512 BW, VL and DQ; elsewhere at::native::cpublas::gemm rounds each
// partial sum to bf16.
bool torch_sums_bf16_in_f32_here() {
  const auto f = cpu_flags();
  return f.contains("avx512bw") && f.contains("avx512vl") && f.contains("avx512dq");
}

void expect_bf16_sum_in_bf16_named(const Json& r) {
  EXPECT_EQ(r["status"], "mismatch") << r.dump(2);
  EXPECT_EQ(r["framework"]["bf16_gemm_accumulation"], "bf16") << r.dump(2);
  const std::string reason = r["reason"];
  EXPECT_THAT(reason, HasSubstr("verification failed"));
  EXPECT_THAT(reason, HasSubstr("accumulates bf16 GEMMs in bf16 on this CPU"));
  EXPECT_THAT(reason, HasSubstr("gives 256, not 512"));
}

TEST(FrameworkRun, DebianTorchOnTheCpuRunsAndIsVerifiedByGpucheck) {
  if (!python_has("torch")) GTEST_SKIP() << "python3-torch is not installed";
  auto j = job("torch", kSystemPython);
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{4096}),
             cell(Op::kGemm, DType::kF32, gpucheck::GemmShape{48, 40, 32}),
             cell(Op::kGemm, DType::kBf16, gpucheck::GemmShape{48, 40, 32}),
             cell(Op::kConv, DType::kF32, conv(Layout::kNchw)),
             cell(Op::kConv, DType::kF32, conv(Layout::kNhwc)),
             cell(Op::kCopy, DType::kF32, gpucheck::CopyShape{4099}),
             cell(Op::kSeedloop, DType::kF32, gpucheck::bench::SeedloopShape{2048, 10, false}),
             cell(Op::kGemm, DType::kTf32, gpucheck::GemmShape{48, 40, 32})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_FALSE(run.unavailable) << *run.unavailable;
  auto recs = by_key(run);
  // bf16 is verified as summed in f32: torch's kernel for this CPU decides the status.
  const Json& bf16 = recs["gemm bf16 excluded"];
  if (torch_sums_bf16_in_f32_here()) {
    EXPECT_EQ(bf16["status"], "ok") << bf16.dump(2);
    EXPECT_EQ(bf16["framework"]["bf16_gemm_accumulation"], "f32") << bf16.dump(2);
  } else {
    expect_bf16_sum_in_bf16_named(bf16);
  }
  EXPECT_FALSE(recs["gemm f32 excluded"]["framework"].contains("bf16_gemm_accumulation"));
  for (const char* key :
       {"exp f32 excluded", "gemm f32 excluded", "conv f32 excluded nchw", "conv f32 excluded nhwc",
        "copy - excluded h2h", "seedloop f32 excluded"}) {
    ASSERT_TRUE(recs.contains(key)) << key;
    const Json& r = recs[key];
    EXPECT_EQ(r["status"], "ok") << r.dump(2);
    EXPECT_TRUE(r.contains("verification")) << key;
    EXPECT_EQ(r["framework"]["name"], "torch");
    EXPECT_THAT(r["impl"].get<std::string>(), HasSubstr("torch 1."));
    EXPECT_EQ(r["time_s"]["reps"], 4) << key;  // 2 rounds of 2
    EXPECT_EQ(r["time_s"]["round_medians"].size(), 2u) << key;
  }
  EXPECT_EQ(recs["copy - excluded h2h"]["verification"]["method"], "exact");
  EXPECT_EQ(recs["gemm tf32 excluded"]["status"], "unsupported");
  EXPECT_THAT(recs["gemm tf32 excluded"]["reason"].get<std::string>(), HasSubstr("TF32"));
}

// oneDNN off (tests/fixtures/framework_bench/torch_no_mkldnn) is torch 1.13's path on a CPU
// without AVX-512: on any CPU, the bf16 GEMM mismatches and its reason says why; f32 stays ok.
TEST(FrameworkRun, TorchsBf16GemmThatSumsInBf16IsAMismatchThatSaysSo) {
  if (!python_has("torch")) GTEST_SKIP() << "python3-torch is not installed";
  auto j = job("torch", kSystemPython);
  j.env["PYTHONPATH"] = (kFixtures / "torch_no_mkldnn").string();
  j.cells = {cell(Op::kGemm, DType::kF32, gpucheck::GemmShape{48, 40, 32}),
             cell(Op::kGemm, DType::kBf16, gpucheck::GemmShape{48, 40, 32})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_FALSE(run.unavailable) << *run.unavailable;
  auto recs = by_key(run);
  ASSERT_TRUE(recs.contains("gemm bf16 excluded"));
  expect_bf16_sum_in_bf16_named(recs["gemm bf16 excluded"]);
  EXPECT_EQ(recs["gemm f32 excluded"]["status"], "ok") << recs["gemm f32 excluded"].dump(2);
}

TEST(FrameworkRun, AFrameworkNotInstalledIsUnavailableWithTheImportError) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  auto j = job("tensorflow", kSystemPython);
  j.env["PYTHONPATH"] = std::nullopt;
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{64})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_TRUE(run.unavailable);
  EXPECT_THAT(*run.unavailable, HasSubstr("cannot import tensorflow"));
  EXPECT_TRUE(run.records.empty());
}

TEST(FrameworkRun, AnInterpreterThatIsNotThereIsUnavailable) {
  auto j = job("torch", "/nonexistent/bin/python3");
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{64})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_TRUE(run.unavailable);
  EXPECT_THAT(*run.unavailable, HasSubstr("/nonexistent/bin/python3"));
}

// CuPy and JAX through the embedded driver, on numpy stand-ins of the calls it makes.
FrameworkJob fake_module_job(const std::string& framework, const std::string& device) {
  auto j = job(framework, kSystemPython, device);
  j.env["PYTHONPATH"] = (kFixtures / "modules").string();
  return j;
}

TEST(FrameworkRun, CupyPathRunsEveryOpItHasAndSaysWhyNotForTheRest) {
  if (!python_has("numpy")) GTEST_SKIP() << "python3-numpy is not installed";
  auto j = fake_module_job("cupy", "cuda0");
  j.cells = {
      cell(Op::kExp, DType::kF32, gpucheck::ExpShape{1000}),
      cell(Op::kGemm, DType::kF16, gpucheck::GemmShape{24, 16, 20}),
      cell(Op::kGemm, DType::kBf16, gpucheck::GemmShape{24, 16, 20}),
      cell(Op::kConv, DType::kF32, conv(Layout::kNchw)),
      cell(Op::kCopy, DType::kF32,
           gpucheck::CopyShape{1000, gpucheck::Direction::kH2d, gpucheck::HostMemory::kPinned}),
      cell(Op::kCopy, DType::kF32,
           gpucheck::CopyShape{1000, gpucheck::Direction::kD2h, gpucheck::HostMemory::kPageable}),
      cell(Op::kCopy, DType::kF32, gpucheck::CopyShape{1000, gpucheck::Direction::kD2d}),
      cell(Op::kSeedloop, DType::kF32, gpucheck::bench::SeedloopShape{512, 5, true}),
      cell(Op::kGemm, DType::kFp8, gpucheck::GemmShape{32, 16, 32})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_FALSE(run.unavailable) << *run.unavailable;
  auto recs = by_key(run);
  // fp8 goes to no framework (torch's _scaled_mm is tools/device/fp8.sh's peer): one record.
  EXPECT_EQ(recs["gemm fp8 excluded"]["status"], "unsupported");
  EXPECT_THAT(recs["gemm fp8 excluded"]["reason"].get<std::string>(),
              HasSubstr("fp8 through no framework"));
  EXPECT_FALSE(recs.contains("gemm fp8 included"));
  for (const char* key : {"exp f32 excluded", "exp f32 included", "gemm f16 excluded",
                          "gemm f16 included", "copy - excluded h2d", "copy - excluded d2h",
                          "copy - excluded d2d", "seedloop f32 included"}) {
    ASSERT_TRUE(recs.contains(key)) << key;
    EXPECT_EQ(recs[key]["status"], "ok") << recs[key].dump(2);
    EXPECT_EQ(recs[key]["framework"]["device"], "cupy.cuda.Device(0)");
    EXPECT_EQ(recs[key]["framework"]["device_name"], "Fake CUDA GPU");
  }
  EXPECT_EQ(recs["gemm bf16 excluded"]["status"], "unsupported");
  EXPECT_THAT(recs["gemm bf16 excluded"]["reason"].get<std::string>(), HasSubstr("bfloat16"));
  EXPECT_EQ(recs["conv f32 excluded nchw"]["status"], "unsupported");
}

TEST(FrameworkRun, AFrameworksWrongResultIsAMismatchNotItsOwnWord) {
  if (!python_has("numpy")) GTEST_SKIP() << "python3-numpy is not installed";
  auto j = fake_module_job("cupy", "cuda0");
  j.env["FAKE_FRAMEWORK_WRONG"] = "1";
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{1000})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_EQ(run.records.size(), 2u);
  for (const auto& r : run.records) {
    EXPECT_EQ(r["status"], "mismatch") << r.dump(2);
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr("verification failed"));
  }
}

TEST(FrameworkRun, JaxPathRunsOnTheCpuAndAGpu) {
  if (!python_has("numpy")) GTEST_SKIP() << "python3-numpy is not installed";
  for (const std::string device : {"cpu", "cuda0"}) {
    auto j = fake_module_job("jax", device);
    j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{1000}),
               cell(Op::kGemm, DType::kF16, gpucheck::GemmShape{24, 16, 20}),
               cell(Op::kConv, DType::kF32, conv(Layout::kNhwc)),
               cell(Op::kConv, DType::kF32, conv(Layout::kNchw)),
               cell(Op::kGemm, DType::kF64, gpucheck::GemmShape{8, 8, 8}),
               cell(Op::kSeedloop, DType::kF32, gpucheck::bench::SeedloopShape{512, 5, false})};
    const FrameworkRun run = gpucheck::bench::run_framework(j);
    ASSERT_FALSE(run.unavailable) << *run.unavailable;
    auto recs = by_key(run);
    for (const char* key : {"exp f32 excluded", "gemm f16 excluded", "conv f32 excluded nhwc",
                            "conv f32 excluded nchw", "seedloop f32 excluded"}) {
      ASSERT_TRUE(recs.contains(key)) << device << " " << key;
      EXPECT_EQ(recs[key]["status"], "ok") << recs[key].dump(2);
    }
    EXPECT_EQ(recs.contains("exp f32 included"), device == "cuda0");
    EXPECT_EQ(recs["gemm f64 excluded"]["status"], "unsupported");
    EXPECT_THAT(recs["gemm f64 excluded"]["reason"].get<std::string>(),
                HasSubstr("jax_enable_x64"));
  }
}

TEST(FrameworkRun, TensorflowPathRunsOnAGpuAndSaysWhyNotOnTheCpu) {
  if (!python_has("numpy")) GTEST_SKIP() << "python3-numpy is not installed";
  for (const std::string device : {"cpu", "cuda0"}) {
    auto j = fake_module_job("tensorflow", device);
    j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{1000}),
               cell(Op::kGemm, DType::kF16, gpucheck::GemmShape{24, 16, 20}),
               cell(Op::kConv, DType::kF32, conv(Layout::kNhwc)),
               cell(Op::kConv, DType::kF32, conv(Layout::kNchw)),
               cell(Op::kCopy, DType::kF32, gpucheck::CopyShape{1000}),
               cell(Op::kSeedloop, DType::kF32, gpucheck::bench::SeedloopShape{512, 5, true})};
    const FrameworkRun run = gpucheck::bench::run_framework(j);
    ASSERT_FALSE(run.unavailable) << *run.unavailable;
    auto recs = by_key(run);
    for (const char* key : {"exp f32 excluded", "gemm f16 excluded", "conv f32 excluded nhwc",
                            "seedloop f32 included"}) {
      ASSERT_TRUE(recs.contains(key)) << device << " " << key;
      EXPECT_EQ(recs[key]["status"], "ok") << recs[key].dump(2);
      EXPECT_EQ(recs[key]["framework"]["device"], device == "cpu" ? "/CPU:0" : "/GPU:0");
    }
    EXPECT_EQ(recs["conv f32 excluded nchw"]["status"], device == "cpu" ? "unsupported" : "ok");
    EXPECT_EQ(recs["copy - excluded h2h"]["status"], "unsupported");
  }
}

// Interpreters that misbehave: each ends in failed or mismatch records that say how.
FrameworkRun run_interpreter(const std::string& name, double timeout_s = 60) {
  auto j = job("torch", (kFixtures / "interpreters" / name).string());
  j.startup_timeout = std::chrono::duration<double>(timeout_s);
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{4096}),
             cell(Op::kExp, DType::kF64, gpucheck::ExpShape{4096})};
  return gpucheck::bench::run_framework(j);
}

TEST(FrameworkRun, AHangingInterpreterIsKilledAtTheTimeoutAndReported) {
  const auto t0 = std::chrono::steady_clock::now();
  const FrameworkRun run = run_interpreter("hang", 1.5);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(s, 10);
  ASSERT_EQ(run.records.size(), 2u);
  for (const auto& r : run.records) {
    EXPECT_EQ(r["status"], "failed");
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr("killed"));
  }
}

TEST(FrameworkRun, ACrashNamesTheSignalTheCellAndTheLastWords) {
  const FrameworkRun run = run_interpreter("crash");
  ASSERT_EQ(run.records.size(), 2u);
  const std::string first = run.records[0]["reason"];
  EXPECT_EQ(run.records[0]["status"], "failed");
  EXPECT_THAT(first, HasSubstr("SIGSEGV"));
  EXPECT_THAT(first, HasSubstr("while running this cell"));
  EXPECT_THAT(first, HasSubstr("Segmentation fault"));
  EXPECT_EQ(run.records[0]["impl"], "torch 9.9.9 (fake)");
  EXPECT_THAT(run.records[1]["reason"].get<std::string>(),
              ::testing::Not(HasSubstr("while running this cell")));
}

TEST(FrameworkRun, GarbageOnStdoutFailsEveryCellLoudly) {
  const FrameworkRun run = run_interpreter("garbage");
  ASSERT_EQ(run.records.size(), 2u);
  for (const auto& r : run.records) {
    EXPECT_EQ(r["status"], "failed");
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr("not a JSON object"));
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr("Welcome to FakePython"));
  }
}

TEST(FrameworkRun, ShortArraysAreAVerificationFailureWhateverTheChildClaims) {
  if (!fs::exists("/usr/bin/python3")) GTEST_SKIP() << "/usr/bin/python3 is absent";
  const FrameworkRun run = run_interpreter("short");
  ASSERT_EQ(run.records.size(), 2u);
  for (const auto& r : run.records) {
    EXPECT_EQ(r["status"], "mismatch") << r.dump(2);
    EXPECT_EQ(r["verification"]["method"], "size");
    EXPECT_TRUE(r["verification"]["max_rel_error"].is_null());
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr("bytes for an output of"));
  }
}

// A child that speaks the protocol and lies (tests/fixtures/framework_bench/interpreters/liar).
FrameworkRun run_liar(const std::string& lie, double timeout_s = 60,
                      std::map<std::string, std::string> extra = {}) {
  auto j = job("torch", (kFixtures / "interpreters" / "liar").string());
  j.startup_timeout = std::chrono::duration<double>(timeout_s);
  j.env["FAKE_CHILD_LIE"] = lie;
  j.policy.max_time_s = 1;  // a silent child is hung 2 x this + timeout_s after its last line
  for (auto& [k, v] : extra) j.env[k] = v;
  j.cells = {cell(Op::kExp, DType::kF32, gpucheck::ExpShape{4096})};
  return gpucheck::bench::run_framework(j);
}

TEST(FrameworkRunLies, TheLiarTellingTheTruthIsOk) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const FrameworkRun run = run_liar("");
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["status"], "ok") << run.records[0].dump(2);
}

TEST(FrameworkRunLies, ImpossiblyShortOrZeroTimesFailTheRecord) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  for (const std::string lie : {"tiny", "zero"}) {
    const FrameworkRun run = run_liar(lie);
    ASSERT_EQ(run.records.size(), 1u) << lie;
    const Json& r = run.records[0];
    EXPECT_EQ(r["status"], "failed") << r.dump(2);
    EXPECT_FALSE(r.contains("throughput")) << r.dump(2);
    EXPECT_THAT(r["reason"].get<std::string>(),
                HasSubstr(lie == "tiny" ? "this device can do at most" : "not a positive"));
  }
}

TEST(FrameworkRunLies, OneAnswerACellNotFive) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const FrameworkRun run = run_liar("again");
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["status"], "ok") << run.records[0].dump(2);
}

TEST(FrameworkRunLies, AnOutputNameOutsideTheJobIsRefused) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const FrameworkRun run = run_liar("escape");
  ASSERT_EQ(run.records.size(), 1u);
  EXPECT_EQ(run.records[0]["status"], "failed") << run.records[0].dump(2);
  EXPECT_THAT(run.records[0]["reason"].get<std::string>(), HasSubstr("not the 'out0_0.bin'"));
}

// A FIFO used to block for ever, /dev/zero to fill the memory, 20 GB to be read up to 4 GiB:
// each is now a size mismatch found without reading.
TEST(FrameworkRunLies, OutputsThatAreNotRegularFilesOfTheSizeAreNotRead) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const std::map<std::string, std::string> said{{"fifo", "other than a regular file"},
                                                {"symlink", "a symbolic link"},
                                                {"huge", "21474836480 bytes for an output of"}};
  for (const auto& [lie, words] : said) {
    const auto t0 = std::chrono::steady_clock::now();
    const FrameworkRun run = run_liar(lie);
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 30);
    ASSERT_EQ(run.records.size(), 1u) << lie;
    const Json& r = run.records[0];
    EXPECT_EQ(r["status"], "mismatch") << r.dump(2);
    EXPECT_EQ(r["verification"]["method"], "size") << lie;
    EXPECT_THAT(r["reason"].get<std::string>(), HasSubstr(words)) << lie;
  }
}

TEST(FrameworkRunLies, SecretsInTheChildsLastWordsAreRedacted) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const FrameworkRun run = run_liar("secret");
  ASSERT_EQ(run.records.size(), 1u);
  const std::string reason = run.records[0]["reason"];
  EXPECT_THAT(reason, HasSubstr("its last words"));
  EXPECT_THAT(reason, HasSubstr("example.com"));
  EXPECT_THAT(reason, ::testing::Not(HasSubstr("SECRET")));
  EXPECT_THAT(reason, ::testing::Not(HasSubstr("alice")));
  EXPECT_THAT(reason, ::testing::Not(HasSubstr("ghp_abc")));
}

// Its pipes closed, sleeping beside a grandchild: killed at the silence limit, with both.
TEST(FrameworkRunLies, AChildThatClosesItsPipesAndSleepsIsKilledWithItsGrandchild) {
  if (!fs::exists(kSystemPython)) GTEST_SKIP() << kSystemPython << " is absent";
  const fs::path pids =
      fs::temp_directory_path() / ("gpucheck-test-liar-" + std::to_string(::getpid()) + ".pids");
  const auto t0 = std::chrono::steady_clock::now();
  const FrameworkRun run = run_liar("sleep", 1.5, {{"FAKE_CHILD_PIDS", pids.string()}});
  EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), 20);
  ASSERT_EQ(run.records.size(), 1u);
  const std::string reason = run.records[0]["reason"];
  EXPECT_THAT(reason, HasSubstr("killed"));
  EXPECT_THAT(reason, ::testing::Not(HasSubstr("did not end after SIGKILL")));
  int child = 0, grandchild = 0;
  std::ifstream(pids) >> child >> grandchild;
  fs::remove(pids);
  ASSERT_GT(grandchild, 0);
  gpucheck::testing::processes_gone(child, grandchild);
  EXPECT_TRUE(gpucheck::testing::process_gone(child));
  EXPECT_TRUE(gpucheck::testing::process_gone(grandchild));
}

// TMPDIR missing or a file: the framework is unavailable, and says why (bench keeps its own
// records: tests/cli).
TEST(FrameworkRunLies, NoTemporaryDirectoryMakesTheFrameworkUnavailable) {
  const char* saved = std::getenv("TMPDIR");
  const std::string keep = saved ? saved : "";
  for (const std::string tmpdir : {"/nonexistent/gpucheck-tmp", "/etc/hostname"}) {
    ::setenv("TMPDIR", tmpdir.c_str(), 1);
    const FrameworkRun run = run_liar("");
    if (saved)
      ::setenv("TMPDIR", keep.c_str(), 1);
    else
      ::unsetenv("TMPDIR");
    ASSERT_TRUE(run.unavailable) << tmpdir;
    EXPECT_THAT(*run.unavailable, HasSubstr("no temporary directory"));
    EXPECT_THAT(*run.unavailable, HasSubstr(tmpdir));
    EXPECT_TRUE(run.records.empty());
  }
}

}  // namespace

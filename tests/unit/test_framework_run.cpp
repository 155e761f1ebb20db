// bench's framework children (bench/framework_run.h): the real Debian torch on the CPU, the
// embedded driver's CuPy and JAX paths on numpy stand-ins of their APIs, and interpreters that
// hang, crash, print garbage or return short arrays. gpucheck verifies every output itself.
#include "bench/framework_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

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
  for (const char* key :
       {"exp f32 excluded", "gemm f32 excluded", "gemm bf16 excluded", "conv f32 excluded nchw",
        "conv f32 excluded nhwc", "copy - excluded h2h", "seedloop f32 excluded"}) {
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
      cell(Op::kSeedloop, DType::kF32, gpucheck::bench::SeedloopShape{512, 5, true})};
  const FrameworkRun run = gpucheck::bench::run_framework(j);
  ASSERT_FALSE(run.unavailable) << *run.unavailable;
  auto recs = by_key(run);
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

}  // namespace

// The CPU's BLAS loaded at run time, end to end: no BLAS makes GEMM and conv
// unsupported with the remedy, a fake OpenBLAS that picks a kernel below the CPU's ISA gets the
// right one selected before it loads, a kernel set in the environment is kept, and a selected
// kernel that computes wrong results is measured again with the library's own choice.
#include "run_gpucheck.h"

#include "backends/cpu/blas_kernel.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include <thread>

using ::testing::HasSubstr;
using Json = nlohmann::json;

namespace {

// gpucheck as these tests mean it: with no OpenBLAS kernel chosen in the environment unless the
// test chooses one. A machine may set OPENBLAS_CORETYPE for everything it runs (one CI machine
// sets Haswell on an AVX-512 CPU), and gpucheck rightly keeps such a choice: it would answer
// another question than the one asked here.
gpucheck::testing::RunResult run_gpucheck(
    const std::vector<std::string>& args,
    const std::map<std::string, std::optional<std::string>>& env = {}) {
  std::map<std::string, std::optional<std::string>> clean{{"OPENBLAS_CORETYPE", std::nullopt},
                                                          {"OPENBLAS_L2_SIZE", std::nullopt},
                                                          {"OPENBLAS_VERBOSE", std::nullopt},
                                                          {"GPUCHECK_BLAS_SELECT", std::nullopt}};
  for (const auto& [k, v] : env) clean[k] = v;
  return gpucheck::testing::run_gpucheck(args, clean);
}

const std::vector<std::string> kGemm = {"bench",   "--device", "cpu",    "--ops", "gemm",
                                        "--dtype", "f32",      "--gemm", "48",    "--reps",
                                        "1",       "--warmup", "0",      "--json"};

Json records(const std::string& out) {
  return Json::parse(out)["results"];
}

// The core gpucheck selects on this machine's CPU (empty below AVX).
std::string recommended_core() {
  auto r = run_gpucheck({"probe", "--json"});
  if (r.exit_code != 0) return {};
  return gpucheck::cpu::openblas_core_for(
      gpucheck::cpu::blas_isa_from_cpu_json(Json::parse(r.out)["cpu"]));
}

}  // namespace

TEST(CpuBlasCli, NoBlasMakesGemmAndConvUnsupportedWithTheRemedy) {
  const std::map<std::string, std::optional<std::string>> env{
      {"GPUCHECK_BLAS_LIB", "/nonexistent/libopenblas.so.0"}};
  auto r = run_gpucheck(
      {"bench", "--device", "cpu", "--ops", "exp,gemm,conv", "--dtype", "f32", "--exp", "4096",
       "--gemm", "32", "--conv", "1,3,8,8,4,3,3,1,1", "--reps", "1", "--warmup", "0", "--json"},
      env);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  int unsupported = 0;
  for (const auto& rec : records(r.out)) {
    SCOPED_TRACE(rec.dump());
    if (rec["op"] == "exp") {
      EXPECT_EQ(rec["status"], "ok");
      continue;
    }
    ++unsupported;
    EXPECT_EQ(rec["status"], "unsupported");
    EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("no BLAS library"));
    EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("libopenblas0-pthread"));
    EXPECT_THAT(rec["reason"].get<std::string>(), HasSubstr("--blas PATH"));
  }
  EXPECT_EQ(unsupported, 3);  // gemm, conv nchw, conv nhwc

  auto probe = run_gpucheck({"probe", "--json"}, env);
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const Json blas = Json::parse(probe.out)["backends"][0]["devices"][0]["properties"]["blas"];
  EXPECT_THAT(blas.value("error", ""), HasSubstr("/nonexistent/libopenblas.so.0")) << blas.dump();

  auto doctor = run_gpucheck({"doctor", "--json", "--no-load"}, env);
  for (const Json parsed = Json::parse(doctor.out); const auto& c : parsed["checks"])
    if (c["id"] == "cpu_blas") {
      EXPECT_EQ(c["status"], "warn") << c.dump();
      EXPECT_THAT(c["finding"].get<std::string>(), HasSubstr("no BLAS library loads"));
    }
}

TEST(CpuBlasCli, BlasFlagNamesALibraryAndMustExist) {
  auto bad = run_gpucheck({"bench", "--device", "cpu", "--blas", "/nonexistent/libblas.so"});
  EXPECT_EQ(bad.exit_code, 2) << bad.err;
  auto probe = run_gpucheck({"probe", "--json", "--blas", GPUCHECK_FAKE_BLAS});
  ASSERT_EQ(probe.exit_code, 0) << probe.err;
  const Json blas = Json::parse(probe.out)["backends"][0]["devices"][0]["properties"]["blas"];
  EXPECT_EQ(blas["source"], "explicit");
  EXPECT_EQ(blas["library"], "openblas");
  EXPECT_EQ(blas["kernel"], "Prescott");
  EXPECT_EQ(blas["version"], "0.3.21");
  EXPECT_EQ(blas["int_bits"], 32);
}

TEST(CpuBlasCli, AKernelBelowTheIsaIsSelectedBeforeTheLibraryLoads) {
  const std::string core = recommended_core();
  if (core.empty()) GTEST_SKIP() << "this CPU has no AVX: no OpenBLAS core above Prescott applies";
  auto r = run_gpucheck(kGemm, {{"GPUCHECK_BLAS_LIB", GPUCHECK_FAKE_BLAS}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json rec = records(r.out)[0];
  EXPECT_EQ(rec["status"], "ok") << rec.dump();
  const Json blas = rec["context"]["blas"];
  EXPECT_EQ(blas["kernel"], core) << blas.dump();
  EXPECT_EQ(blas["kernel_source"], "gpucheck");
  EXPECT_EQ(blas["library_kernel"], "Prescott");
  EXPECT_FALSE(blas["kernel_below_isa"].get<bool>());
  EXPECT_THAT(blas["kernel_reason"].get<std::string>(),
              HasSubstr("gpucheck set OPENBLAS_CORETYPE=" + core));
  // The probe reports the library's own choice and what the bench would select.
  auto probe = run_gpucheck({"probe", "--json"}, {{"GPUCHECK_BLAS_LIB", GPUCHECK_FAKE_BLAS}});
  const Json facts = Json::parse(probe.out)["backends"][0]["devices"][0]["properties"]["blas"];
  EXPECT_EQ(facts["kernel"], "Prescott");
  EXPECT_TRUE(facts["kernel_below_isa"].get<bool>()) << facts.dump();
  EXPECT_EQ(facts["kernel_recommended"], core);
}

TEST(CpuBlasCli, AKernelSetInTheEnvironmentIsKept) {
  if (recommended_core().empty()) GTEST_SKIP() << "this CPU has no AVX: nothing to compare";
  auto r = run_gpucheck(kGemm, {{"GPUCHECK_BLAS_LIB", GPUCHECK_FAKE_BLAS},
                                {"OPENBLAS_CORETYPE", "Prescott"},
                                {"OPENBLAS_L2_SIZE", "262144"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json blas = records(r.out)[0]["context"]["blas"];
  EXPECT_EQ(blas["kernel"], "Prescott") << blas.dump();
  EXPECT_EQ(blas["kernel_source"], "environment");
  EXPECT_TRUE(blas["kernel_below_isa"].get<bool>());
  EXPECT_EQ(blas["kernel_environment"]["OPENBLAS_CORETYPE"], "Prescott");
  EXPECT_EQ(blas["kernel_environment"]["OPENBLAS_L2_SIZE"], "262144");
}

TEST(CpuBlasCli, ASelectedKernelThatFailsVerificationIsRerunWithTheLibrarysChoice) {
  const std::string core = recommended_core();
  if (core.empty()) GTEST_SKIP() << "this CPU has no AVX: gpucheck selects no kernel";
  auto r = run_gpucheck(
      kGemm, {{"GPUCHECK_BLAS_LIB", GPUCHECK_FAKE_BLAS}, {"FAKE_BLAS_BREAK_CORE", core}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json rec = records(r.out)[0];
  EXPECT_EQ(rec["status"], "ok") << rec.dump();
  const Json blas = rec["context"]["blas"];
  EXPECT_EQ(blas["kernel"], "Prescott") << blas.dump();
  EXPECT_EQ(blas["selected_kernel_failed"]["kernel"], core);
  EXPECT_EQ(blas["selected_kernel_failed"]["status"], "mismatch");
  EXPECT_THAT(blas["kernel_reason"].get<std::string>(), HasSubstr("failed verification"));
}

TEST(CpuBlasCli, RealOpenblasKeepsACoretypeFromTheEnvironment) {
  auto r = run_gpucheck(kGemm, {{"OPENBLAS_CORETYPE", "Prescott"}});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const Json blas = records(r.out)[0]["context"]["blas"];
  if (blas.value("library", "") != "openblas" ||
      blas.value("config", "").find("DYNAMIC_ARCH") == std::string::npos)
    GTEST_SKIP() << "the BLAS here is not a DYNAMIC_ARCH OpenBLAS: " << blas.dump();
  EXPECT_EQ(blas["kernel"], "Prescott") << blas.dump();
  EXPECT_EQ(blas["kernel_source"], "environment");
}

TEST(CpuBlasCli, ThreadsAboveTheHardwareAreClampedWithAWarning) {
  auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "exp", "--dtype", "f32", "--exp",
                         "4096", "--threads", "65536", "--reps", "1", "--warmup", "0", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const int hardware = static_cast<int>(std::thread::hardware_concurrency());
  EXPECT_THAT(r.err, HasSubstr("--threads 65536 is more than this CPU's"));
  EXPECT_EQ(records(r.out)[0]["context"]["threads"], hardware);
}

// A mistyped profile name lists every profile shipped in configs/qualify, in name order.
TEST(CpuBlasCli, QualifyFindsShippedProfilesByName) {
  auto r = run_gpucheck({"qualify", "--profile", "cpu-onyl"});
  EXPECT_EQ(r.exit_code, 2);
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(
           std::filesystem::path(GPUCHECK_SOURCE_DIR) / "configs/qualify"))
    if (e.path().extension() == ".toml") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  ASSERT_GE(names.size(), 2u);
  std::string expected = "shipped: ";
  for (std::size_t i = 0; i < names.size(); ++i) expected += (i ? ", " : "") + names[i];
  EXPECT_THAT(r.err, HasSubstr(expected));
}

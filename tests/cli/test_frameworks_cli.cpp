// `gpucheck doctor`'s framework checks end to end: the real Debian python3-torch (a CPU-only
// build) read from this system, and the fixture site-packages read under --sysroot with saved
// GPU facts: the healthy CUDA 13 venv passes every framework check, a TensorFlow without cuDNN
// fails with the library and the fix.
#include "run_gpucheck.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>

namespace {

namespace fs = std::filesystem;
using gpucheck::testing::run_gpucheck;
using ::testing::HasSubstr;
using Json = nlohmann::json;

const fs::path kFixtures = fs::path(GPUCHECK_FIXTURES_DIR);
const std::string kDebianTorch = "/usr/lib/python3/dist-packages/torch/version.py";

// The environment of a shell with only the system's python3 (nothing from a venv or conda).
std::map<std::string, std::optional<std::string>> system_python_env() {
  return {{"PATH", "/usr/bin:/bin"},         {"VIRTUAL_ENV", std::nullopt},
          {"CONDA_PREFIX", std::nullopt},    {"PYTHONPATH", std::nullopt},
          {"LD_LIBRARY_PATH", std::nullopt}, {"HOME", "/nonexistent-home"}};
}

Json check_of(const Json& doc, const std::string& id) {
  for (const auto& c : doc.at("checks"))
    if (c.at("id") == id) return c;
  return Json();
}

// framework_torch on this system's files (the real python3-torch) with saved GPU facts; the
// exit code and the check's JSON.
std::pair<int, Json> debian_torch_check(const std::string& facts_file) {
  const std::string facts = (kFixtures / "doctor" / facts_file).string();
  auto r = run_gpucheck({"doctor", "--json", "--facts", facts, "--only", "framework_torch"},
                        system_python_env());
  return {r.exit_code, check_of(Json::parse(r.out), "framework_torch")};
}

TEST(FrameworksCli, RealDebianTorchIsReportedCpuOnly) {
  if (!fs::exists(kDebianTorch))
    GTEST_SKIP() << "Debian's python3-torch is not installed (" << kDebianTorch << " is absent)";
  const auto [code, c] = debian_torch_check("base_probe.json");
  EXPECT_EQ(code, 0);
  EXPECT_EQ(c.value("status", ""), "info") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("a CPU-only build"));
  EXPECT_THAT(c.value("finding", ""), HasSubstr("torch 1."));
}

TEST(FrameworksCli, RealDebianTorchOnAnNvidiaMachineFailsWithTheInstallForItsDriver) {
  if (!fs::exists(kDebianTorch))
    GTEST_SKIP() << "Debian's python3-torch is not installed (" << kDebianTorch << " is absent)";
  // The 2x H100 machine's saved facts (driver for CUDA 13.0) with this system's files.
  const auto [code, c] = debian_torch_check("probe_h100x2.json");
  EXPECT_EQ(code, 1);
  EXPECT_EQ(c.value("status", ""), "fail") << c.dump(2);
  EXPECT_THAT(c.value("finding", ""), HasSubstr("will NOT use the NVIDIA GPU: a CPU-only build"));
  EXPECT_THAT(c.value("fix", ""), HasSubstr("python3-torch"));
  EXPECT_THAT(c.value("fix", ""),
              HasSubstr("pip install torch==2.11.* (torch 2.11 cu130: CUDA 13.0"));
}

std::map<std::string, std::optional<std::string>> venv_env() {
  auto env = system_python_env();
  env["PATH"] = "/opt/venv/bin:/usr/bin:/bin";
  env["HOME"] = "/home/alice";
  return env;
}

TEST(FrameworksCli, HealthyFixtureVenvPassesEveryFrameworkCheckUnderSysroot) {
  const std::string facts = (kFixtures / "doctor" / "probe_h100x2.json").string();
  const std::string root = (kFixtures / "frameworks" / "gpu_venv").string();
  auto r = run_gpucheck({"doctor", "--json", "--facts", facts, "--sysroot", root, "--only",
                         "framework_torch,framework_jax,framework_keras,framework_cupy"},
                        venv_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json doc = Json::parse(r.out);
  for (const char* id : {"framework_torch", "framework_jax", "framework_keras", "framework_cupy"}) {
    const Json c = check_of(doc, id);
    EXPECT_EQ(c.value("status", ""), "pass") << c.dump(2);
    EXPECT_THAT(c.value("finding", ""), HasSubstr("will use cuda0, cuda1")) << id;
  }
}

TEST(FrameworksCli, TensorflowWithoutCudnnNamesTheLibraryAndTheFix) {
  const std::string facts = (kFixtures / "doctor" / "probe_h100x2.json").string();
  const std::string root = (kFixtures / "frameworks" / "tf_no_cudnn").string();
  auto r = run_gpucheck(
      {"doctor", "--facts", facts, "--sysroot", root, "--only", "framework_tensorflow"},
      venv_env());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("libcudnn.so.9 not found"));
  EXPECT_THAT(r.out, HasSubstr("tensorflow[and-cuda]==2.20.0"));
}

}  // namespace

namespace {

// doctor --suggest: the install line per environment, from the wheel table.
TEST(FrameworksCli, SuggestGivesTheLineForThisDriverAndEachEnvironment) {
  const std::string facts = (kFixtures / "doctor" / "probe_h100x2.json").string();
  const std::string root = (kFixtures / "frameworks" / "gpu_venv").string();
  auto r = run_gpucheck({"doctor", "--suggest", "torch", "--facts", facts, "--sysroot", root, "-q"},
                        venv_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The H100s' driver 580.159.04 gives CUDA 13.0: PyPI's default for torch 2.11, through the
  // venv's own interpreter.
  EXPECT_THAT(r.out,
              HasSubstr("driver 580.159.04 (CUDA 13.0); cuda0 NVIDIA H100 80GB HBM3 (sm_90)"));
  EXPECT_THAT(r.out, HasSubstr("/opt/venv/bin/python3 -m pip install torch==2.11.* (torch 2.11 "
                               "cu130: CUDA 13.0"));
  auto tf = run_gpucheck(
      {"doctor", "--suggest", "tensorflow", "--facts", facts, "--sysroot", root, "-q"}, venv_env());
  ASSERT_EQ(tf.exit_code, 0) << tf.out << tf.err;
  EXPECT_THAT(tf.out, HasSubstr("tensorflow[and-cuda]"));
  EXPECT_THAT(tf.out, HasSubstr("only through PTX"));
}

TEST(FrameworksCli, SuggestWithoutADriverSaysWhatItAssumes) {
  const std::string facts = (kFixtures / "doctor" / "probe_gpu_h200.json").string();
  const std::string root = (kFixtures / "frameworks" / "gpu_venv").string();
  auto r = run_gpucheck({"doctor", "--suggest", "jax", "--facts", facts, "--sysroot", root, "-q"},
                        venv_env());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("no NVIDIA driver read"));
  EXPECT_THAT(r.out, HasSubstr("assumes an NVIDIA driver"));
}

TEST(FrameworksCli, SuggestRefusesAnUnknownFrameworkAndJson) {
  auto r = run_gpucheck({"doctor", "--suggest", "pytorch"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("did you mean 'torch'"));
  r = run_gpucheck({"doctor", "--suggest", "torch", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("--suggest prints text"));
}

}  // namespace

// The Vulkan GEMM's parameter space: every candidate the tuner may time fits the device's
// limits, the defaults come first, the cache's JSON form reads back only what fits, and the
// tuner keeps a choice only for the device, driver and shaders it was timed on.
#if GPUCHECK_HAVE_VULKAN_BENCH
#include "backends/vulkan/coopmat_choice.h"
#include "backends/vulkan/gemm_config.h"
#include "backends/vulkan/gemm_tuning.h"

#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace gpucheck::vulkan {
namespace {

constexpr GemmLimits kGpu{1024, 1024, 49152};
constexpr GemmLimits kSmall{128, 128, 8192};

TEST(VulkanGemmConfig, CandidatesFitTheDeviceAndStartWithTheDefaults) {
  for (const GemmLimits& limits : {kGpu, kSmall}) {
    const auto all = gemm_config_candidates(limits);
    ASSERT_FALSE(all.empty());
    EXPECT_EQ(all.front(), default_gemm_config(limits));
    for (const auto& p : all) EXPECT_FALSE(gemm_config_misfit(p, limits)) << p.describe();
  }
  // A device with 128 invocations a group loses the 16x16 groups the GPU keeps.
  EXPECT_LT(gemm_config_candidates(kSmall).size(), gemm_config_candidates(kGpu).size());
}

TEST(VulkanGemmConfig, JsonFormReadsBackOnlyWhatFits) {
  const GemmConfig p{8, 8, 8, 8, 8};
  std::string why;
  EXPECT_EQ(gemm_config_from_json(p.to_json(), kGpu, &why), p) << why;
  auto missing = p.to_json();
  missing.erase("bk");
  EXPECT_FALSE(gemm_config_from_json(missing, kGpu, &why));
  EXPECT_NE(why.find("'bk'"), std::string::npos) << why;
  const GemmConfig big{32, 32, 4, 4, 16};  // 1024 invocations
  EXPECT_FALSE(gemm_config_from_json(big.to_json(), kSmall, &why));
  EXPECT_NE(why.find("exceeds"), std::string::npos) << why;
  EXPECT_FALSE(gemm_config_from_json(nlohmann::json::array(), kGpu, &why));
}

// A device as describe_device lists it: NV cooperative matrices with the f16 shapes NVIDIA
// drivers list, and subgroups of `subgroup`.
nlohmann::json coopmat_device(bool feature, unsigned subgroup, const char* stage) {
  auto shape = [](unsigned m, unsigned n, unsigned k, const char* c) {
    return nlohmann::json{{"m", m},         {"n", n}, {"k", k}, {"a", "float16"},
                          {"b", "float16"}, {"c", c}, {"d", c}, {"scope", "subgroup"}};
  };
  return {{"subgroup", {{"size", subgroup}}},
          {"cooperative_matrix_nv",
           {{"supported", feature},
            {"supported_stages", {stage}},
            {"properties",
             {shape(16, 8, 16, "float16"), shape(16, 8, 8, "float32"), shape(16, 8, 16, "float32"),
              shape(16, 16, 16, "float32"), shape(16, 16, 16, "float16")}}}}};
}

// A conv's GEMM with 64 output channels runs 64-wide tiles; square GEMMs keep the tuned tile.
TEST(VulkanGemmConfig, TilesNarrowToAThinGemmAndNoFurther) {
  const GemmConfig tuned{16, 16, 8, 8, 8, 1};  // 128 × 128
  EXPECT_EQ(fitted_to(tuned, 4096, 4096), tuned);
  EXPECT_EQ(fitted_to(tuned, 100352, 65), tuned);
  const GemmConfig nhwc = fitted_to(tuned, 100352, 64);
  EXPECT_EQ(nhwc.wx, 8u);
  EXPECT_EQ(nhwc.wy, 16u);
  EXPECT_EQ(nhwc.block_n(), 64u);
  const GemmConfig nchw = fitted_to(tuned, 64, 3136);
  EXPECT_EQ(nchw.block_m(), 64u);
  EXPECT_EQ(nchw.block_n(), 128u);
  // Never below two subgroups' worth of invocations, the sums an invocation keeps untouched.
  const GemmConfig tiny = fitted_to(tuned, 1, 1);
  EXPECT_EQ(tiny.wx * tiny.wy, 64u);
  EXPECT_EQ(tiny.tm, 8u);
  EXPECT_EQ(tiny.tn, 8u);
  EXPECT_EQ(tiny.bk, 8u);
}

TEST(VulkanCoopmat, TheLargestF32AccumulatingShapeTheTileDividesIsChosen) {
  std::string why;
  const auto s = choose_coopmat_nv(coopmat_device(true, 32, "VK_SHADER_STAGE_COMPUTE_BIT"),
                                   CoopmatTile{}, &why);
  ASSERT_TRUE(s) << why;
  EXPECT_EQ(s->describe(), "16x16x16");
  // A tile 16 wide per subgroup column is too narrow for N = 16 (4 columns of subgroups): the
  // 16x8 shape is taken.
  const auto narrow = choose_coopmat_nv(coopmat_device(true, 32, "VK_SHADER_STAGE_COMPUTE_BIT"),
                                        CoopmatTile{128, 32, 64}, &why);
  ASSERT_TRUE(narrow) << why;
  EXPECT_EQ(narrow->describe(), "16x8x16");
}

TEST(VulkanCoopmat, EachMissingPieceIsTheReason) {
  std::string why;
  EXPECT_FALSE(choose_coopmat_nv(coopmat_device(false, 32, "VK_SHADER_STAGE_COMPUTE_BIT"),
                                 CoopmatTile{}, &why));
  EXPECT_NE(why.find("cooperativeMatrix feature"), std::string::npos) << why;
  EXPECT_FALSE(choose_coopmat_nv(coopmat_device(true, 32, "VK_SHADER_STAGE_FRAGMENT_BIT"),
                                 CoopmatTile{}, &why));
  EXPECT_NE(why.find("compute shaders"), std::string::npos) << why;
  EXPECT_FALSE(choose_coopmat_nv(coopmat_device(true, 64, "VK_SHADER_STAGE_COMPUTE_BIT"),
                                 CoopmatTile{}, &why));
  EXPECT_NE(why.find("are 64"), std::string::npos) << why;
  EXPECT_FALSE(choose_coopmat_nv(nlohmann::json::object(), CoopmatTile{}, &why));
}

TEST(VulkanCoopmat, TilesParseOnlyWhenTheShaderCanRunThem) {
  const CoopmatShape s{16, 16, 16};
  std::string why;
  const auto t = parse_coopmat_tile("256x128x32", s, &why);
  ASSERT_TRUE(t) << why;
  EXPECT_EQ(t->describe(), "256x128x32");
  for (const char* bad : {"", "128x128", "128x128x32x1", "0x128x32", "96x128x32", "128x128x8",
                          "128xx128", "99999999999x128x32", "-128x128x32", "128x128x32 "}) {
    EXPECT_FALSE(parse_coopmat_tile(bad, s, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

// A GPU idling at low clocks would time the first candidates slow: the search runs the defaults
// untimed for the target's warm-up seconds before it times anything, and not at all without one.
TEST(VulkanGemmTuning, TheDefaultsWarmTheDeviceBeforeAnyCandidateIsTimed) {
  for (const double warmup_s : {0.0, 0.05}) {
    SCOPED_TRACE(warmup_s);
    GemmTuningTarget target;
    target.limits = kGpu;
    target.untuned = default_gemm_config(kGpu);
    target.shape = {128, 128, 128};
    target.warmup_s = warmup_s;
    GemmConfig current = target.untuned;
    target.use = [&](const GemmConfig& p) { current = p; };
    std::vector<GemmConfig> runs;  // what each trial ran, in order
    const GemmTrialFn trial = [&](const GemmShape&, int, bool) {
      runs.push_back(current);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
      return GemmTrialResult{true, 1e-3, "", 0};
    };
    GemmTuningRequest request;
    request.mode = TuningMode::kRetune;
    request.budget_s = 0.5;
    const GemmTuning t = choose_gemm_config(DType::kF32, target, request, trial);
    EXPECT_EQ(t.state, "tuned");
    std::size_t defaults_first = 0;
    while (defaults_first < runs.size() && runs[defaults_first] == target.untuned) ++defaults_first;
    // Without a warm-up: the shape's probe and the reference's timing; with one, dozens of runs.
    if (warmup_s == 0) {
      EXPECT_EQ(defaults_first, 2u);
    } else {
      EXPECT_GE(defaults_first, 20u);
    }
    EXPECT_GT(runs.size(), defaults_first);  // candidates were still timed
  }
}

// The search times every candidate twice and keeps its faster trial: a clock dip through one
// trial does not hide the fastest set, and a set that fails either trial is never chosen.
TEST(VulkanGemmTuning, EachCandidateKeepsItsFasterTrialAndLosesOnAFailedOne) {
  const std::vector<GemmConfig> candidates = gemm_config_candidates(kGpu);
  ASSERT_GE(candidates.size(), 3u);
  const GemmConfig fast = candidates[2];
  for (const bool fails_second : {false, true}) {
    SCOPED_TRACE(fails_second);
    GemmTuningTarget target;
    target.limits = kGpu;
    target.untuned = default_gemm_config(kGpu);
    target.shape = {128, 128, 128};
    GemmConfig current = target.untuned;
    target.use = [&](const GemmConfig& p) { current = p; };
    int fast_trials = 0;
    const GemmTrialFn trial = [&](const GemmShape&, int, bool corrupt) {
      if (!(current == fast)) return GemmTrialResult{!corrupt, 1e-3, "", 0};
      ++fast_trials;
      if (fast_trials == 1) return GemmTrialResult{!corrupt, 4e-3, "", 0};  // the dip
      return GemmTrialResult{!(corrupt || fails_second), 0.5e-3, "wrong", 0};
    };
    GemmTuningRequest request;
    request.mode = TuningMode::kRetune;
    request.budget_s = 5;
    const GemmTuning t = choose_gemm_config(DType::kF32, target, request, trial);
    EXPECT_EQ(t.state, "tuned");
    EXPECT_EQ(fast_trials, 2);
    EXPECT_EQ(current == fast, !fails_second) << t.parameters.dump();
  }
}

// A choice is kept for the shaders it was timed on: the same identity reads it back; changed
// GEMM shaders (their SPIR-V's digest) search again, as a new driver does.
TEST(VulkanGemmTuning, AChoiceTimedOnOtherShadersIsNotKept) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("gpucheck-vk-tuning-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  GemmTuningTarget target;
  target.identity = {"uuid-1", "GPU", "580.1", "0.1.0", "aaaa"};
  target.limits = kGpu;
  target.untuned = default_gemm_config(kGpu);
  target.shape = {128, 128, 128};
  target.use = [](const GemmConfig&) {};
  int trials = 0;
  const GemmTrialFn trial = [&](const GemmShape&, int, bool corrupt) {
    ++trials;
    return GemmTrialResult{!corrupt, 1e-3, "", 0};
  };
  GemmTuningRequest request;
  request.mode = TuningMode::kAuto;
  request.budget_s = 0.2;
  request.cache_dir = dir.string();
  EXPECT_EQ(choose_gemm_config(DType::kF32, target, request, trial).state, "tuned");
  trials = 0;
  EXPECT_EQ(choose_gemm_config(DType::kF32, target, request, trial).state, "cached");
  EXPECT_EQ(trials, 0);
  target.identity.shaders = "bbbb";
  EXPECT_EQ(choose_gemm_config(DType::kF32, target, request, trial).state, "tuned");
  EXPECT_GT(trials, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpucheck::vulkan
#endif  // GPUCHECK_HAVE_VULKAN_BENCH

// The Vulkan GEMM's parameter space: every candidate the tuner may time fits the device's
// limits, the defaults come first, and the cache's JSON form reads back only what fits.
#if GPUCHECK_HAVE_VULKAN_BENCH
#include "backends/vulkan/gemm_config.h"

#include <gtest/gtest.h>

#include <string>

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

}  // namespace
}  // namespace gpucheck::vulkan
#endif  // GPUCHECK_HAVE_VULKAN_BENCH

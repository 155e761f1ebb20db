// The OpenBLAS kernel decision: which core a CPU's ISA allows, when gpucheck selects
// one, and that a core set in the environment is kept.
#include "backends/cpu/blas_kernel.h"

#include <gtest/gtest.h>

namespace gpucheck::cpu {
namespace {

BlasIsa avx512() {
  BlasIsa i;
  i.avx = i.avx2 = i.fma = true;
  i.avx512f = i.avx512cd = i.avx512bw = i.avx512dq = i.avx512vl = true;
  return i;
}

BlasIsa avx2(bool amd = false) {
  BlasIsa i;
  i.avx = i.avx2 = i.fma = true;
  i.amd = amd;
  return i;
}

TEST(BlasKernel, IsaLevelsAndTheirCores) {
  EXPECT_EQ(isa_level(BlasIsa{}), 0);
  EXPECT_EQ(openblas_core_for(BlasIsa{}), "");
  BlasIsa avx;
  avx.avx = true;
  EXPECT_EQ(isa_level(avx), 1);
  EXPECT_EQ(openblas_core_for(avx), "Sandybridge");
  EXPECT_EQ(openblas_core_for(avx2()), "Haswell");
  EXPECT_EQ(openblas_core_for(avx2(true)), "Zen");
  EXPECT_EQ(openblas_core_for(avx512()), "SkylakeX");
  BlasIsa partial = avx512();  // Knights Landing: AVX-512F without BW/DQ/VL
  partial.avx512bw = false;
  EXPECT_EQ(isa_level(partial), 2);
}

TEST(BlasKernel, CoreLevelsAreCaseInsensitiveAndUnknownNamesAreNotJudged) {
  EXPECT_EQ(openblas_core_level("Prescott"), 0);
  EXPECT_EQ(openblas_core_level("SANDYBRIDGE"), 1);
  EXPECT_EQ(openblas_core_level("Haswell"), 2);
  EXPECT_EQ(openblas_core_level("Cooperlake"), 3);
  EXPECT_FALSE(openblas_core_level("NEOVERSEN1").has_value());
}

TEST(BlasKernel, IsaFromTheProbesCpuFacts) {
  nlohmann::json cpu = {
      {"vendor", "AuthenticAMD"},
      {"isa", {{"avx", true}, {"avx2", true}, {"fma", true}, {"avx512f", false}}}};
  const BlasIsa isa = blas_isa_from_cpu_json(cpu);
  EXPECT_TRUE(isa.amd);
  EXPECT_EQ(isa_level(isa), 2);
  EXPECT_EQ(isa_level(blas_isa_from_cpu_json(nlohmann::json::array())), 0);
}

TEST(BlasKernel, SelectsTheIsasCoreBeforeLoadingWhenTheLibraryChoseBelowIt) {
  auto d = decide_openblas_kernel(avx512(), {}, "Prescott", true, true);
  EXPECT_EQ(d.select, "SkylakeX");
  EXPECT_EQ(d.source, "gpucheck");
  EXPECT_FALSE(d.below_isa);
  EXPECT_EQ(d.library_kernel, "Prescott");
  EXPECT_NE(d.reason.find("OpenBLAS chose Prescott (SSE kernels) on a CPU with AVX-512"),
            std::string::npos)
      << d.reason;
  note_running_kernel(d, "SkylakeX", avx512());
  EXPECT_FALSE(d.below_isa);
  // A build without the core keeps running its own: reported, and still below.
  note_running_kernel(d, "Prescott", avx512());
  EXPECT_TRUE(d.below_isa);
  EXPECT_NE(d.reason.find("its build lacks SkylakeX"), std::string::npos) << d.reason;
}

TEST(BlasKernel, TheProbeReportsWhatTheBenchWouldSelect) {
  auto d = decide_openblas_kernel(avx2(), {}, "Core2", true, false);
  EXPECT_EQ(d.select, "");
  EXPECT_EQ(d.source, "library");
  EXPECT_TRUE(d.below_isa);
  EXPECT_EQ(d.recommended, "Haswell");
  EXPECT_NE(d.reason.find("select Haswell"), std::string::npos) << d.reason;
}

TEST(BlasKernel, KeepsAGoodChoiceAndCannotSwitchAFixedBuild) {
  auto good = decide_openblas_kernel(avx512(), {}, "Cooperlake", true, true);
  EXPECT_EQ(good.select, "");
  EXPECT_FALSE(good.below_isa);
  auto fixed = decide_openblas_kernel(avx512(), {}, "Haswell", false, true);
  EXPECT_EQ(fixed.select, "");
  EXPECT_TRUE(fixed.below_isa);
  EXPECT_NE(fixed.reason.find("no DYNAMIC_ARCH"), std::string::npos) << fixed.reason;
  auto unknown = decide_openblas_kernel(avx512(), {}, "NEOVERSEN1", true, true);
  EXPECT_EQ(unknown.select, "");
  EXPECT_FALSE(unknown.below_isa);
}

TEST(BlasKernel, NeverOverridesTheEnvironment) {
  const EnvMap env{{"OPENBLAS_CORETYPE", "Prescott"}, {"OPENBLAS_L2_SIZE", "262144"}};
  auto d = decide_openblas_kernel(avx512(), env, "Prescott", true, true);
  EXPECT_EQ(d.select, "");
  EXPECT_EQ(d.source, "environment");
  EXPECT_TRUE(d.below_isa);
  EXPECT_EQ(d.environment["OPENBLAS_CORETYPE"], "Prescott");
  EXPECT_EQ(d.environment["OPENBLAS_L2_SIZE"], "262144");
  EXPECT_NE(d.reason.find("never overridden"), std::string::npos) << d.reason;
  // OPENBLAS_L2_SIZE alone does not stop the core selection, and is reported.
  auto l2 = decide_openblas_kernel(avx512(), {{"OPENBLAS_L2_SIZE", "1M"}}, "Prescott", true, true);
  EXPECT_EQ(l2.select, "SkylakeX");
  EXPECT_EQ(l2.to_json()["kernel_environment"]["OPENBLAS_L2_SIZE"], "1M");
}

TEST(BlasKernel, ARerunKeepsTheLibrarysChoice) {
  auto d = decide_openblas_kernel(avx512(), {{"GPUCHECK_BLAS_SELECT", "library"}}, "Prescott", true,
                                  true);
  EXPECT_EQ(d.select, "");
  EXPECT_EQ(d.source, "library");
  EXPECT_TRUE(d.below_isa);
}

}  // namespace
}  // namespace gpucheck::cpu

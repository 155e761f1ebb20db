// The one same-GPU rule that bench's waves and the report's join share.
#include "core/same_gpu_keys.h"

#include <gtest/gtest.h>

namespace gpucheck {
namespace {

TEST(SameGpuKeys, CudaAndOpenClSpellingsOfOneGpuMatch) {
  const auto cuda = same_gpu_keys("00000000:1B:00.0", "GPU-E7E58BD5-923B-52B2-4A70-E1875011EA3A");
  const auto opencl = same_gpu_keys("", "e7e58bd5-923b-52b2-4a70-e1875011ea3a");
  const auto vulkan = same_gpu_keys("00000000:1b:00.0", "");
  EXPECT_TRUE(same_gpu(cuda, opencl));
  EXPECT_TRUE(same_gpu(cuda, vulkan));
  EXPECT_FALSE(same_gpu(opencl, vulkan));  // nothing in common: not known to be one GPU
}

TEST(SameGpuKeys, UnknownIdsMatchNothing) {
  EXPECT_TRUE(same_gpu_keys("", "").empty());
  EXPECT_FALSE(same_gpu(same_gpu_keys("", ""), same_gpu_keys("", "")));
  EXPECT_FALSE(
      same_gpu(same_gpu_keys("0000:01:00.0", "GPU-a"), same_gpu_keys("0000:02:00.0", "b")));
  EXPECT_EQ(bare_gpu_uuid("GPU-AbC"), "abc");
  EXPECT_EQ(bare_gpu_uuid("MIG-AbC"), "mig-abc");
}

}  // namespace
}  // namespace gpucheck

// configs/qualify/vulkan.toml on this machine's Vulkan (lavapipe in CI): the backend, device and
// doctor requirements, exp and GEMM benched on the Vulkan device and a short stress GEMM on it,
// all met. Skips, saying why, where no Vulkan device exists.
#include "run_gpucheck.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <string>

namespace gpucheck::testing {
namespace {

using Json = nlohmann::json;

bool have_vulkan0(std::string* why) {
  const RunResult probe = run_gpucheck({"probe", "--json"});
  if (probe.exit_code != 0) return *why = "gpucheck probe --json failed", false;
  for (const auto& b : Json::parse(probe.out).at("backends"))
    if (b.value("name", "") == "vulkan")
      for (const auto& d : b.value("devices", Json::array()))
        if (d.value("device", "") == "vulkan0") return true;
  return *why = "no vulkan0 here (built without Vulkan, or no loader or device)", false;
}

TEST(VulkanQualify, VulkanProfileIsMetOnVulkan0) {
  std::string why;
  if (!have_vulkan0(&why)) GTEST_SKIP() << why;
  const RunResult r = run_gpucheck(
      {"qualify", "--profile", std::string(GPUCHECK_SOURCE_DIR) + "/configs/qualify/vulkan.toml",
       "--json", "--no-tune"});
  ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
  const Json doc = Json::parse(r.out);
  const Json& q = doc.at("qualify");
  EXPECT_EQ(q.at("verdict"), "met") << q.dump();
  int bench = 0, stress = 0;
  for (const auto& v : q.at("verdicts")) {
    SCOPED_TRACE(v.dump());
    if (v.at("kind") == "bench") {
      EXPECT_EQ(v.value("device", "").rfind("vulkan", 0), 0u);
      ++bench;
    }
    if (v.at("kind") == "stress") ++stress;
  }
  EXPECT_EQ(bench, 2);
  EXPECT_EQ(stress, 1);
  int vulkan_records = 0;
  for (const auto& rec : doc.at("results"))
    if (rec.value("backend", "") == "vulkan") {
      EXPECT_EQ(rec.at("status"), "ok") << rec.dump();
      ++vulkan_records;
    }
  EXPECT_GT(vulkan_records, 0) << r.out;
}

}  // namespace
}  // namespace gpucheck::testing

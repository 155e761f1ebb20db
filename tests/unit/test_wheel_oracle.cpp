// The wheel oracle (configs/wheels.toml) against combinations the projects published: which
// install line uses the GPU for a driver, GPU and Python, and why none does. Each row cites where
// its expectation comes from (the research notes behind configs/wheels.toml).
#include "doctor/wheel_oracle.h"

#include <gtest/gtest.h>

namespace gpucheck::doctor {
namespace {

struct Row {
  const char* why;  // the published evidence
  WheelQuery q;
  const char* expect;  // "2.11 cu130", or "none: <substring of the reason>"
};

std::string answer(const WheelQuery& q) {
  const WheelAdvice a = advise_wheel(wheel_table(), q);
  return a.wheel != nullptr ? a.wheel->version + " " + a.wheel->variant : "none: " + a.why;
}

TEST(WheelOracle, PublishedCombinations) {
  const std::vector<Row> rows = {
      {"2.7 blog: Blackwell through the cu128 index (#150733: cu126 has no sm_120)",
       {"torch", "570.124.06", 0, {120}, "3.12", "2.7"},
       "2.7 cu128"},
      {"CUDA 13 needs driver >= 580.65.06: an RTX 5090 on 570 gets 2.11's cu128",
       {"torch", "570.124.06", 0, {120}, "3.12", ""},
       "2.11 cu128"},
      {"575 cannot run cu130 (NVIDIA's minor-version table: 13.x >= 580)",
       {"torch", "575.51.03", 0, {86}, "3.12", ""},
       "2.11 cu128"},
      {"H100 on 535: 2.7's PyPI default cu126 through minor-version compatibility",
       {"torch", "535.104.05", 0, {90}, "3.11", "2.7"},
       "2.7 cu126"},
      {"H100 on 535: 2.9's PyPI default cu128 (sm_90 machine code, no JIT)",
       {"torch", "535.104.05", 0, {90}, "3.11", "2.9"},
       "2.9 cu128"},
      {"JAX 0.11 dropped Python 3.11: jax[cuda12] before 0.11 (docs: driver >= 525)",
       {"jax", "535.104.05", 0, {90}, "3.11", ""},
       "0.10 cuda12"},
      {"jax[cuda13] needs >= 580: 535 gets cuda12",
       {"jax", "535.104.05", 0, {90}, "3.12", ""},
       "0.11 cuda12"},
      {"GTX 1080 (sm_61): 2.9's cu128 starts at sm_70 (v2.8.0 notes), cu126 carries sm_60",
       {"torch", "550.163.01", 0, {61}, "3.12", "2.9"},
       "2.9 cu126"},
      {"V100 in 2.10's cu128 (PR #175253)",
       {"torch", "550.163.01", 0, {70}, "3.12", "2.10"},
       "2.10 cu128"},
      {"2.11 dropped Volta from cu128 (#172352): cu126",
       {"torch", "550.163.01", 0, {70}, "3.12", "2.11"},
       "2.11 cu126"},
      {"CUDA 13 is sm_75 and newer: V100 on 580 gets 2.11's cu126",
       {"torch", "580.65.06", 0, {70}, "3.12", "2.11"},
       "2.11 cu126"},
      {"2.7's cu128 starts at sm_75: V100 gets cu126",
       {"torch", "550.163.01", 0, {70}, "3.12", "2.7"},
       "2.7 cu126"},
      {"T4 on 580: 2.11's default cu130",
       {"torch", "580.95.05", 0, {75}, "3.12", ""},
       "2.11 cu130"},
      {"T4 on 580: JAX docs, CUDA 13 for sm_75 and newer",
       {"jax", "580.95.05", 0, {75}, "3.12", ""},
       "0.11 cuda13"},
      {"RTX 4090 (sm_89) runs sm_86 machine code",
       {"torch", "570.124.06", 0, {89}, "3.12", ""},
       "2.11 cu128"},
      {"GB10 (sm_121) runs sm_120 machine code",
       {"torch", "580.95.05", 0, {121}, "3.12", "2.9"},
       "2.9 cu128"},
      {"B200 and 2.7: cu126 has no sm_10x",
       {"torch", "570.124.06", 0, {100}, "3.12", "2.7"},
       "2.7 cu128"},
      {"torch 2.9 and later need Python 3.10",
       {"torch", "570.124.06", 0, {86}, "3.9", ""},
       "2.8 cu128"},
      {"2.8 has no Python 3.14 wheel: the newest release that has one",
       {"torch", "580.95.05", 0, {90}, "3.14", "2.8"},
       "2.11 cu130"},
      {"TF 2.19 is Python 3.9-3.12: 3.13 gets 2.21",
       {"tensorflow", "560.35.03", 0, {86}, "3.13", "2.19"},
       "2.21 and-cuda"},
      {"TF 2.20 has Python 3.13",
       {"tensorflow", "560.35.03", 0, {86}, "3.13", "2.20"},
       "2.20 and-cuda"},
      {"TF 2.21 dropped Python 3.9",
       {"tensorflow", "560.35.03", 0, {86}, "3.9", ""},
       "2.20 and-cuda"},
      {"TF on Blackwell fails (#97387, #101746, #111958)",
       {"tensorflow", "580.95.05", 0, {120}, "3.12", ""},
       "none: the GPU is newer than every build"},
      {"a 520 driver runs only CUDA 11.8's cu118",
       {"torch", "520.61.05", 0, {86}, "3.10", ""},
       "2.7 cu118"},
      {"older than every wheel's driver floor",
       {"torch", "440.33.01", 0, {86}, "3.10", ""},
       "none: update the NVIDIA driver to 450.80.02 or later"},
      {"Python 3.8 has no current torch",
       {"torch", "580.95.05", 0, {90}, "3.8", ""},
       "none: no torch wheel listed is built for Python 3.8"},
      {"a Kepler GPU (sm_35) is older than every build",
       {"torch", "470.256.02", 0, {35}, "3.10", ""},
       "none: no torch wheel listed has kernels for sm_35 (the oldest listed start at sm_37)"},
      {"the driver's CUDA alone (12.4): CUDA 12 wheels",
       {"torch", "", 12040, {90}, "3.12", ""},
       "2.11 cu128"},
      {"an H100 and an RTX 5090 together: a build for both",
       {"torch", "580.95.05", 0, {90, 120}, "3.12", "2.7"},
       "2.7 cu128"},
      {"CuPy compiles at run time: the CUDA 13 package on 580",
       {"cupy", "580.95.05", 0, {90}, "3.12", ""},
       "14 cuda13x"},
  };
  for (const auto& r : rows) {
    const std::string got = answer(r.q);
    const std::string want = r.expect;
    if (want.starts_with("none: ")) {
      EXPECT_TRUE(got.starts_with("none: ") && got.find(want.substr(6)) != std::string::npos)
          << r.why << ": got " << got;
    } else {
      EXPECT_EQ(got, want) << r.why;
    }
  }
}

TEST(WheelOracle, PtxOnlyIsSaidAndMachineCodeIsPreferred) {
  // torch 2.7 cu128 carries PTX 12.0 only as the newest arch: a future sm_130 runs through PTX.
  const WheelAdvice a =
      advise_wheel(wheel_table(), {"torch", "580.95.05", 0, {130}, "3.12", "2.7"});
  ASSERT_NE(a.wheel, nullptr);
  EXPECT_TRUE(a.ptx_only);
  EXPECT_EQ(a.wheel->variant, "cu128");
}

TEST(WheelOracle, EveryEntryNamesItsSourcesAndParses) {
  for (const auto& w : wheel_table()) {
    EXPECT_FALSE(w.sources.empty()) << w.describe();
    EXPECT_FALSE(w.pip.empty()) << w.describe();
    EXPECT_NE(w.pip.find(w.framework == "cupy" ? "cupy" : w.framework), std::string::npos)
        << w.describe();
  }
  EXPECT_THROW(parse_wheel_table("[[wheel]]\nframework = \"torch\"\n"), std::runtime_error);
  EXPECT_THROW(parse_wheel_table("not toml ["), std::runtime_error);
  EXPECT_THROW(parse_wheel_table("x = 1\n"), std::runtime_error);
}

TEST(WheelOracle, DriverVersionsCompareByParts) {
  EXPECT_TRUE(driver_at_least("580.65.06", "580.65.06"));
  EXPECT_TRUE(driver_at_least("580.82.07", "580.65.06"));
  EXPECT_FALSE(driver_at_least("575.51.03", "580.65.06"));
  EXPECT_TRUE(driver_at_least("1000.0", "580.65.06"));
  EXPECT_FALSE(driver_at_least("abc", "580.65.06"));
  EXPECT_FALSE(driver_at_least("99999999999.1", "580.65.06"));
}

}  // namespace
}  // namespace gpucheck::doctor

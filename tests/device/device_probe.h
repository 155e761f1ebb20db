// What the GPU-only tests share: the gpucheck binary under test (GPUCHECK_BIN overrides it), its
// probe's CUDA section read once (or the reason to skip), and small text helpers for nvidia-smi.
#pragma once

#include "run_gpucheck.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::device_testing {

std::string binary();

gpucheck::testing::RunResult gpucheck_run(
    const std::vector<std::string>& args,
    const std::map<std::string, std::optional<std::string>>& env = {});

// The probe's CUDA section, or a reason to skip.
struct CudaProbe {
  nlohmann::json section;
  std::string skip_reason;
};
const CudaProbe& cuda_probe();

// "a, b ,c" → {"a", "b", "c"} (nvidia-smi's CSV).
std::vector<std::string> split_csv(const std::string& line);
std::string lower(std::string s);
// nvidia-smi's words for a field it cannot show: "", "[N/A]", "[Not Supported]", "N/A".
bool not_available(const std::string& v);

}  // namespace gpucheck::device_testing

#define SKIP_WITHOUT_GPU()                                                     \
  do {                                                                         \
    const auto& gc_probe_ = ::gpucheck::device_testing::cuda_probe();          \
    if (!gc_probe_.skip_reason.empty()) {                                      \
      std::printf("device test skipped: %s\n", gc_probe_.skip_reason.c_str()); \
      GTEST_SKIP() << gc_probe_.skip_reason;                                   \
    }                                                                          \
  } while (0)

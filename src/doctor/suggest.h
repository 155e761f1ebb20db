// doctor --suggest FRAMEWORK: the one install line per Python environment that gives a framework
// using the NVIDIA GPUs here (configs/wheels.toml against this driver, the GPUs and each
// environment's Python), or why none exists.
#pragma once

#include "doctor/system_view.h"

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// The frameworks the wheel table knows: torch, jax, tensorflow, cupy.
const std::vector<std::string>& suggestable_frameworks();

struct Suggestion {
  std::string machine;  // "driver 580.95.05 (CUDA 13.0); cuda0 NVIDIA H200 (sm_90)"
  struct Line {
    std::string environment;  // "/opt/venv (VIRTUAL_ENV), Python 3.12"
    bool found = false;
    std::string text;  // the command, or why none exists
  };
  std::vector<Line> lines;  // one per Python environment; one without an interpreter if none
  bool any_found() const;
  std::string to_text(std::string_view framework) const;
};

Suggestion suggest_install(const SystemView& view, const std::string& framework);

}  // namespace gpucheck::doctor

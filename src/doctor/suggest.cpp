// The install line for each Python environment, from the wheel table.
#include "doctor/suggest.h"

#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::doctor {

const std::vector<std::string>& suggestable_frameworks() {
  static const std::vector<std::string> kFrameworks{"torch", "jax", "tensorflow", "cupy"};
  return kFrameworks;
}

bool Suggestion::any_found() const {
  return std::any_of(lines.begin(), lines.end(), [](const Line& l) { return l.found; });
}

std::string Suggestion::to_text(std::string_view framework) const {
  std::string out = fmt::format("{} for this machine: {}\n", framework, machine);
  for (const auto& l : lines)
    out += fmt::format("  {}:\n    {}{}\n", l.environment, l.found ? "" : "none: ", l.text);
  return out;
}

Suggestion suggest_install(const SystemView& view, const std::string& framework) {
  const GpuPicture gpus = gpu_picture(view);
  Suggestion s;
  std::vector<std::string> parts;
  if (!gpus.driver_version.empty() || gpus.driver)
    parts.push_back(fmt::format(
        "driver {}{}", gpus.driver_version.empty() ? "of unknown version" : gpus.driver_version,
        gpus.driver ? " (CUDA " + cuda_version_text(gpus.driver->encoded) + ")" : ""));
  else
    parts.emplace_back("no NVIDIA driver read");
  for (const auto& g : gpus.gpus)
    parts.push_back(fmt::format("{} {} (sm_{})", g.device, g.name, g.cc));
  if (gpus.gpus.empty()) parts.emplace_back("no CUDA device enumerated");
  s.machine = join(parts, "; ");
  // Nothing read of the driver or the GPUs: the line is the newest wheel's, and says what it
  // assumes rather than claiming it fits.
  const bool blind = gpus.gpus.empty() && gpus.driver_version.empty() && !gpus.driver;
  auto line_of = [&](const InstallAdvice& a) {
    if (!a.found || !blind) return a.line;
    return a.line + fmt::format(
                        " (assumes an NVIDIA driver {} or newer and a GPU it lists: "
                        "none was read here)",
                        a.min_driver);
  };
  const auto envs = host::python_environments(view);
  for (const auto& env : envs) {
    const std::string py = python_version_of(env);
    const InstallAdvice a = install_advice(gpus, framework, &env, py);
    s.lines.push_back(
        {fmt::format("{} ({}){}", python_of(env), env.origin, py.empty() ? "" : ", Python " + py),
         a.found, line_of(a)});
  }
  if (envs.empty()) {
    const InstallAdvice a = install_advice(gpus, framework, nullptr, "");
    s.lines.push_back(
        {"no Python environment found (any Python the wheel lists)", a.found, line_of(a)});
  }
  return s;
}

}  // namespace gpucheck::doctor

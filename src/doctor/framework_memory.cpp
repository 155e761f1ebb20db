// framework_memory: the memory settings people tune by hand for GPU frameworks, what each does,
// and two frameworks in one environment that would each preallocate most of the GPU (the
// second one in a process then runs out of memory).
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"

#include <fmt/format.h>

#include <cstdlib>

namespace gpucheck::doctor {

namespace {

struct Setting {
  const char* var;
  const char* does;
};

constexpr Setting kSettings[] = {
    {"XLA_PYTHON_CLIENT_PREALLOCATE",
     "false: JAX allocates as it goes instead of taking 75 % of the GPU at first use"},
    {"XLA_PYTHON_CLIENT_MEM_FRACTION", "the share of GPU memory JAX takes at first use"},
    {"XLA_PYTHON_CLIENT_ALLOCATOR", "platform: JAX allocates and frees exactly (slow)"},
    {"TF_FORCE_GPU_ALLOW_GROWTH",
     "true: TensorFlow grows its memory as needed instead of mapping nearly all of it"},
    {"PYTORCH_CUDA_ALLOC_CONF",
     "options of PyTorch's caching allocator (expandable_segments, max_split_size_mb, ...)"},
};

bool is_false(const std::string& v) {
  return v == "false" || v == "False" || v == "0";
}

// A fraction in (0, 1]; nullopt when the text is none.
std::optional<double> fraction(const std::string& text) {
  char* end = nullptr;
  const double f = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !(f > 0.0) || f > 1.0) return std::nullopt;
  return f;
}

struct Preallocator {
  std::string who;
  double share;  // of the GPU's memory
  std::string how;
};

}  // namespace

CheckResult check_framework_memory(const SystemView& view) {
  std::vector<std::string> evidence, shown;
  std::vector<Finding> findings;
  for (const auto& s : kSettings)
    if (auto v = view.env_value(s.var)) {
      shown.push_back(fmt::format("{}={}", s.var, *v));
      evidence.push_back(fmt::format("{}={}: {}", s.var, *v, s.does));
    }
  const auto jax_fraction_text = view.env_value("XLA_PYTHON_CLIENT_MEM_FRACTION");
  std::optional<double> jax_fraction = 0.75;
  if (jax_fraction_text) {
    jax_fraction = fraction(*jax_fraction_text);
    if (!jax_fraction)
      findings.push_back({CheckStatus::kWarn, "GC-FRAMEWORK-PREALLOCATION"_gc,
                          fmt::format("XLA_PYTHON_CLIENT_MEM_FRACTION={} is no fraction in (0, 1]: "
                                      "JAX fails creating its GPU client",
                                      *jax_fraction_text),
                          "export XLA_PYTHON_CLIENT_MEM_FRACTION=0.5 (or unset it)"});
  }
  const bool jax_prealloc =
      !is_false(view.env_value("XLA_PYTHON_CLIENT_PREALLOCATE").value_or("true")) &&
      view.env_value("XLA_PYTHON_CLIENT_ALLOCATOR").value_or("") != "platform";
  const std::string growth = view.env_value("TF_FORCE_GPU_ALLOW_GROWTH").value_or("false");
  const bool tf_prealloc = growth != "true";

  const auto envs = host::python_environments(view);
  const auto scans = scan_environments(view, envs);
  const GpuPicture gpus = gpu_picture(view);
  std::vector<std::string> scratch;
  std::size_t gpu_frameworks = 0;
  for (const auto& scan : scans) {
    std::vector<Preallocator> pre;
    const auto jax = judge_jax(view, gpus, scan, scratch);
    if (jax && jax->uses_gpu) {
      ++gpu_frameworks;
      if (jax_prealloc && jax_fraction)
        pre.push_back(
            {"JAX", *jax_fraction, fmt::format("{:.0f} % at first use", *jax_fraction * 100)});
    }
    const auto tf = judge_tensorflow(view, gpus, scan, scratch);
    if (tf && tf->uses_gpu) {
      ++gpu_frameworks;
      if (tf_prealloc) pre.push_back({"TensorFlow", 0.95, "nearly all of it"});
    }
    const auto torch = judge_torch(view, gpus, scan, scratch);
    if (torch && torch->uses_gpu) ++gpu_frameworks;
    if (scan.first("theano") != nullptr) {
      // Theano's gpuarray.preallocate (and the older lib.cnmem) take a share up front.
      std::map<std::string, std::string> flags;
      if (auto home = view.env_value("HOME"))
        if (auto rc = view.read_file(*home + "/.theanorc", 64u << 10)) flags = parse_theanorc(*rc);
      if (auto f = view.env_value("THEANO_FLAGS"))
        for (const auto& [k, v] : parse_theano_flags(*f)) flags[k] = v;
      for (const char* key : {"gpuarray.preallocate", "lib.cnmem"})
        if (auto it = flags.find(key); it != flags.end()) {
          evidence.push_back(
              fmt::format("Theano {}={}: the share of GPU memory Theano takes at "
                          "start-up",
                          key, it->second));
          shown.push_back(fmt::format("Theano {}={}", key, it->second));
          if (auto share = fraction(it->second); share && gpus.nvidia)
            pre.push_back({"Theano", *share, fmt::format("{:.0f} % at start-up", *share * 100)});
        }
    }
    double total = 0;
    std::vector<std::string> parts;
    for (const auto& p : pre) {
      total += p.share;
      parts.push_back(fmt::format("{} ({})", p.who, p.how));
    }
    if (pre.size() >= 2 && total > 1.0)
      findings.push_back(
          {CheckStatus::kWarn, "GC-FRAMEWORK-PREALLOCATION"_gc,
           fmt::format("{} in {}'s environment would each preallocate the GPU: used in one "
                       "process, the second runs out of memory",
                       join(parts, " and "), python_of(*scan.env)),
           "export XLA_PYTHON_CLIENT_PREALLOCATE=false TF_FORCE_GPU_ALLOW_GROWTH=true (each "
           "then allocates as it goes), or run the frameworks in separate processes"});
  }
  if (shown.empty() && gpu_frameworks == 0 && findings.empty())
    return not_applicable("no GPU framework build and no memory setting found", evidence);
  if (!findings.empty()) return combine(findings, evidence, "");
  return pass(
      fmt::format("{}; no two frameworks preallocate the GPU in one environment",
                  shown.empty() ? std::string("defaults (no memory setting)") : join(shown, ", ")),
      evidence);
}

}  // namespace gpucheck::doctor

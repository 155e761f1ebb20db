// Environment variables that change what GPU programs see or how fast they run: device
// visibility, CUDA debugging switches, library injection and search paths, the OpenCL loader's
// variables (judged by the probe, which knows the loaded loader's rules) and CPU thread counts.
#include "core/text.h"
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <regex>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, sep);) out.push_back(item);
  return out;
}

// How CUDA reads a *_VISIBLE_DEVICES entry: an index, a GPU-/MIG- UUID (or a prefix of one).
bool valid_device_token(const std::string& token) {
  static const std::regex kIndex(R"([0-9]+)");
  static const std::regex kUuid(R"((GPU|MIG)-[0-9a-fA-F-]+(/[0-9]+/[0-9]+)?)");
  return std::regex_match(token, kIndex) || std::regex_match(token, kUuid);
}

}  // namespace

// ---- env_visible_devices ----

CheckResult check_env_visible_devices(const SystemView& view) {
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES"}) {
    auto v = view.env_value(var);
    if (!v) continue;
    evidence.push_back(fmt::format("{}='{}'", var, *v));
    const std::string unset = fmt::format("unset {}", var);
    const std::string value = std::string(trim_space(*v));
    if (value.empty()) {
      findings.push_back({CheckStatus::kWarn, "GC-ENV-DEVICES-HIDDEN"_gc,
                          fmt::format("{} is set but empty: every GPU is hidden", var), unset});
      continue;
    }
    const auto tokens = split(value, ',');
    std::vector<std::string> kept;
    std::string bad;
    for (const auto& t : tokens) {
      const std::string tok = std::string(trim_space(t));
      if (!valid_device_token(tok)) {
        bad = tok;
        break;
      }
      kept.push_back(tok);
    }
    if (kept.empty()) {
      findings.push_back({CheckStatus::kWarn, "GC-ENV-DEVICES-HIDDEN"_gc,
                          fmt::format("{}={} hides every GPU{}", var, value,
                                      value == "NoDevFiles" ? " (Slurm allocated none)" : ""),
                          unset + " (or name the devices to use: 0,1)"});
    } else if (!bad.empty()) {
      findings.push_back(
          {CheckStatus::kWarn, "GC-ENV-DEVICES-HIDDEN"_gc,
           fmt::format("{}={}: the runtime stops at the invalid entry '{}', so only {} stay "
                       "visible",
                       var, value, bad, join(kept, ",")),
           fmt::format("export {}={}", var, join(kept, ","))});
    } else {
      findings.push_back(
          {CheckStatus::kInfo,
           {},
           fmt::format("{}={}: only these devices are visible, renumbered from 0", var, value),
           ""});
    }
  }
  return combine(findings, evidence,
                 "CUDA_VISIBLE_DEVICES, HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES are not set");
}

// ---- env_cuda_behaviour ----

CheckResult check_env_cuda_behaviour(const SystemView& view) {
  struct Rule {
    const char* var;
    const char* value;  // nullptr: any value
    CheckStatus status;
    const char* why;
  };
  static const Rule kRules[] = {
      {"CUDA_LAUNCH_BLOCKING", "1", CheckStatus::kWarn,
       "every kernel launch waits for the kernel to finish (a debugging switch): everything is "
       "slower"},
      {"CUDA_CACHE_DISABLE", "1", CheckStatus::kWarn,
       "the JIT cache is off: PTX is compiled again at every start"},
      {"CUDA_FORCE_PTX_JIT", "1", CheckStatus::kWarn,
       "the embedded machine code is ignored and every kernel is JIT-compiled from PTX"},
      {"PYTORCH_NO_CUDA_MEMORY_CACHING", "1", CheckStatus::kWarn,
       "PyTorch's caching allocator is off: every allocation calls cudaMalloc"},
      {"CUDA_DEVICE_MAX_CONNECTIONS", "1", CheckStatus::kInfo,
       "one hardware queue: kernels of different streams do not overlap"},
      {"NVIDIA_TF32_OVERRIDE", "0", CheckStatus::kInfo,
       "TF32 is off: f32 GEMM and convolutions on Ampere and later run at full-f32 speed"},
      {"CUBLAS_WORKSPACE_CONFIG", nullptr, CheckStatus::kInfo,
       "cuBLAS restricted to deterministic workspaces (reproducible, sometimes slower)"},
      {"CUDA_MODULE_LOADING", "EAGER", CheckStatus::kInfo,
       "every kernel is loaded at start: slower start, more device memory"},
      {"CUDA_DEVICE_ORDER", "PCI_BUS_ID", CheckStatus::kInfo,
       "CUDA numbers devices in PCI order (as nvidia-smi does), not fastest first"},
      {"CUDA_DEVICE_ORDER", "FASTEST_FIRST", CheckStatus::kInfo,
       "CUDA numbers devices fastest first: indices may differ from nvidia-smi's"},
  };
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  for (const auto& r : kRules) {
    auto v = view.env_value(r.var);
    if (!v || (r.value != nullptr && trim_space(*v) != r.value)) continue;
    evidence.push_back(fmt::format("{}={}", r.var, *v));
    findings.push_back({r.status, r.status == CheckStatus::kWarn ? "GC-ENV-CUDA-SLOW"_gc : Code{},
                        fmt::format("{}={}: {}", r.var, *v, r.why),
                        r.status == CheckStatus::kWarn ? fmt::format("unset {}", r.var) : ""});
  }
  return combine(findings, evidence, "no variable that slows CUDA or changes its math is set");
}

// ---- env_ld_preload ----

CheckResult check_env_ld_preload(const SystemView& view) {
  auto v = view.env_value("LD_PRELOAD");
  if (!v || trim_space(*v).empty()) return pass("LD_PRELOAD is not set");
  static const std::regex kGpuLibrary(
      R"((^|/)(libcuda|libcudart|libcublas|libcudnn|libnvidia-|libOpenCL|libamdhip|libhsa-runtime|libnvrtc)[^/]*$)");
  std::vector<std::string> gpu, other;
  for (auto entry : split(*v, ':')) {
    for (auto e : split(entry, ' ')) {
      e = trim_space(e);
      if (e.empty()) continue;
      (std::regex_search(e, kGpuLibrary) ? gpu : other).push_back(e);
    }
  }
  std::vector<std::string> evidence{"LD_PRELOAD=" + *v};
  if (!gpu.empty())
    return warn("GC-ENV-PRELOAD-GPU-LIB"_gc,
                fmt::format("LD_PRELOAD forces {} into every process: it overrides the driver or "
                            "library each GPU program would load",
                            join(gpu, ", ")),
                "unset LD_PRELOAD (or drop " + join(gpu, ", ") + " from it) unless you meant it",
                evidence);
  return info(fmt::format("LD_PRELOAD injects {} into every process, GPU programs included "
                          "(profilers and allocators do this on purpose)",
                          join(other, ", ")),
              evidence);
}

// ---- env_ld_library_path ----

CheckResult check_env_ld_library_path(const SystemView& view) {
  auto v = view.env_value("LD_LIBRARY_PATH");
  std::vector<std::string> evidence;
  if (auto lp = view.env_value("LIBRARY_PATH"))
    evidence.push_back("LIBRARY_PATH=" + *lp + " (link time only; no effect on running programs)");
  if (!v || trim_space(*v).empty()) return pass("LD_LIBRARY_PATH is not set", evidence);
  evidence.insert(evidence.begin(), "LD_LIBRARY_PATH=" + *v);
  std::vector<std::string> stubs;
  for (const auto& dir : split(*v, ':')) {
    std::string d = dir;
    while (d.size() > 1 && d.ends_with('/')) d.pop_back();
    if (d.ends_with("/stubs")) stubs.push_back(d);
  }
  if (!stubs.empty()) {
    std::vector<std::string> kept;
    for (const auto& dir : split(*v, ':'))
      if (std::find(stubs.begin(), stubs.end(), dir) == stubs.end() &&
          std::find(stubs.begin(), stubs.end(), dir.substr(0, dir.find_last_not_of('/') + 1)) ==
              stubs.end())
        kept.push_back(dir);
    return warn("GC-ENV-STUB-FIRST"_gc,
                fmt::format("LD_LIBRARY_PATH names {}: the CUDA toolkit's stub libcuda.so there "
                            "can shadow the driver, and CUDA then reports no driver",
                            join(stubs, ", ")),
                "export LD_LIBRARY_PATH=" + join(kept, ":") +
                    " (stubs are for linking: use LIBRARY_PATH or -L)",
                evidence);
  }
  return info("LD_LIBRARY_PATH=" + *v + ": searched before the system's library directories",
              evidence);
}

// ---- env_opencl_loader ----

CheckResult check_env_opencl_loader(const SystemView& view) {
  const Json& env = opencl_field(view, k::kEnv);
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  for (const auto& [var, entry] : env.items()) {
    const std::string value = text(entry, k::kValue);
    const std::string effect = text(entry, k::kEffect);
    evidence.push_back(fmt::format("{}={}: {}", var, value, effect));
    const bool useless = effect.starts_with("ignored") || effect.starts_with("no effect") ||
                         effect.starts_with("not a directory") || effect.starts_with("empty") ||
                         effect.starts_with("unknown value");
    if (useless) {
      findings.push_back(
          {CheckStatus::kWarn, "GC-ENV-OPENCL-IGNORED"_gc,
           fmt::format("{} is set but {}", var, effect),
           fmt::format("unset {}{}", var,
                       var == "OCL_ICD_FILENAMES"
                           ? " and register the libraries with .icd files in /etc/OpenCL/vendors "
                             "(see opencl_vendor_registration)"
                           : "")});
    } else {
      findings.push_back(
          {CheckStatus::kInfo,
           {},
           fmt::format("{}={}: {} (sudo and systemd services drop it)", var, value, effect),
           ""});
    }
  }
  for (const auto& [name, value] : view.env) {
    if (!name.starts_with("POCL_")) continue;
    evidence.push_back(fmt::format("{}={}", name, value));
    if (name == "POCL_DEVICES")
      findings.push_back(
          {CheckStatus::kInfo,
           {},
           fmt::format("POCL_DEVICES={}: pocl offers only these device kinds", value),
           ""});
  }
  return combine(findings, evidence, "no OpenCL loader variable is set");
}

// ---- env_cpu_threads ----

CheckResult check_env_cpu_threads(const SystemView& view) {
  const Json cpu = view.facts.value(k::kCpu, Json::object());
  const int threads = cpu.value(k::kThreads, 0);
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  if (threads > 0) evidence.push_back(fmt::format("cpu.threads: {}", threads));
  for (const char* var :
       {"OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "GOTO_NUM_THREADS"}) {
    auto v = view.env_value(var);
    if (!v) continue;
    evidence.push_back(fmt::format("{}={}", var, *v));
    int n = 0;
    try {
      std::size_t used = 0;
      n = std::stoi(std::string(trim_space(*v)), &used);
      if (used != trim_space(*v).size()) n = 0;
    } catch (const std::exception&) {
      n = 0;
    }
    if (n <= 0) {
      findings.push_back(
          {CheckStatus::kInfo,
           {},
           fmt::format("{}='{}' is not a thread count (OpenMP may ignore it)", var, *v),
           ""});
    } else if (n == 1 && threads > 1) {
      findings.push_back(
          {CheckStatus::kWarn, "GC-ENV-ONE-THREAD"_gc,
           fmt::format("{}=1: BLAS and OpenMP code (numpy, PyTorch's CPU ops, gpucheck's CPU "
                       "baseline) use 1 of {} threads, so CPU timings and GPU speedups mislead",
                       var, threads),
           fmt::format("unset {} (or set it to the cores you mean to use)", var)});
    } else if (threads > 0 && n > threads) {
      findings.push_back({CheckStatus::kInfo,
                          {},
                          fmt::format("{}={} is more than the {} hardware threads: oversubscribed",
                                      var, n, threads),
                          ""});
    } else {
      findings.push_back(
          {CheckStatus::kInfo, {}, fmt::format("{}={}: CPU code uses {} threads", var, n, n), ""});
    }
  }
  return combine(findings, evidence,
                 "no thread-count variable is set: BLAS and OpenMP use every hardware thread");
}

}  // namespace gpucheck::doctor

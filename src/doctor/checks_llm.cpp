// Local LLM runtimes (ollama, llama.cpp): which GPU backends they carry, whether each can load
// here (every library its ELF header needs is found where the dynamic linker would look, and a
// CUDA backend's CUDA is one the driver runs), and the settings that hide the GPUs from them.
// Judged from files, without loading a backend: dlopen of a CUDA backend runs its
// initialisers, and a missing library is named by the file search as a dlopen error would name
// it.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/framework_gpus.h"
#include "host/llm_runtimes.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <regex>
#include <set>

namespace gpucheck::doctor {

namespace {

// Libraries of the base system every program needs: a machine without them runs no runtime at
// all, and fixtures need not hold them.
const std::set<std::string> kBaseSystem{"libc.so.6",     "libm.so.6",
                                        "libdl.so.2",    "libpthread.so.0",
                                        "librt.so.1",    "libstdc++.so.6",
                                        "libgcc_s.so.1", "ld-linux-x86-64.so.2",
                                        "libgomp.so.1",  "ld-linux-aarch64.so.1"};

std::string display_kind(const std::string& kind) {
  static const std::map<std::string, std::string> kNames{
      {"cuda", "CUDA"},     {"hip", "ROCm"},  {"vulkan", "Vulkan"}, {"sycl", "SYCL"},
      {"opencl", "OpenCL"}, {"musa", "MUSA"}, {"cann", "CANN"}};
  auto it = kNames.find(kind);
  return it == kNames.end() ? kind : it->second;
}

// The CUDA major a CUDA backend is built for: its libcudart.so.N or libcublas.so.N, else
// ollama's runner folder (cuda_v12).
int cuda_major_of(const host::GgmlBackend& b) {
  static const std::regex kLib(R"(^lib(cudart|cublas)\.so\.([0-9]{1,4})$)");
  static const std::regex kRunner(R"(^cuda_v([0-9]{1,4})$)");
  std::smatch m;
  if (b.elf)
    for (const auto& n : b.elf->needed)
      if (std::regex_match(n, m, kLib)) return std::stoi(m[2].str());
  if (std::regex_match(b.runner, m, kRunner)) return std::stoi(m[1].str());
  return 0;
}

// The sonames of a backend the dynamic linker would not find: RPATH (without RUNPATH), the
// folders the runtime adds itself (ollama puts its own and the runner's folder on
// LD_LIBRARY_PATH), LD_LIBRARY_PATH, RUNPATH, then ld.so.conf's and the system's folders.
std::vector<std::string> unresolved(const SystemView& view, const host::LlmRuntime& rt,
                                    const host::GgmlBackend& b) {
  const std::string dir = b.path.substr(0, b.path.rfind('/'));
  std::vector<std::string> dirs;
  if (b.elf->runpath.empty())
    for (const auto& d : search_dirs(b.elf->rpath, dir)) dirs.push_back(d);
  dirs.push_back(dir);
  dirs.push_back(rt.lib_dir);
  for (const auto& d : search_dirs(b.elf->runpath, dir)) dirs.push_back(d);
  for (const auto& d : linker_search(view).dirs) dirs.push_back(d);
  std::vector<std::string> missing;
  for (const auto& n : b.elf->needed) {
    if (kBaseSystem.contains(n)) continue;
    if (std::none_of(dirs.begin(), dirs.end(),
                     [&](const std::string& d) { return view.exists(d + "/" + n); }))
      missing.push_back(n);
  }
  return missing;
}

// A setting that hides every GPU of a kind: empty or "-1" device lists.
bool hides_all(const std::string& value) {
  return value.empty() || value == "-1" || value == "none" || value == "NoDevFiles";
}

struct Hidden {
  std::string what, fix;
};

// The settings of this runtime's environment that hide GPUs it could use. The process's
// CUDA_VISIBLE_DEVICES is env_visible_devices's; ollama's unit is this check's.
std::vector<Hidden> hiding_settings(const SystemView& view, const host::LlmRuntime& rt,
                                    const std::set<std::string>& vendors) {
  std::vector<Hidden> out;
  const bool ollama = rt.name == "ollama";
  auto judge = [&](const std::string& name, const std::string& value, bool from_unit) {
    const std::string where = from_unit ? "ollama's unit (" + rt.service_unit + ")" : "this shell";
    const std::string fix = from_unit ? fmt::format(
                                            "remove {} from ollama's unit (sudo systemctl "
                                            "edit ollama), then sudo systemctl restart "
                                            "ollama",
                                            name)
                                      : "unset " + name;
    const bool nvidia = vendors.contains("nvidia"), amd = vendors.contains("amd");
    if (name == "CUDA_VISIBLE_DEVICES" && from_unit && nvidia && hides_all(value))
      out.push_back({fmt::format("{} sets CUDA_VISIBLE_DEVICES={}: no NVIDIA GPU is visible to "
                                 "ollama",
                                 where, value.empty() ? "\"\"" : value),
                     fix});
    if ((name == "HIP_VISIBLE_DEVICES" || name == "ROCR_VISIBLE_DEVICES") && amd &&
        hides_all(value))
      out.push_back(
          {fmt::format("{} sets {}={}: no AMD GPU is visible to ROCm", where, name, value), fix});
    if (name == "GGML_VK_VISIBLE_DEVICES" && !vendors.empty() && hides_all(value))
      out.push_back({fmt::format("{} sets GGML_VK_VISIBLE_DEVICES={}: no GPU is visible to the "
                                 "Vulkan backend",
                                 where, value.empty() ? "\"\"" : value),
                     fix});
    if (name == "OLLAMA_LLM_LIBRARY" && ollama && !vendors.empty()) {
      std::set<std::string> runners;
      for (const auto& b : rt.backends)
        if (!b.runner.empty()) runners.insert(b.runner);
      if (value.starts_with("cpu"))
        out.push_back(
            {fmt::format("{} sets OLLAMA_LLM_LIBRARY={}: ollama runs on the CPU", where, value),
             fix});
      else if (!runners.contains(value))
        out.push_back(
            {fmt::format("{} sets OLLAMA_LLM_LIBRARY={}, which names no runner folder "
                         "of {} ({}): ollama skips every GPU runner",
                         where, value, rt.lib_dir,
                         join(std::vector<std::string>(runners.begin(), runners.end()), ", ")),
             fix});
    }
    if (name == "OLLAMA_VULKAN" && ollama && value == "0" && (amd || vendors.contains("intel")))
      out.push_back({fmt::format("{} sets OLLAMA_VULKAN=0: the Vulkan runner, the path for AMD "
                                 "and Intel GPUs ROCm does not serve, is off",
                                 where),
                     fix});
  };
  for (const char* name : {"HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "GGML_VK_VISIBLE_DEVICES",
                           "OLLAMA_LLM_LIBRARY", "OLLAMA_VULKAN"})
    if (auto v = view.env_value(name)) judge(name, *v, false);
  for (const auto& [name, value] : rt.service_env) judge(name, value, true);
  return out;
}

// The GPU kinds that serve a vendor's GPU.
bool serves(const std::string& kind, const std::string& vendor) {
  if (vendor == "nvidia") return kind == "cuda" || kind == "vulkan";
  if (vendor == "amd") return kind == "hip" || kind == "vulkan";
  if (vendor == "intel") return kind == "vulkan" || kind == "sycl" || kind == "opencl";
  return false;
}

}  // namespace

// ---- llm_runtimes ----

CheckResult check_llm_runtimes(const SystemView& view) {
  const auto runtimes = host::find_llm_runtimes(view);
  if (runtimes.empty())
    return not_applicable(
        "no ollama (lib/ollama) or llama.cpp (libggml-<backend>.so) install found");
  const GpuExpectation expected = expected_gpu_vendors(view);
  std::optional<DriverCuda> driver;
  try {
    driver = driver_cuda_version(view);
  } catch (const NotObservable&) {
  }
  std::vector<std::string> evidence;
  for (const auto& e : expected.evidence) evidence.push_back("GPU expected: " + e);
  if (driver)
    evidence.push_back(fmt::format("driver supports CUDA {}", cuda_version_text(driver->encoded)));
  std::vector<Finding> findings;
  std::vector<std::string> fine;
  for (const auto& rt : runtimes) {
    const std::string who = fmt::format("{} ({})", rt.name, rt.lib_dir);
    std::map<std::string, std::vector<std::string>> usable_by_kind;  // kind -> backend labels
    std::vector<std::string> problems;
    for (const auto& b : rt.backends) {
      if (!b.gpu()) continue;
      const int cuda = b.kind == "cuda" ? cuda_major_of(b) : 0;
      const std::string label =
          fmt::format("{}{}{}", display_kind(b.kind), cuda != 0 ? fmt::format(" {}", cuda) : "",
                      b.runner.empty() ? "" : " (" + b.runner + ")");
      if (!b.elf) {
        evidence.push_back(fmt::format("{}: {}: not a readable ELF library", who, b.path));
        problems.push_back(label + ": " + b.path + " is not a readable library");
        continue;
      }
      evidence.push_back(fmt::format("{}: {} needs {}", who, b.path, join(b.elf->needed, ", ")));
      const auto missing = unresolved(view, rt, b);
      if (!missing.empty()) {
        problems.push_back(fmt::format("{} cannot load: {} not found", label, join(missing, ", ")));
        continue;
      }
      if (cuda != 0 && driver && driver->encoded / 1000 < cuda) {
        problems.push_back(fmt::format("{} needs a driver for CUDA {}, this one gives {}", label,
                                       cuda, cuda_version_text(driver->encoded)));
        continue;
      }
      usable_by_kind[b.kind].push_back(label);
    }
    // For each GPU this machine has: a backend that can serve it, or the runtime is on the CPU.
    bool stranded = false;
    for (const auto& vendor : expected.vendors) {
      bool served = false;
      for (const auto& [kind, labels] : usable_by_kind) served = served || serves(kind, vendor);
      if (served) continue;
      stranded = true;
      findings.push_back(
          {CheckStatus::kWarn, "GC-LLM-BACKEND-UNLOADABLE"_gc,
           fmt::format("{} has no GPU backend that can run on the {} GPU here ({}): it runs on "
                       "the CPU",
                       who, vendor_display_name(vendor),
                       problems.empty() ? "it carries none for it" : join(problems, "; ")),
           (vendor == "nvidia"
                ? std::string("give the libraries named where the linker finds them: the NVIDIA "
                              "driver's libcuda.so.1 (the driver package; in a container run "
                              "it with --gpus all), a driver for the CUDA the backend needs")
                : std::string("install the Vulkan loader and the GPU's Vulkan driver (sudo apt "
                              "install libvulkan1 mesa-vulkan-drivers), or a ROCm its ROCm "
                              "backend can use")) +
               (rt.name == "ollama"
                    ? "; reinstall ollama (curl -fsSL https://ollama.com/install.sh | sh) if a "
                      "runner folder is incomplete"
                    : "; a llama.cpp built against the CUDA toolkit on LD_LIBRARY_PATH "
                      "(cmake -DGGML_CUDA=ON) carries its own runtime's sonames")});
    }
    for (const auto& h : hiding_settings(view, rt, expected.vendors))
      findings.push_back({CheckStatus::kWarn, "GC-LLM-GPU-HIDDEN"_gc, h.what, h.fix});
    std::vector<std::string> kinds;
    for (const auto& [kind, labels] : usable_by_kind) kinds.push_back(join(labels, ", "));
    if (!stranded)
      fine.push_back(fmt::format("{}: {}", who,
                                 kinds.empty() ? "no GPU backend, and no GPU here that needs one"
                                               : "can load " + join(kinds, "; ")));
    for (const auto& p : problems) evidence.push_back(who + ": " + p);
  }
  return combine(findings, evidence, join(fine, "; "));
}

}  // namespace gpucheck::doctor

// Python GPU frameworks, read from site-packages without importing them: which torch, JAX and
// CuPy builds and nvidia-* wheels each environment holds, whether they agree on one CUDA major,
// and the closing verdict "CUDA usable by PyTorch here".
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

namespace gpucheck::doctor {

namespace {

struct Installed {
  const host::PythonEnv* env;
  host::SitePackages site;
};

std::vector<Installed> installed_frameworks(const SystemView& view,
                                            const std::vector<host::PythonEnv>& envs) {
  std::vector<Installed> out;
  for (const auto& env : envs)
    for (const auto& dir : env.site_dirs) {
      host::SitePackages sp = host::read_site_packages(view, dir);
      if (sp.torch || !sp.gpu_dists.empty()) out.push_back({&env, std::move(sp)});
    }
  return out;
}

std::string torch_label(const host::TorchBuild& t) {
  if (t.cuda) return fmt::format("torch {} (CUDA {})", t.version, *t.cuda);
  if (t.hip) return fmt::format("torch {} (ROCm, HIP {})", t.version, *t.hip);
  return fmt::format("torch {} (CPU-only)", t.version);
}

std::string summary(const host::SitePackages& sp) {
  std::vector<std::string> parts;
  if (sp.torch) parts.push_back(torch_label(*sp.torch));
  std::size_t nvidia = 0;
  for (const auto& d : sp.gpu_dists) {
    if (d.name == "torch") continue;
    if (d.name.starts_with("nvidia-")) {
      ++nvidia;
      continue;
    }
    parts.push_back(d.name + " " + d.version);
  }
  std::vector<std::string> key_libs;
  for (const auto& d : sp.gpu_dists)
    if (host::is_library_wheel(d.name, "cudnn") || host::is_library_wheel(d.name, "cublas"))
      key_libs.push_back(d.name + " " + d.version);
  if (nvidia > 0)
    parts.push_back(fmt::format("{} nvidia-* wheel{}{}", nvidia, nvidia == 1 ? "" : "s",
                                key_libs.empty() ? "" : " (" + join(key_libs, ", ") + ")"));
  return join(parts, ", ");
}

// The CUDA libraries a CUDA build of torch cannot import without.
std::vector<std::string> torch_missing_libraries(const host::SitePackages& sp) {
  std::vector<std::string> missing;
  if (!sp.torch || !sp.torch->cuda) return missing;
  auto bundled = [&](std::string_view prefix) {
    return std::any_of(sp.torch->bundled_cuda_libs.begin(), sp.torch->bundled_cuda_libs.end(),
                       [&](const std::string& l) { return l.starts_with(prefix); });
  };
  auto wheel = [&](std::string_view library) {
    return std::any_of(sp.gpu_dists.begin(), sp.gpu_dists.end(), [&](const host::Distribution& d) {
      return host::is_library_wheel(d.name, library);
    });
  };
  if (!bundled("libcudnn") && !wheel("cudnn")) missing.emplace_back("cuDNN");
  if (!bundled("libcublas") && !wheel("cublas")) missing.emplace_back("cuBLAS");
  return missing;
}

std::string torch_reinstall(const host::TorchBuild& t) {
  // PyTorch's wheel index names CUDA 12.1 "cu121".
  std::string tag = "cu121";
  if (t.cuda) {
    tag = "cu";
    for (char c : *t.cuda)
      if (c != '.') tag += c;
  }
  std::string version = t.version.substr(0, t.version.find('+'));
  return fmt::format(
      "pip install --force-reinstall torch=={} --index-url https://download.pytorch.org/whl/{}",
      version, tag);
}

std::vector<std::string> scanned(const std::vector<host::PythonEnv>& envs) {
  std::vector<std::string> out;
  for (const auto& e : envs)
    for (const auto& d : e.site_dirs) out.push_back(fmt::format("scanned {} ({})", d, e.origin));
  return out;
}

}  // namespace

// ---- framework_packages ----

CheckResult check_framework_packages(const SystemView& view) {
  const auto envs = host::python_environments(view);
  if (envs.empty())
    return info(
        "no Python environment found (no python on PATH, no CONDA_PREFIX or "
        "VIRTUAL_ENV, no /usr/lib/python3/dist-packages)");
  const auto found = installed_frameworks(view, envs);
  std::vector<std::string> evidence = scanned(envs);
  if (found.empty())
    return info(fmt::format("no PyTorch, JAX, CuPy or nvidia-* wheel in the {} Python "
                            "environment{} found",
                            envs.size(), envs.size() == 1 ? "" : "s"),
                evidence);
  std::vector<std::string> summaries, problems, fixes;
  std::optional<Code> code;  // the first problem's
  for (const auto& f : found) {
    const std::string s = summary(f.site);
    summaries.push_back(fmt::format("{}: {}", f.site.dir, s));
    for (const auto& d : f.site.gpu_dists)
      evidence.push_back(fmt::format("{}: {} {}", d.dist_info, d.name, d.version));
    if (f.site.torch)
      evidence.push_back(
          fmt::format("{}: {}", f.site.torch->version_file, torch_label(*f.site.torch)));
    std::map<int, std::vector<std::string>> by_major;
    for (const auto& [major, who] : f.site.cuda_majors()) by_major[major].push_back(who);
    if (by_major.size() > 1) {
      std::vector<std::string> groups;
      std::size_t smallest = SIZE_MAX;
      std::vector<std::string> odd;
      for (const auto& [major, who] : by_major) {
        groups.push_back(fmt::format("CUDA {}: {}", major, join(who, ", ")));
        if (who.size() < smallest) {
          smallest = who.size();
          odd = who;
        }
      }
      problems.push_back(fmt::format("{} mixes CUDA majors ({}): one of them fails to load",
                                     f.site.dir, join(groups, "; ")));
      if (!code) code = "GC-FRAMEWORK-CUDA-MIXED"_gc;
      std::vector<std::string> names;
      for (const auto& w : odd) names.push_back(w.substr(0, w.find(' ')));
      fixes.push_back(
          fmt::format("keep one CUDA major in {}: pip uninstall {} and install the "
                      "builds for the other major",
                      f.site.dir, join(names, " ")));
    }
    const auto missing = torch_missing_libraries(f.site);
    if (!missing.empty()) {
      problems.push_back(fmt::format("{} in {} has no {}: import torch fails",
                                     torch_label(*f.site.torch), f.site.dir,
                                     join(missing, " or ")));
      fixes.push_back(torch_reinstall(*f.site.torch));
      if (!code) code = "GC-FRAMEWORK-TORCH-LIBS-MISSING"_gc;
    }
  }
  if (!problems.empty()) return warn(*code, join(problems, "; "), join(fixes, "; "), evidence);
  return pass(join(summaries, "; "), evidence);
}

// ---- pytorch_cuda_usable ----

CheckResult check_pytorch_cuda_usable(const SystemView& view) {
  const auto envs = host::python_environments(view);
  const auto found = installed_frameworks(view, envs);
  std::vector<std::string> evidence = scanned(envs);
  const Installed* first = nullptr;
  for (const auto& f : found) {
    if (!f.site.torch) continue;
    evidence.push_back(
        fmt::format("{} in {} ({})", torch_label(*f.site.torch), f.site.dir, f.env->origin));
    if (first == nullptr) first = &f;
  }
  const std::string lead = "CUDA usable by PyTorch here: ";
  constexpr Code kUnusable = "GC-PYTORCH-CUDA-UNUSABLE"_gc;
  if (first == nullptr)
    return info(lead + "no, because PyTorch is not installed in any Python environment found",
                evidence);
  const host::TorchBuild& t = *first->site.torch;
  const std::string where = fmt::format("torch {} in {}", t.version, first->site.dir);
  if (t.hip)
    return info(lead + fmt::format("no, because {} is a ROCm build: it drives AMD GPUs through "
                                   "HIP, not CUDA",
                                   where),
                evidence);
  const GpuExpectation expected = expected_gpu_vendors(view);
  for (const auto& e : expected.evidence) evidence.push_back("GPU expected: " + e);
  const bool nvidia = expected.vendors.contains("nvidia");
  if (!t.cuda) {
    std::string finding = lead + fmt::format("no, because {} is a CPU-only build", where);
    if (!nvidia) return info(finding + " (and no NVIDIA GPU is set up here)", evidence);
    const InstallAdvice a = install_advice(
        gpu_picture(view), "torch", first->env,
        host::python_version_of_site(first->site.dir).value_or(python_version_of(*first->env)), "",
        true);
    return warn(kUnusable, finding + ", though this system is set up for an NVIDIA GPU",
                a.found ? a.line : "no CUDA build of torch fits here: " + a.line, evidence);
  }
  const auto missing = torch_missing_libraries(first->site);
  if (!missing.empty())
    return warn(kUnusable,
                lead + fmt::format("no, because {} lacks {}: import torch fails", where,
                                   join(missing, " and ")),
                torch_reinstall(t), evidence);
  // The driver half comes from the CUDA probe where there is one (cuda_devices,
  // cuda_driver_runtime and framework_cuda_driver judge each part; this line gives the verdict);
  // a gpucheck built without CUDA judges by the files alone.
  const nlohmann::json* cuda = view.backend("cuda");
  const bool probed =
      cuda != nullptr && text(*cuda, "status") != "not_built" && cuda->contains("driver");
  if (!probed && libcuda_locations(view).empty() && !nvidia)
    return warn(kUnusable,
                lead + fmt::format("no, because {} needs the NVIDIA driver and no libcuda.so.1 or "
                                   "/dev/nvidia* is here: torch runs on the CPU",
                                   where),
                "install the NVIDIA driver (in a container: start it with --gpus all)", evidence);
  if (!probed)
    return info(lead + fmt::format("unknown, because {} has its CUDA libraries, but this gpucheck "
                                   "was built without CUDA, so the driver was not probed",
                                   where),
                evidence);
  const auto drv = driver_cuda_version(view);
  const auto needs = parse_cuda_version(*t.cuda);
  if (drv) evidence.push_back("driver supports CUDA " + cuda_version_text(drv->encoded));
  if (drv && needs && *needs / 1000 > drv->encoded / 1000)
    return warn(kUnusable,
                lead + fmt::format("no, because {} is built for CUDA {} and the driver supports "
                                   "only CUDA {}",
                                   where, *t.cuda, cuda_version_text(drv->encoded)),
                fmt::format("update the NVIDIA driver, or install a torch build for CUDA {}: pip "
                            "install --force-reinstall torch --index-url "
                            "https://download.pytorch.org/whl/cu{}0",
                            drv->encoded / 1000, drv->encoded / 1000),
                evidence);
  if (text(*cuda, "status") != "available")
    return warn(
        kUnusable,
        lead + fmt::format("no, because the CUDA driver is not usable: {}", text(*cuda, "reason")),
        "see the cuda_driver_library, cuda_driver_stub and cuda_devices checks", evidence);
  const std::size_t n = array_at(*cuda, "devices").size();
  return info(
      lead + fmt::format("yes: {} (CUDA {}) on a driver that supports CUDA {}, with {} "
                         "CUDA device{}",
                         where, *t.cuda, drv ? cuda_version_text(drv->encoded) : std::string("?"),
                         n, n == 1 ? "" : "s"),
      evidence);
}

}  // namespace gpucheck::doctor

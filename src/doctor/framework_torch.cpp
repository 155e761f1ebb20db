// framework_torch: will the torch that `import torch` finds in each environment use the GPUs
// here? Read from torch/version.py, the architecture list its libtorch_python.so carries, its
// METADATA's nvidia-* requirements and the other torch copies on the import path.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpucheck::doctor {

namespace {

// The libraries that hold the arch string: torch/csrc/cuda/Module.cpp (linked into
// libtorch_python.so) stringises CUDA_ARCH_FLAGS for torch.cuda.get_arch_list();
// libtorch_cuda.so is read only when the first has none.
std::optional<std::vector<std::string>> torch_arch_list(const SystemView& view,
                                                        const std::string& site,
                                                        std::vector<std::string>& evidence) {
  for (const char* lib : {"libtorch_python.so", "libtorch_cuda.so"}) {
    const std::string path = site + "/torch/lib/" + lib;
    if (!view.exists(path)) continue;
    if (auto text = scan_arch_list(view, path)) {
      evidence.push_back(fmt::format("{}: architectures \"{}\"", path, *text));
      return parse_arch_list(*text);
    }
    evidence.push_back(path + ": no architecture list found");
  }
  return std::nullopt;
}

// The install line configs/wheels.toml gives torch here, for the environment torch sits in.
std::string torch_advice(const GpuPicture& gpus, const host::TorchBuild& t,
                         const host::SitePackages& site, const host::PythonEnv& env) {
  const std::string py = host::python_version_of_site(site.dir).value_or(python_version_of(env));
  const InstallAdvice a = install_advice(gpus, "torch", &env, py, release_line(t.version), true);
  return a.line;
}

// The install command for a CUDA build this driver can run.
std::string cuda_install_fix(const GpuPicture& gpus, const host::TorchBuild& t,
                             const host::SitePackages& site, const SystemView& view,
                             const host::PythonEnv& env) {
  if (auto owner = dpkg_owner(view, t.version_file)) {
    const std::string py = host::python_version_of_site(site.dir).value_or(python_version_of(env));
    const InstallAdvice a = install_advice(gpus, "torch", nullptr, py);
    return fmt::format(
        "{} is the distribution's CPU-only package ({}): install a CUDA build in a "
        "virtual environment: python3 -m venv ~/torch-cuda && ~/torch-cuda/bin/python3 -m {}",
        site.dir, *owner, a.line);
  }
  return torch_advice(gpus, t, site, env);
}

// nvidia-* wheels torch's METADATA requires, against those installed on the import path.
void check_requirements(const EnvScan& scan, const host::SitePackages& site,
                        const host::TorchBuild& t, Verdict& v, std::vector<std::string>& evidence) {
  const host::Distribution* dist = site.find("torch");
  if (dist == nullptr) return;
  std::vector<std::string> missing, mismatched, fixes;
  for (const auto& line : dist->requires_dist) {
    auto r = parse_requirement(line);
    if (!r || !r->name.starts_with("nvidia-") || !r->extra.empty() || r->specs.empty()) continue;
    const host::Distribution* have = scan.first(r->name);
    if (have == nullptr) {
      missing.push_back(r->text);
    } else if (!satisfies(have->version, *r)) {
      mismatched.push_back(
          fmt::format("{} wants {}, {} is installed", r->name, r->text, have->version));
    } else {
      continue;
    }
    fixes.push_back("\"" + r->text + "\"");
  }
  evidence.push_back(
      fmt::format("{}: {} Requires-Dist line(s)", dist->dist_info, dist->requires_dist.size()));
  if (fixes.empty()) return;
  const std::string fix =
      fmt::format("{} -m pip install {}", python_of(*scan.env), join(fixes, " "));
  if (!missing.empty())
    v.more.push_back({CheckStatus::kFail, "GC-TORCH-CANNOT-USE-GPU"_gc,
                      fmt::format("torch {} requires {}, not installed: import torch fails "
                                  "loading its CUDA libraries",
                                  t.version, join(missing, ", ")),
                      fix});
  if (!mismatched.empty())
    v.more.push_back({CheckStatus::kWarn, "GC-TORCH-CANNOT-USE-GPU"_gc,
                      fmt::format("torch {} was built against other CUDA wheels ({}): a missing "
                                  "symbol can fail import torch",
                                  t.version, join(mismatched, "; ")),
                      fix});
}

// Another torch later on the import path is never imported; one earlier than the environment's
// own (PYTHONPATH, the user site) hides it.
void check_shadowing(const SystemView& view, const EnvScan& scan,
                     const std::vector<const host::SitePackages*>& with_torch, Verdict& v) {
  if (with_torch.size() < 2) return;
  const host::SitePackages& used = *with_torch[0];
  std::vector<std::string> hidden;
  for (std::size_t i = 1; i < with_torch.size(); ++i)
    hidden.push_back(
        fmt::format("torch {} in {}", with_torch[i]->torch->version, with_torch[i]->dir));
  const auto pp = view.env_value("PYTHONPATH").value_or("");
  const bool from_pythonpath = pp.find(used.dir) != std::string::npos;
  v.more.push_back(
      {CheckStatus::kWarn, "GC-TORCH-CANNOT-USE-GPU"_gc,
       fmt::format("two torch installs on {}'s import path: import torch gets torch {} from {}, "
                   "not {}",
                   python_of(*scan.env), used.torch->version, used.dir, join(hidden, ", ")),
       from_pythonpath
           ? fmt::format("take {} out of PYTHONPATH", used.dir)
           : fmt::format("{} -m pip uninstall torch (removes the copy in {}; repeat until the "
                         "one you want is first)",
                         python_of(*scan.env), used.dir)});
}

Verdict judge_cuda_build(const SystemView& view, const GpuPicture& gpus,
                         const host::SitePackages& site, const host::TorchBuild& t,
                         const host::PythonEnv& env, std::vector<std::string>& evidence) {
  Verdict v;
  const std::string name = "torch " + t.version;
  const auto needs = parse_cuda_version(*t.cuda);
  if (!gpus.nvidia) {
    v.status = CheckStatus::kInfo;
    v.line = fmt::format("{}: a CUDA {} build, but no NVIDIA GPU is here: it runs on the CPU", name,
                         *t.cuda);
    return v;
  }
  const std::string driver =
      gpus.driver ? cuda_version_text(gpus.driver->encoded) : std::string("unknown");
  if (needs && gpus.driver && *needs / 1000 > gpus.driver->encoded / 1000) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use the GPU: it needs CUDA {}, the driver gives {}", name,
                         *t.cuda, driver);
    v.fix = fmt::format("update the NVIDIA driver to one for CUDA {}, or {}", *t.cuda,
                        torch_advice(gpus, t, site, env));
    return v;
  }
  const auto arch = torch_arch_list(view, site.dir, evidence);
  const GpuFits fits = fit_gpus(gpus, arch.value_or(std::vector<std::string>{}));
  const auto& fine = fits.native;
  const auto& ptx = fits.ptx_only;
  const auto& none = fits.none;
  const int need_cuda = fits.cuda_for_none;
  const std::string carries = arch ? arch_span(*arch) : std::string();
  if (!none.empty()) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use {}: it has no kernels for {} (it carries {})", name,
                         gpus.devices_text(), join(none, ", "), carries);
    const bool too_old_gpu =
        arch && !arch->empty() && std::all_of(none.begin(), none.end(), [&](const std::string& s) {
          return parse_cc(s) < parse_cc(arch->front());
        });
    if (too_old_gpu) {
      v.fix = fmt::format(
          "install an older torch whose build still carries {} (PyTorch drops old GPUs from "
          "new releases): {}",
          join(none, ", "), torch_advice(gpus, t, site, env));
    } else {
      v.fix = fmt::format("install a build for CUDA >= {}: {}", cuda_version_text(need_cuda),
                          torch_advice(gpus, t, site, env));
      if (gpus.driver && gpus.driver->encoded < need_cuda)
        v.fix += fmt::format(" (and a driver for CUDA >= {})", cuda_version_text(need_cuda));
    }
    return v;
  }
  const std::string why = fmt::format("{}needs CUDA {}, driver gives {}{}",
                                      fine.empty() ? (arch ? "" : "its architectures unread; ")
                                                   : join(fine, ", ") + " in its build; ",
                                      *t.cuda, driver,
                                      needs && gpus.driver && *needs > gpus.driver->encoded
                                          ? " (through minor-version compatibility)"
                                          : "");
  v.uses_gpu = true;
  if (!ptx.empty()) {
    v.status = CheckStatus::kWarn;
    v.line = fmt::format(
        "{}: will use {} only through PTX for {}: the driver compiles every "
        "kernel at first use (slow start, no tuned machine code; it carries {})",
        name, gpus.devices_text(), join(ptx, ", "), carries);
    v.fix = torch_advice(gpus, t, site, env);
    return v;
  }
  if (gpus.gpus.empty()) {
    v.status = CheckStatus::kInfo;
    v.line = fmt::format(
        "{}: a CUDA build for an NVIDIA GPU ({}), but CUDA enumerated no device "
        "here to judge it against",
        name, why);
    return v;
  }
  v.line = fmt::format("{}: will use {} ({})", name, gpus.devices_text(), why);
  return v;
}

Verdict judge_torch_site(const SystemView& view, const GpuPicture& gpus, const EnvScan& scan,
                         const std::vector<const host::SitePackages*>& with_torch,
                         std::vector<std::string>& evidence) {
  const host::SitePackages& site = *with_torch[0];
  const host::TorchBuild& t = *site.torch;
  evidence.push_back(fmt::format("{}: torch {}, cuda {}, hip {} (first of {} on {}'s import path)",
                                 t.version_file, t.version, t.cuda.value_or("None"),
                                 t.hip.value_or("None"), with_torch.size(), python_of(*scan.env)));
  Verdict v;
  const std::string name = "torch " + t.version;
  if (!t.cuda) {
    const std::string kind =
        t.hip ? fmt::format("a ROCm build (HIP {})", *t.hip) : "a CPU-only build";
    if (gpus.nvidia) {
      v.status = CheckStatus::kFail;
      v.line = fmt::format("{}: will NOT use the NVIDIA GPU: {}", name, kind);
      v.fix = cuda_install_fix(gpus, t, site, view, *scan.env);
    } else {
      v.status = CheckStatus::kInfo;
      v.line = fmt::format("{}: {}, and no NVIDIA GPU is here: it runs on the {}", name, kind,
                           t.hip ? "AMD GPU where ROCm finds one" : "CPU");
    }
  } else {
    v = judge_cuda_build(view, gpus, site, t, *scan.env, evidence);
    check_requirements(scan, site, t, v, evidence);
  }
  check_shadowing(view, scan, with_torch, v);
  // A CPU-only copy hiding a CUDA build: removing the copy is the fix, not a reinstall.
  const bool cuda_behind = std::any_of(with_torch.begin() + 1, with_torch.end(),
                                       [](const host::SitePackages* s) { return s->torch->cuda; });
  if (!t.cuda && cuda_behind && v.status == CheckStatus::kFail && !v.more.empty())
    v.fix = v.more.back().fix + " (the torch behind it is a CUDA build)";
  return v;
}

}  // namespace

std::optional<Verdict> judge_torch(const SystemView& view, const GpuPicture& gpus,
                                   const EnvScan& scan, std::vector<std::string>& evidence) {
  std::vector<const host::SitePackages*> with_torch;
  for (const auto& s : scan.sites)
    if (s.torch) with_torch.push_back(&s);
  if (with_torch.empty()) return std::nullopt;
  return judge_torch_site(view, gpus, scan, with_torch, evidence);
}

CheckResult check_framework_torch(const SystemView& view) {
  return judge_every_environment(view, "GC-TORCH-CANNOT-USE-GPU"_gc, "PyTorch", judge_torch);
}

}  // namespace gpucheck::doctor

// framework_jax and framework_cupy. JAX is judged as jax/_src/lib/__init__.py and its plugin
// loader judge on import: jaxlib between jax's _minimum_jaxlib_version and jax's own version,
// the CUDA plugin and PJRT wheels at jaxlib's version exactly, and the nvidia-* wheels the
// plugin requires. CuPy: the CUDA major a cupy-cudaNNx wheel is built for, and two CuPy
// packages installed over each other.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"

#include <fmt/format.h>

#include <regex>

namespace gpucheck::doctor {

namespace {

// The jax[cudaNN] extra for this driver: 13 for a CUDA 13 driver, else 12.
std::string jax_extra(const GpuPicture& gpus, std::optional<int> plugin_major = std::nullopt) {
  if (plugin_major && (!gpus.driver || *plugin_major <= gpus.driver->encoded / 1000))
    return fmt::format("cuda{}", *plugin_major);
  return gpus.driver && gpus.driver->encoded >= 13000 ? "cuda13" : "cuda12";
}

struct Plugin {
  const host::Distribution* dist;
  int major;
};

std::vector<Plugin> jax_plugins(const EnvScan& scan) {
  static const std::regex kPlugin(R"(^jax-cuda([0-9]+)-(plugin|pjrt)$)");
  std::vector<Plugin> out;
  std::vector<std::string> seen;
  for (const auto& site : scan.sites)
    for (const auto& d : site.gpu_dists) {
      std::smatch m;
      if (!std::regex_match(d.name, m, kPlugin)) continue;
      if (std::find(seen.begin(), seen.end(), d.name) != seen.end()) continue;
      seen.push_back(d.name);
      out.push_back({&d, std::stoi(m[1].str())});
    }
  return out;
}

// The plugin's nvidia-* minimums (its with-cuda extra) against the installed wheels. An
// installed wheel older than the minimum is the one JAX loads, and fails; a missing one is served
// by the system's CUDA where it has that part (jax[cudaNN-local]): on the GPU machine JAX used the
// GPU with nvidia-cuda-nvcc absent and the toolkit's ptxas on PATH, so a missing wheel is said,
// not failed.
void check_plugin_requirements(const EnvScan& scan, const Plugin& p, const std::string& fix,
                               Verdict& v) {
  std::vector<std::string> too_old, missing;
  bool any_installed = false;  // none at all: jax[cudaNN-local], nothing to say
  for (const auto& line : p.dist->requires_dist) {
    auto r = parse_requirement(line);
    if (!r || !r->name.starts_with("nvidia-") || r->specs.empty()) continue;
    const host::Distribution* have = scan.first(r->name);
    if (have == nullptr)
      missing.push_back(r->name);
    else if (any_installed = true; !satisfies(have->version, *r))
      too_old.push_back(
          fmt::format("{} wants {}, {} is installed", p.dist->name, r->text, have->version));
  }
  if (!too_old.empty())
    v.more.push_back({CheckStatus::kFail, "GC-JAX-OUT-OF-STEP"_gc,
                      fmt::format("{} {}: {}: the plugin fails to load and JAX falls back to the "
                                  "CPU",
                                  p.dist->name, p.dist->version, join(too_old, "; ")),
                      fix});
  if (!missing.empty() && any_installed)
    v.more.push_back(
        {CheckStatus::kInfo, Code{},
         fmt::format("{}: {} not installed as wheels: the system's CUDA must provide "
                     "{}",
                     p.dist->name, join(missing, ", "), missing.size() == 1 ? "it" : "them"),
         ""});
}

}  // namespace

std::optional<Verdict> judge_jax(const SystemView& view, const GpuPicture& gpus,
                                 const EnvScan& scan, std::vector<std::string>& evidence) {
  const host::SitePackages* site = scan.first_with_file(view, "jax/version.py");
  const host::SitePackages* dist_site = nullptr;
  const host::Distribution* jax_dist = scan.first("jax", &dist_site);
  if (site == nullptr && jax_dist == nullptr) return std::nullopt;
  JaxVersionPy vp;
  if (site != nullptr)
    if (auto text = view.read_file(site->dir + "/jax/version.py", 64u << 10))
      vp = parse_jax_version_py(*text);
  const std::string version =
      jax_dist ? jax_dist->version : vp.version.value_or("(version unknown)");
  const host::Distribution* jaxlib = scan.first("jaxlib");
  const auto plugins = jax_plugins(scan);
  std::optional<int> plugin_major;
  for (const auto& p : plugins) plugin_major = p.major;
  const std::string py = python_of(*scan.env);
  const std::string fix =
      fmt::format("{} -m pip install -U \"jax[{}]\"", py, jax_extra(gpus, plugin_major));
  evidence.push_back(fmt::format(
      "jax {} (minimum jaxlib {}), jaxlib {}{}", version, vp.minimum_jaxlib.value_or("unread"),
      jaxlib ? jaxlib->version : "not installed", plugins.empty() ? "" : ", plugins:"));
  for (const auto& p : plugins)
    evidence.push_back(fmt::format("{}: {} {}", p.dist->dist_info, p.dist->name, p.dist->version));
  Verdict v;
  std::string name = "jax " + version;
  if (jaxlib == nullptr) {
    v.status = CheckStatus::kFail;
    v.line = name + ": import jax fails: jaxlib is not installed";
    v.fix = fix;
    return v;
  }
  name += fmt::format(" (jaxlib {}", jaxlib->version);
  for (const auto& p : plugins) name += fmt::format(", {} {}", p.dist->name, p.dist->version);
  name += ")";
  if (vp.minimum_jaxlib && compare_versions(jaxlib->version, *vp.minimum_jaxlib) < 0) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: import jax fails: jaxlib {} is older than the {} this jax needs",
                         name, jaxlib->version, *vp.minimum_jaxlib);
    v.fix = fix;
    return v;
  }
  if (compare_versions(jaxlib->version, version) > 0) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: import jax fails: jaxlib {} is newer than jax {}", name,
                         jaxlib->version, version);
    v.fix = fix;
    return v;
  }
  std::vector<std::string> out_of_step;
  for (const auto& p : plugins)
    if (compare_versions(p.dist->version, jaxlib->version) != 0 ||
        release_of(p.dist->version) != release_of(jaxlib->version))
      out_of_step.push_back(fmt::format("{} {}", p.dist->name, p.dist->version));
  if (!out_of_step.empty()) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{}: will NOT use the GPU: {} not at jaxlib's version {} (JAX skips "
        "the plugin, or crashes loading it)",
        name, join(out_of_step, ", "), jaxlib->version);
    v.fix = fix;
    return v;
  }
  const bool cuda_jaxlib = jaxlib->version.find("+cuda") != std::string::npos;
  if (plugins.empty() && !cuda_jaxlib) {
    if (!gpus.nvidia) {
      v.status = CheckStatus::kInfo;
      v.line = name + ": runs on the CPU (no CUDA plugin, and no NVIDIA GPU is here)";
      return v;
    }
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{}: will NOT use the NVIDIA GPU: no jax-{}-plugin is installed "
        "(jaxlib alone runs on the CPU)",
        name, jax_extra(gpus));
    v.fix = fix;
    return v;
  }
  if (!gpus.nvidia) {
    v.status = CheckStatus::kInfo;
    v.line = name + ": a CUDA build, but no NVIDIA GPU is here: it runs on the CPU";
    return v;
  }
  const int major = plugin_major.value_or(12);
  if (gpus.driver && major > gpus.driver->encoded / 1000) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use the GPU: its plugin is for CUDA {}, the driver gives {}",
                         name, major, cuda_version_text(gpus.driver->encoded));
    v.fix = fmt::format(
        "{} -m pip uninstall -y {} && {} -m pip install -U \"jax[cuda{}]\" (or "
        "update the NVIDIA driver)",
        py, plugins.front().dist->name, py, gpus.driver->encoded / 1000);
    return v;
  }
  for (const auto& p : plugins)
    if (p.dist->name.ends_with("-plugin")) check_plugin_requirements(scan, p, fix, v);
  v.uses_gpu = true;
  v.line = fmt::format(
      "{}: will use {} (CUDA {} plugin, driver gives {})", name, gpus.devices_text(), major,
      gpus.driver ? cuda_version_text(gpus.driver->encoded) : std::string("unknown"));
  return v;
}

CheckResult check_framework_jax(const SystemView& view) {
  return judge_every_environment(view, "GC-JAX-OUT-OF-STEP"_gc, "JAX", judge_jax);
}

std::optional<Verdict> judge_cupy(const SystemView&, const GpuPicture& gpus, const EnvScan& scan,
                                  std::vector<std::string>& evidence) {
  // The first site with a CuPy package is the one import finds.
  const host::SitePackages* site = nullptr;
  std::vector<const host::Distribution*> cupys;
  for (const auto& s : scan.sites) {
    for (const auto& d : s.gpu_dists)
      if (d.name == "cupy" || d.name.starts_with("cupy-")) cupys.push_back(&d);
    if (!cupys.empty()) {
      site = &s;
      break;
    }
  }
  if (site == nullptr) return std::nullopt;
  for (const auto* d : cupys)
    evidence.push_back(fmt::format("{}: {} {}", d->dist_info, d->name, d->version));
  const std::string py = python_of(*scan.env);
  const int driver_major = gpus.driver ? gpus.driver->encoded / 1000 : 12;
  const std::string right = fmt::format("cupy-cuda{}x", std::min(driver_major, 13));
  Verdict v;
  if (cupys.size() > 1) {
    std::vector<std::string> names;
    for (const auto* d : cupys) names.push_back(d->name);
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{} CuPy packages in {} ({}): they install over each other's files and "
        "import cupy loads a mix",
        cupys.size(), site->dir, join(names, ", "));
    v.fix = fmt::format("{} -m pip uninstall -y {} && {} -m pip install {}", py, join(names, " "),
                        py, right);
    return v;
  }
  const host::Distribution& d = *cupys.front();
  const std::string name = d.name + " " + d.version;
  if (d.name.starts_with("cupy-rocm")) {
    v.status = gpus.nvidia ? CheckStatus::kFail : CheckStatus::kInfo;
    v.line = fmt::format("{}: a ROCm build{}", name,
                         gpus.nvidia ? ": will NOT use the NVIDIA GPU" : " (for AMD GPUs)");
    v.fix = fmt::format("{} -m pip uninstall -y {} && {} -m pip install {}", py, d.name, py, right);
    return v;
  }
  const auto major = host::cuda_major_of_wheel(d.name);
  if (!gpus.nvidia) {
    v.status = CheckStatus::kInfo;
    v.line = name + ": no NVIDIA GPU is here (CuPy runs only on a GPU: import works, use fails)";
    return v;
  }
  if (major && gpus.driver && *major > driver_major) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use the GPU: a CUDA {} build, the driver gives {}", name,
                         *major, cuda_version_text(gpus.driver->encoded));
    v.fix = fmt::format(
        "{} -m pip uninstall -y {} && {} -m pip install {} (or update the NVIDIA "
        "driver)",
        py, d.name, py, right);
    return v;
  }
  v.uses_gpu = true;
  v.line =
      fmt::format("{}: will use {} ({}, driver gives {})", name, gpus.devices_text(),
                  major ? fmt::format("CUDA {} build", *major)
                        : std::string("built from source against the local CUDA toolkit"),
                  gpus.driver ? cuda_version_text(gpus.driver->encoded) : std::string("unknown"));
  return v;
}

CheckResult check_framework_cupy(const SystemView& view) {
  return judge_every_environment(view, "GC-CUPY-CANNOT-USE-GPU"_gc, "CuPy", judge_cupy);
}

}  // namespace gpucheck::doctor

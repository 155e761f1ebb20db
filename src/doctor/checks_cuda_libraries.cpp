// cuBLAS and cuDNN as the CUDA probe child loaded them (the backend's search: LD_LIBRARY_PATH,
// the ld.so cache, toolkits, conda, NVIDIA wheels), every other copy with its version, cuDNN's
// headers; and the Python frameworks' CUDA builds against the driver's CUDA version.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/framework_gpus.h"
#include "doctor/library_shadowing.h"
#include "host/python_envs.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <map>
#include <set>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

const Json& library_facts(const SystemView& view, const char* name) {
  const Json& cuda = cuda_section(view);
  auto libs = cuda.find(k::kLibraries);
  if (libs == cuda.end() || !libs->contains(name))
    throw NotObservable(fmt::format("the CUDA probe did not report {}", name));
  return libs->at(name);
}

// One library's verdict: not loadable, several versions on the linker's path, wheels' copies.
CheckResult judge_library(const SystemView& view, const char* key, const std::string& display,
                          const std::string& install_fix, CheckStatus missing_status,
                          Code missing_code, Code versions_code) {
  const Json& lib = library_facts(view, key);
  std::vector<std::string> evidence;
  const bool loaded = lib.contains(k::kPath);
  const std::string version = text(lib, k::kVersion);
  if (loaded)
    evidence.push_back(fmt::format("loaded {} (version {}, found by {})", text(lib, k::kRealPath),
                                   version.empty() ? "?" : version, text(lib, k::kSource)));
  else
    evidence.push_back("not loaded: " + text(lib, k::kError));
  std::map<std::string, std::vector<std::string>> by_version;  // release -> sources
  if (loaded && !version.empty())
    by_version[major_minor_patch(version)].push_back(text(lib, k::kSource));
  for (const auto& c : array_at(lib, k::kOtherCopies)) {
    const std::string v = text(c, k::kVersion);
    evidence.push_back(fmt::format("also: {} (version {}, {}, {})", text(c, k::kPath),
                                   v.empty() ? "?" : v, text(c, k::kSource),
                                   c.value(k::kUsable, false) ? "usable" : "another major"));
    // Another soname major does not compete: programs linked against it get it, others not.
    if (!v.empty() && c.value(k::kUsable, false))
      by_version[major_minor_patch(v)].push_back(text(c, k::kSource));
  }
  if (!loaded) {
    const NvidiaExpectation nv = nvidia_expected(view);
    if (!nv.expected)
      return not_applicable("no NVIDIA GPU or driver here, and " + display + " is not installed",
                            evidence);
    CheckResult r = missing_status == CheckStatus::kFail
                        ? fail(missing_code, display + " cannot be loaded: " + text(lib, k::kError),
                               install_fix)
                        : warn(missing_code, display + " cannot be loaded: " + text(lib, k::kError),
                               install_fix);
    r.evidence = evidence;
    return r;
  }
  if (by_version.size() > 1) {
    // Framework wheels load their own copy through their RPATH: versions there are harmless.
    std::set<std::string> linker_versions;
    for (const auto& [v, sources] : by_version)
      for (const auto& s : sources)
        if (s != "wheel") linker_versions.insert(v);
    std::vector<std::string> versions;
    for (const auto& [v, sources] : by_version) versions.push_back(v);
    if (linker_versions.size() > 1)
      return warn(versions_code,
                  fmt::format("several {} versions on the dynamic linker's path ({}): which one a "
                              "program gets depends on its RPATH and LD_LIBRARY_PATH",
                              display, join(versions, ", ")),
                  fmt::format("keep one {} on the linker's path (remove the old toolkit's or "
                              "package's copy, then sudo ldconfig); programs that need another "
                              "version should bring it in their own directory",
                              display),
                  evidence);
    CheckResult r = info(fmt::format("{} {} loads; the Python wheels hold other versions ({}), "
                                     "which only their frameworks load",
                                     display, version, join(versions, ", ")),
                         evidence);
    return r;
  }
  return pass(fmt::format("{} {} loads from {}", display, version, text(lib, k::kRealPath)),
              evidence);
}

// A header of another major.minor than the library loaded: code built here gets another
// library at run time. Only a healthy verdict is replaced; the headers join the evidence.
CheckResult judge_headers(const Json& lib, const std::string& display, const std::string& fix,
                          Code code, CheckResult r) {
  const std::string version = text(lib, k::kVersion);
  if (!lib.contains(k::kPath) || version.empty()) return r;
  std::vector<std::string> differ;
  for (const auto& h : array_at(lib, k::kHeaders)) {
    const std::string hv = text(h, k::kVersion), path = text(h, k::kPath);
    // A wheel's header goes with that wheel's library, which its framework loads.
    const bool wheel = path.find("-packages/") != std::string::npos;
    r.evidence.push_back(fmt::format("header {}: {} {}{}", path, display, hv,
                                     wheel ? " (a Python wheel's, for its own library)" : ""));
    if (!wheel && !hv.empty() && major_minor(hv) != major_minor(version))
      differ.push_back(fmt::format("{} says {}", text(h, k::kPath), hv));
  }
  if (differ.empty() || r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) return r;
  return warn(code,
              fmt::format("{}'s header and library differ: the library loaded is {}, but {}: code "
                          "built against the header gets another {} at run time",
                          display, version, join(differ, "; "), display),
              fix, r.evidence);
}

// The wheels' copies LD_LIBRARY_PATH shadows (library_shadowing.h): a copy of another version
// replaces a healthy verdict; one of the same version only joins the evidence.
CheckResult judge_shadowing(const SystemView& view, const std::vector<std::string_view>& stems,
                            Code code, CheckResult r) {
  std::vector<std::string> differ;
  for (const auto& s : shadowed_wheel_libraries(view, stems)) {
    const std::string line =
        fmt::format("LD_LIBRARY_PATH's {} ({}) comes before {}'s wheel copy {} ({})", s.path,
                    s.version.empty() ? "version unknown" : s.version, s.environment, s.wheel_path,
                    s.wheel_version.empty() ? "version unknown" : s.wheel_version);
    r.evidence.push_back(line);
    if (s.versions_differ()) differ.push_back(line);
  }
  if (differ.empty() || r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail) return r;
  return warn(code,
              join(differ, "; ") +
                  ": the wheels' libraries find their dependencies through RUNPATH, which "
                  "LD_LIBRARY_PATH precedes, so they get the other version; JAX then falls back "
                  "to the CPU (\"Unable to load cuSPARSE\") or cuDNN refuses (\"Loaded runtime "
                  "CuDNN library ... but source was compiled with\")",
              "run that environment's Python without the toolkit on LD_LIBRARY_PATH (env -u "
              "LD_LIBRARY_PATH python ..., or drop it from the venv's activate script), or "
              "install the toolkit release the wheels carry",
              r.evidence);
}

}  // namespace

// ---- cublas_library ----

CheckResult check_cublas_library(const SystemView& view) {
  CheckResult r =
      judge_library(view, "cublas", "cuBLAS",
                    "install cuBLAS 13 (sudo apt install libcublas-13-0, or the CUDA "
                    "toolkit), or point gpucheck at a copy: --cublas PATH; in Python: "
                    "pip install nvidia-cublas",
                    CheckStatus::kFail, "GC-CUBLAS-MISSING"_gc, "GC-CUBLAS-VERSIONS"_gc);
  r = judge_headers(library_facts(view, "cublas"), "cuBLAS",
                    "install the headers and the library of one CUDA release (sudo apt "
                    "install libcublas-dev-13-0), or remove the stale header",
                    "GC-CUBLAS-HEADER-MISMATCH"_gc, std::move(r));
  // cuSPARSE and nvJitLink too: the JAX failure of jax-ml/jax #30050 is theirs.
  return judge_shadowing(view, {"libcublas", "libcublasLt", "libnvJitLink", "libcusparse"},
                         "GC-CUBLAS-SHADOWED"_gc, std::move(r));
}

// ---- cudnn_library ----

CheckResult check_cudnn_library(const SystemView& view) {
  CheckResult r = judge_library(view, "cudnn", "cuDNN",
                                "install cuDNN 9 for CUDA 13 (sudo apt install cudnn9-cuda-13), "
                                "or point gpucheck at a copy: --cudnn PATH",
                                CheckStatus::kWarn, "GC-CUDNN-MISSING"_gc, "GC-CUDNN-VERSIONS"_gc);
  r = judge_headers(library_facts(view, "cudnn"), "cuDNN",
                    "install the header and the library from one cuDNN release (sudo apt "
                    "install cudnn9-cuda-13 brings both), or remove the stale header",
                    "GC-CUDNN-HEADER-MISMATCH"_gc, std::move(r));
  return judge_shadowing(
      view,
      {"libcudnn", "libcudnn_graph", "libcudnn_ops", "libcudnn_cnn", "libcudnn_adv",
       "libcudnn_engines_precompiled", "libcudnn_engines_runtime_compiled", "libcudnn_heuristic"},
      "GC-CUDNN-SHADOWED"_gc, std::move(r));
}

// ---- framework_cuda_driver ----

CheckResult check_framework_cuda_driver(const SystemView& view) {
  const auto envs = host::python_environments(view);
  struct Need {
    std::string who;
    int major;
    std::optional<int> encoded;  // torch says its minor too
  };
  std::vector<Need> needs;
  std::vector<std::string> evidence;
  for (const auto& env : envs)
    for (const auto& dir : env.site_dirs) {
      const host::SitePackages sp = host::read_site_packages(view, dir);
      if (sp.torch && sp.torch->cuda) {
        if (auto v = parse_cuda_version(*sp.torch->cuda))
          needs.push_back({fmt::format("torch {} in {}", sp.torch->version, dir), *v / 1000, *v});
      }
      for (const auto& d : sp.gpu_dists) {
        if (d.name == "torch" || d.name.starts_with("nvidia-")) continue;
        if (auto m = host::cuda_major_of_dist(d.name, d.version))
          needs.push_back({fmt::format("{} {} in {}", d.name, d.version, dir), *m, std::nullopt});
      }
    }
  if (needs.empty())
    return not_applicable("no CUDA build of PyTorch, JAX or CuPy in the Python environments found");
  auto drv = driver_cuda_version(view);
  if (!drv)
    throw NotObservable(
        "the driver's CUDA version: neither cuDriverGetVersion (libcuda.so.1) nor NVML answered");
  const std::string driver = cuda_version_text(drv->encoded);
  evidence.push_back(fmt::format("driver supports CUDA {} ({})", driver, drv->source));
  std::vector<std::string> too_new, minor_newer;
  for (const auto& n : needs) {
    const std::string wants =
        n.encoded ? cuda_version_text(*n.encoded) : fmt::format("{}.x", n.major);
    evidence.push_back(fmt::format("{} is built for CUDA {}", n.who, wants));
    if (n.major > drv->encoded / 1000)
      too_new.push_back(fmt::format("{} (CUDA {})", n.who, wants));
    else if (n.encoded && *n.encoded > drv->encoded)
      minor_newer.push_back(fmt::format("{} (CUDA {})", n.who, wants));
  }
  if (!too_new.empty())
    return fail("GC-DRIVER-TOO-OLD-FOR-FRAMEWORK"_gc,
                fmt::format("the driver supports CUDA {}, but {} need{} a newer driver: "
                            "torch.cuda.is_available() is False (\"The NVIDIA driver on your "
                            "system is too old\")",
                            driver, join(too_new, ", "), too_new.size() == 1 ? "s" : ""),
                fmt::format("update the NVIDIA driver, or install builds for CUDA {}{}",
                            drv->encoded / 1000,
                            [&] {
                              GpuPicture gpus = gpu_picture(view);
                              const InstallAdvice a = install_advice(gpus, "torch", nullptr, "");
                              return a.found ? " (PyTorch: " + a.line + ")" : std::string();
                            }()),
                evidence);
  if (!minor_newer.empty())
    return info(fmt::format("the driver supports CUDA {}; {} run through CUDA minor version "
                            "compatibility",
                            driver, join(minor_newer, ", ")),
                evidence);
  return pass(
      fmt::format("the driver (CUDA {}) is new enough for every framework build found", driver),
      evidence);
}

}  // namespace gpucheck::doctor

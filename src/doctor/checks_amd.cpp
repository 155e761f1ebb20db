// AMD GPUs against the targets their ROCm runtimes carry: the gfx target of each GPU from the
// kernel's KFD topology, and the rocBLAS kernel libraries (TensileLibrary_lazy_gfx*.dat) that
// the system's ROCm, ROCm builds of torch and ollama's bundled ROCm ship. A GPU whose target is
// in none runs on the CPU (ollama: "amdgpu is not supported"; rocBLAS: "Cannot read
// TensileLibrary.dat ... for GPU arch : gfx1031"), though ROCm lists it.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <regex>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace {

struct AmdGpu {
  std::string node;  // the KFD node number
  std::string gfx;   // gfx1031
};

// "gfx" + decimal major + hex minor + hex stepping of KFD's major*10000 + minor*100 + stepping
// (90010 -> gfx90a); empty for a value that is not a target.
std::string gfx_of(unsigned long v) {
  const unsigned long major = v / 10000, minor = v / 100 % 100, step = v % 100;
  if (major == 0 || minor > 0xf || step > 0xf) return {};
  return fmt::format("gfx{}{:x}{:x}", major, minor, step);
}

// HSA_OVERRIDE_GFX_VERSION's "10.3.0" as a target (gfx1030); empty when malformed.
std::string gfx_of_override(const std::string& text) {
  static const std::regex kVersion(R"(^\s*([0-9]{1,2})\.([0-9]{1,2})\.([0-9]{1,2})\s*$)");
  std::smatch m;
  if (!std::regex_match(text, m, kVersion)) return {};
  return gfx_of(std::stoul(m[1].str()) * 10000 + std::stoul(m[2].str()) * 100 +
                std::stoul(m[3].str()));
}

std::vector<AmdGpu> kfd_gpus(const SystemView& view, std::vector<std::string>& evidence) {
  const std::string dir = "/sys/class/kfd/kfd/topology/nodes";
  std::vector<AmdGpu> out;
  for (const auto& node : view.list_dir(dir)) {
    auto props = view.read_file(dir + "/" + node + "/properties", 64u << 10);
    if (!props) {
      // A container's device cgroup makes the GPU nodes' files refuse reading (EPERM).
      evidence.push_back(fmt::format("{}/{}/properties cannot be read", dir, node));
      continue;
    }
    std::istringstream lines(*props);
    unsigned long version = 0;
    for (std::string key, value; lines >> key >> value;)
      if (key == "gfx_target_version") {
        try {
          version = std::stoul(value);
        } catch (const std::exception&) {
        }
      }
    if (version == 0) continue;  // a CPU node
    const std::string gfx = gfx_of(version);
    evidence.push_back(fmt::format("KFD node {}: gfx_target_version {} ({})", node, version,
                                   gfx.empty() ? "not a target" : gfx));
    if (!gfx.empty()) out.push_back({node, gfx});
  }
  return out;
}

// A ROCm runtime found here and the targets its rocBLAS kernels cover.
struct Runtime {
  std::string who;  // "ROCm in /opt/rocm-6.3.3", "torch 2.5.1+rocm6.2 in ...", "ollama"
  std::string library_dir;
  std::set<std::string> targets;
  bool ollama = false;
};

std::set<std::string> rocblas_targets(const SystemView& view, const std::string& dir) {
  static const std::regex kLazy(R"(^TensileLibrary_lazy_(gfx[0-9a-f]+)\.dat$)");
  std::set<std::string> out;
  for (const auto& f : view.list_dir(dir)) {
    std::smatch m;
    if (std::regex_match(f, m, kLazy)) out.insert(m[1].str());
  }
  return out;
}

std::vector<Runtime> rocm_runtimes(const SystemView& view) {
  std::vector<Runtime> out;
  auto add = [&](std::string who, const std::string& dir, bool ollama = false) {
    auto targets = rocblas_targets(view, dir);
    if (targets.empty()) return;
    // /opt/rocm is usually a link to /opt/rocm-6.3.3: one runtime, named once.
    std::error_code ec;
    const auto real = std::filesystem::canonical(view.host_path(dir), ec);
    for (const auto& r : out) {
      std::error_code ec2;
      if (r.library_dir == dir ||
          (!ec && std::filesystem::canonical(view.host_path(r.library_dir), ec2) == real))
        return;
    }
    out.push_back({std::move(who), dir, std::move(targets), ollama});
  };
  for (const auto& d : view.glob("/opt/rocm*/lib/rocblas/library"))
    add("ROCm in " + d.substr(0, d.find("/lib/rocblas")), d);
  for (const auto& d : view.glob("/usr/lib/*-linux-gnu/rocblas/*/library"))
    add("the distribution's rocBLAS (" + d + ")", d);
  for (const auto& d : view.glob("/usr/*lib/ollama/rocm*/rocblas/library"))
    add("ollama's ROCm (" + d.substr(0, d.find("/rocblas")) + ")", d, true);
  for (const auto& d : view.glob("/usr/local/lib/ollama/rocm*/rocblas/library"))
    add("ollama's ROCm (" + d.substr(0, d.find("/rocblas")) + ")", d, true);
  const auto envs = host::python_environments(view);
  for (const auto& scan : scan_environments(view, envs))
    for (const auto& site : scan.sites)
      if (site.torch && site.torch->hip)
        add(fmt::format("torch {} in {}", site.torch->version, site.dir),
            site.dir + "/torch/lib/rocblas/library");
  return out;
}

// The override a GPU's family can run under when its own target is missing, given what the
// runtime carries; nullopt when none is known to be safe (gfx1103 lacks gfx1100's WMMA
// instructions, so 11.0.0 faults there).
struct Override {
  std::string version;  // "10.3.0"
  std::string why;
};
std::optional<Override> family_override(const std::string& gfx,
                                        const std::set<std::string>& targets) {
  struct Family {
    std::regex members;
    std::string target;
    Override fix;
  };
  static const std::vector<Family> kFamilies = {
      {std::regex("^gfx103[1-6]$"),
       "gfx1030",
       {"10.3.0", "RDNA2: its instruction set is gfx1030's, ROCm/rocBLAS #1339"}},
      {std::regex("^gfx101[1-3]$"), "gfx1010", {"10.1.0", "RDNA1, as gfx1010"}},
      {std::regex("^gfx110[12]$"), "gfx1100", {"11.0.0", "RDNA3, as gfx1100"}},
      {std::regex("^gfx90[2c]$"),
       "gfx900",
       {"9.0.0", "a Vega APU as gfx900, not supported by AMD"}},
  };
  for (const auto& f : kFamilies)
    if (std::regex_match(gfx, f.members) && targets.contains(f.target)) return f.fix;
  return std::nullopt;
}

std::string list_of(const std::set<std::string>& s) {
  return join(std::vector<std::string>(s.begin(), s.end()), " ");
}

}  // namespace

// ---- amd_gfx_target ----

CheckResult check_amd_gfx_target(const SystemView& view) {
  std::vector<std::string> evidence;
  const std::vector<AmdGpu> gpus = kfd_gpus(view, evidence);
  if (gpus.empty()) {
    if (!evidence.empty())
      throw NotObservable("the KFD topology's GPU nodes (" + evidence.front() + ")");
    return not_applicable("no AMD GPU in the KFD topology (/sys/class/kfd/kfd/topology/nodes)");
  }
  const std::vector<Runtime> runtimes = rocm_runtimes(view);
  for (const auto& r : runtimes)
    evidence.push_back(fmt::format("{}: rocBLAS kernels for {}", r.who, list_of(r.targets)));
  if (runtimes.empty())
    return not_applicable(
        "no ROCm runtime with rocBLAS kernels here (/opt/rocm*, ROCm builds of torch, ollama's "
        "ROCm): the AMD GPU is reached through Vulkan or OpenCL only",
        evidence);
  const auto override_env = view.env_value("HSA_OVERRIDE_GFX_VERSION");
  const std::string forced = override_env ? gfx_of_override(*override_env) : std::string();
  if (override_env)
    evidence.push_back(fmt::format("HSA_OVERRIDE_GFX_VERSION={} ({})", *override_env,
                                   forced.empty() ? "not a version x.y.z" : "runs as " + forced));
  std::vector<Finding> findings;
  std::vector<std::string> served;
  for (const auto& g : gpus) {
    const std::string runs_as = forced.empty() ? g.gfx : forced;
    for (const auto& r : runtimes) {
      if (r.targets.contains(runs_as)) {
        served.push_back(fmt::format("{} (node {}{}) by {}", g.gfx, g.node,
                                     runs_as == g.gfx ? std::string() : ", as " + runs_as, r.who));
        continue;
      }
      std::string fix;
      if (const auto o = family_override(g.gfx, r.targets))
        fix = r.ollama ? fmt::format(
                             "set HSA_OVERRIDE_GFX_VERSION={} ({}) for ollama: sudo "
                             "systemctl edit ollama, [Service] "
                             "Environment=\"HSA_OVERRIDE_GFX_VERSION={}\"",
                             o->version, o->why, o->version)
                       : fmt::format("export HSA_OVERRIDE_GFX_VERSION={} ({})", o->version, o->why);
      else
        fix = fmt::format(
            "no ROCm override is safe for {}: use the Vulkan path (ollama's Vulkan runner, "
            "llama.cpp's Vulkan build) or a ROCm release whose rocBLAS lists {}",
            g.gfx, g.gfx);
      findings.push_back(
          {CheckStatus::kWarn, "GC-AMD-GFX-UNSUPPORTED"_gc,
           fmt::format("the AMD GPU {} (KFD node {}{}) is not among the targets {} carries ({}): "
                       "it runs on the CPU there",
                       g.gfx, g.node, runs_as == g.gfx ? std::string() : ", forced to " + runs_as,
                       r.who, list_of(r.targets)),
           fix});
    }
  }
  return combine(findings, evidence, "every AMD GPU's target is served: " + join(served, "; "));
}

}  // namespace gpucheck::doctor

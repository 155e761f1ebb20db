// The GPUs, driver and library search paths the framework checks judge builds against.
#include "doctor/framework_gpus.h"

#include "doctor/check_util.h"
#include "doctor/framework_files.h"
#include "doctor/wheel_oracle.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <regex>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;

std::string GpuPicture::devices_text() const {
  if (gpus.empty()) return "the NVIDIA GPU";
  std::vector<std::string> names;
  for (const auto& g : gpus) names.push_back(g.device);
  return join(names, ", ");
}

GpuPicture gpu_picture(const SystemView& view) {
  GpuPicture p;
  const nlohmann::json* cuda = view.backend("cuda");
  if (cuda != nullptr && text(*cuda, "status") == "available") {
    for (const auto& d : array_at(*cuda, "devices")) {
      const nlohmann::json props = d.value("properties", nlohmann::json::object());
      GpuHere g{text(d, "device"), text(d, "device_name"), 0};
      if (auto cc = parse_cc(text(props, "compute_capability"))) g.cc = *cc;
      p.evidence.push_back(
          fmt::format("{} {} (compute capability {}.{})", g.device, g.name, g.cc / 10, g.cc % 10));
      p.gpus.push_back(std::move(g));
    }
  }
  try {
    p.driver = driver_cuda_version(view);
  } catch (const NotObservable&) {
  }
  if (auto module = kernel_module_version(view)) {
    p.driver_version = *module;
  } else if (cuda != nullptr) {
    p.driver_version = text(cuda->value(k::kNvml, nlohmann::json::object()), k::kDriverVersion);
  }
  if (p.driver)
    p.evidence.push_back(fmt::format("driver supports CUDA {} ({})",
                                     cuda_version_text(p.driver->encoded), p.driver->source));
  const NvidiaExpectation e = nvidia_expected(view);
  p.nvidia = !p.gpus.empty() || e.expected;
  for (const auto& ev : e.evidence) p.evidence.push_back("NVIDIA GPU expected: " + ev);
  return p;
}

std::string sm_name(int cc) {
  return fmt::format("sm_{}", cc);
}

std::optional<int> parse_cc(const std::string& t) {
  static const std::regex kDotted(R"(^([0-9]+)\.([0-9])$)");
  static const std::regex kArch(R"(^(sm|compute)_([0-9]+)[af]?$)");
  std::smatch m;
  if (std::regex_match(t, m, kDotted)) return std::stoi(m[1].str()) * 10 + std::stoi(m[2].str());
  if (std::regex_match(t, m, kArch)) return std::stoi(m[2].str());
  return std::nullopt;
}

ArchFit arch_fit(const std::vector<std::string>& arch_list, int cc) {
  ArchFit best = ArchFit::kNone;
  for (const auto& a : arch_list) {
    const auto n = parse_cc(a);
    if (!n) continue;
    const bool specific = a.back() == 'a' || a.back() == 'f';
    if (a.starts_with("sm_")) {
      if (specific ? *n == cc : (*n / 10 == cc / 10 && *n <= cc)) return ArchFit::kNative;
    } else if (!specific && *n <= cc) {
      best = ArchFit::kPtxOnly;
    }
  }
  return best;
}

GpuFits fit_gpus(const GpuPicture& gpus, const std::vector<std::string>& arch_list) {
  GpuFits out;
  std::set<int> seen;
  for (const auto& g : gpus.gpus) {
    if (g.cc == 0 || arch_list.empty() || !seen.insert(g.cc).second) continue;
    const ArchFit fit = arch_fit(arch_list, g.cc);
    if (fit == ArchFit::kNone)
      out.cuda_for_none = std::max(out.cuda_for_none, min_cuda_for_cc(g.cc));
    (fit == ArchFit::kNative    ? out.native
     : fit == ArchFit::kPtxOnly ? out.ptx_only
                                : out.none)
        .push_back(sm_name(g.cc));
  }
  return out;
}

std::string arch_span(const std::vector<std::string>& arch_list) {
  if (arch_list.empty()) return "none";
  if (arch_list.size() <= 3) return join(arch_list, " ");
  return arch_list.front() + "…" + arch_list.back();
}

int min_cuda_for_cc(int cc) {
  if (cc >= 100) return 12080;
  if (cc >= 90) return 11080;
  if (cc >= 89) return 11080;
  if (cc >= 86) return 11010;
  if (cc >= 80) return 11000;
  return 10000;
}

InstallAdvice install_advice(const GpuPicture& gpus, const std::string& framework,
                             const host::PythonEnv* env, const std::string& python_version,
                             const std::string& keep, bool replace) {
  WheelQuery q;
  q.framework = framework;
  q.driver = gpus.driver_version;
  q.driver_cuda = gpus.driver ? gpus.driver->encoded : 0;
  for (const auto& g : gpus.gpus)
    if (g.cc != 0 && std::find(q.ccs.begin(), q.ccs.end(), g.cc) == q.ccs.end())
      q.ccs.push_back(g.cc);
  q.python = python_version;
  q.keep = keep;
  const WheelAdvice a = advise_wheel(wheel_table(), q);
  if (a.wheel == nullptr) return {false, a.why, {}};
  const std::string py = env != nullptr ? python_of(*env) + " -m " : std::string();
  std::string pip = a.wheel->pip;
  if (replace && pip.starts_with("pip install "))
    pip.insert(std::string_view("pip install ").size(), "--force-reinstall ");
  return {true,
          fmt::format("{}{} ({}{})", py, pip, a.wheel->describe(),
                      a.ptx_only ? "; the GPU runs it only through PTX compiled at first use" : ""),
          a.wheel->min_driver};
}

std::string release_line(const std::string& version) {
  return major_minor(release_of(version));
}

std::string python_version_of(const host::PythonEnv& env) {
  for (const auto& d : env.site_dirs)
    if (auto v = host::python_version_of_site(d)) return *v;
  return {};
}

std::string python_of(const host::PythonEnv& env) {
  const std::string prefix = env.prefix == "/" ? "" : env.prefix;
  return prefix + "/bin/python3";
}

std::optional<std::string> LibrarySearch::find(const SystemView& view,
                                               const std::string& soname) const {
  for (const auto& d : dirs)
    if (view.exists(d + "/" + soname)) return d + "/" + soname;
  return std::nullopt;
}

std::vector<std::string> search_dirs(const std::string& list, const std::string& origin) {
  std::vector<std::string> out;
  std::stringstream in(list);
  for (std::string d; std::getline(in, d, ':');) {
    for (std::string_view o : {"${ORIGIN}", "$ORIGIN"})
      if (auto p = d.find(o); p != std::string::npos && !origin.empty())
        d.replace(p, o.size(), origin);
    while (d.size() > 1 && d.ends_with('/')) d.pop_back();
    if (d.starts_with('/') && std::find(out.begin(), out.end(), d) == out.end())
      out.push_back(std::move(d));
  }
  return out;
}

LibrarySearch linker_search(const SystemView& view) {
  LibrarySearch s;
  auto add = [&](std::string d) {
    while (d.size() > 1 && d.ends_with('/')) d.pop_back();
    if (!d.empty() && d.starts_with('/') &&
        std::find(s.dirs.begin(), s.dirs.end(), d) == s.dirs.end())
      s.dirs.push_back(std::move(d));
  };
  if (auto ld = view.env_value("LD_LIBRARY_PATH"))
    for (auto& d : search_dirs(*ld)) add(std::move(d));
  for (const auto& conf : view.glob("/etc/ld.so.conf.d/*.conf"))
    if (auto text = view.read_file(conf, 64u << 10)) {
      std::stringstream in(*text);
      for (std::string line; std::getline(in, line);) {
        line = line.substr(0, line.find('#'));
        line.erase(0, line.find_first_not_of(" \t"));
        while (!line.empty() && (line.back() == ' ' || line.back() == '\r')) line.pop_back();
        if (!line.starts_with("include")) add(line);
      }
    }
  for (const auto& pattern : {"/lib/*-linux-gnu", "/usr/lib/*-linux-gnu"})
    for (const auto& d : view.glob(pattern)) add(d);
  for (const char* d : {"/lib64", "/usr/lib64", "/lib", "/usr/lib"}) add(d);
  return s;
}

std::vector<std::string> wheel_lib_dirs(const SystemView& view, const std::string& site_dir) {
  std::vector<std::string> out;
  for (const auto& d : view.glob(site_dir + "/nvidia/*/lib"))
    if (view.is_dir(d)) out.push_back(d);
  // CUDA 13's wheels put every library in one nvidia/cu13/lib.
  return out;
}

const host::Distribution* EnvScan::first(const std::string& dist_name,
                                         const host::SitePackages** where) const {
  for (const auto& s : sites)
    if (const host::Distribution* d = s.find(dist_name)) {
      if (where != nullptr) *where = &s;
      return d;
    }
  return nullptr;
}

const host::SitePackages* EnvScan::first_with_file(const SystemView& view,
                                                   const std::string& rel) const {
  for (const auto& s : sites)
    if (view.exists(s.dir + "/" + rel)) return &s;
  return nullptr;
}

std::vector<EnvScan> scan_environments(const SystemView& view,
                                       const std::vector<host::PythonEnv>& envs) {
  std::vector<EnvScan> out;
  for (const auto& env : envs) {
    EnvScan scan;
    scan.env = &env;
    for (const auto& dir : host::import_path(view, env))
      scan.sites.push_back(host::read_site_packages(view, dir));
    out.push_back(std::move(scan));
  }
  return out;
}

CheckResult framework_result(Code failure, const std::vector<Verdict>& verdicts,
                             std::vector<std::string> evidence) {
  CheckStatus worst = CheckStatus::kPass;
  std::vector<std::string> lines, fixes;
  auto add = [&](CheckStatus st, const std::string& line, const std::string& fix) {
    if (std::find(lines.begin(), lines.end(), line) != lines.end()) return;
    worst = worse(worst, st);
    lines.push_back(line);
    if (!fix.empty() && (st == CheckStatus::kWarn || st == CheckStatus::kFail) &&
        std::find(fixes.begin(), fixes.end(), fix) == fixes.end())
      fixes.push_back(fix);
  };
  for (const auto& v : verdicts) {
    add(v.status, v.line, v.fix);
    for (const auto& f : v.more) add(f.status, f.text, f.fix);
  }
  const std::string finding = join(lines, "; ");
  switch (worst) {
    case CheckStatus::kFail:
      return fail(failure, finding, join(fixes, "; "), std::move(evidence));
    case CheckStatus::kWarn:
      return warn(failure, finding, join(fixes, "; "), std::move(evidence));
    case CheckStatus::kInfo:
      return info(finding, std::move(evidence));
    default:
      return pass(finding, std::move(evidence));
  }
}

CheckResult judge_every_environment(const SystemView& view, Code failure,
                                    const std::string& framework, const Judge& judge) {
  const auto envs = host::python_environments(view);
  const auto scans = scan_environments(view, envs);
  const GpuPicture gpus = gpu_picture(view);
  std::vector<std::string> evidence = gpus.evidence;
  std::vector<Verdict> verdicts;
  for (const auto& scan : scans)
    if (auto v = judge(view, gpus, scan, evidence)) verdicts.push_back(std::move(*v));
  if (verdicts.empty())
    return not_applicable(framework + " is not installed in any Python environment found",
                          evidence);
  return framework_result(failure, verdicts, evidence);
}

}  // namespace gpucheck::doctor

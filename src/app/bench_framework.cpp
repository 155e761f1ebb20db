// bench --framework: frameworks found in the Python environments doctor reads (or the one
// --python names), run on the bench's CPU and CUDA devices, their ratios to gpucheck's kernels.
#include "app/bench_framework.h"

#include "app/cli_common.h"
#include "bench/framework_run.h"
#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_keys_framework.h"
#include "doctor/system_view.h"
#include "host/python_envs.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

namespace gpucheck::app {

namespace k = keys;

namespace {

bool executable_file(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec) && ::access(path.c_str(), X_OK) == 0;
}

// A command name looked up on PATH as a shell would; a name with a '/' as given.
std::optional<std::string> resolve_program(const std::string& name, const EnvMap& env) {
  if (name.find('/') != std::string::npos) {
    if (!executable_file(name)) return std::nullopt;
    std::error_code ec;
    auto abs = std::filesystem::absolute(name, ec);
    return ec ? name : abs.string();
  }
  auto it = env.find("PATH");
  std::stringstream in(it == env.end() ? std::string() : it->second);
  for (std::string dir; std::getline(in, dir, ':');)
    if (!dir.empty() && executable_file(dir + "/" + name)) return dir + "/" + name;
  return std::nullopt;
}

// Whether a site directory holds the framework (read from files: nothing is imported).
bool installed_in(const host::SitePackages& sp, const std::string& framework) {
  if (framework == "torch") return sp.torch.has_value();
  for (const auto& d : sp.gpu_dists) {
    if (framework == "jax" && d.name == "jax") return true;
    if (framework == "cupy" && d.name.starts_with("cupy")) return true;
    if (framework == "tensorflow" && d.name.starts_with("tensorflow")) return true;
  }
  return false;
}

std::optional<std::string> interpreter_of(const host::PythonEnv& env) {
  for (const char* name : {"/bin/python3", "/bin/python"})
    if (executable_file(env.prefix + name)) return env.prefix + name;
  return std::nullopt;
}

}  // namespace

std::vector<FrameworkChoice> choose_frameworks(const std::string& list, const std::string& python,
                                               const EnvMap& env,
                                               std::vector<std::string>* missing) {
  const auto& known = bench::known_frameworks();
  std::string valid;
  for (const auto& n : known) valid += n + ", ";
  valid += "all";
  std::vector<std::string> names;
  bool all = false;
  for (const auto& item : split_list(list)) {
    if (item == "all") {
      all = true;
      continue;
    }
    if (!bench::is_known_framework(item))
      throw UsageError(fmt::format("--framework: unknown framework '{}' (valid: {})", item, valid));
    if (std::find(names.begin(), names.end(), item) == names.end()) names.push_back(item);
  }
  if (names.empty() && !all)
    throw UsageError(fmt::format("--framework: empty list (valid: {})", valid));
  std::vector<FrameworkChoice> out;
  if (!python.empty()) {
    auto path = resolve_program(python, env);
    if (!path)
      throw UsageError(
          fmt::format("--python: '{}' is not an executable file (nor a program on PATH)", python));
    // Every framework `all` knows is tried there: the child says which it can import.
    for (const auto& n : all ? known : names) {
      const bool named = std::find(names.begin(), names.end(), n) != names.end();
      out.push_back({n, *path, "--python", named});
    }
    return out;
  }
  doctor::SystemView view;
  view.env = env;
  const auto envs = host::python_environments(view);
  for (const auto& n : known) {
    const bool named = std::find(names.begin(), names.end(), n) != names.end();
    if (!named && !all) continue;
    std::optional<FrameworkChoice> found;
    for (const auto& e : envs) {
      auto interpreter = interpreter_of(e);
      if (!interpreter) continue;
      for (const auto& dir : host::import_path(view, e))
        if (installed_in(host::read_site_packages(view, dir), n)) {
          found = FrameworkChoice{n, *interpreter, e.origin, named};
          break;
        }
      if (found) break;
    }
    if (found)
      out.push_back(*found);
    else if (named && missing)
      missing->push_back(fmt::format(
          "--framework {}: not installed in any Python environment found ({}); --python PATH "
          "names the interpreter that has it",
          n, envs.empty() ? std::string("none found") : fmt::format("{} looked at", envs.size())));
  }
  return out;
}

namespace {

// gpucheck's own name of a device, from its records (nullopt: none ran there).
std::optional<std::string> device_name_of(const nlohmann::json& results,
                                          const std::string& device) {
  for (const auto& r : results)
    if (r.value(std::string(k::kDevice), "") == device && r.contains(k::kDeviceName) &&
        !r.contains(k::kFramework))
      return r[k::kDeviceName].get<std::string>();
  return std::nullopt;
}

}  // namespace

FrameworkBenchResult run_framework_benches(const std::vector<FrameworkChoice>& frameworks,
                                           const std::vector<bench::BenchPlan>& plans,
                                           const nlohmann::json& own_results,
                                           const FrameworkBenchOptions& options,
                                           Progress& progress) {
  FrameworkBenchResult out;
  // Every framework on every device, each cell once a round: the units of the progress line.
  std::size_t total = 0, done = 0;
  for (const auto& plan : plans)
    if (backend_has_framework_peers(plan.backend))
      total += plan.cells.size() * frameworks.size() *
               static_cast<std::size_t>(bench::effective_rounds(options.policy));
  for (const auto& fw : frameworks) {
    for (const auto& plan : plans) {
      if (!backend_has_framework_peers(plan.backend)) continue;  // no framework there
      bench::FrameworkJob job;
      job.framework = fw.framework;
      job.python = fw.python;
      job.device = plan.device;
      job.backend = plan.backend;
      job.device_name = device_name_of(own_results, plan.device).value_or(plan.device);
      job.cells = plan.cells;
      job.policy = options.policy;
      job.seed = options.seed;
      // --threads, when given, binds the framework too; else it keeps its own default (torch:
      // the physical cores), as its users get it, and impl says how many it used. Forcing every
      // hardware thread on torch's OpenMP made its exp 100x slower on a loaded 2-vCPU VM.
      job.threads = options.threads;
      job.startup_timeout = std::chrono::duration<double>(options.timeout_s);
      spdlog::info("bench: {} on {} ({}, {} cells)", fw.framework, plan.device, fw.python,
                   job.cells.size());
      const std::string where = fw.framework + " " + plan.device;
      job.cell_started = [&](const bench::Cell& c) {
        progress.update({where, bench::describe(c), done++, total, {}});
      };
      bench::FrameworkRun run = bench::run_framework(job);
      if (run.unavailable) {
        const std::string m = fmt::format("--framework {} on {} ({}): {}", fw.framework,
                                          plan.device, fw.python, *run.unavailable);
        (fw.named ? out.errors : out.notes).push_back(m);
        continue;
      }
      for (auto& r : run.records) {
        r[k::kFramework][k::kFoundIn] = fw.origin;
        out.records.push_back(std::move(r));
      }
    }
  }
  return out;
}

void add_framework_ratios(nlohmann::json& results) {
  auto own = [](const nlohmann::json& r) { return !r.contains(k::kFramework); };
  for (auto& r : results) {
    if (own(r) || r.value(std::string(k::kStatus), "") != "ok") continue;
    for (const auto& g : results) {
      if (!own(g) || g.value(std::string(k::kStatus), "") != "ok") continue;
      bool same = true;
      for (auto key : {k::kDevice, k::kOp, k::kDtype, k::kShape, k::kTransfers})
        same = same && g.value(std::string(key), nlohmann::json()) ==
                           r.value(std::string(key), nlohmann::json());
      if (!same) continue;
      const double mine = g[k::kTimeS][k::kMedian].get<double>();
      const double theirs = r[k::kTimeS][k::kMedian].get<double>();
      if (mine > 0 && theirs > 0)
        r[k::kVsGpucheck] = {{k::kRatio, mine / theirs}, {k::kImpl, g[k::kImpl]}};
      break;
    }
  }
}

}  // namespace gpucheck::app

// Planning, guarding and running the framework children, and reading what each one answered.
#include "doctor/framework_query.h"

#include "core/json_input.h"
#include "core/sanitize.h"
#include "doctor/check_util.h"
#include "doctor/framework_gpus.h"
#include "host/python_envs.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace fs = std::filesystem;
using Json = nlohmann::json;

namespace {

// The interpreter of an environment: bin/python3, else bin/python, that exists and may be run.
std::string interpreter_of(const SystemView& view, const host::PythonEnv& env) {
  const std::string prefix = env.prefix == "/" ? "" : env.prefix;
  for (const char* name : {"/bin/python3", "/bin/python"}) {
    const std::string path = prefix + name;
    if (::access(view.host_path(path).c_str(), X_OK) == 0 && !view.is_dir(path)) return path;
  }
  return {};
}

// Every path whose writer controls what the interpreter runs at start-up: the prefix, the
// interpreter, its standard library (also where PYTHONHOME puts it), the user base that
// PYTHONUSERBASE names and each directory on its import path (a .pth file in a site directory
// runs code; a module in any of them shadows the standard library's).
std::vector<std::string> start_up_paths(const SystemView& view, const host::PythonEnv& env,
                                        const std::string& python) {
  std::vector<std::string> out{env.prefix, python};
  const std::string prefix = env.prefix == "/" ? "" : env.prefix;
  for (const auto& d : view.glob(prefix + "/lib/python3*"))
    if (view.is_dir(d)) out.push_back(d);
  for (const auto& d : host::import_path(view, env)) out.push_back(d);
  // The standard library and the user site can be moved elsewhere: those places count too.
  for (const char* var : {"PYTHONHOME", "PYTHONUSERBASE"})
    if (auto v = view.env_value(var)) {
      std::stringstream in(*v);
      for (std::string d; std::getline(in, d, ':');)
        if (d.starts_with('/')) out.push_back(d);
    }
  return out;
}

struct WriteCheck {
  std::set<std::string> seen;
  std::vector<std::string> reasons;
  bool warn = false;

  // `p` and the directories above it; only `p` itself (the target) is exposed through a sticky
  // bit (anyone may add a file to a sticky world-writable directory, not rename another's).
  void chain(const fs::path& start, bool start_is_target) {
    for (fs::path p = start;; p = p.parent_path()) {
      const bool target = start_is_target && p == start;
      const std::string key = p.string() + (target ? "#t" : "");
      if (seen.insert(key).second) judge(p, target);
      if (p == p.parent_path() || p.empty()) break;
    }
  }

  void judge(const fs::path& p, bool target) {
    struct stat st {};
    if (::stat(p.c_str(), &st) != 0) return;  // gone: nothing there to write
    const bool sticky = (st.st_mode & S_ISVTX) != 0;
    if (st.st_uid != 0)
      reasons.push_back(fmt::format("{} is owned by uid {}", p.string(), st.st_uid));
    if ((st.st_mode & S_IWOTH) != 0 && (target || !sticky)) {
      reasons.push_back(fmt::format("{} is writable by every user", p.string()));
      warn = true;
    }
    if ((st.st_mode & S_IWGRP) != 0 && st.st_gid != 0 && (target || !sticky)) {
      reasons.push_back(fmt::format("{} is writable by group {}", p.string(), st.st_gid));
      warn = true;
    }
  }
};

std::string last_lines(const std::string& text, std::size_t n) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find_first_not_of(" \t\r") != std::string::npos) lines.push_back(line);
  if (lines.size() > n) lines.erase(lines.begin(), lines.end() - static_cast<std::ptrdiff_t>(n));
  std::string out = redact_child_words(join(lines, " / "));
  if (out.size() > 800) out = "..." + out.substr(out.size() - 800);
  return out;
}

// Strings from the child become one sanitised line each (a finding is one line), with the
// secrets they quote redacted.
void clean_strings(Json& j) {
  if (j.is_string()) {
    std::string s = j.get<std::string>();
    std::string one;
    for (char c : s) one += c == '\n' ? std::string(" / ") : std::string(1, c);
    j = redact_child_words(one);
  } else if (j.is_structured()) {
    for (auto& v : j) clean_strings(v);
  }
}

// The answer line: the last line of stdout that is a JSON object.
std::optional<Json> answer_of(const std::string& out) {
  std::istringstream in(out);
  std::optional<Json> found;
  for (std::string line; std::getline(in, line);) {
    Json j = parse_json_or_discarded(line);
    if (j.is_object()) found = std::move(j);
  }
  return found;
}

// The matmul's numbers against the expected ones, in place of the numbers.
void check_matmul(Json& answer) {
  auto it = answer.find("matmul");
  if (it == answer.end() || !it->is_object()) return;
  Json& mm = *it;
  const auto expected = expected_query_matmul();
  const Json result = mm.value("result", Json());
  mm.erase("result");
  if (!result.is_array() || result.size() != expected.size()) {
    mm["verified"] = false;
    mm["problem"] = fmt::format("the result has {} numbers, not {}",
                                result.is_array() ? result.size() : 0, expected.size());
    return;
  }
  double worst = 0;
  std::size_t wrong = 0;
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const double got = result[i].is_number() ? result[i].get<double>() : std::nan("");
    const double err = std::fabs(got - expected[i]);
    // Every input, product and sum is exact in f32, TF32 and bf16 inputs: any difference is
    // wrong (a NaN too).
    if (!(err == 0)) ++wrong;
    if (std::isnan(err) || err > worst) worst = std::isnan(err) ? INFINITY : err;
  }
  mm["verified"] = wrong == 0;
  mm["wrong"] = wrong;
  mm["max_abs_error"] = std::isinf(worst) ? Json("nan") : Json(worst);
}

bool starts_with_any(const std::string& name, std::initializer_list<std::string_view> prefixes) {
  return std::any_of(prefixes.begin(), prefixes.end(),
                     [&](std::string_view p) { return name.starts_with(p); });
}

}  // namespace

std::vector<double> expected_query_matmul() {
  const int n = kQueryMatmulN;
  std::vector<double> out(static_cast<std::size_t>(n) * n, 0.0);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      double sum = 0;
      for (int k = 0; k < n; ++k)
        sum += ((i * 3 + k * 5) % 7 - 3) / 4.0 * (((k * 2 + j * 7) % 5 - 2) / 2.0);
      out[static_cast<std::size_t>(i) * n + j] = sum;
    }
  return out;
}

std::vector<std::string> writable_by_others(const std::vector<std::string>& paths, bool* warn) {
  WriteCheck w;
  for (const auto& path : paths) {
    std::error_code ec;
    const fs::path canon = fs::canonical(path, ec);
    if (!ec) w.chain(canon, true);
    // The directory that holds the name (a link's own directory, not its target's).
    const fs::path holder = fs::canonical(fs::path(path).parent_path(), ec);
    if (!ec) w.chain(holder, false);
  }
  if (warn != nullptr) *warn = w.warn;
  return w.reasons;
}

std::vector<FrameworkQuery> plan_framework_queries(const SystemView& view, bool as_root) {
  const auto envs = host::python_environments(view);
  const auto scans = scan_environments(view, envs);
  // Which frameworks are installed, as the checks find them; judged against no GPU, which reads
  // the fewest files (no architecture scan).
  const GpuPicture no_gpu;
  std::vector<FrameworkQuery> out;
  for (const auto& scan : scans) {
    std::vector<std::string> found;
    for (auto fw : kQueriedFrameworks) {
      std::vector<std::string> scratch;
      if (judge_framework(fw, view, no_gpu, scan, scratch)) found.emplace_back(fw);
    }
    if (found.empty()) continue;
    FrameworkQuery base;
    base.prefix = scan.env->prefix;
    base.origin = scan.env->origin;
    base.python = interpreter_of(view, *scan.env);
    if (!base.python.empty() && as_root) {
      std::vector<std::string> host;
      for (const auto& p : start_up_paths(view, *scan.env, base.python))
        host.push_back(view.host_path(p));
      bool warn = false;
      const auto reasons = writable_by_others(host, &warn);
      if (!reasons.empty()) {
        base.refused =
            fmt::format("not started as root: another user can write what {} runs at start-up ({})",
                        base.python, join(reasons, "; "));
        base.refused_status = warn ? CheckStatus::kWarn : CheckStatus::kInfo;
      }
    }
    for (const auto& fw : found) {
      FrameworkQuery q = base;
      q.framework = fw;
      out.push_back(std::move(q));
    }
  }
  return out;
}

ChildSpec::Env framework_child_environment(const EnvMap& env) {
  static const std::set<std::string, std::less<>> kNames{"PATH",
                                                         "HOME",
                                                         "LD_LIBRARY_PATH",
                                                         "LANG",
                                                         "LANGUAGE",
                                                         "TMPDIR",
                                                         "TZ",
                                                         "VIRTUAL_ENV",
                                                         "CONDA_PREFIX",
                                                         "XDG_CACHE_HOME",
                                                         "HIP_VISIBLE_DEVICES",
                                                         "ROCR_VISIBLE_DEVICES"};
  ChildSpec::Env out;
  for (const auto& [name, value] : env) {
    const bool wanted =
        kNames.contains(name) ||
        starts_with_any(name, {"LC_", "PYTHON", "CUDA_", "NVIDIA_", "CUBLAS", "CUDNN_", "NCCL_",
                               "XLA_", "JAX_", "TF_", "KERAS_", "TORCH_", "PYTORCH_", "CUPY_",
                               "OMP_", "MKL_", "OPENBLAS_", "TRITON_"});
    if (wanted && !is_credential_name(name)) out[name] = value;
  }
  out["PYTHONDONTWRITEBYTECODE"] = "1";
  // The children run at once, beside doctor's GPU load: none may take most of the GPU memory.
  out["XLA_PYTHON_CLIENT_PREALLOCATE"] = "false";
  out["TF_FORCE_GPU_ALLOW_GROWTH"] = "true";
  return out;
}

Json framework_query_entry(const FrameworkQuery& q, const ChildResult& r, double budget_s) {
  Json e = {
      {"framework", q.framework}, {"prefix", q.prefix}, {"origin", q.origin}, {"python", q.python}};
  if (!q.refused.empty()) {
    e["status"] = "refused";
    e["reason"] = q.refused;
    e["unsafe"] = q.refused_status == CheckStatus::kWarn;
    return e;
  }
  if (q.python.empty()) {
    e["status"] = "no_interpreter";
    e["reason"] = fmt::format("no bin/python3 or bin/python that may be run in {}", q.prefix);
    return e;
  }
  e["seconds"] = r.seconds;
  if (const std::string tail = last_lines(r.err, 4); !tail.empty()) e["stderr_tail"] = tail;
  if (auto answer = answer_of(r.out)) {
    clean_strings(*answer);
    check_matmul(*answer);
    e["status"] = "answered";
    e["answer"] = std::move(*answer);
    if (!r.exited_ok())
      e["reason"] =
          fmt::format("answered, then {}", r.describe(std::chrono::duration<double>(budget_s), 0));
    return e;
  }
  const std::string how = r.describe(std::chrono::duration<double>(budget_s), 4u << 20);
  if (r.end == ChildResult::End::kTimedOut) {
    e["status"] = "timed_out";
    e["reason"] = fmt::format("the query {}", how);
  } else if (r.end == ChildResult::End::kExited) {
    e["status"] = "no_answer";
    const std::string out = last_lines(r.out, 2);
    e["reason"] = out.empty() ? fmt::format("the query {} and wrote no answer", how)
                              : fmt::format("the query {} and wrote no JSON answer, only \"{}\"",
                                            how, out.substr(0, 200));
  } else {
    e["status"] = "crashed";
    e["reason"] =
        fmt::format("the query {}{}", r.end == ChildResult::End::kSignaled ? "was " : "", how);
  }
  return e;
}

Json run_framework_queries(const std::vector<FrameworkQuery>& plan, const EnvMap& env,
                           double budget_s) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<ChildSpec> specs;
  std::vector<std::size_t> child_of(plan.size(), SIZE_MAX);
  const ChildSpec::Env child_env = framework_child_environment(env);
  const std::string script = framework_query_script();
  for (std::size_t i = 0; i < plan.size(); ++i) {
    if (!plan[i].refused.empty() || plan[i].python.empty()) continue;
    ChildSpec spec({"-c", script, plan[i].framework}, child_env);
    spec.program = plan[i].python;
    spec.inherit_environment = false;
    child_of[i] = specs.size();
    specs.push_back(std::move(spec));
  }
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(budget_s);
  limits.max_output = 4u << 20;
  const auto results = specs.empty() ? std::vector<ChildResult>{} : run_children(specs, limits);
  Json entries = Json::array();
  for (std::size_t i = 0; i < plan.size(); ++i)
    entries.push_back(framework_query_entry(
        plan[i], child_of[i] == SIZE_MAX ? ChildResult{} : results[child_of[i]], budget_s));
  return {
      {"ran", true},
      {"budget_s", budget_s},
      {"seconds", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count()},
      {"entries", std::move(entries)}};
}

Json framework_queries_not_run(const std::string& why) {
  return {{"ran", false}, {"reason", why}};
}

}  // namespace gpucheck::doctor

// Asking each framework itself: after doctor has read a framework's files, it runs the
// framework's own device query in a child of that environment's interpreter (import, the GPU
// devices it lists, one small matmul on the first GPU, the versions it reports), all children at
// once under one time budget. The answers join the facts (`framework_queries`), and the check
// framework_query compares them with the verdicts read from the files.
#pragma once

#include "core/child_process.h"
#include "core/environment.h"
#include "doctor/check.h"
#include "doctor/framework_gpus.h"
#include "doctor/system_view.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// The frameworks the embedded script can ask, by the name doctor uses for each.
inline constexpr std::string_view kQueriedFrameworks[] = {"torch", "jax", "cupy", "tensorflow",
                                                          "keras"};
inline constexpr int kQueryMatmulN = 64;
inline constexpr double kDefaultFrameworkBudgetS = 30.0;
// The document's (and the facts') key of the answers.
inline constexpr std::string_view kFrameworkQueriesKey = "framework_queries";

// The Python program the children run: `python3 -c <script> <framework>`.
std::string framework_query_script();

// The matmul's expected result (row-major N x N), from the formula the script uses for its
// inputs, computed here in double.
std::vector<double> expected_query_matmul();

// One child to start: a framework found in an environment, and the interpreter to ask.
struct FrameworkQuery {
  std::string framework;  // "torch"
  std::string prefix;     // the environment's prefix, as host::python_environments() names it
  std::string origin;     // how the environment was found
  std::string python;     // the interpreter; empty when the environment has none
  // Not started: why (run as root, a path another user can write), and whether that is a
  // problem of its own (writable by a group or everyone: kWarn) or only a reason (kInfo).
  std::string refused;
  CheckStatus refused_status = CheckStatus::kInfo;
};

// Of these paths (of this machine), the ones another user than root could write to, each with
// why ("/opt/venv/lib/python3.12/site-packages is writable by every user"): each path, the
// directory that holds its name and every directory above both, links resolved. A sticky
// directory above (/tmp) lets no one rename what others own, so it is no reason; the path
// itself, sticky or not, is. *warn is set when one is writable by a group other than root's or
// by everyone (rather than only owned by another user, as a user's own venv is).
std::vector<std::string> writable_by_others(const std::vector<std::string>& paths, bool* warn);

// What to ask: one entry per framework the file reading finds in each environment doctor finds
// (the environments and frameworks the framework_* checks judge). as_root: an environment whose
// prefix, interpreter, standard library or import-path directories another user can write is
// refused (a .pth file in site-packages runs code at interpreter start-up).
std::vector<FrameworkQuery> plan_framework_queries(const SystemView& view, bool as_root);

// The child's environment: only what a framework reads (PATH, HOME, library paths, locale,
// Python's, CUDA's and the frameworks' own variables, none that looks like a credential), plus
// PYTHONDONTWRITEBYTECODE=1 and settings that keep parallel children from taking all GPU memory
// (XLA_PYTHON_CLIENT_PREALLOCATE=false, TF_FORCE_GPU_ALLOW_GROWTH=true).
ChildSpec::Env framework_child_environment(const EnvMap& env);

// The facts section for the queries' results: {"ran": true, "budget_s", "seconds", "entries":
// [...]}; each entry {framework, prefix, origin, python, status, reason?, seconds?, answer?,
// stderr_tail?} with status answered, refused, no_interpreter, timed_out, crashed or no_answer.
// The answer's matmul result is checked here and replaced by {device, on_gpu, n, verified,
// max_abs_error, wrong}.
nlohmann::json framework_query_entry(const FrameworkQuery& q, const ChildResult& r,
                                     double budget_s);

// Starts every planned query at once and waits at most budget_s for all of them; an overrunning
// child is killed (with its process group). Plans without a child to start cost nothing.
nlohmann::json run_framework_queries(const std::vector<FrameworkQuery>& plan, const EnvMap& env,
                                     double budget_s);

// A framework's verdict read from its files (framework_torch, ... framework_keras) in one
// environment; nullopt when the files show no such framework there.
std::optional<Verdict> judge_framework(std::string_view framework, const SystemView& view,
                                       const GpuPicture& gpus, const EnvScan& scan,
                                       std::vector<std::string>& evidence);

// The section when the frameworks were not asked: {"ran": false, "reason": why}.
nlohmann::json framework_queries_not_run(const std::string& why);

}  // namespace gpucheck::doctor

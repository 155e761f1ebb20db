// framework_query: each framework's own answer (from the children doctor ran, in the facts)
// against the verdict read from its files. Agreement passes; a disagreement is a finding of its
// own, as are a wrong matmul, a child that overran the budget or crashed, and an environment
// that was not started because, run as root, another user can write what it runs at start-up.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_query.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::doctor {

using Json = nlohmann::json;

namespace {

std::string check_id_of(std::string_view framework) {
  return "framework_" + std::string(framework);
}

// The version the files say `import <framework>` gets in this environment.
std::optional<std::string> files_version(std::string_view fw, const EnvScan& scan) {
  for (const auto& s : scan.sites) {
    if (fw == "torch" && s.torch) return s.torch->version;
    for (const auto& d : s.gpu_dists) {
      const bool match = (fw == "jax" && d.name == "jax") || (fw == "keras" && d.name == "keras") ||
                         (fw == "cupy" && (d.name == "cupy" || d.name.starts_with("cupy-"))) ||
                         (fw == "tensorflow" &&
                          (d.name == "tensorflow" || d.name == "tf-nightly" ||
                           (d.name.starts_with("tensorflow-") && d.name != "tensorflow-metal")));
      if (match) return d.version;
    }
  }
  return std::nullopt;
}

// Whether the files say the framework will use the GPU: its verdict's, unless one of its
// findings FAILs (a wheel it imports is missing: the verdict's line may still say "will use").
bool files_say_gpu(const Verdict& v) {
  return v.uses_gpu && v.status != CheckStatus::kFail &&
         std::none_of(v.more.begin(), v.more.end(),
                      [](const Finding& f) { return f.status == CheckStatus::kFail; });
}

std::string gpus_text(const Json& a) {
  std::vector<std::string> names;
  for (const auto& g : array_at(a, "gpus")) {
    const std::string cc = text(g, "cc");
    names.push_back(text(g, "name") + (cc.empty() ? "" : " (" + cc + ")"));
  }
  if (names.empty()) {
    const std::string why = text(a, "no_gpu_reason");
    return "no GPU" + (why.empty() ? std::string() : " (" + why + ")");
  }
  return fmt::format("{} GPU{}: {}", names.size(), names.size() == 1 ? "" : "s", join(names, ", "));
}

// "torch 2.11.0+cu130, cuda 13.0, cudnn 91900" as the framework reports itself.
std::string versions_text(std::string_view fw, const Json& a) {
  std::vector<std::string> parts{fmt::format("{} {}", fw, text(a, "version"))};
  const Json v = a.value("versions", Json::object());
  if (v.is_object())
    for (const auto& [k, val] : v.items()) {
      const std::string s = val.is_string() ? val.get<std::string>() : val.dump();
      if (k == "arch_list" || s.empty() || s == "None") continue;
      parts.push_back(k + " " + s);
    }
  return join(parts, ", ");
}

std::string stage_text(std::string_view fw, const std::string& stage) {
  if (stage == "import" || stage == "start") return fmt::format("import {} failed", fw);
  if (stage == "devices") return "listing its GPUs failed";
  return "its matmul failed";
}

// One entry the child answered, against the verdict of the files (no comparison when the checks
// do not see the environment: its path was redacted from their view as secret-looking).
Finding judge_answer(const Json& e, bool env_seen, const std::optional<Verdict>& verdict,
                     const std::optional<std::string>& want_version,
                     std::vector<std::string>& evidence) {
  const std::string fw = text(e, "framework");
  const std::string check = check_id_of(fw);
  const Json& a = e.at("answer");
  const std::string who = fmt::format("{} ({})", fw, text(e, "python"));
  const Json err = a.value("error", Json());
  const Json mm = a.value("matmul", Json());
  const bool imported =
      !(err.is_object() && (text(err, "stage") == "import" || text(err, "stage") == "start"));
  evidence.push_back(fmt::format("{}: {}", who, a.dump()));
  // Without an error, an answer holds what is compared below; one that lacks it agrees with
  // nothing (a `python3` that prints `{}` is not the framework).
  if (!err.is_object()) {
    std::vector<std::string> missing;
    if (!a.contains("version") || !a["version"].is_string()) missing.emplace_back("version");
    if (!a.contains("gpus") || !a["gpus"].is_array()) missing.emplace_back("gpus");
    if (!mm.is_object()) missing.emplace_back("matmul");
    if (!missing.empty())
      return {CheckStatus::kWarn, "GC-FRAMEWORK-QUERY-CRASHED"_gc,
              fmt::format("{}: answered without {} and without an error: not the answer of "
                          "gpucheck's query to {}",
                          who, join(missing, ", "), fw),
              fmt::format("{} -c \"import {}\" shows what that interpreter runs instead",
                          text(e, "python"), fw)};
  }
  std::vector<std::string> said;
  if (imported) said.push_back("reports " + versions_text(fw, a));
  if (imported) said.push_back(gpus_text(a));
  if (mm.is_object())
    said.push_back(fmt::format("its {0}x{0} matmul on {1} {2}", mm.value("n", 0),
                               text(mm, "device"),
                               mm.value("verified", false) ? "verified" : "gave wrong numbers"));
  if (err.is_object())
    said.push_back(fmt::format("{}: {}", stage_text(fw, text(err, "stage")), text(err, "message")));
  const std::string answer = join(said, "; ");

  if (mm.is_object() && !mm.value("verified", false)) {
    const std::string problem =
        mm.contains("problem")
            ? text(mm, "problem")
            : fmt::format("{} of {} numbers wrong, largest error {}", mm.value("wrong", 0),
                          kQueryMatmulN * kQueryMatmulN, mm.value("max_abs_error", Json()).dump());
    return {CheckStatus::kFail, "GC-FRAMEWORK-WRONG-RESULT"_gc,
            fmt::format("{}: a {}x{} matmul on {} returned wrong numbers ({}); {}", who,
                        kQueryMatmulN, kQueryMatmulN, text(mm, "device"), problem, answer),
            fmt::format("run gpucheck bench and gpucheck stress on that device; if the numbers "
                        "are wrong there too, drain the node and run dcgmi diag -r 3")};
  }
  const bool uses_gpu = !array_at(a, "gpus").empty() && mm.is_object() &&
                        mm.value("on_gpu", false) && mm.value("verified", false);
  std::vector<std::string> differences;
  if (!env_seen) {
    evidence.push_back(fmt::format("{}: the checks see no environment {}", who, text(e, "prefix")));
  } else if (!verdict) {
    differences.push_back(fmt::format("{} found no {} in this environment's files", check, fw));
  } else {
    evidence.push_back(fmt::format("{} read from the files: {}", check, verdict->line));
    if (files_say_gpu(*verdict) != uses_gpu)
      differences.push_back(fmt::format("{} says it {} use the GPU, {} itself {}", check,
                                        files_say_gpu(*verdict) ? "will" : "will not", fw,
                                        uses_gpu ? "does" : "does not"));
  }
  const std::string got = text(a, "version");
  if (imported && want_version && !got.empty() && compare_versions(got, *want_version) != 0)
    differences.push_back(fmt::format("import {} got version {} ({}), the files say {}", fw, got,
                                      text(a, "module"), *want_version));
  if (!differences.empty())
    return {CheckStatus::kWarn, "GC-FRAMEWORK-DISAGREES"_gc,
            fmt::format("{}: {}: {}", who, join(differences, "; "), answer),
            uses_gpu ? fmt::format("the framework itself uses the GPU: {}'s reading of the files "
                                   "is wrong here; please report it with this check's evidence",
                                   check)
                     : fmt::format("what {} answered decides: fix what it names{}, then run "
                                   "gpucheck doctor again",
                                   fw, err.is_object() ? " (" + text(err, "message") + ")" : "")};
  const std::string agrees = !env_seen ? fmt::format("no verdict of {} to compare with", check)
                                       : fmt::format("agrees with {} ({})", check,
                                                     uses_gpu ? "uses the GPU" : "no GPU use");
  // The files said so too: what failed is reported there; here it is the framework's own words.
  if (err.is_object() || !env_seen)
    return {CheckStatus::kInfo, {}, fmt::format("{}: {}; {}", who, answer, agrees), ""};
  return {CheckStatus::kPass, {}, fmt::format("{}: {}; {}", who, answer, agrees), ""};
}

Finding judge_entry(const SystemView& view, const GpuPicture& gpus,
                    const std::vector<EnvScan>& scans, const Json& e,
                    std::vector<std::string>& evidence) {
  const std::string fw = text(e, "framework");
  const std::string status = text(e, "status");
  const std::string who = fmt::format("{} ({})", fw, text(e, "python"));
  const std::string reason = text(e, "reason");
  if (const std::string tail = text(e, "stderr_tail"); !tail.empty())
    evidence.push_back(fmt::format("{} stderr: {}", who, tail));
  if (status == "refused") {
    const bool unsafe = e.value("unsafe", false);
    // One finding an environment, whatever number of frameworks it holds.
    return {unsafe ? CheckStatus::kWarn : CheckStatus::kInfo,
            unsafe ? "GC-FRAMEWORK-UNSAFE-ENV"_gc : Code{},
            fmt::format("{} ({}): {}", text(e, "prefix"), text(e, "origin"), reason),
            unsafe ? "take write access from every user but root (chmod go-w on the paths named, "
                     "chown root), or run gpucheck doctor as the user who owns the environment"
                   : ""};
  }
  if (status == "no_interpreter")
    return {CheckStatus::kInfo,
            {},
            fmt::format("{} in {}: not asked: {}", fw, text(e, "prefix"), reason),
            ""};
  const std::string by_hand =
      fmt::format("{} -c \"import {}\" shows where it stops", text(e, "python"),
                  fw == "tensorflow" ? "tensorflow" : fw);
  if (status == "timed_out")
    return {CheckStatus::kWarn, "GC-FRAMEWORK-QUERY-TIMEOUT"_gc,
            fmt::format("{}: {} (import, GPU list and a small matmul)", who, reason),
            fmt::format("give it longer (gpucheck doctor --framework-timeout 120); if it hangs "
                        "again, {}",
                        by_hand)};
  if (status != "answered")
    return {CheckStatus::kWarn, "GC-FRAMEWORK-QUERY-CRASHED"_gc,
            fmt::format("{}: {}{}", who, reason,
                        e.contains("stderr_tail") ? "; it said: " + text(e, "stderr_tail") : ""),
            fmt::format("{}; reinstall the framework's matching packages (framework_{}'s fix)",
                        by_hand, fw)};
  const auto scan = std::find_if(scans.begin(), scans.end(), [&](const EnvScan& s) {
    return s.env->prefix == text(e, "prefix");
  });
  std::optional<Verdict> verdict;
  std::optional<std::string> version;
  if (scan != scans.end()) {
    std::vector<std::string> scratch;
    verdict = judge_framework(fw, view, gpus, *scan, scratch);
    version = files_version(fw, *scan);
  }
  return judge_answer(e, scan != scans.end(), verdict, version, evidence);
}

}  // namespace

std::optional<Verdict> judge_framework(std::string_view framework, const SystemView& view,
                                       const GpuPicture& gpus, const EnvScan& scan,
                                       std::vector<std::string>& evidence) {
  if (framework == "torch") return judge_torch(view, gpus, scan, evidence);
  if (framework == "jax") return judge_jax(view, gpus, scan, evidence);
  if (framework == "cupy") return judge_cupy(view, gpus, scan, evidence);
  if (framework == "tensorflow") return judge_tensorflow(view, gpus, scan, evidence);
  if (framework == "keras") return judge_keras(view, gpus, scan, evidence);
  return std::nullopt;
}

CheckResult check_framework_query(const SystemView& view) {
  const auto it = view.facts.find(kFrameworkQueriesKey);
  if (it == view.facts.end() || !it->is_object())
    throw NotObservable(
        "the frameworks were not asked in this run (gpucheck doctor asks them, except with "
        "--quick, --no-frameworks or --sysroot)");
  const Json& section = *it;
  if (!section.value("ran", false)) throw NotObservable(text(section, "reason"));
  const Json& entries = array_at(section, "entries");
  std::vector<std::string> evidence{fmt::format(
      "{} quer{} in {:.1f} s of a {:g} s budget", entries.size(), entries.size() == 1 ? "y" : "ies",
      section.value("seconds", 0.0), section.value("budget_s", 0.0))};
  if (entries.empty())
    return not_applicable(
        "no torch, JAX, CuPy, TensorFlow or Keras in any Python environment found", evidence);
  const auto envs = host::python_environments(view);
  const auto scans = scan_environments(view, envs);
  const GpuPicture gpus = gpu_picture(view);
  std::vector<Finding> findings;
  for (const auto& e : entries) {
    Finding f = judge_entry(view, gpus, scans, e, evidence);
    if (std::none_of(findings.begin(), findings.end(),
                     [&](const Finding& g) { return g.text == f.text; }))
      findings.push_back(std::move(f));
  }
  return combine(findings, std::move(evidence), "");
}

}  // namespace gpucheck::doctor

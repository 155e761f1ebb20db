// doctor's text view: one line per check, grouped by area, the finding and the fix of every WARN
// and FAIL on wrapped lines under it, the evidence with --details, and a closing count followed
// by each FAIL and WARN with its fix on one line.
#include "core/json_keys.h"
#include "core/json_keys_inject.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <regex>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

struct Area {
  std::string_view title;
  std::vector<std::string_view> prefixes;  // of check ids
};

// Areas in print order; a check belongs to the first area with a prefix of its id. Areas come
// from the id so that a saved document groups the same way as a fresh run.
const std::vector<Area>& areas() {
  static const std::vector<Area> kAreas{
      {"OpenCL", {"opencl_"}},
      {"CPU", {"cpu_"}},
      {"Containers, WSL and device access", {"container_", "wsl_", "gpu_node_"}},
      {"Environment variables", {"env_"}},
      {"NVIDIA driver",
       {"nouveau_", "nvidia_kernel_module", "nvidia_device_nodes", "cuda_driver_", "nvidia_driver_",
        "cuda_devices"}},
      {"NVIDIA GPUs",
       {"nvidia_", "nvswitch_", "pcie_", "clocks_", "nvlink_", "p2p_", "nccl_", "gpu_", "mig_"}},
      {"CUDA libraries", {"cublas_", "cudnn_"}},
      {"InfiniBand / RoCE and GPUDirect", {"infiniband_", "gpudirect_"}},
      {"Python frameworks", {"framework_", "pytorch_", "jax_", "cupy_"}},
      {"Other checks", {""}},
  };
  return kAreas;
}

std::size_t area_of(std::string_view id) {
  const auto& a = areas();
  for (std::size_t i = 0; i < a.size(); ++i)
    for (auto p : a[i].prefixes)
      if (id.substr(0, p.size()) == p) return i;
  return a.size() - 1;
}

// A finding of one part per device ("cuda0: ...; cuda1: ..."), as a check joins its findings:
// one line each, so a machine of eight GPUs reads as eight lines. Any other finding stays whole.
std::vector<std::string> per_device_lines(const std::string& finding) {
  static const std::regex kDevice(R"(^((cuda|rocm|hip|cl)[0-9]+|NVML GPU [0-9]+)\b)");
  std::vector<std::string> parts;
  for (std::size_t at = 0;;) {
    const std::size_t end = finding.find("; ", at);
    parts.push_back(finding.substr(at, end == std::string::npos ? end : end - at));
    if (end == std::string::npos) break;
    at = end + 2;
  }
  for (const auto& p : parts)
    if (!std::regex_search(p, kDevice)) return {finding};
  return parts;
}

// Each FAIL, then each WARN, with its fix on one line ("…" where it is longer): the last lines a
// person sees when the command returns, however long the list above (an 80x24 terminal holds
// the count and these, the checks themselves have scrolled away).
void problems_recap(TextView& view, const Json& checks) {
  TextTable t;
  t.header = false;
  t.indent = 2;
  t.columns = {{"status", false, false, false, true, 4},
               {"check", false, false, false, false, 8},
               {"fix", false, true, false, false, 10}};
  for (const std::string_view wanted : {"fail", "warn"})
    for (const auto& c : checks) {
      if (text_at(c, k::kStatus) != wanted) continue;
      const std::string fix = text_at(c, k::kFix);
      t.add({upper_case(std::string(wanted)), text_at(c, k::kId),
             fix.empty() ? text_at(c, k::kFinding) : "fix: " + fix});
    }
  if (!t.rows.empty()) view.table(std::move(t));
}

std::string plural(std::size_t n, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", n, n == 1 ? one : many);
}

}  // namespace

// "42 checks: 31 passed, 7 info, 2 warnings, 0 failed, 2 skipped" and its tone.
std::pair<std::string, Tone> checks_summary(const Json& checks) {
  std::size_t pass = 0, info = 0, warn = 0, fail = 0, skip = 0;
  for (const auto& c : checks) {
    const std::string s = text_at(c, k::kStatus);
    pass += s == "pass";
    info += s == "info";
    warn += s == "warn";
    fail += s == "fail";
    skip += s == "skip";
  }
  std::string line = fmt::format("{}: {} passed, {} info, {}, {} failed, {} skipped",
                                 plural(checks.size(), "check", "checks"), pass, info,
                                 plural(warn, "warning", "warnings"), fail, skip);
  return {line, fail ? Tone::kBad : warn ? Tone::kWarn : Tone::kGood};
}

// The checks grouped by area, one table per area with the columns aligned across areas.
// Older documents carry no recovery action: their note stays as it was.
std::string recovery_note(const Json& check) {
  const std::string r = text_at(check, k::kRecoveryAction);
  return r.empty() ? "" : ", recovery_action: " + r;
}

void checks_view(TextView& view, const Json& checks, bool details, bool problems_only) {
  std::size_t id_width = 0;
  for (const auto& c : checks) id_width = std::max(id_width, text_at(c, k::kId).size());
  for (std::size_t a = 0; a < areas().size(); ++a) {
    TextTable t;
    t.header = false;
    t.indent = 2;
    t.columns = {{"status", false, false, false, true, 4},
                 {"check", false, false, false, false, 8, id_width},
                 {"finding", false, true, false, false, 10}};
    for (const auto& c : checks) {
      const std::string id = text_at(c, k::kId), status = text_at(c, k::kStatus);
      if (area_of(id) != a) continue;
      const bool problem = status == "warn" || status == "fail";
      if (problems_only && !problem) continue;
      std::vector<std::string> notes;
      std::vector<std::string> lines = per_device_lines(text_at(c, k::kFinding));
      if (problem || details) {
        notes = lines;
        if (auto fix = text_at(c, k::kFix); !fix.empty()) notes.push_back("fix: " + fix);
        if (auto code = text_at(c, k::kCode); !code.empty())
          notes.push_back(fmt::format("code: {}, action: {}{}", code, text_at(c, k::kAction),
                                      recovery_note(c)));
      }
      if (details)
        for (const auto& e : c.value(std::string(k::kEvidence), Json::array()))
          notes.push_back("evidence: " + scalar_text(e));
      if (!problem && !details) notes.assign(lines.begin() + 1, lines.end());
      t.add({upper_case(status), id, problem || details ? "" : lines.front()}, std::move(notes));
    }
    if (t.rows.empty()) continue;
    view.text(std::string(areas()[a].title), 0, 0, Tone::kBold);
    view.table(std::move(t));
  }
}

std::string injected_line(const Json& doc) {
  const auto faults = doc.find(k::kInjected);
  if (faults == doc.end() || !faults->is_array() || faults->empty()) return {};
  std::string words;
  for (const auto& f : *faults) words += (words.empty() ? "" : ",") + scalar_text(f);
  return "INJECTED: doctor --inject " + words +
         ": the checks marked injected were not read from this machine";
}

namespace {

// doctor --inject: said first and last, so neither a reader of the top nor of the tail (a log,
// a drain reason's context) takes a test for a fault.
void injected_banner(TextView& view, const Json& doc) {
  if (const std::string line = injected_line(doc); !line.empty())
    view.text(line, 0, 10, Tone::kWarn);
}

}  // namespace

void doctor_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json checks = doc.value(std::string(k::kChecks), Json::array());
  title_view(view, "gpucheck doctor", {}, doc);
  injected_banner(view, doc);
  // The problems by name first, so a long list still shows them on the first screen.
  std::string fails, warns;
  for (const auto& c : checks) {
    const std::string s = text_at(c, k::kStatus), id = text_at(c, k::kId);
    if (s == "fail") fails += (fails.empty() ? "" : ", ") + id;
    if (s == "warn") warns += (warns.empty() ? "" : ", ") + id;
  }
  if (!fails.empty()) view.text("FAIL: " + fails, 0, 6, Tone::kBad);
  if (!warns.empty()) view.text("WARN: " + warns, 0, 6, Tone::kWarn);
  view.blank();
  checks_view(view, checks, o.details, false);
  if (o.details) {
    view.blank();
    system_facts_view(view, doc);
  }
  view.blank();
  auto [line, tone] = checks_summary(checks);
  view.text(line, 0, 0, tone);
  problems_recap(view, checks);
  // The node health check (--quick, --timeout, --state): its verdict and exit code last.
  if (const Json& h = doc.value(std::string(k::kHealth), Json::object()); !h.empty()) {
    const std::string verdict = text_at(h, k::kVerdict);
    std::string text = fmt::format("health: {} (exit {})", verdict, text_at(h, k::kExitCode));
    std::vector<std::string> silent;
    for (const auto& id : h.value(std::string(k::kUnanswered), Json::array()))
      silent.push_back(scalar_text(id));
    if (!silent.empty()) {
      text += ", no answer from ";
      for (std::size_t i = 0; i < silent.size(); ++i) text += (i ? ", " : "") + silent[i];
    }
    std::size_t open = h.value(std::string(k::kUnacknowledged), Json::array()).size();
    if (open > 0)
      text += fmt::format(", {} unacknowledged event{} (--ack)", open, open == 1 ? "" : "s");
    view.text(text, 0, 8,
              verdict == "healthy"     ? Tone::kGood
              : verdict == "unhealthy" ? Tone::kBad
                                       : Tone::kWarn);
  }
  injected_banner(view, doc);
}

}  // namespace gpucheck::report

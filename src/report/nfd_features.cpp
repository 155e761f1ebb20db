// doctor's node-feature-discovery feature file.
#include "report/nfd_features.h"

#include "core/document.h"
#include "core/json_keys.h"
#include "core/json_keys_inject.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::report {

namespace k = keys;

namespace {

// ASCII only, whatever the locale: Kubernetes' rule is about bytes.
bool alnum(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

bool label_char(char c) {
  return alnum(c) || c == '.' || c == '_' || c == '-';
}

// A check's status as a label value: INFO is no problem, anything unknown is not a pass.
std::string_view check_word(std::string_view status) {
  if (status == "pass" || status == "info") return "pass";
  if (status == "warn" || status == "fail" || status == "skip") return status;
  return "warn";
}

std::string health_word(const nlohmann::json& doc) {
  const auto health = doc.find(k::kHealth);
  const std::string verdict = health != doc.end() ? text_at(*health, k::kVerdict) : "";
  if (verdict == "unhealthy") return "fail";
  if (verdict == "unknown") return "warn";
  bool warned = false, failed = false;
  for (const auto& c : doc.value(std::string(k::kChecks), nlohmann::json::array())) {
    const std::string s = text_at(c, k::kStatus);
    warned = warned || s == "warn";
    failed = failed || s == "fail";
  }
  if (verdict.empty() && failed) return "fail";
  return warned || failed ? "warn" : "pass";
}

}  // namespace

bool valid_nfd_label_name(std::string_view name) {
  return !name.empty() && name.size() <= 63 && alnum(name.front()) && alnum(name.back()) &&
         std::all_of(name.begin(), name.end(), label_char);
}

std::string render_nfd_features(const nlohmann::json& doc,
                                std::chrono::system_clock::time_point expiry) {
  std::string out = fmt::format("# +expiry-time={}\n", utc_timestamp(expiry));
  out += "# gpucheck doctor: labels dropped by NFD after the expiry unless rewritten\n";
  out += fmt::format("{}gpucheck.health={}\n", kNfdLabelPrefix, health_word(doc));
  // doctor --inject: a taint or a drain keyed on these labels can tell a test from a fault.
  if (doc.contains(k::kInjected)) out += fmt::format("{}gpucheck.injected=true\n", kNfdLabelPrefix);
  const auto label = [&](const std::string& id, std::string_view word) {
    const std::string name = "gpucheck.check." + id;
    // Check ids are short snake_case words; one that is not a valid label would make NFD
    // reject the line, so it is left out rather than written.
    if (valid_nfd_label_name(name)) out += fmt::format("{}{}={}\n", kNfdLabelPrefix, name, word);
  };
  for (const auto& c : doc.value(std::string(k::kChecks), nlohmann::json::array()))
    label(text_at(c, k::kId), check_word(text_at(c, k::kStatus)));
  if (auto h = doc.find(k::kHealth); h != doc.end())
    for (const auto& id : h->value(std::string(k::kUnanswered), nlohmann::json::array()))
      if (id.is_string()) label(id.get<std::string>(), "skip");
  return out;
}

}  // namespace gpucheck::report

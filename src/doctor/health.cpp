// The quick check list, the health verdict and the one-line form of it.
#include "doctor/health.h"

#include "doctor/registry.h"

#include <fmt/format.h>

#include <regex>

namespace gpucheck::doctor {

const std::vector<std::string_view>& quick_check_ids() {
  static const std::vector<std::string_view> kIds = [] {
    std::vector<std::string_view> ids;
    for (const auto& c : all_checks())
      if (c.quick) ids.push_back(c.id);
    return ids;
  }();
  return kIds;
}

ExitCode health_exit_code(Health h) {
  switch (h) {
    case Health::kHealthy:
      return ExitCode::kOk;
    case Health::kUnhealthy:
      return ExitCode::kFailed;
    case Health::kUnknown:
      return ExitCode::kUsage;
  }
  return ExitCode::kUsage;
}

std::string_view to_string(Health h) {
  switch (h) {
    case Health::kHealthy:
      return "healthy";
    case Health::kUnhealthy:
      return "unhealthy";
    case Health::kUnknown:
      return "unknown";
  }
  return "unknown";
}

bool answered(const CheckResult& r) {
  // A probe child killed at its deadline leaves the checks that need its section SKIP with the
  // child's description ("probe child timed out after 14 s and was killed").
  return !(r.status == CheckStatus::kSkip &&
           r.finding.find("probe child timed out") != std::string::npos);
}

HealthVerdict judge_health(const std::vector<CheckResult>& results,
                           const std::vector<std::string>& not_run, bool fail_on_warn) {
  HealthVerdict v;
  for (const auto& r : results) {
    const bool failing =
        r.status == CheckStatus::kFail || (fail_on_warn && r.status == CheckStatus::kWarn);
    if (failing) {
      if (v.failing.empty()) {
        v.first_finding = r.finding;
        v.first_code = r.code().code;
      }
      v.failing.push_back(r.id);
    } else if (!answered(r)) {
      v.unanswered.push_back(r.id);
    }
  }
  v.unanswered.insert(v.unanswered.end(), not_run.begin(), not_run.end());
  v.health = !v.failing.empty()      ? Health::kUnhealthy
             : !v.unanswered.empty() ? Health::kUnknown
                                     : Health::kHealthy;
  return v;
}

std::string fit_line(std::string_view text, std::size_t max) {
  std::string ascii;
  // "Xid 79 ×2" reads as "Xid 79 x2", not "Xid 79 ?2".
  std::string spelled(text);
  for (auto at = spelled.find("\xc3\x97"); at != std::string::npos; at = spelled.find("\xc3\x97"))
    spelled.replace(at, 2, "x");
  for (unsigned char c : spelled) {
    if (c == '\n' || c == '\r' || c == '\t')
      ascii += ' ';
    else if (c < 0x20 || c == 0x7f)
      continue;
    else if (c >= 0x80) {
      // One '?' per character: continuation bytes of UTF-8 add nothing.
      if (c >= 0xc0) ascii += '?';
    } else {
      ascii += static_cast<char>(c);
    }
  }
  // "cuda0 (NVIDIA H100 80GB HBM3, 0000:9b:00.0)" says the same in one line as "cuda0
  // 0000:9b:00.0".
  static const std::regex kNameAndBus(
      R"( \([^,()]+, ([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\))");
  ascii = std::regex_replace(ascii, kNameAndBus, " $1");
  static const std::regex kSpaces(" {2,}");
  ascii = std::regex_replace(ascii, kSpaces, " ");
  while (!ascii.empty() && ascii.back() == ' ') ascii.pop_back();
  if (ascii.size() <= max) return ascii;
  if (max <= 3) return ascii.substr(0, max);
  std::string cut = ascii.substr(0, max - 3);
  while (!cut.empty() && cut.back() == ' ') cut.pop_back();
  return cut + "...";
}

namespace {

// The ids joined with ","; past max characters the rest is counted ("+2"), so the finding keeps
// room in the line.
std::string id_list(const std::vector<std::string>& ids, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    if (i > 0 && out.size() + 1 + ids[i].size() > max)
      return out + fmt::format("+{}", ids.size() - i);
    out += (out.empty() ? "" : ",") + ids[i];
  }
  return out;
}

}  // namespace

std::string oneline(const HealthVerdict& v, std::size_t checks_run, double timeout_s) {
  switch (v.health) {
    case Health::kUnhealthy:
      // The code first: a drain reason or a node condition shown cut keeps it.
      return fit_line(fmt::format("FAIL {}{}: {}", v.first_code.empty() ? "" : v.first_code + ": ",
                                  id_list(v.failing, 30), v.first_finding),
                      kOnelineMax);
    case Health::kUnknown:
      return fit_line(
          fmt::format("UNKNOWN no answer within {:g} s: {}", timeout_s, id_list(v.unanswered, 46)),
          kOnelineMax);
    case Health::kHealthy:
      break;
  }
  return fit_line(fmt::format("OK {} checks", checks_run), kOnelineMax);
}

}  // namespace gpucheck::doctor

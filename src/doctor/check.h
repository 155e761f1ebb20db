// One doctor check's outcome (PASS, INFO, WARN, FAIL or SKIP with a finding, evidence and fix)
// and the description every check has in check_defs.h: a stable id, one line, the function,
// whether --quick runs it and its fault codes.
#pragma once

#include "doctor/fault_codes.h"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace gpucheck::doctor {

class SystemView;

// Ordered by severity: the worst of several findings is the largest.
enum class CheckStatus { kPass, kInfo, kSkip, kWarn, kFail };

// "pass", "info", "warn", "fail", "skip" (JSON); the table shows them upper-cased.
std::string_view to_string(CheckStatus s);
std::optional<CheckStatus> check_status_from_string(std::string_view s);
CheckStatus worse(CheckStatus a, CheckStatus b);

struct CheckResult {
  std::string id;
  CheckStatus status = CheckStatus::kSkip;
  // The fault code and its action: a WARN or FAIL names its failure mode; PASS, INFO and SKIP
  // leave it null and run_check gives them the check's own code (action none).
  const FaultCode* fault = nullptr;
  std::string finding;                // one line
  std::vector<std::string> evidence;  // file, library path, value seen
  std::string fix;                    // WARN and FAIL: what to do, a command where one exists
  // What the check keeps for its next run in doctor's state file (counters it judges as
  // deltas); null when it keeps nothing. Not part of the document.
  nlohmann::json state;
  // Made up by doctor --inject, not read from the machine: the JSON says so ("injected": true).
  bool injected = false;

  // The code and action written: the fault's, else GC-DOCTOR-UNCODED for a WARN or FAIL and
  // the check's own code for the rest.
  const FaultCode& code() const;

  nlohmann::json to_json() const;
};

// Thrown by a check (or the view's helpers) that cannot see what it needs here: the runner
// turns it into SKIP "not observable here: <what>".
class NotObservable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The most codes one check declares, its own included; a check with more does not compile (too
// many initializers): raise it.
inline constexpr std::size_t kMaxCheckCodes = 8;

// One check, as check_defs.h describes it; constexpr, so the code table is derived from these at
// compile time.
struct CheckDef {
  std::string_view id;       // lower_snake, stable: --only, --skip, JSON
  std::string_view summary;  // the line --list prints
  // The status a healthy system gets: PASS, or INFO for checks that only report (the family
  // of each platform, the frameworks' verdict while its driver half is missing).
  CheckStatus healthy = CheckStatus::kPass;
  CheckResult (*run)(const SystemView&) = nullptr;
  bool quick = false;  // doctor --quick runs it (health.h)
  // Its own code first, then every WARN and FAIL code it may give; the rest of the array empty.
  CodeDef codes[kMaxCheckCodes] = {};

  // The codes declared, without the empty rest.
  constexpr std::span<const CodeDef> code_list() const {
    std::size_t n = 0;
    while (n < kMaxCheckCodes && !codes[n].code.empty()) ++n;
    return {codes, n};
  }
};

// Builders that keep the checks short. A WARN or FAIL names its code ("GC-NVLINK-REPLAY"_gc).
CheckResult pass(std::string finding, std::vector<std::string> evidence = {});
CheckResult info(std::string finding, std::vector<std::string> evidence = {});
CheckResult warn(Code code, std::string finding, std::string fix,
                 std::vector<std::string> evidence = {});
CheckResult fail(Code code, std::string finding, std::string fix,
                 std::vector<std::string> evidence = {});
CheckResult skip(std::string why, std::vector<std::string> evidence = {});
// Transitional, for checks not yet given their codes: their WARN or FAIL is GC-DOCTOR-UNCODED.
CheckResult warn(std::string finding, std::string fix, std::vector<std::string> evidence = {});
CheckResult fail(std::string finding, std::string fix, std::vector<std::string> evidence = {});

}  // namespace gpucheck::doctor

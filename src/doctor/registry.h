// doctor's checks (check_defs.h) looked up and selected, and the runner with its per-check
// catch boundary.
#pragma once

#include "doctor/check.h"
#include "doctor/system_view.h"

#include <span>
#include <string>
#include <vector>

namespace gpucheck::doctor {

// Every check, in the order doctor runs and prints them (the PyTorch verdict closes the list):
// check_defs.h's entries.
std::span<const CheckDef> all_checks();

// nullptr when no check has this id.
const CheckDef* find_check(std::string_view id);

// Runs one check. Whatever it throws becomes SKIP "not observable here: ..."; a WARN or FAIL
// without a fix is a bug in the check and is reported as such in the fix.
CheckResult run_check(const CheckDef& check, const SystemView& view);

// "--only: unknown check id nvidia_xidd (did you mean 'nvidia_xid'?)": flag is the option
// that named it.
std::string unknown_check_id(std::string_view flag, std::string_view id);

// The checks to run: --only (empty: all), minus --skip. Unknown ids are a UsageError naming
// them, each with the nearest known id.
std::vector<const CheckDef*> select_checks(const std::vector<std::string>& only,
                                           const std::vector<std::string>& skip);

std::vector<CheckResult> run_checks(const std::vector<const CheckDef*>& checks,
                                    const SystemView& view);

}  // namespace gpucheck::doctor

// doctor --inject: named faults that appear as if read from the machine, so an operator can test
// the drain, taint and alert wiring of a healthy node (or of one without any GPU or driver).
#pragma once

#include "doctor/check.h"

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

// One fault to inject: a word of kInjectableWords, or an Xid ("xid:79": xid holds 79).
struct InjectedFault {
  std::string word;  // as the document names it: "gpu-lost", "xid:79"
  int xid = 0;       // the Xid's number for "xid:N", else 0
};

// "xid:N (N from 1 to 999), gpu-lost, nvlink-down, ecc-dbe, row-remap-pending, fm-down": the
// words --inject accepts, for its help and its errors.
std::string injectable_words();

// The --inject values (already split at commas), each checked; a word named twice counts once.
// Throws UsageError naming the accepted words for an unknown word, "xid:" without a number or
// a number out of range.
std::vector<InjectedFault> parse_injected_faults(const std::vector<std::string>& values);

// The results the faults give, one per check they touch (two faults of one check are combined
// as that check combines its findings), each marked injected. Codes, severities and actions are
// the checks' own: the Xid's verdict is nvidia_xid's judge_xids, the others' codes come from
// the code table (check_defs.h) with the status their check gives them.
std::vector<CheckResult> injected_results(const std::vector<InjectedFault>& faults);

// Each injected result takes the place of its check's result, or is added where that check did
// not run (an id in not_run is then answered).
void apply_injected(std::vector<CheckResult>& results, std::vector<std::string>& not_run,
                    const std::vector<InjectedFault>& faults);

}  // namespace gpucheck::doctor

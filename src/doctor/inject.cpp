// doctor --inject: the accepted words, their parsing, and the results they give, built from the
// checks' own codes and verdicts so an injected fault reads as a real one of its kind.
#include "doctor/inject.h"

#include "core/errors.h"
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <map>

namespace gpucheck::doctor {

namespace {

// A fault other than an Xid: its word and the code (hence the check, action and recovery) and
// status its check gives the real fault. The test compares each with its check's fixture case.
struct Injectable {
  std::string_view word;
  Code code;
  CheckStatus status;
};

constexpr Injectable kInjectable[] = {
    {"gpu-lost", "GC-CUDA-GPU-MISSING"_gc, CheckStatus::kFail},
    {"nvlink-down", "GC-NVLINK-DOWN"_gc, CheckStatus::kFail},
    {"ecc-dbe", "GC-ECC-UNCORRECTABLE"_gc, CheckStatus::kFail},
    {"row-remap-pending", "GC-ECC-REMAP-PENDING"_gc, CheckStatus::kFail},
    {"fm-down", "GC-FABRIC-MANAGER-DOWN"_gc, CheckStatus::kFail},
};

// NVIDIA's Xid catalogue numbers its errors below 1000; a larger number is a typing error.
constexpr int kMaxXid = 999;
constexpr std::string_view kXidPrefix = "xid:";

const Injectable* find_injectable(std::string_view word) {
  for (const auto& i : kInjectable)
    if (i.word == word) return &i;
  return nullptr;
}

std::string not_read() {
  return "injected by gpucheck doctor --inject, not read from this machine";
}

}  // namespace

std::string injectable_words() {
  std::string words = fmt::format("{}N (N from 1 to {})", kXidPrefix, kMaxXid);
  for (const auto& i : kInjectable) words += fmt::format(", {}", i.word);
  return words;
}

std::vector<InjectedFault> parse_injected_faults(const std::vector<std::string>& values) {
  std::vector<InjectedFault> faults;
  auto refuse = [](const std::string& value, std::string_view why) {
    return UsageError(
        fmt::format("--inject: '{}' {}; accepted: {}", value, why, injectable_words()));
  };
  for (const auto& value : values) {
    InjectedFault f{value, 0};
    if (std::string_view(value).starts_with(kXidPrefix)) {
      const std::string_view n = std::string_view(value).substr(kXidPrefix.size());
      const auto r = std::from_chars(n.data(), n.data() + n.size(), f.xid);
      if (n.empty() || r.ec != std::errc() || r.ptr != n.data() + n.size() || f.xid < 1 ||
          f.xid > kMaxXid)
        throw refuse(value, fmt::format("is not an Xid from 1 to {}", kMaxXid));
    } else if (find_injectable(value) == nullptr) {
      throw refuse(value, "is not a fault --inject knows");
    }
    if (std::none_of(faults.begin(), faults.end(),
                     [&](const InjectedFault& g) { return g.word == f.word; }))
      faults.push_back(std::move(f));
  }
  return faults;
}

std::vector<CheckResult> injected_results(const std::vector<InjectedFault>& faults) {
  std::vector<CheckResult> out;
  std::map<int, long long> xids;
  // Per check in the order first named, its findings combined as the check combines them.
  std::vector<std::pair<std::string_view, std::vector<Finding>>> per_check;
  for (const auto& f : faults) {
    if (f.xid != 0) {
      ++xids[f.xid];
      continue;
    }
    const Injectable& i = *find_injectable(f.word);
    const FaultCode& code = *i.code.get();
    auto held = std::find_if(per_check.begin(), per_check.end(),
                             [&](const auto& c) { return c.first == code.check; });
    std::vector<Finding>& findings =
        held != per_check.end() ? held->second
                                : per_check.emplace_back(code.check, std::vector<Finding>{}).second;
    findings.push_back({i.status, i.code, fmt::format("injected {}: {}", f.word, code.meaning),
                        fmt::format("nothing to repair ({}); a real one calls for {}", not_read(),
                                    to_string(code.action))});
  }
  if (!xids.empty()) {
    CheckResult r = judge_xids(
        xids, fmt::format("{}: injected NVIDIA Xid errors", xid_summary(xids)), "", {not_read()});
    r.id = "nvidia_xid";
    out.push_back(std::move(r));
  }
  for (auto& [check, findings] : per_check) {
    CheckResult r = combine(findings, {not_read()}, "");
    r.id = std::string(check);
    out.push_back(std::move(r));
  }
  for (auto& r : out) r.injected = true;
  return out;
}

void apply_injected(std::vector<CheckResult>& results, std::vector<std::string>& not_run,
                    const std::vector<InjectedFault>& faults) {
  for (auto& r : injected_results(faults)) {
    std::erase(not_run, r.id);
    auto same = std::find_if(results.begin(), results.end(),
                             [&](const CheckResult& c) { return c.id == r.id; });
    if (same != results.end())
      *same = std::move(r);
    else
      results.push_back(std::move(r));
  }
}

}  // namespace gpucheck::doctor

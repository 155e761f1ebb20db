// The stress verdict rules. Each rule passes, fails with a reason, or is skipped with why it
// could not be judged (a skip never makes a device pass what failed elsewhere, and never fails it).
#include "stress/verdict.h"

#include "core/json_keys.h"
#include "core/json_keys_nvlink.h"
#include "host/nvlink_rates.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

namespace gpucheck::stress {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string join(const std::vector<std::string>& parts, const char* sep) {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : sep) + p;
  return out;
}

const Json* find_path(const Json& j, std::initializer_list<std::string_view> path) {
  const Json* at = &j;
  for (auto key : path) {
    if (!at->is_object()) return nullptr;
    auto it = at->find(key);
    if (it == at->end()) return nullptr;
    at = &*it;
  }
  return at;
}

std::optional<std::uint64_t> counter(const Json& telemetry, std::string_view part,
                                     std::string_view name) {
  const Json* v = find_path(telemetry, {k::kCounters, part, name});
  if (v == nullptr || !v->is_number_integer() || v->get<std::int64_t>() < 0) return std::nullopt;
  return v->get<std::uint64_t>();
}

double reason_seconds(const Json& telemetry, const char* name) {
  const Json* v = find_path(telemetry, {k::kClocksEventReasons, name});
  return v != nullptr && v->is_number() ? v->get<double>() : 0.0;
}

bool has_reasons(const Json& telemetry) {
  return find_path(telemetry, {k::kClocksEventReasons}) != nullptr;
}

RuleResult rule_results(const VerdictInput& in) {
  std::vector<std::string> bad;
  for (const auto& r : in.records) {
    const std::string status = r.value(std::string(k::kStatus), "");
    const std::string test = r.value(std::string(k::kTest), "?");
    const std::string what =
        r.contains(k::kDtype) ? fmt::format("{} {}", test, r[k::kDtype].get<std::string>()) : test;
    if (status == "ok") {
      if (const Json* nc = find_path(r, {k::kChecking, k::kNoCheck}); nc && nc->get<bool>())
        bad.push_back(what + ": results not checked (--no-check, for measuring the checks' cost)");
      continue;
    }
    const std::string reason = r.value(std::string(k::kReason), "no reason given");
    if (status == "mismatch")
      bad.push_back(fmt::format("{}: {}", what, reason));
    else if (status == "unsupported")
      bad.push_back(fmt::format("{}: did not run: {}", what, reason));
    else
      bad.push_back(fmt::format("{}: failed: {}", what, reason));
  }
  if (in.records.size() < in.expected_records)
    bad.push_back(fmt::format("{} of {} tests reported no result",
                              in.expected_records - in.records.size(), in.expected_records));
  if (!bad.empty()) return {"results", "fail", join(bad, "; ")};
  return {
      "results", "pass",
      fmt::format("{} test(s) ran to the end; every result checked matched", in.records.size())};
}

RuleResult rule_xid(const VerdictInput& in) {
  if (!in.xid_readable)
    return {"xid", "skip", "the kernel log is not readable: " + in.xid_unreadable_why};
  std::vector<std::string> fleet;
  for (const auto& x : in.xids)
    if (std::find(std::begin(kFleetXids), std::end(kFleetXids), x.code) != std::end(kFleetXids))
      fleet.push_back(fmt::format("Xid {} (PCI:{}):{}", x.code, x.pci, x.detail));
  if (!fleet.empty()) return {"xid", "fail", "new Xid during the run: " + join(fleet, "; ")};
  return {"xid", "pass", "no new Xid of the fleet list for this device during the run"};
}

RuleResult rule_ecc(const Json* t) {
  if (t == nullptr) return {"ecc", "skip", "no telemetry from the device"};
  auto before = counter(*t, k::kBefore, k::kCounterEccVolatileUncorrected);
  auto after = counter(*t, k::kAfter, k::kCounterEccVolatileUncorrected);
  if (!before || !after)
    return {"ecc", "skip", "the device reports no volatile uncorrectable ECC count"};
  if (*after > *before)
    return {"ecc", "fail",
            fmt::format("{} new uncorrectable ECC errors (volatile count {} → {})",
                        *after - *before, *before, *after)};
  return {"ecc", "pass", fmt::format("no new uncorrectable ECC error (volatile count {})", *after)};
}

RuleResult rule_remap(const Json* t) {
  if (t == nullptr) return {"row_remap", "skip", "no telemetry from the device"};
  auto pending = counter(*t, k::kAfter, k::kCounterRemapPending);
  auto failure = counter(*t, k::kAfter, k::kCounterRemapFailure);
  if (!pending && !failure)
    return {"row_remap", "skip",
            "the device reports no row remapping (pre-Ampere, or not supported)"};
  std::vector<std::string> bad;
  if (pending.value_or(0) != 0)
    bad.emplace_back("a row remap is pending: the GPU needs a reset before it can be trusted");
  if (failure.value_or(0) != 0)
    bad.emplace_back("a row remapping failed: the memory has no spare rows left where it erred");
  if (!bad.empty()) return {"row_remap", "fail", join(bad, "; ")};
  return {"row_remap", "pass", "no remap pending, no remapping failure"};
}

RuleResult rule_thermal(const Json* t) {
  if (t == nullptr || !has_reasons(*t))
    return {"thermal", "skip", "no clocks-event reasons from the device"};
  std::vector<std::string> seen;
  for (const char* name : {"hw_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown"})
    if (const double s = reason_seconds(*t, name); s > 0)
      seen.push_back(fmt::format("{} for {:.1f} s", name, s));
  const auto b = counter(*t, k::kBefore, k::kCounterViolationThermalNs);
  const auto a = counter(*t, k::kAfter, k::kCounterViolationThermalNs);
  if (a && b && *a > *b)
    seen.push_back(fmt::format("NVML's thermal violation time grew by {:.1f} s",
                               static_cast<double>(*a - *b) * 1e-9));
  if (!seen.empty())
    return {"thermal", "fail",
            "the GPU slowed its clocks for heat or a hardware signal: " + join(seen, ", ")};
  return {"thermal", "pass", "no thermal or hardware slowdown seen"};
}

RuleResult rule_power_brake(const Json* t) {
  if (t == nullptr || !has_reasons(*t))
    return {"power_brake", "skip", "no clocks-event reasons from the device"};
  if (const double s = reason_seconds(*t, "hw_power_brake_slowdown"); s > 0)
    return {"power_brake", "fail",
            fmt::format("the power brake (an external signal: the PSU or the chassis) held the "
                        "clocks down for {:.1f} s",
                        s)};
  return {"power_brake", "pass", "no power-brake slowdown seen"};
}

// GEMM windows only: a memory-bound test may run at lower SM clocks by design.
RuleResult rule_clock_floor(const VerdictInput& in, const Json* t, double floor) {
  const Json* max = t != nullptr ? find_path(*t, {k::kMaxSmClockMhz}) : nullptr;
  if (max == nullptr || !max->is_number())
    return {"clock_floor", "skip", "no SM clock from the device"};
  const double limit = floor * max->get<double>();
  std::vector<std::string> low;
  bool any = false;
  for (const auto& r : in.records) {
    if (r.value(std::string(k::kTest), "") != "gemm") continue;
    const Json* windows = find_path(r, {k::kThroughput, k::kWindows});
    if (windows == nullptr) continue;
    for (const auto& w : *windows) {
      auto c = w.find(k::kSmClockMhz);
      if (c == w.end()) continue;
      any = true;
      if (c->get<double>() < limit)
        low.push_back(fmt::format("{:.0f} MHz in the window at {:.0f} s", c->get<double>(),
                                  w.value(std::string(k::kStartS), 0.0)));
    }
  }
  if (!any) return {"clock_floor", "skip", "no GEMM window with SM clock samples"};
  if (!low.empty())
    return {"clock_floor", "fail",
            fmt::format("SM clock under GEMM load below {:.0f} MHz ({:.0f} % of the maximum {:.0f} "
                        "MHz): {}",
                        limit, 100 * floor, max->get<double>(), join(low, ", "))};
  return {"clock_floor", "pass",
          fmt::format("every GEMM window's mean SM clock at or above {:.0f} MHz", limit)};
}

RuleResult rule_windows(const VerdictInput& in, double drop) {
  std::vector<std::string> bad;
  std::size_t judged = 0;
  for (const auto& r : in.records) {
    const Json* windows = find_path(r, {k::kThroughput, k::kWindows});
    if (windows == nullptr || windows->size() < 2) continue;
    ++judged;
    const double first = (*windows)[0].value(std::string(k::kValue), 0.0);
    const std::string unit = r[k::kThroughput].value(std::string(k::kUnit), "");
    for (std::size_t i = 1; i < windows->size(); ++i) {
      const double v = (*windows)[i].value(std::string(k::kValue), 0.0);
      if (v < (1 - drop) * first)
        bad.push_back(fmt::format(
            "{}: {:.4g} {} in the window at {:.0f} s, {:.1f} % below the "
            "first window's {:.4g}",
            r.value(std::string(k::kTest), "?"), v, unit,
            (*windows)[i].value(std::string(k::kStartS), 0.0), 100 * (1 - v / first), first, unit));
    }
  }
  if (judged == 0)
    return {"throughput_windows", "skip", "no test ran for two windows (a shorter --duration)"};
  if (!bad.empty())
    return {"throughput_windows", "fail",
            fmt::format("throughput fell more than {:.0f} %: {}", 100 * drop, join(bad, "; "))};
  return {"throughput_windows", "pass",
          fmt::format("no window more than {:.0f} % below the first", 100 * drop)};
}

// The NVLink counters' growth by kind, judged as doctor's nvlink_errors judges it: replays and
// recoveries are DCGM failures, CRC and corrected ECC-data errors are rates against the healthy
// band per link and DCGM's 100/s per GPU. The telemetry sums the GPU's active links, so the rate
// per link is their average (a single bad link shows in doctor's per-link reading). Empty when
// nothing grew; nullopt without per-kind counters (an older child): the total is said instead.
std::optional<std::string> nvlink_note(const Json& t) {
  auto growth = [&](std::string_view name) -> std::optional<std::uint64_t> {
    auto b = counter(t, k::kBefore, name), a = counter(t, k::kAfter, name);
    if (!a || !b) return std::nullopt;
    return *a >= *b ? *a - *b : 0;
  };
  const auto links = counter(t, k::kAfter, k::kCounterNvlinkActiveLinks);
  const auto replay = growth(k::kCounterNvlinkReplay), recovery = growth(k::kCounterNvlinkRecovery);
  const auto flit = growth(k::kCounterNvlinkCrcFlit), data = growth(k::kCounterNvlinkCrcData);
  const auto ecc = growth(k::kCounterNvlinkEccData);
  if (!links || !replay || !recovery || !flit || !data || !ecc) return std::nullopt;
  if (*replay + *recovery + *flit + *data + *ecc == 0) return std::string();
  const Json* samples = find_path(t, {k::kSamples});
  const Json* interval = find_path(t, {k::kIntervalMs});
  const double seconds = samples && interval && samples->is_number() && interval->is_number()
                             ? samples->get<double>() * interval->get<double>() / 1000.0
                             : 0.0;
  std::vector<std::string> parts;
  if (*replay + *recovery > 0)
    parts.push_back(fmt::format("replay +{}, recovery +{} (DCGM: a failure; doctor fails the link)",
                                *replay, *recovery));
  std::string worst;
  double worst_rate = 0;
  for (auto [label, grew] :
       {std::pair{"CRC-flit", *flit}, std::pair{"CRC-data", *data}, std::pair{"ECC-data", *ecc}}) {
    if (grew == 0) continue;
    if (seconds <= 0) {
      parts.push_back(fmt::format("{} +{}", label, grew));
      continue;
    }
    const double rate = static_cast<double>(grew) / seconds;
    parts.push_back(fmt::format("{} +{}{} ({}/s on the GPU, {}/s per link on average)", label, grew,
                                std::string_view(label) == "ECC-data" ? " corrected" : "",
                                host::rate_text(rate),
                                host::rate_text(rate / static_cast<double>(*links))));
    if (rate > worst_rate) worst_rate = rate, worst = label;
  }
  std::string verdict;
  if (!worst.empty()) {
    if (worst_rate >= host::kNvlinkCrcLimitPerS)
      verdict =
          fmt::format("; {} reaches DCGM's limit of {:g}/s", worst, host::kNvlinkCrcLimitPerS);
    else if (worst_rate / static_cast<double>(*links) > host::kNvlinkHealthyBandPerS)
      verdict = fmt::format("; {} above the healthy {:g}/s per link (DCGM's limit {:g}/s)", worst,
                            host::kNvlinkHealthyBandPerS, host::kNvlinkCrcLimitPerS);
    else
      verdict = fmt::format("; within the healthy {:g}/s per link (DCGM's limit {:g}/s)",
                            host::kNvlinkHealthyBandPerS, host::kNvlinkCrcLimitPerS);
  }
  return fmt::format("NVLink: {} active links, {}{}", *links, fmt::join(parts, ", "), verdict);
}

std::vector<std::string> notes_of(const VerdictInput& in, const Json* t) {
  std::vector<std::string> notes;
  if (t != nullptr) {
    if (const double s = reason_seconds(*t, "sw_power_cap"); s > 0)
      notes.push_back(fmt::format("at the power cap for {:.1f} s (normal under full load)", s));
    const auto nvlink = nvlink_note(*t);
    if (nvlink && !nvlink->empty()) notes.push_back(*nvlink);
    for (auto name :
         {k::kCounterPcieReplay, k::kCounterNvlinkErrors, k::kCounterEccVolatileCorrected}) {
      if (name == k::kCounterNvlinkErrors && nvlink) continue;  // said by kind above
      auto b = counter(*t, k::kBefore, name), a = counter(*t, k::kAfter, name);
      if (a && b && *a > *b) notes.push_back(fmt::format("{} grew by {}", name, *a - *b));
    }
  }
  for (const auto& x : in.xids)
    if (std::find(std::begin(kFleetXids), std::end(kFleetXids), x.code) == std::end(kFleetXids))
      notes.push_back(fmt::format("Xid {} (not in the fleet list):{}", x.code, x.detail));
  return notes;
}

// "the stress child was stopped by SIGTERM while gpucheck was not: memory, copy did not run".
std::string stopped_alone_detail(const VerdictInput& in) {
  std::vector<std::string> not_run;
  for (const auto& test : in.planned_tests)
    if (std::none_of(in.records.begin(), in.records.end(), [&](const Json& r) {
          return r.is_object() && r.value(std::string(k::kTest), "") == test;
        }))
      not_run.push_back(test);
  std::string detail = fmt::format(
      "the stress child was stopped by {} while gpucheck was not (a signal sent to the child "
      "alone)",
      *in.stopped_alone);
  if (!not_run.empty())
    detail += fmt::format(": {} did not run", join(not_run, ", "));
  else
    detail += ": its tests ended early";
  return detail;
}

}  // namespace

DeviceVerdict judge_device(const VerdictInput& in, const VerdictLimits& limits) {
  DeviceVerdict v;
  const Json* t = in.telemetry && in.telemetry->is_object() ? &*in.telemetry : nullptr;
  if (in.child_failure) {
    v.rules.push_back({"started", "fail", *in.child_failure});
  } else if (in.stopped_alone) {
    v.rules.push_back({"started", "fail", stopped_alone_detail(in)});
  } else {
    v.rules.push_back({"started", "pass", "the device opened and its run ended normally"});
  }
  if (in.child_failure && in.records.empty()) {
    // Nothing ran: the other rules cannot be judged.
  } else {
    v.rules.push_back(rule_results(in));
  }
  v.rules.push_back(rule_xid(in));
  // Telemetry rules for devices that have telemetry (a CPU's summary holds no sample).
  if (in.telemetry_expected || (t != nullptr && t->value(std::string(k::kSamples), 0) > 0)) {
    v.rules.push_back(rule_ecc(t));
    v.rules.push_back(rule_remap(t));
    v.rules.push_back(rule_thermal(t));
    v.rules.push_back(rule_power_brake(t));
    v.rules.push_back(rule_clock_floor(in, t, limits.clock_floor));
  }
  v.rules.push_back(rule_windows(in, limits.window_drop));
  for (const auto& r : v.rules)
    if (r.status == "fail") v.reasons.push_back(r.id + ": " + r.detail);
  v.pass = v.reasons.empty();
  v.notes = notes_of(in, t);
  return v;
}

Json to_json(const DeviceVerdict& v) {
  Json checks = Json::array();
  for (const auto& r : v.rules)
    checks.push_back({{k::kId, r.id}, {k::kStatus, r.status}, {k::kDetail, r.detail}});
  return {{k::kVerdict, v.pass ? "pass" : "fail"},
          {k::kReasons, v.reasons},
          {k::kChecks, checks},
          {k::kNotes, v.notes}};
}

}  // namespace gpucheck::stress

// Flattening the document into sections for the table, markdown and CSV writers.
#include "report/view_model.h"

#include "report/fleet.h"

#include "core/json_keys.h"
#include "core/shape_text.h"
#include "report/multigpu_tables.h"
#include "report/stress_view.h"
#include "report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

namespace gpucheck::report {

namespace k = keys;

namespace {

void flatten(const nlohmann::json& v, const std::string& prefix,
             std::vector<std::pair<std::string, std::string>>& rows) {
  if (v.is_object()) {
    for (const auto& [key, child] : v.items())
      flatten(child, prefix.empty() ? key : prefix + "." + key, rows);
    return;
  }
  if (v.is_array()) {
    bool scalars = true;
    for (const auto& e : v) scalars = scalars && !e.is_structured();
    if (scalars) {
      rows.emplace_back(prefix, scalar_text(v));
      return;
    }
    for (std::size_t i = 0; i < v.size(); ++i)
      flatten(v[i], fmt::format("{}[{}]", prefix, i), rows);
    return;
  }
  rows.emplace_back(prefix, scalar_text(v));
}

KeyValueSection facts_section(const std::string& title, const nlohmann::json& v) {
  KeyValueSection s{title, {}};
  flatten(v, "", s.rows);
  return s;
}

std::string str_or(const nlohmann::json& obj, std::string_view key, const std::string& dflt = "") {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return dflt;
  return scalar_text(*it);
}

TableSection results_table(const nlohmann::json& results) {
  TableSection t{"results",
                 {"device", "op", "impl", "dtype", "shape", "transfers", "status", "median time",
                  "throughput", "of limit", "speedup vs CPU", "max rel. error", "note"},
                 {}};
  // The units the terminal's tables use (report/units.h): CSV and JSON keep the base units.
  for (const auto& r : results) {
    std::string median, throughput, speedup, err;
    if (auto ts = r.find(k::kTimeS);
        ts != r.end() && ts->contains(k::kMedian) && (*ts)[k::kMedian].is_number())
      median = format_seconds((*ts)[k::kMedian].get<double>());
    if (auto tp = r.find(k::kThroughput);
        tp != r.end() && tp->contains(k::kValue) && (*tp)[k::kValue].is_number())
      throughput = format_rate((*tp)[k::kValue].get<double>(), str_or(*tp, k::kUnit));
    if (auto sp = r.find(k::kSpeedupVsCpu); sp != r.end() && sp->is_number())
      speedup = format_speedup(sp->get<double>());
    // null: unbounded (NaN, Inf or a poisoned element found), as a mismatch record says
    if (auto v = r.find(k::kVerification); v != r.end() && v->contains(k::kMaxRelError))
      err = (*v)[k::kMaxRelError].is_number()
                ? fmt::format("{:.2g}", (*v)[k::kMaxRelError].get<double>())
                : "unbounded";
    std::string shape = r.contains(k::kShape) ? shape_text(r[k::kShape]) : "";
    t.rows.push_back({str_or(r, k::kDevice), str_or(r, k::kOp), str_or(r, k::kImpl),
                      str_or(r, k::kDtype), shape, str_or(r, k::kTransfers), str_or(r, k::kStatus),
                      median, throughput, limit_share(r), speedup, err, str_or(r, k::kReason)});
  }
  return t;
}

// Doctor's checks, one a row; the status upper-cased as people read it (PASS, WARN, ...).
// bench's sizes chosen per device when no size was asked for: a row per device and op, and why.
TableSection default_sizes_table(const nlohmann::json& chosen) {
  TableSection t{"sizes chosen for each device", {"device", "op", "sizes", "why"}, {}};
  for (const auto& [device, ops] : chosen.items()) {
    if (!ops.is_object()) continue;
    for (const auto& [op, entry] : ops.items())
      if (entry.is_object())
        t.rows.push_back({device, op,
                          scalar_text(entry.value(std::string(k::kSizes), nlohmann::json::array())),
                          str_or(entry, k::kWhy)});
  }
  return t;
}

TableSection checks_table(const nlohmann::json& checks) {
  TableSection t{
      "checks", {"id", "status", "code", "action", "recovery_action", "finding", "fix"}, {}};
  for (const auto& c : checks) {
    std::string status = str_or(c, k::kStatus);
    for (char& ch : status) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    t.rows.push_back({str_or(c, k::kId), status, str_or(c, k::kCode), str_or(c, k::kAction),
                      str_or(c, k::kRecoveryAction), str_or(c, k::kFinding), str_or(c, k::kFix)});
  }
  return t;
}

// A sweep's break-even sizes, one row per device, dtype, layout and transfers.
TableSection sweep_table(const nlohmann::json& sweep) {
  TableSection t{"sweep " + str_or(sweep, k::kOp),
                 {"device", "dtype", "layout", "transfers", "sizes_measured", "break_even"},
                 {}};
  for (const auto& s : sweep.value(std::string(k::kSeries), nlohmann::json::array())) {
    std::size_t measured = 0;
    for (const auto& p : s.value(std::string(k::kPoints), nlohmann::json::array()))
      measured += p.contains(k::kBeatsCpu) ? 1 : 0;
    std::string be = str_or(s, k::kBreakEven);
    t.rows.push_back(
        {str_or(s, k::kDevice), str_or(s, k::kDtype), str_or(s, k::kLayout),
         str_or(s, k::kTransfers), fmt::format("{}", measured),
         be.empty() ? "none in range" : be + " (" + str_or(sweep, k::kParameter) + ")"});
  }
  return t;
}

// qualify's verdicts, one a row, upper-cased as people read them (MET, UNMET, SKIP).
TableSection verdicts_table(const nlohmann::json& qualify) {
  TableSection t{"verdicts",
                 {"id", "device", "requirement", "measured", "threshold", "verdict", "reason"},
                 {}};
  for (const auto& v : qualify.value(std::string(k::kVerdicts), nlohmann::json::array())) {
    std::string unit = str_or(v, k::kUnit);
    auto with_unit = [&](std::string_view key) {
      std::string s = str_or(v, key);
      return s.empty() || unit.empty() || !v[key].is_number() ? s : s + " " + unit;
    };
    std::string verdict = str_or(v, k::kVerdict);
    for (char& ch : verdict) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    t.rows.push_back({str_or(v, k::kId), str_or(v, k::kDevice), str_or(v, k::kRequirement),
                      with_unit(k::kMeasured), with_unit(k::kThreshold), verdict,
                      str_or(v, k::kReason)});
  }
  return t;
}

// report compare's rows: the matched cell, both values, the change and the verdict.
// The answer first: regressions, then library changes, improvements, noise, missing and new
// cells, the SAME rows last; base and new in the units people read.
TableSection comparison_table(const nlohmann::json& comparison) {
  TableSection t{"comparison",
                 {"verdict", "device", "op", "impl", "dtype", "shape", "transfers", "base", "new",
                  "change", "threshold"},
                 {}};
  std::vector<nlohmann::json> rows;
  for (const auto& r : comparison.value(std::string(k::kRows), nlohmann::json::array()))
    rows.push_back(r);
  static const std::vector<std::string> kOrder{"regression", "changed", "improvement", "noisy",
                                               "missing",    "new",     "same"};
  const auto rank = [](const nlohmann::json& r) {
    const auto it = std::find(kOrder.begin(), kOrder.end(), str_or(r, k::kVerdict));
    return it - kOrder.begin();
  };
  std::stable_sort(rows.begin(), rows.end(),
                   [&](const auto& a, const auto& b) { return rank(a) < rank(b); });
  for (const auto& r : rows) {
    auto pct = [&](std::string_view key) {
      auto it = r.find(key);
      return it == r.end() || !it->is_number() ? std::string()
                                               : fmt::format("{:+.1f}%", it->get<double>() * 100);
    };
    std::string verdict = str_or(r, k::kVerdict);
    for (char& ch : verdict) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    const auto measure = [&](std::string_view key) {
      auto it = r.find(key);
      return it == r.end() || !it->is_number()
                 ? std::string()
                 : format_measure(it->get<double>(), str_or(r, k::kUnit));
    };
    t.rows.push_back({verdict, str_or(r, k::kDevice), str_or(r, k::kOp), str_or(r, k::kImpl),
                      str_or(r, k::kDtype), r.contains(k::kShape) ? shape_text(r[k::kShape]) : "",
                      str_or(r, k::kTransfers), measure(k::kBase), measure(k::kNew),
                      pct(k::kChange),
                      pct(k::kThreshold).substr(pct(k::kThreshold).empty() ? 0 : 1)});
  }
  return t;
}

}  // namespace

std::string scalar_text(const nlohmann::json& v) {
  switch (v.type()) {
    case nlohmann::json::value_t::string:
      return v.get<std::string>();
    case nlohmann::json::value_t::boolean:
      return v.get<bool>() ? "true" : "false";
    case nlohmann::json::value_t::number_integer:
      return fmt::format("{}", v.get<std::int64_t>());
    case nlohmann::json::value_t::number_unsigned:
      return fmt::format("{}", v.get<std::uint64_t>());
    case nlohmann::json::value_t::number_float:
      return fmt::format("{:.6g}", v.get<double>());
    case nlohmann::json::value_t::null:
      return "";
    case nlohmann::json::value_t::array: {
      std::string out;
      for (const auto& e : v) {
        if (!out.empty()) out += ", ";
        out += e.is_structured() ? e.dump() : scalar_text(e);
      }
      return out;
    }
    default:
      return v.dump();
  }
}

ViewModel make_view_model(const nlohmann::json& doc) {
  ViewModel vm;
  const bool probe = doc.value(std::string(k::kCommand), "") == "probe";
  // doctor's JSON carries the probe's backend facts it judged; its table shows the checks.
  // qualify's too: its tables are the verdicts, results and checks.
  const bool doctor = doc.value(std::string(k::kCommand), "") == "doctor" ||
                      doc.value(std::string(k::kCommand), "") == "qualify";
  for (auto section : {k::kProvenance, k::kHost, k::kCpu, k::kMemory}) {
    if (!doc.contains(section)) continue;
    nlohmann::json facts = doc[section];
    // The raw flag list is for machines (JSON); people read the isa.* summary. Other commands
    // than probe show only what identifies the machine.
    if (section == k::kCpu) {
      facts.erase(std::string(k::kFlags));
      if (!probe) facts.erase(std::string(k::kCaches));
    }
    if (section == k::kProvenance && !probe) facts.erase(std::string(k::kEnvironment));
    vm.facts.push_back(facts_section(std::string(section), facts));
  }
  if (doc.contains(k::kBackends) && !doctor) {
    for (const auto& b : doc[k::kBackends]) {
      nlohmann::json summary = b;
      summary.erase(std::string(k::kDevices));
      std::string name = str_or(b, k::kName, "?");
      vm.facts.push_back(facts_section("backend " + name, summary));
      for (const auto& d : b.value(std::string(k::kDevices), nlohmann::json::array()))
        vm.facts.push_back(facts_section("device " + str_or(d, k::kDevice, "?"), d));
    }
  }
  if (doc.contains(k::kResults)) {
    vm.tables.push_back(results_table(doc[k::kResults]));
    for (auto& t : multigpu_tables(doc[k::kResults])) vm.tables.push_back(std::move(t));
  }
  // After the results: the CSV view writes the first table.
  if (auto chosen = doc.find(k::kDefaultSizes);
      chosen != doc.end() && chosen->is_object() && !chosen->empty())
    vm.tables.push_back(default_sizes_table(*chosen));
  if (probe && doc.contains(k::kBackends))
    for (auto& t : topology_tables(doc[k::kBackends])) vm.tables.push_back(std::move(t));
  if (doc.contains(k::kChecks)) vm.tables.push_back(checks_table(doc[k::kChecks]));
  if (doc.contains(k::kSweep)) vm.tables.push_back(sweep_table(doc[k::kSweep]));
  // First: qualify's answer, and the table the CSV view writes.
  if (doc.contains(k::kQualify))
    vm.tables.insert(vm.tables.begin(), verdicts_table(doc[k::kQualify]));
  if (doc.contains(k::kComparison)) vm.tables.push_back(comparison_table(doc[k::kComparison]));
  if (doc.contains(k::kStress)) {  // first: the verdicts, and the table the CSV view writes
    vm.tables.insert(vm.tables.begin(), stress_reasons_table(doc[k::kStress]));
    vm.tables.insert(vm.tables.begin(), stress_table(doc[k::kStress]));
  }
  if (doc.contains(k::kFleet))
    for (auto& t : fleet_tables(doc[k::kFleet])) vm.tables.push_back(std::move(t));
  return vm;
}

}  // namespace gpucheck::report

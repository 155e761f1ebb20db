// Matching records of two documents and judging each pair against the tolerance and the runs'
// own spread (benchmark's compare.py and clpeak --compare do the same with a fixed tolerance).
#include "report/compare.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <vector>

namespace gpucheck::report {

namespace k = keys;

namespace {

std::string str(const nlohmann::json& r, std::string_view key) {
  auto it = r.find(key);
  return it != r.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The device as matched: UUID, else PCI bus id, else name (or name alone with --match name).
std::string device_key(const nlohmann::json& r, bool by_name) {
  for (auto key : {k::kDeviceUuid, k::kPciBusId}) {
    if (by_name) break;
    if (std::string v = str(r, key); !v.empty()) return v;
  }
  if (std::string v = str(r, k::kDeviceName); !v.empty()) return v;
  return str(r, k::kDevice);
}

// A record measured beside other GPUs (bench's concurrent children) is compared only with one
// measured beside others too, and a lone one with a lone one: a shared host or power budget
// moves the figures.
bool ran_concurrently(const nlohmann::json& r) {
  auto it = r.find(k::kConcurrentWith);
  return it != r.end() && it->is_array() && !it->empty();
}

// Tuned parameters (issue 20) are compared only with tuned ones: "tuned" for a record whose
// context says tuned or cached (the same search's winner), "" for the library's defaults and
// for records that predate tuning (they ran the defaults too).
std::string tuning_class(const nlohmann::json& r) {
  auto ctx = r.find(k::kContext);
  if (ctx == r.end() || !ctx->is_object()) return "";
  const std::string t = str(*ctx, k::kTuning);
  return t == "tuned" || t == "cached" ? "tuned" : "";
}

std::string match_key(const nlohmann::json& r, bool by_name) {
  return nlohmann::json::array({str(r, k::kBackend), device_key(r, by_name), str(r, k::kOp),
                                str(r, k::kImpl), str(r, k::kDtype),
                                r.value(std::string(k::kShape), nlohmann::json()),
                                str(r, k::kTransfers), ran_concurrently(r), tuning_class(r)})
      .dump();
}

bool is_time_metric(const nlohmann::json& r) {
  return str(r, k::kOp) == "latency";
}

std::optional<double> metric(const nlohmann::json& r) {
  if (str(r, k::kStatus) != "ok") return std::nullopt;
  const nlohmann::json* v = nullptr;
  if (is_time_metric(r)) {
    if (auto t = r.find(k::kTimeS); t != r.end())
      v = t->contains(k::kMedian) ? &(*t)[k::kMedian] : nullptr;
  } else if (auto tp = r.find(k::kThroughput); tp != r.end()) {
    v = tp->contains(k::kValue) ? &(*tp)[k::kValue] : nullptr;
  }
  if (!v || !v->is_number() || !(v->get<double>() > 0)) return std::nullopt;
  return v->get<double>();
}

// The relative stddev of the record's central value: the repetitions' stddev over √reps, over
// the median. A preempted repetition only ever adds time, so the stddev is capped at
// median − min: one repetition stalled for 100 ms among thousands of 1 ms ones says nothing
// about how well the median is known, yet alone it would make the threshold hide a 3x slowdown.
double relative_stddev(const nlohmann::json& r) {
  auto t = r.find(k::kTimeS);
  if (t == r.end() || !t->contains(k::kStddev) || !t->contains(k::kMedian)) return 0;
  double median = (*t)[k::kMedian].get<double>();
  double stddev = (*t)[k::kStddev].get<double>();
  if (t->contains(k::kMin))
    stddev = std::min(stddev, std::max(0.0, median - (*t)[k::kMin].get<double>()));
  double reps = t->contains(k::kReps) ? std::max(1.0, (*t)[k::kReps].get<double>()) : 1.0;
  return median > 0 ? stddev / std::sqrt(reps) / median : 0;
}

nlohmann::json row_of(const nlohmann::json& r, bool by_name) {
  nlohmann::json row = {
      {k::kBackend, str(r, k::kBackend)},
      {k::kDevice, device_key(r, by_name)},
      {k::kOp, str(r, k::kOp)},
      {k::kImpl, str(r, k::kImpl)},
      {k::kShape, r.value(std::string(k::kShape), nlohmann::json::object())},
      {k::kTransfers, r.value(std::string(k::kTransfers), "excluded")},
      {k::kMetric, is_time_metric(r) ? "time" : "throughput"},
      {k::kUnit, is_time_metric(r) ? std::string("s")
                                   : r.value(std::string(k::kThroughput), nlohmann::json::object())
                                         .value(std::string(k::kUnit), "")}};
  if (std::string name = str(r, k::kDeviceName); !name.empty()) row[k::kDeviceName] = name;
  if (std::string dtype = str(r, k::kDtype); !dtype.empty()) row[k::kDtype] = dtype;
  if (std::string tuning = tuning_class(r); !tuning.empty()) row[k::kTuning] = tuning;
  return row;
}

nlohmann::json value_or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json judge_pair(const nlohmann::json& b, const nlohmann::json& n,
                          const CompareOptions& o) {
  nlohmann::json row = row_of(b, o.match_by_name);
  if (row[k::kUnit] == "") row[k::kUnit] = row_of(n, o.match_by_name)[k::kUnit];
  auto mb = metric(b), mn = metric(n);
  row[k::kBase] = value_or_null(mb);
  row[k::kNew] = value_or_null(mn);
  if (!mb || !mn) {
    row[k::kChange] = nullptr;
    row[k::kThreshold] = nullptr;
    // A record that stopped working is a regression; one that started is an improvement.
    row[k::kVerdict] = mb ? "regression" : mn ? "improvement" : "same";
    row[k::kReason] = fmt::format("status {} -> {}", str(b, k::kStatus), str(n, k::kStatus));
    return row;
  }
  double change = *mn / *mb - 1;
  double spread = std::hypot(relative_stddev(b), relative_stddev(n));
  double threshold = std::max(o.tolerance, 2 * spread);
  double better = is_time_metric(b) ? -change : change;  // positive: the new run is better
  row[k::kChange] = change;
  row[k::kThreshold] = threshold;
  row[k::kVerdict] = better < -threshold  ? "regression"
                     : better > threshold ? "improvement"
                                          : "same";
  return row;
}

}  // namespace

std::optional<double> parse_tolerance(std::string_view text) {
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  bool percent = !text.empty() && text.back() == '%';
  if (percent) text.remove_suffix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  double v = 0;
  auto r = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || !(v >= 0) ||
      !std::isfinite(v))
    return std::nullopt;
  return percent ? v / 100 : v;
}

nlohmann::json compare_results(const nlohmann::json& base_results,
                               const nlohmann::json& new_results, const CompareOptions& o) {
  // Records with the same key pair up in order of appearance.
  std::map<std::string, std::vector<std::size_t>> unmatched_new;
  for (std::size_t i = 0; i < new_results.size(); ++i)
    unmatched_new[match_key(new_results[i], o.match_by_name)].push_back(i);
  std::vector<bool> used(new_results.size(), false);
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& b : base_results) {
    auto& candidates = unmatched_new[match_key(b, o.match_by_name)];
    if (candidates.empty()) {
      nlohmann::json row = row_of(b, o.match_by_name);
      row[k::kBase] = value_or_null(metric(b));
      row[k::kNew] = nullptr;
      row[k::kVerdict] = "missing";
      row[k::kReason] = "no record of this cell in the new document";
      rows.push_back(row);
      continue;
    }
    std::size_t i = candidates.front();
    candidates.erase(candidates.begin());
    used[i] = true;
    rows.push_back(judge_pair(b, new_results[i], o));
  }
  for (std::size_t i = 0; i < new_results.size(); ++i) {
    if (used[i]) continue;
    nlohmann::json row = row_of(new_results[i], o.match_by_name);
    row[k::kBase] = nullptr;
    row[k::kNew] = value_or_null(metric(new_results[i]));
    row[k::kVerdict] = "new";
    row[k::kReason] = "no record of this cell in the base document";
    rows.push_back(row);
  }
  nlohmann::json summary = {
      {"same", 0}, {"regression", 0}, {"improvement", 0}, {"missing", 0}, {"new", 0}};
  for (const auto& r : rows)
    summary[r[k::kVerdict].get<std::string>()] =
        summary[r[k::kVerdict].get<std::string>()].get<int>() + 1;
  nlohmann::json out = {{k::kTolerance, o.tolerance},
                        {k::kMatch, o.match_by_name ? "name" : "id"},
                        {k::kFailOnMissing, o.fail_on_missing},
                        {k::kSummary, summary},
                        {k::kRows, rows}};
  std::string verdict = summary["regression"].get<int>() > 0                     ? "regression"
                        : o.fail_on_missing && summary["missing"].get<int>() > 0 ? "missing"
                                                                                 : "ok";
  out[k::kVerdict] = verdict;
  return out;
}

bool comparison_failed(const nlohmann::json& comparison) {
  return comparison.value(std::string(k::kVerdict), "ok") != "ok";
}

}  // namespace gpucheck::report

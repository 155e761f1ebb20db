// Matching records of base documents and a new one, and judging each cell against the
// tolerance, the runs' own spread and a rank test (benchmark's compare.py runs the same test
// beside the relative change; clpeak --compare uses a fixed tolerance alone).
#include "report/compare.h"

#include "core/backend_descriptors.h"
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "report/rank_test.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <unordered_map>

namespace gpucheck::report {

namespace k = keys;

namespace {

std::optional<double> num(const nlohmann::json& o, std::string_view key) {
  auto it = o.find(key);
  if (it == o.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// The device as matched: UUID, else PCI bus id, else name (or name alone with --match name).
std::string device_key(const nlohmann::json& r, bool by_name) {
  if (!by_name)
    for (auto key : {k::kDeviceUuid, k::kPciBusId})
      if (std::string v = string_member(r, key); !v.empty()) return v;
  if (std::string v = string_member(r, k::kDeviceName); !v.empty()) return v;
  return string_member(r, k::kDevice);
}

// Times (seconds) of a record in the metric's unit: a throughput scales as 1 / time.
double in_metric(const CompareRecord& c, double median_time, double t) {
  return c.time_metric ? t : *c.metric * median_time / t;
}

// A record measured beside other GPUs (bench's concurrent children) is compared only with one
// measured beside others too, and a lone one with a lone one: a shared host or power budget
// moves the figures.
bool ran_concurrently(const nlohmann::json& r) {
  auto it = r.find(k::kConcurrentWith);
  return it != r.end() && it->is_array() && !it->empty();
}

// Tuned GEMM parameters are compared only with tuned ones: "tuned" for a record whose
// context says tuned or cached (the same search's winner), "" for the library's defaults and
// for records that predate tuning (they ran the defaults too).
std::string tuning_class(const nlohmann::json& r) {
  auto ctx = r.find(k::kContext);
  if (ctx == r.end() || !ctx->is_object()) return "";
  const std::string t = string_member(*ctx, k::kTuning);
  return t == "tuned" || t == "cached" ? "tuned" : "";
}

void set_range(CompareRecord& c, const nlohmann::json& time) {
  c.lo = c.hi = *c.metric;
  auto median = num(time, k::kMedian);
  if (!median || !(*median > 0)) return;
  auto widen = [&](double t) {
    if (!(t > 0) || !std::isfinite(t)) return;
    const double v = in_metric(c, *median, t);
    c.lo = std::min(c.lo, v);
    c.hi = std::max(c.hi, v);
  };
  auto rounds = time.find(k::kRoundMedians);
  if (rounds != time.end() && rounds->is_array() && rounds->size() > 1) {
    for (const auto& t : *rounds)
      if (t.is_number()) widen(t.get<double>());
    return;
  }
  // No rounds (an older document, or --rounds 1): the repetitions' stddev, capped at median −
  // min, since a preempted repetition only adds time and says nothing about the median.
  auto sd = num(time, k::kStddev);
  if (!sd) return;
  double s = *sd;
  if (auto min = num(time, k::kMin)) s = std::min(s, std::max(0.0, *median - *min));
  widen(*median + s);
  widen(std::max(*median - s, *median * 1e-3));
}

nlohmann::json value_or_null(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json();
}

nlohmann::json row_of(const CompareRecord& r) {
  nlohmann::json row = {{k::kBackend, r.backend},
                        {k::kDevice, r.device},
                        {k::kOp, r.op},
                        {k::kImpl, r.impl},
                        {k::kShape, r.shape},
                        {k::kTransfers, r.transfers},
                        {k::kMetric, r.time_metric ? "time" : "throughput"},
                        {k::kUnit, r.unit}};
  if (!r.device_name.empty() && r.device_name != r.device) row[k::kDeviceName] = r.device_name;
  if (!r.dtype.empty()) row[k::kDtype] = r.dtype;
  if (!r.tuning.empty()) row[k::kTuning] = r.tuning;
  if (!r.choice.empty()) row[k::kChoice] = r.choice;
  return row;
}

// "cudnn engine 7 ..." from the record's choice object; "" when it names none.
std::string choice_of(const nlohmann::json& r) {
  auto c = r.find(k::kChoice);
  if (c == r.end() || !c->is_object()) return "";
  const std::string library = string_member(*c, k::kLibrary), id = string_member(*c, k::kId);
  return library.empty() || id.empty() ? "" : library + " " + id;
}

std::string pct(double v) {
  return fmt::format("{:.1f} %", v * 100);
}

class Judge {
 public:
  explicit Judge(const CompareOptions& o) : o_(o) {}

  nlohmann::json operator()(const std::vector<const CompareRecord*>& bases,
                            const CompareRecord& n) {
    nlohmann::json row = row_of(*bases.front());
    if (row[k::kUnit] == "") row[k::kUnit] = n.unit;
    row[k::kBaseRecords] = bases.size();
    std::vector<double> base_metrics;
    for (const auto* b : bases)
      if (b->metric) base_metrics.push_back(*b->metric);
    const CompareRecord& latest = *bases.back();
    if (latest.limit_fraction) row[k::kBaseFractionOfLimit] = *latest.limit_fraction;
    if (n.limit_fraction) row[k::kNewFractionOfLimit] = *n.limit_fraction;
    if (base_metrics.empty() || !n.metric) {
      row[k::kBase] =
          base_metrics.empty() ? nlohmann::json() : nlohmann::json(median(base_metrics));
      row[k::kNew] = value_or_null(n.metric);
      row[k::kChange] = nullptr;
      row[k::kThreshold] = nullptr;
      // A record that stopped working is a regression; one that started is an improvement.
      row[k::kVerdict] = !base_metrics.empty() ? "regression" : n.metric ? "improvement" : "same";
      row[k::kReason] = fmt::format("status {} -> {}", latest.status, n.status);
      return row;
    }
    const double mb = median(base_metrics), mn = *n.metric;
    std::vector<double> base_times;
    for (const auto* b : bases)
      if (b->metric && b->median_s) base_times.push_back(*b->median_s);
    double band_lo = mb, band_hi = mb;
    std::vector<double> base_samples, new_samples(n.samples.begin(), n.samples.end());
    for (const auto* b : bases) {
      if (!b->metric) continue;
      band_lo = std::min(band_lo, b->lo);
      band_hi = std::max(band_hi, b->hi);
      base_samples.insert(base_samples.end(), b->samples.begin(), b->samples.end());
    }
    const double change = mn / mb - 1;
    // A launch-bound GPU record: an absolute allowance in time stands in for the tolerance.
    double tolerance = o_.tolerance;
    const bool launch_bound = !backend_is_host_cpu(n.backend) && !base_times.empty() &&
                              median(base_times) < kLaunchBoundFloorS;
    if (launch_bound) {
      // |new time - base time| > allowance, as a change of the metric: a throughput changes by
      // base/new - 1, so by the allowance over the new time; a time by the allowance over the
      // base's.
      const double over = n.time_metric || !n.median_s ? median(base_times) : *n.median_s;
      tolerance = kLaunchBoundAllowanceS / over;
      row[k::kAllowanceS] = kLaunchBoundAllowanceS;
    }
    // The medians must differ by more than the base band and the new run's range together: the
    // two ranges then lie apart with room to spare. (Merely apart is too little: three rounds
    // a side fall apart by chance once in ten, in one direction or the other.) The band holds
    // every base's median, so with several bases their spread between runs is in it; a single
    // base cannot show that spread, and its kind's measured allowance stands in.
    double threshold = std::max(tolerance, ((band_hi - band_lo) + (n.hi - n.lo)) / mb);
    if (base_metrics.size() >= 2) {
      const auto [lo, hi] = std::minmax_element(base_metrics.begin(), base_metrics.end());
      row[k::kBetweenRuns] = (*hi - *lo) / mb;
    } else if (!launch_bound) {
      const double allowance = between_run_allowance(n);
      if (allowance > 0) {
        row[k::kAllowance] = allowance;
        threshold = std::max(threshold, allowance);
      }
    }
    const double spread = (n.hi - n.lo) / mn;
    row[k::kBase] = mb;
    row[k::kNew] = mn;
    row[k::kChange] = change;
    row[k::kThreshold] = threshold;
    row[k::kBand] = (band_hi - band_lo) / mb;
    row[k::kSpread] = spread;

    std::optional<double> p;
    bool test_can_decide = false;
    if (!base_samples.empty() && !n.samples.empty()) {
      p = mw_.p_value(base_samples, new_samples);
      test_can_decide = mw_.min_p(base_samples.size(), n.samples.size()) <= o_.alpha;
    }
    row[k::kPValue] = value_or_null(p);
    const bool beyond = std::abs(change) > threshold;
    const bool test_agrees = !test_can_decide || *p <= o_.alpha;
    const bool better = n.time_metric ? change < 0 : change > 0;
    std::string verdict = "same", reason;
    if (beyond && test_agrees) {
      verdict = better ? "improvement" : "regression";
      reason = fmt::format("{} beyond the threshold {}", pct(change), pct(threshold));
      if (p) reason += fmt::format("; rank test p = {:.2g}", *p);
      if (p && !test_can_decide) reason += " (too few samples to decide)";
    } else if (beyond) {
      reason = fmt::format(
          "{} beyond the threshold {}, but the rank test does not agree "
          "(p = {:.2g} > alpha {})",
          pct(change), pct(threshold), *p, o_.alpha);
    }
    if (verdict == "same" && spread > tolerance) {
      verdict = "noisy";
      reason += fmt::format("{}the new run's own spread {} exceeds the tolerance {}",
                            reason.empty() ? "" : "; ", pct(spread), pct(tolerance));
    }
    if (launch_bound && !reason.empty())
      reason += fmt::format(" (launch-bound: under {:.0f} µs, ±{:.1f} µs allowed)",
                            kLaunchBoundFloorS * 1e6, kLaunchBoundAllowanceS * 1e6);
    // Another engine or algorithm: the figures say what the library's choice did, not what the
    // hardware did.
    // A regression stays one whatever the library chose: a CI gate fails a slowdown beyond
    // the threshold even when the choice moved with it (--fail-on-changed fails the rest).
    if (!latest.choice.empty() && !n.choice.empty() && latest.choice != n.choice) {
      reason = fmt::format("the library chose {} (base: {}); {}", n.choice, latest.choice,
                           verdict == "same" ? "figures within the threshold"
                                             : fmt::format("{}, {}", verdict, reason));
      if (verdict != "regression") verdict = "changed";
      row.erase(k::kChoice);
      row[k::kBaseChoice] = latest.choice;
      row[k::kNewChoice] = n.choice;
    } else if (!n.choice.empty()) {
      row[k::kChoice] = n.choice;
    }
    row[k::kVerdict] = verdict;
    // A plain SAME needs no words beyond its change and threshold (250,000 rows add up).
    if (!reason.empty()) row[k::kReason] = reason;
    return row;
  }

 private:
  static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  }

  const CompareOptions& o_;
  MannWhitney mw_;
};

std::vector<CompareRecord> records_of(const nlohmann::json& results, RecordReader& read) {
  std::vector<CompareRecord> out;
  if (!results.is_array()) return out;
  out.reserve(results.size());
  for (const auto& r : results) out.push_back(read(r));
  return out;
}

}  // namespace

double between_run_allowance(const CompareRecord& r) {
  // The most any record of the kind moved between two of ten identical runs on an H200
  // (docs/PERFORMANCE.md), rounded up: cuDNN convolutions on resident data up to 15.7 % (the
  // same engine in every run: f16 NCHW 8x64x56x56 at 29–34 µs), copies through pageable host
  // memory 16.7 %, GEMM with its copies 5.9 %; the rest stayed inside the 5 % tolerance.
  if (r.backend != "cuda") return 0;
  const bool included = r.transfers == "included";
  if (r.op == "conv" && !included) return 0.16;
  if (r.op == "copy" && r.shape.is_object() && r.shape.value("host_memory", "") == "pageable")
    return 0.17;
  if (r.op == "gemm" && included) return 0.06;
  return 0;
}

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
  if (!percent && v >= 1) return std::nullopt;
  return percent ? v / 100 : v;
}

std::string_view RecordReader::pooled(std::string_view s) {
  return *pool_.emplace(s).first;
}

CompareRecord RecordReader::operator()(const nlohmann::json& r) {
  CompareRecord c;
  if (!r.is_object()) return c;
  c.backend = pooled(string_member(r, k::kBackend));
  c.device = pooled(device_key(r, by_name_));
  c.device_name = pooled(string_member(r, k::kDeviceName));
  c.op = pooled(string_member(r, k::kOp));
  c.impl = pooled(string_member(r, k::kImpl));
  c.dtype = pooled(string_member(r, k::kDtype));
  c.transfers = pooled(r.contains(k::kTransfers) ? string_member(r, k::kTransfers) : "excluded");
  c.status = pooled(string_member(r, k::kStatus));
  c.tuning = pooled(tuning_class(r));
  c.choice = pooled(choice_of(r));
  c.shape = member_or_empty(r, k::kShape);
  c.time_metric = c.op == "latency";
  c.unit =
      pooled(c.time_metric ? "s" : string_member(member_or_empty(r, k::kThroughput), k::kUnit));
  // Fields joined by a separator no name holds; the shape as its canonical dump.
  c.key = fmt::format("{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}\x1f{}", c.backend, c.device,
                      c.op, c.impl, c.dtype, c.shape.dump(), string_member(r, k::kTransfers),
                      ran_concurrently(r) ? "concurrent" : "alone", c.tuning);
  const nlohmann::json& time = member_or_empty(r, k::kTimeS);
  if (c.status == "ok") {
    auto v =
        c.time_metric ? num(time, k::kMedian) : num(member_or_empty(r, k::kThroughput), k::kValue);
    if (v && *v > 0 && std::isfinite(*v)) c.metric = v;
  }
  if (c.metric) {
    set_range(c, time);
    if (auto m = num(time, k::kMedian); m && *m > 0 && std::isfinite(*m)) c.median_s = m;
  }
  if (c.metric) c.limit_fraction = num(member_or_empty(r, k::kLimit), k::kLimitFraction);
  if (auto s = time.find(k::kSamples); s != time.end() && s->is_array())
    for (const auto& t : *s)
      if (t.is_number()) c.samples.push_back(t.get<float>());
  return c;
}

nlohmann::json compare_records(const std::vector<std::vector<CompareRecord>>& bases,
                               const std::vector<CompareRecord>& fresh, const CompareOptions& o) {
  // A cell is its key and the how-many-th record with that key (a size given twice).
  struct Group {
    std::vector<const CompareRecord*> bases;
    const CompareRecord* fresh = nullptr;
    bool done = false;
  };
  std::unordered_map<std::string, Group> groups;
  auto cell_of = [](const CompareRecord& r, std::unordered_map<std::string, int>& seen) {
    return fmt::format("{}#{}", r.key, seen[r.key]++);
  };
  std::vector<std::vector<std::string>> base_cells(bases.size());
  for (std::size_t d = 0; d < bases.size(); ++d) {
    std::unordered_map<std::string, int> seen;
    for (const auto& r : bases[d]) {
      base_cells[d].push_back(cell_of(r, seen));
      groups[base_cells[d].back()].bases.push_back(&r);
    }
  }
  std::vector<std::string> fresh_cells;
  {
    std::unordered_map<std::string, int> seen;
    for (const auto& r : fresh) {
      fresh_cells.push_back(cell_of(r, seen));
      groups[fresh_cells.back()].fresh = &r;
    }
  }
  Judge judge(o);
  nlohmann::json rows = nlohmann::json::array();
  for (std::size_t d = 0; d < bases.size(); ++d) {
    for (const auto& cell : base_cells[d]) {
      Group& g = groups[cell];
      if (g.done) continue;
      g.done = true;
      if (g.fresh) {
        rows.push_back(judge(g.bases, *g.fresh));
        continue;
      }
      const CompareRecord& latest = *g.bases.back();
      nlohmann::json row = row_of(latest);
      row[k::kBase] = value_or_null(latest.metric);
      row[k::kNew] = nullptr;
      row[k::kVerdict] = "missing";
      row[k::kReason] = "no record of this cell in the new document";
      rows.push_back(std::move(row));
    }
  }
  for (std::size_t i = 0; i < fresh.size(); ++i) {
    Group& g = groups[fresh_cells[i]];
    if (g.done) continue;
    g.done = true;
    nlohmann::json row = row_of(fresh[i]);
    row[k::kBase] = nullptr;
    row[k::kNew] = value_or_null(fresh[i].metric);
    row[k::kVerdict] = "new";
    row[k::kReason] = "no record of this cell in the base document";
    rows.push_back(std::move(row));
  }
  std::map<std::string, int> counts{{"same", 0},   {"regression", 0}, {"improvement", 0},
                                    {"noisy", 0},  {"missing", 0},    {"new", 0},
                                    {"changed", 0}};
  for (const auto& r : rows) counts[r[k::kVerdict].get<std::string>()]++;
  nlohmann::json summary = nlohmann::json::object();
  for (const auto& [verdict, n] : counts) summary[verdict] = n;
  std::string verdict = counts["regression"] > 0                     ? "regression"
                        : o.strict && counts["noisy"] > 0            ? "noisy"
                        : o.fail_on_missing && counts["missing"] > 0 ? "missing"
                        : o.fail_on_changed && counts["changed"] > 0 ? "changed"
                                                                     : "ok";
  return {{k::kTolerance, o.tolerance},
          {k::kAlpha, o.alpha},
          {k::kStrict, o.strict},
          {k::kMatch, o.match_by_name ? "name" : "id"},
          {k::kFailOnMissing, o.fail_on_missing},
          {k::kFailOnChanged, o.fail_on_changed},
          {k::kSummary, summary},
          {k::kRows, std::move(rows)},
          {k::kVerdict, verdict}};
}

nlohmann::json compare_results(const std::vector<nlohmann::json>& base_results,
                               const nlohmann::json& new_results, const CompareOptions& o) {
  RecordReader read(o.match_by_name);
  std::vector<std::vector<CompareRecord>> bases;
  for (const auto& b : base_results) bases.push_back(records_of(b, read));
  return compare_records(bases, records_of(new_results, read), o);
}

nlohmann::json compare_results(const nlohmann::json& base_results,
                               const nlohmann::json& new_results, const CompareOptions& o) {
  return compare_results(std::vector<nlohmann::json>{base_results}, new_results, o);
}

bool comparison_failed(const nlohmann::json& comparison) {
  return comparison.value(std::string(k::kVerdict), "ok") != "ok";
}

}  // namespace gpucheck::report

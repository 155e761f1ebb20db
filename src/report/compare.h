// `report compare`: the result records of one or more base documents (a history) and a new
// one, matched by backend, device, op, impl, dtype, full shape, transfers, whether it ran beside
// other GPUs and whether its GEMM was tuned, each judged SAME, REGRESSION, IMPROVEMENT or NOISY,
// CHANGED when the library ran another engine or algorithm than the base's (a REGRESSION stays
// one), and MISSING or NEW
// when unmatched.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace gpucheck::report {

struct CompareOptions {
  double tolerance = 0.05;       // relative
  double alpha = 0.01;           // the rank test's level
  bool match_by_name = false;    // devices by name, not UUID / PCI bus id
  bool fail_on_missing = false;  // a MISSING record fails like a regression
  bool fail_on_changed = false;  // a CHANGED record (another choice, no regression) fails too
  bool strict = false;           // a NOISY record fails like a regression
};

// "5%", "5 %", "0.05" → 0.05; nullopt for anything else, a negative value, or a bare number of
// 1 or more ("5" would mean 500 %: a percentage needs its %).
std::optional<double> parse_tolerance(std::string_view text);

// Below this median time a GPU record is launch-bound: its figure moves by a fixed amount of
// launch and clock jitter, not by a share of its work, so it is judged against an absolute
// allowance (kLaunchBoundAllowanceS) instead of the relative tolerance. Measured on an H200, ten
// back-to-back `bench --size small` runs (docs/PERFORMANCE.md): the records under 20 µs (GEMM
// 512, exp and copies of 1 MiB, launch latency) moved by up to 2.34 µs between runs (GEMM bf16
// 512 at 11–13 µs), 21 % of the fastest.
inline constexpr double kLaunchBoundFloorS = 20e-6;
inline constexpr double kLaunchBoundAllowanceS = 2.5e-6;

struct CompareRecord;

// The relative change identical runs of a kind of record showed between processes (another
// allocation, another clock history) beyond what each run's own rounds show: with a single base
// it is a floor of the threshold. 0 where nothing beyond the tolerance was seen or nothing was
// measured. With two or more bases the spread of their medians is measured instead.
double between_run_allowance(const CompareRecord& r);

// A result record reduced to what the comparison reads, so a document of 250,000 records never
// sits in memory as JSON. The names point into the RecordReader's pool (they repeat).
struct CompareRecord {
  std::string key;  // the match key
  std::string_view backend, device, device_name, op, impl, dtype, transfers, unit, status;
  std::string_view tuning;  // "tuned" (GEMM parameters tuned or cached), else ""
  // "LIBRARY ID" of the record's choice (the cuDNN engine, the cuBLASLt algorithm); "" when the
  // record names none. Not part of the key: another choice is CHANGED, not NEW and MISSING.
  std::string_view choice;
  std::optional<double> median_s;  // time_s.median of an ok record, seconds
  nlohmann::json shape;
  bool time_metric = false;      // latency: lower is better; else throughput, higher is better
  std::optional<double> metric;  // the median throughput (or time) of an ok record
  // The record's own range in the metric's unit: its round medians (bench --rounds), or for a
  // document without rounds the median ± its stddev (capped at median − min); [metric, metric]
  // when nothing says more.
  double lo = 0, hi = 0;
  std::vector<float> samples;            // time_s.samples, seconds (ranks need no more precision)
  std::optional<double> limit_fraction;  // limit.fraction: the share of the hardware's limit
};

// Reduces records, sharing the strings they repeat; it must outlive the records it made.
class RecordReader {
 public:
  explicit RecordReader(bool match_by_name) : by_name_(match_by_name) {}
  CompareRecord operator()(const nlohmann::json& record);

 private:
  std::string_view pooled(std::string_view s);
  bool by_name_;
  std::unordered_set<std::string> pool_;
};

// The "comparison" section without its base/new descriptions: tolerance, alpha, strict, match,
// verdict, summary and one row per matched or unmatched cell (in the first base's order, then
// cells only other bases hold, then NEW ones). A cell is REGRESSION or IMPROVEMENT when its
// change is beyond the tolerance and beyond the width of the base runs' band (their ranges
// together) plus the new run's range, and the Mann-Whitney U test over the kept samples (base
// runs pooled) agrees at alpha (a test that cannot reach alpha with so few samples, or without
// samples, does not veto). Else NOISY when the new run's own range is wider than the
// tolerance, else SAME. For a GPU record whose base median is below kLaunchBoundFloorS the
// tolerance is kLaunchBoundAllowanceS as a change of the metric (the median times must differ
// by more); with a single base the threshold is at least the kind's between_run_allowance. A cell
// whose library choice differs from the latest base's is CHANGED unless its figures are a
// REGRESSION, which stays one (naming both choices); the row keeps its figures.
nlohmann::json compare_records(const std::vector<std::vector<CompareRecord>>& bases,
                               const std::vector<CompareRecord>& fresh,
                               const CompareOptions& options);

// The same from JSON result arrays: one base, or several.
nlohmann::json compare_results(const nlohmann::json& base_results,
                               const nlohmann::json& new_results, const CompareOptions& options);
nlohmann::json compare_results(const std::vector<nlohmann::json>& base_results,
                               const nlohmann::json& new_results, const CompareOptions& options);

// True when the comparison fails: a regression, a NOISY record with strict, a missing record
// with fail_on_missing, or a changed one with fail_on_changed.
bool comparison_failed(const nlohmann::json& comparison);

}  // namespace gpucheck::report

// The table (terminal), markdown and CSV views. Table and markdown print the command's text
// view (text_view.h); CSV writes the document's main table with numbers at full precision and
// their units in columns of their own.
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/json_keys_stress.h"
#include "core/sanitize.h"
#include "core/shape_text.h"
#include "report/fleet.h"
#include "report/render.h"
#include "report/same_gpu.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

std::string render_table(const Json& doc, const RenderOptions& options) {
  return render_text(make_text_view(doc, options), options.width, options.color);
}

std::string render_markdown(const Json& doc, const RenderOptions& options) {
  return view_markdown(make_text_view(doc, options));
}

std::string csv_field(std::string_view raw) {
  // A document may hold any text (a hand-made or older one): ESC and BEL never reach the
  // output raw; line breaks and tabs are CSV's own and are quoted.
  const std::string s = sanitize_keeping(raw, "\t\r\n");
  if (s.find_first_of(",\"\r\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

namespace {

// A number at full precision (shortest text that reads back the same double), else the text.
std::string exact(const Json& obj, std::string_view key) {
  auto it = obj.is_object() ? obj.find(key) : obj.end();
  if (it == obj.end() || it->is_null()) return {};
  if (it->is_number_float()) return fmt::format("{}", it->get<double>());
  return scalar_text(*it);
}

class Csv {
 public:
  void row(const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) out_ += (i ? "," : "") + csv_field(fields[i]);
    out_ += "\r\n";
  }
  std::string text() const { return out_; }

 private:
  std::string out_;
};

std::string results_csv(const Json& results) {
  Csv csv;
  csv.row({"device",
           "device_name",
           "uuid",
           "pci_bus_id",
           "backend",
           "op",
           "impl",
           "dtype",
           "compute_type",
           "shape",
           "transfers",
           "status",
           "time_median",
           "time_min",
           "time_max",
           "time_stddev",
           "time_unit",
           "reps",
           "throughput",
           "throughput_unit",
           "limit",
           "limit_unit",
           "fraction_of_limit",
           "limit_reason",
           "speedup_vs_cpu",
           "baseline_dtype",
           "max_rel_error",
           "tolerance",
           "scaled_from",
           "reason"});
  const GpuMap gpus = GpuMap::from_results(results);
  for (const auto& r : results) {
    const Json& t = member_or_empty(r, k::kTimeS);
    const Json& tp = member_or_empty(r, k::kThroughput);
    const Json& v = member_or_empty(r, k::kVerification);
    const Json& limit = member_or_empty(r, k::kLimit);
    const bool timed = t.contains(k::kMedian);
    csv.row({text_at(r, k::kDevice),
             text_at(r, k::kDeviceName),
             gpus.uuid(text_at(r, k::kDevice)),
             text_at(r, k::kPciBusId),
             text_at(r, k::kBackend),
             text_at(r, k::kOp),
             text_at(r, k::kImpl),
             text_at(r, k::kDtype),
             text_at(r, k::kComputeType),
             r.contains(k::kShape) ? shape_text(r[k::kShape]) : "",
             text_at(r, k::kTransfers),
             text_at(r, k::kStatus),
             exact(t, k::kMedian),
             exact(t, k::kMin),
             exact(t, k::kMax),
             exact(t, k::kStddev),
             timed ? "s" : "",
             exact(t, k::kReps),
             exact(tp, k::kValue),
             text_at(tp, k::kUnit),
             exact(limit, k::kValue),
             text_at(limit, k::kUnit),
             exact(limit, k::kLimitFraction),
             text_at(limit, k::kReason),
             exact(r, k::kSpeedupVsCpu),
             text_at(r, k::kBaselineDtype),
             exact(v, k::kMaxRelError),
             exact(v, k::kTolerance),
             r.contains(k::kScaledFrom) ? shape_text(r[k::kScaledFrom]) : "",
             text_at(r, k::kReason)});
  }
  return csv.text();
}

std::string verdicts_csv(const Json& q) {
  Csv csv;
  csv.row({"id", "kind", "device", "device_name", "requirement", "verdict", "measured", "threshold",
           "unit", "reason", "line"});
  for (const auto& v : member_or_empty(q, k::kVerdicts))
    csv.row({text_at(v, k::kId), text_at(v, k::kKind), text_at(v, k::kDevice),
             text_at(v, k::kDeviceName), text_at(v, k::kRequirement), text_at(v, k::kVerdict),
             exact(v, k::kMeasured), exact(v, k::kThreshold), text_at(v, k::kUnit),
             text_at(v, k::kReason), text_at(v, k::kLine)});
  return csv.text();
}

std::string checks_csv(const Json& checks) {
  Csv csv;
  csv.row({"id", "status", "code", "action", "recovery_action", "finding", "fix", "evidence"});
  for (const auto& c : checks) {
    std::string evidence;
    for (const auto& e : member_or_empty(c, k::kEvidence))
      evidence += (evidence.empty() ? "" : "\n") + scalar_text(e);
    csv.row({text_at(c, k::kId), text_at(c, k::kStatus), text_at(c, k::kCode),
             text_at(c, k::kAction), text_at(c, k::kRecoveryAction), text_at(c, k::kFinding),
             text_at(c, k::kFix), evidence});
  }
  return csv.text();
}

std::string comparison_csv(const Json& comparison) {
  Csv csv;
  csv.row({"backend", "device", "device_name", "op", "impl", "dtype", "shape", "transfers",
           "metric", "base", "new", "unit", "change", "threshold", "verdict", "reason"});
  for (const auto& r : member_or_empty(comparison, k::kRows))
    csv.row({text_at(r, k::kBackend), text_at(r, k::kDevice), text_at(r, k::kDeviceName),
             text_at(r, k::kOp), text_at(r, k::kImpl), text_at(r, k::kDtype),
             r.contains(k::kShape) ? shape_text(r[k::kShape]) : "", text_at(r, k::kTransfers),
             text_at(r, k::kMetric), exact(r, k::kBase), exact(r, k::kNew), text_at(r, k::kUnit),
             exact(r, k::kChange), exact(r, k::kThreshold), text_at(r, k::kVerdict),
             text_at(r, k::kReason)});
  return csv.text();
}

// stress: one row per device and test record (a device that ran none: one row), each with the
// device's verdict and reasons and the run's verdict, so a spreadsheet or a CI script reads the
// outcome without the JSON.
std::string stress_csv(const Json& stress) {
  Csv csv;
  csv.row({"device", "device_name", "uuid", "pci_bus_id", "backend", "verdict", "run_verdict",
           "test", "dtype", "status", "sustained", "min_window", "unit", "burst",
           "sustained_over_burst", "fraction_of_limit", "reason", "device_reasons"});
  const std::string run_verdict = text_at(stress, k::kVerdict);
  for (const auto& d : member_or_empty(stress, k::kDevices)) {
    std::string reasons;
    for (const auto& why : member_or_empty(d, k::kReasons))
      reasons += (reasons.empty() ? "" : "; ") + scalar_text(why);
    const std::vector<std::string> device{text_at(d, k::kDevice),
                                          text_at(d, k::kDeviceName),
                                          text_at(d, k::kDeviceUuid),
                                          text_at(d, k::kPciBusId),
                                          text_at(d, k::kBackend),
                                          text_at(d, k::kVerdict),
                                          run_verdict};
    auto row = [&](std::vector<std::string> record) {
      std::vector<std::string> fields = device;
      fields.insert(fields.end(), record.begin(), record.end());
      fields.push_back(reasons);
      csv.row(fields);
    };
    const Json& records = member_or_empty(d, k::kRecords);
    if (records.empty()) row({"", "", "", "", "", "", "", "", "", ""});
    for (const auto& r : records) {
      const Json& tp = member_or_empty(r, k::kThroughput);
      row({text_at(r, k::kTest), text_at(r, k::kDtype), text_at(r, k::kStatus),
           exact(tp, k::kValue), exact(tp, k::kMinWindow), text_at(tp, k::kUnit),
           exact(tp, k::kBurst), exact(tp, k::kSustainedOverBurst),
           exact(member_or_empty(r, k::kLimit), k::kLimitFraction), text_at(r, k::kReason)});
    }
  }
  return csv.text();
}

}  // namespace

std::string render_csv(const Json& doc) {
  if (doc.contains(k::kQualify)) return verdicts_csv(doc[k::kQualify]);
  if (doc.contains(k::kComparison)) return comparison_csv(doc[k::kComparison]);
  if (doc.contains(k::kResults)) return results_csv(doc[k::kResults]);
  if (doc.contains(k::kChecks)) return checks_csv(doc[k::kChecks]);
  if (doc.contains(k::kStress)) return stress_csv(doc[k::kStress]);
  if (doc.contains(k::kFleet)) {  // the outliers table (report fleet)
    const TableSection outliers = fleet_tables(doc[k::kFleet], FleetNumbers::kExact).front();
    Csv csv;
    csv.row(outliers.columns);
    for (const auto& row : outliers.rows) csv.row(row);
    return csv.text();
  }
  // A probe document: every fact, one row each.
  Csv csv;
  csv.row({"section", "key", "value"});
  for (const auto& s : make_view_model(doc).facts)
    for (const auto& [key, value] : s.rows) csv.row({s.title, key, value});
  return csv.text();
}

}  // namespace gpucheck::report

// `gpucheck report show FILE` renders a saved document in any output format; `gpucheck report
// compare BASE... NEW` compares bench documents' records (exit 1 on a regression).
#include "app/cli_common.h"
#include "core/document.h"
#include "core/files.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "report/compare.h"
#include "report/fleet.h"
#include "report/schema_check.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>

namespace gpucheck::app {

namespace {

namespace k = keys;

struct ReportOptions {
  OutputOptions show_out, compare_out;
  std::string show_path;
  std::vector<std::string> compare_paths;  // BASE... NEW
  std::string tolerance = "5%";
  double alpha = 0.01;
  std::string match = "id";
  bool fail_on_missing = false;
  bool fail_on_changed = false;
  bool strict = false;
  // report fleet: the slow node among many documents
  OutputOptions fleet_out;
  std::vector<std::string> fleet_paths;
  bool fail_on_outlier = false;
  std::vector<std::string> argv;
};

[[noreturn]] void invalid(const std::string& path, const report::SchemaProblem& p) {
  throw UsageError(fmt::format("'{}' is not a valid gpucheck document: at {}: {}", path,
                               p.pointer.empty() ? "/" : p.pointer, p.message));
}

// A saved gpucheck/1 document (a regular file of at most 1 GiB, nested at most 64 levels),
// checked against the schema; anything else is a usage error (exit 2) naming the file and the
// JSON pointer of the first problem. With `records`, each result record is checked and handed
// over as it is parsed and the returned document holds an empty "results".
nlohmann::json load_document(const std::string& path, std::string_view flag,
                             const RecordSink& records = {}) {
  const auto& schema = report::SchemaCheck::gpucheck();
  RecordSink checked;
  if (records)
    checked = [&](std::size_t i, nlohmann::json&& r) {
      if (auto p = schema.first_problem(r, "record", fmt::format("/{}/{}", k::kResults, i)))
        invalid(path, *p);
      records(i, std::move(r));
    };
  nlohmann::json doc =
      read_json_file(path, kMaxDocumentBytes, flag, fmt::format("'{}'", path), checked);
  if (!doc.is_object()) throw UsageError(fmt::format("'{}' is not a JSON object", path));
  auto tag = doc.find(k::kSchema);
  if (tag == doc.end() || !tag->is_string())
    throw UsageError(fmt::format("'{}' is not a gpucheck document (no \"schema\")", path));
  if (*tag != k::kSchemaVersion)
    throw UsageError(fmt::format("'{}' has schema '{}'; this gpucheck reads {} only", path,
                                 tag->get<std::string>(), k::kSchemaVersion));
  if (auto p = schema.first_problem(doc)) invalid(path, *p);
  return doc;
}

nlohmann::json describe(const std::string& path, const nlohmann::json& doc) {
  nlohmann::json d = {{k::kPath, path}};
  if (doc.contains(k::kCommand)) d[k::kCommand] = doc[k::kCommand];
  if (auto p = doc.find(k::kProvenance); p != doc.end() && p->is_object()) {
    if (p->contains(k::kTime)) d[k::kTime] = (*p)[k::kTime];
    if (p->contains(k::kGitCommit)) d[k::kGitCommit] = (*p)[k::kGitCommit];
  }
  return d;
}

const nlohmann::json& results_of(const nlohmann::json& doc, const std::string& path) {
  auto it = doc.find(k::kResults);
  if (it == doc.end() || !it->is_array())
    throw UsageError(fmt::format("'{}' holds no bench results", path));
  return *it;
}

ExitCode run_show(const ReportOptions& o) {
  Output output(o.show_out);
  nlohmann::json doc = load_document(o.show_path, "report show");
  output.write(doc);
  return ExitCode::kOk;
}

ExitCode run_compare(const ReportOptions& o) {
  report::CompareOptions co;
  auto tol = report::parse_tolerance(o.tolerance);
  if (!tol)
    throw UsageError(fmt::format(
        "--tolerance: '{}' is not a percentage such as 5% or a fraction below 1 such as 0.05",
        o.tolerance));
  co.tolerance = *tol;
  co.alpha = o.alpha;
  co.match_by_name = o.match == "name";
  co.fail_on_missing = o.fail_on_missing;
  co.fail_on_changed = o.fail_on_changed;
  co.strict = o.strict;
  if (o.compare_paths.size() < 2)
    throw UsageError("report compare: needs at least two documents: BASE... NEW");
  Output output(o.compare_out);
  // Records are reduced as they are parsed: a document of 250,000 records never sits in memory.
  report::RecordReader read(co.match_by_name);
  std::vector<std::vector<report::CompareRecord>> records(o.compare_paths.size());
  nlohmann::json described = nlohmann::json::array();
  for (std::size_t d = 0; d < o.compare_paths.size(); ++d) {
    const std::string& path = o.compare_paths[d];
    bool has_results = false;
    nlohmann::json doc =
        load_document(path, "report compare",
                      [&](std::size_t, nlohmann::json&& r) { records[d].push_back(read(r)); });
    has_results = doc.contains(k::kResults);
    if (!has_results) throw UsageError(fmt::format("'{}' holds no bench results to compare", path));
    described.push_back(describe(path, doc));
  }
  std::vector<report::CompareRecord> fresh = std::move(records.back());
  records.pop_back();
  nlohmann::json doc = make_document("report", o.argv, current_environment());
  nlohmann::json comparison = report::compare_records(records, fresh, co);
  fresh.clear();
  records.clear();
  comparison[k::kBase] = described.front();
  comparison[k::kNew] = described.back();
  described.erase(described.end() - 1);
  comparison[k::kBases] = std::move(described);
  doc[k::kComparison] = std::move(comparison);
  output.write(doc);
  return report::comparison_failed(doc[k::kComparison]) ? ExitCode::kFailed : ExitCode::kOk;
}

// The documents `report fleet` reads: each path a document, or a directory whose *.json files
// are (sorted, not recursive).
std::vector<std::string> fleet_files(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const auto& p : paths) {
    std::error_code ec;
    if (!std::filesystem::is_directory(p, ec)) {
      files.push_back(p);
      continue;
    }
    std::vector<std::string> in_dir;
    for (const auto& e : std::filesystem::directory_iterator(p, ec))
      if (e.path().extension() == ".json" && e.is_regular_file(ec)) in_dir.push_back(e.path());
    if (ec) throw UsageError(fmt::format("cannot list '{}': {}", p, ec.message()));
    if (in_dir.empty()) throw UsageError(fmt::format("'{}' holds no *.json document", p));
    std::sort(in_dir.begin(), in_dir.end());
    files.insert(files.end(), in_dir.begin(), in_dir.end());
  }
  return files;
}

ExitCode run_fleet(const ReportOptions& o) {
  std::vector<report::FleetDocument> docs;
  for (const auto& path : fleet_files(o.fleet_paths)) {
    nlohmann::json doc = load_document(path, "report fleet");
    results_of(doc, path);  // a document without results is a usage error naming it
    docs.push_back({path, std::move(doc)});
  }
  Output output(o.fleet_out);
  nlohmann::json doc = make_document("report", o.argv, current_environment());
  doc[k::kFleet] = report::fleet_section(docs, report::FleetRules{});
  doc[k::kFleet][k::kFailOnOutlier] = o.fail_on_outlier;
  output.write(doc);
  const bool outliers = !doc[k::kFleet][k::kOutliers].empty();
  return o.fail_on_outlier && outliers ? ExitCode::kFailed : ExitCode::kOk;
}

}  // namespace

Command add_report_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto o = std::make_shared<ReportOptions>();
  o->argv = argv;
  auto* cmd = root.add_subcommand(
      "report",
      "Render or compare saved gpucheck JSON documents, or find the slow node of a fleet");
  cmd->require_subcommand(1);
  auto* show =
      cmd->add_subcommand("show", "Render a saved document (probe, bench, doctor, qualify)");
  show->add_option("FILE", o->show_path, "A gpucheck --json document")
      ->required()
      ->type_name("FILE");
  add_output_options(*show, o->show_out);
  add_details_option(*show, o->show_out, "Evidence of every check and the system facts");
  add_probe_view_options(*show, o->show_out);
  auto* compare = cmd->add_subcommand(
      "compare",
      "Compare bench documents record by record: one or more BASE documents (a history of "
      "runs) and the NEW one: SAME, REGRESSION, IMPROVEMENT, NOISY, CHANGED, MISSING, NEW (exit 1 "
      "on a regression)");
  compare
      ->add_option("BASE... NEW", o->compare_paths,
                   "The baseline documents, then the document judged against them")
      ->required()
      ->type_name("FILE");
  compare
      ->add_option("--tolerance", o->tolerance,
                   "Relative change that counts: 5% or 0.05 (a bare 5 is an error). A change must "
                   "also clear the base runs' band and the new run's own spread, and the rank "
                   "test must agree")
      ->capture_default_str()
      ->type_name("PERCENT");
  compare
      ->add_option("--alpha", o->alpha,
                   "Level of the Mann-Whitney U test over the kept samples (two-sided)")
      ->check(CLI::Range(1e-9, 0.5))
      ->capture_default_str();
  compare->add_flag("--strict", o->strict,
                    "Exit 1 too when a record is NOISY (its own spread exceeds the tolerance)");
  compare
      ->add_option("--match", o->match,
                   "Match devices by id (UUID or PCI bus id, name when neither is known) or "
                   "by name (another machine's baseline)")
      ->check(CLI::IsMember({"id", "name"}))
      ->capture_default_str()
      ->type_name("HOW");
  compare->add_flag("--fail-on-missing", o->fail_on_missing,
                    "Exit 1 too when a base record has no match in the new document");
  compare->add_flag("--fail-on-changed", o->fail_on_changed,
                    "Exit 1 too when a record ran another library choice (cuDNN engine, cuBLASLt "
                    "algorithm) than the base's: CHANGED (a regression beyond the threshold "
                    "exits 1 whatever the library chose)");
  add_output_options(*compare, o->compare_out);
  add_details_option(*compare, o->compare_out, "Every SAME row too, however many");
  auto* fleet = cmd->add_subcommand(
      "fleet",
      "The slow node among many machines' bench or qualify documents: records grouped by GPU "
      "model, op, dtype, shape and transfers; per node the worst GPU of each group is an outlier "
      "when its modified z-score 0.6745(x - median)/MAD is below -3.5, or, with fewer than 10 "
      "nodes, when it is more than 7 % below the group's median");
  fleet->add_option("DOC", o->fleet_paths, "gpucheck --json documents, or directories of them")
      ->required();
  fleet->add_flag("--fail-on-outlier", o->fail_on_outlier, "Exit 1 when a node is an outlier");
  add_output_options(*fleet, o->fleet_out);
  add_details_option(*fleet, o->fleet_out, "Every group's median and spread too");
  return {cmd, [o, show, fleet]() {
            if (show->parsed()) return run_show(*o);
            if (fleet->parsed()) return run_fleet(*o);
            return run_compare(*o);
          }};
}

}  // namespace gpucheck::app

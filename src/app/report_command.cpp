// `gpucheck report show FILE` renders a saved document in any output format; `gpucheck report
// compare BASE NEW` compares two bench documents' records (exit 1 on a regression).
#include "app/cli_common.h"
#include "core/document.h"
#include "core/json_keys.h"
#include "report/compare.h"
#include "report/fleet.h"

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
  std::string base_path, new_path;
  std::string tolerance = "5%";
  std::string match = "id";
  bool fail_on_missing = false;
  // report fleet (issue 19)
  OutputOptions fleet_out;
  std::vector<std::string> fleet_paths;
  bool fail_on_outlier = false;
  std::vector<std::string> argv;
};

// A saved gpucheck/1 document; anything else is a usage error (exit 2) naming the file.
nlohmann::json load_document(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("cannot read '{}'", path));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object())
    throw UsageError(fmt::format("'{}' is not a JSON document", path));
  auto schema = doc.find(k::kSchema);
  if (schema == doc.end() || !schema->is_string())
    throw UsageError(fmt::format("'{}' is not a gpucheck document (no \"schema\")", path));
  if (*schema != k::kSchemaVersion)
    throw UsageError(fmt::format("'{}' has schema '{}'; this gpucheck reads {} only", path,
                                 schema->get<std::string>(), k::kSchemaVersion));
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
    throw UsageError(fmt::format("'{}' holds no bench results to compare", path));
  return *it;
}

ExitCode run_show(const ReportOptions& o) {
  nlohmann::json doc = load_document(o.show_path);
  Output output(o.show_out);
  output.write(doc);
  return ExitCode::kOk;
}

ExitCode run_compare(const ReportOptions& o) {
  report::CompareOptions co;
  auto tol = report::parse_tolerance(o.tolerance);
  if (!tol)
    throw UsageError(
        fmt::format("--tolerance: '{}' is not a percentage such as 5% or a fraction such as 0.05",
                    o.tolerance));
  co.tolerance = *tol;
  co.match_by_name = o.match == "name";
  co.fail_on_missing = o.fail_on_missing;
  nlohmann::json base = load_document(o.base_path);
  nlohmann::json neu = load_document(o.new_path);
  const auto& base_results = results_of(base, o.base_path);
  const auto& new_results = results_of(neu, o.new_path);
  Output output(o.compare_out);
  nlohmann::json doc = make_document("report", o.argv, current_environment());
  nlohmann::json comparison = report::compare_results(base_results, new_results, co);
  comparison[k::kBase] = describe(o.base_path, base);
  comparison[k::kNew] = describe(o.new_path, neu);
  doc[k::kComparison] = comparison;
  output.write(doc);
  return report::comparison_failed(comparison) ? ExitCode::kFailed : ExitCode::kOk;
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
    nlohmann::json doc = load_document(path);
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
  show->add_option("FILE", o->show_path, "A gpucheck --json document")->required();
  add_output_options(*show, o->show_out);
  auto* compare = cmd->add_subcommand(
      "compare",
      "Compare two bench documents record by record: SAME, REGRESSION, IMPROVEMENT, "
      "MISSING, NEW (exit 1 on a regression)");
  compare->add_option("BASE", o->base_path, "The baseline document")->required();
  compare->add_option("NEW", o->new_path, "The document judged against it")->required();
  compare
      ->add_option("--tolerance", o->tolerance,
                   "Relative change that counts (5% or 0.05); a noisier pair of records "
                   "needs twice their combined relative stddev")
      ->capture_default_str();
  compare
      ->add_option("--match", o->match,
                   "Match devices by id (UUID or PCI bus id, name when neither is known) or "
                   "by name (another machine's baseline)")
      ->check(CLI::IsMember({"id", "name"}))
      ->capture_default_str();
  compare->add_flag("--fail-on-missing", o->fail_on_missing,
                    "Exit 1 too when a base record has no match in the new document");
  add_output_options(*compare, o->compare_out);
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
  return {cmd, [o, show, fleet]() {
            if (show->parsed()) return run_show(*o);
            if (fleet->parsed()) return run_fleet(*o);
            return run_compare(*o);
          }};
}

}  // namespace gpucheck::app

// `gpucheck report show FILE` renders a saved document in any output format; `gpucheck report
// compare BASE NEW` compares two bench documents' records (exit 1 on a regression).
#include "app/cli_common.h"
#include "core/document.h"
#include "core/json_keys.h"
#include "report/compare.h"

#include <fmt/format.h>

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

}  // namespace

Command add_report_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto o = std::make_shared<ReportOptions>();
  o->argv = argv;
  auto* cmd = root.add_subcommand("report", "Render or compare saved gpucheck JSON documents");
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
      "Compare two bench documents record by record: SAME, REGRESSION, IMPROVEMENT, "
      "MISSING, NEW (exit 1 on a regression)");
  compare->add_option("BASE", o->base_path, "The baseline document")->required()->type_name("FILE");
  compare->add_option("NEW", o->new_path, "The document judged against it")
      ->required()
      ->type_name("FILE");
  compare
      ->add_option("--tolerance", o->tolerance,
                   "Relative change that counts (5% or 0.05); a noisier pair of records "
                   "needs twice their combined relative stddev")
      ->capture_default_str()
      ->type_name("PERCENT");
  compare
      ->add_option("--match", o->match,
                   "Match devices by id (UUID or PCI bus id, name when neither is known) or "
                   "by name (another machine's baseline)")
      ->check(CLI::IsMember({"id", "name"}))
      ->capture_default_str()
      ->type_name("HOW");
  compare->add_flag("--fail-on-missing", o->fail_on_missing,
                    "Exit 1 too when a base record has no match in the new document");
  add_output_options(*compare, o->compare_out);
  add_details_option(*compare, o->compare_out, "Every SAME row too, however many");
  return {cmd, [o, show]() { return show->parsed() ? run_show(*o) : run_compare(*o); }};
}

}  // namespace gpucheck::app

// qualify's text view: the verdicts first, then the records and the doctor problems behind
// them, the system facts with --details, and the closing verdict line.
#include "core/json_keys.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

#include <cctype>
#include <map>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string measured_text(const Json& v) {
  auto it = v.find(k::kMeasured);
  if (it == v.end() || it->is_null()) return {};
  std::string unit = text_at(v, k::kUnit);
  if (!it->is_number()) return scalar_text(*it);
  // A count (devices) stays a count; a measurement keeps three digits.
  const std::string number = it->is_number_integer() || it->is_number_unsigned()
                                 ? scalar_text(*it)
                                 : significant(it->get<double>());
  if (unit == "fraction") return number + "\xC3\x97 ref";
  return number + (unit.empty() ? "" : " " + unit);
}

// The floor a verdict was judged against: a requirement's words are "what: criterion" ("gemm
// f32 256x256x256 (transfers excluded) on cpu: ≥ 5 GFLOP/s"), so the part after the last ": ".
// A fraction's floor keeps its number and what it is a fraction of, shortly: "≥ 0.9 of the
// measured reference" reads "≥ 0.9× ref" (the notes under an unmet row say it whole).
std::string criterion_of(const std::string& requirement) {
  const std::size_t at = requirement.rfind(": ");
  std::string c = at == std::string::npos ? requirement : requirement.substr(at + 2);
  if (const std::size_t of = c.find(" of the "); of != std::string::npos) {
    if (c.ends_with("reference")) return c.substr(0, of) + "\xC3\x97 ref";
    if (c.ends_with("line rate")) return c.substr(0, of) + "\xC3\x97 line rate";
  }
  return c;
}

}  // namespace

BackendReasonsOnce::BackendReasonsOnce(const Json& backends) {
  if (!backends.is_array()) return;
  for (const auto& b : backends) {
    // Short reasons ("disabled") cost nothing to repeat and could match ordinary words.
    const std::string reason = text_at(b, k::kReason);
    if (text_at(b, k::kStatus) != "available" && reason.size() >= 24) reasons_.push_back(reason);
  }
  shown_.assign(reasons_.size(), false);
}

std::string BackendReasonsOnce::operator()(std::string text) {
  for (std::size_t i = 0; i < reasons_.size(); ++i) {
    const std::size_t at = text.find(reasons_[i]);
    if (at == std::string::npos) continue;
    if (shown_[i])
      text.replace(at, reasons_[i].size(), "(as above)");
    else
      shown_[i] = true;
  }
  return text;
}

void qualify_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json q = doc.value(std::string(k::kQualify), Json::object());
  const Json profile = q.value(std::string(k::kProfile), Json::object());
  title_view(view, "gpucheck qualify", {"profile " + text_at(profile, k::kName)}, doc);
  view.blank();
  // One line a verdict; what was required, and why, under the ones not met (all with
  // --details).
  TextTable t;
  t.columns = {{"verdict", false, false, false, true, 5},
               {"requirement", false, false, false, false, 8},
               {"device", false, false, false, false, 5},
               {"measured", false, true, true, false, 12},
               {"required", false, true, false, false, 10}};  // cut with "…", never wrapped
  // A reason shared by several verdicts (a backend that is not there fails each of its
  // requirements alike) is written out once and named after that.
  std::map<std::string, std::string> first_with_reason;
  BackendReasonsOnce once(doc.value(std::string(k::kBackends), Json::array()));
  for (const auto& v : q.value(std::string(k::kVerdicts), Json::array())) {
    std::vector<std::string> notes;
    const std::string verdict = text_at(v, k::kVerdict);
    if (verdict != "met" || o.details) {
      notes.push_back("required: " + text_at(v, k::kRequirement));
      if (auto reason = text_at(v, k::kReason); !reason.empty()) {
        auto [first, is_new] = first_with_reason.try_emplace(reason, text_at(v, k::kId));
        notes.push_back(is_new ? once(reason) : "the same reason as " + first->second);
      }
    }
    const std::string requirement = text_at(v, k::kRequirement);
    t.add({upper_case(verdict), text_at(v, k::kId), text_at(v, k::kDevice), measured_text(v),
           criterion_of(requirement)},
          std::move(notes));
  }
  view.table(std::move(t));
  if (auto r = doc.find(k::kResults); r != doc.end() && r->is_array() && !r->empty()) {
    view.blank();
    view.text("records", 0, 0, Tone::kBold);
    results_view(view, *r, o);
  }
  if (auto c = doc.find(k::kChecks); c != doc.end() && c->is_array()) {
    view.blank();
    checks_view(view, *c, o.details, !o.details);
    view.text("doctor: " + checks_summary(*c).first, 0, 8, checks_summary(*c).second);
  }
  if (o.details) {
    view.blank();
    system_facts_view(view, doc);
  }
  view.blank();
  const Json s = q.value(std::string(k::kSummary), Json::object());
  const std::string verdict = text_at(q, k::kVerdict);
  view.text(fmt::format("qualify: {} ({} met, {} unmet, {} skipped){}", verdict,
                        text_at(s, k::kMet), text_at(s, k::kUnmet), text_at(s, k::kSkip),
                        q.value(std::string(k::kStrict), false) ? ", --strict" : ""),
            0, 9, verdict == "met" ? Tone::kGood : Tone::kBad);
}

}  // namespace gpucheck::report

// Writing a qualify document's verdicts as JUnit XML: testsuites > testsuite (the profile) >
// testcase (a requirement, per device where it names several).
#include "report/junit.h"
#include "report/views.h"

#include "core/json_keys.h"
#include "report/html_escape.h"
#include "report/view_model.h"

#include <fmt/format.h>

#include <stdexcept>

namespace gpucheck::report {

namespace k = keys;

namespace {

// XML text: HTML's escaping (sanitised UTF-8 without control bytes, & < > " ' as entities) is
// XML's too; line by line so the multi-line details keep their newlines.
std::string xml_escape(std::string_view s) {
  std::string out;
  for (std::size_t start = 0;;) {
    std::size_t nl = s.find('\n', start);
    out += html_escape(s.substr(start, nl == std::string_view::npos ? nl : nl - start));
    if (nl == std::string_view::npos) return out;
    out += '\n';
    start = nl + 1;
  }
}

std::string testcase(const nlohmann::json& v) {
  std::string name = text_at(v, k::kId);
  if (v.contains(k::kDevice)) name += " [" + text_at(v, k::kDevice) + "]";
  std::string unit = text_at(v, k::kUnit);
  std::string detail = fmt::format("{}\nmeasured: {}{}{}\nthreshold: {}{}{}\nverdict: {}",
                                   text_at(v, k::kRequirement), text_at(v, k::kMeasured),
                                   unit.empty() ? "" : " ", unit, text_at(v, k::kThreshold),
                                   unit.empty() ? "" : " ", unit, text_at(v, k::kVerdict));
  if (v.contains(k::kReason)) detail += "\nreason: " + text_at(v, k::kReason);
  std::string out =
      fmt::format("    <testcase name=\"{}\" classname=\"gpucheck.qualify.{}\" time=\"0\">\n",
                  xml_escape(name), xml_escape(text_at(v, k::kKind)));
  std::string verdict = text_at(v, k::kVerdict);
  if (verdict == "unmet")
    out += fmt::format("      <failure message=\"{}\" type=\"unmet\">{}</failure>\n",
                       xml_escape(text_at(v, k::kReason)), xml_escape(detail));
  else if (verdict == "skip")
    out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(text_at(v, k::kReason)));
  out += fmt::format("      <system-out>{}</system-out>\n", xml_escape(detail));
  return out + "    </testcase>\n";
}

}  // namespace

std::string render_junit(const nlohmann::json& doc) {
  auto q = doc.find(k::kQualify);
  if (q == doc.end() || !q->is_object()) throw std::invalid_argument("no qualify section");
  const auto& verdicts = q->value(std::string(k::kVerdicts), nlohmann::json::array());
  std::size_t failures = 0, skipped = 0;
  std::string cases;
  for (const auto& v : verdicts) {
    std::string verdict = text_at(v, k::kVerdict);
    failures += verdict == "unmet";
    skipped += verdict == "skip";
    cases += testcase(v);
  }
  const auto& profile = q->value(std::string(k::kProfile), nlohmann::json::object());
  std::string name = "gpucheck qualify " + text_at(profile, k::kName);
  std::string stamp = doc.contains(k::kProvenance) ? text_at(doc[k::kProvenance], k::kTime) : "";
  if (!stamp.empty() && stamp.back() == 'Z') stamp.pop_back();  // xs:dateTime without zone
  std::string host = doc.contains(k::kHost) ? text_at(doc[k::kHost], k::kHostname) : "";
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out += fmt::format(
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"0\">\n",
      xml_escape(name), verdicts.size(), failures, skipped);
  out += fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"0\" skipped=\"{}\" "
      "time=\"0\"",
      xml_escape(name), verdicts.size(), failures, skipped);
  if (!stamp.empty()) out += fmt::format(" timestamp=\"{}\"", xml_escape(stamp));
  if (!host.empty()) out += fmt::format(" hostname=\"{}\"", xml_escape(host));
  out += ">\n    <properties>\n";
  out += fmt::format("      <property name=\"profile\" value=\"{}\"/>\n",
                     xml_escape(text_at(profile, k::kPath)));
  out += fmt::format("      <property name=\"strict\" value=\"{}\"/>\n", text_at(*q, k::kStrict));
  if (doc.contains(k::kProvenance))
    out += fmt::format("      <property name=\"gpucheck_version\" value=\"{}\"/>\n",
                       xml_escape(text_at(doc[k::kProvenance], k::kGpucheckVersion)));
  out += "    </properties>\n" + cases + "  </testsuite>\n</testsuites>\n";
  return out;
}

}  // namespace gpucheck::report

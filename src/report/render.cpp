// Format selection and the JSON view; the other views live in their own files.
#include "report/render.h"

#include <array>
#include <sstream>
#include <utility>

namespace gpucheck::report {

namespace {
constexpr std::array<std::pair<Format, std::string_view>, 7> kFormats{
    {{Format::kTable, "table"},
     {Format::kJson, "json"},
     {Format::kCsv, "csv"},
     {Format::kMarkdown, "markdown"},
     {Format::kMarkdown, "md"},
     {Format::kHtml, "html"},
     {Format::kPrometheus, "prometheus"}}};
}  // namespace

std::optional<Format> format_from_string(std::string_view s) {
  for (const auto& [f, name] : kFormats)
    if (name == s) return f;
  return std::nullopt;
}

std::string_view to_string(Format f) {
  for (const auto& [fmt, name] : kFormats)
    if (fmt == f) return name;
  return "table";
}

std::string render_json(const nlohmann::json& doc) {
  // Strings were sanitised on entry; replace still guards against a path that forgot.
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
}

std::string render(const nlohmann::json& doc, Format format, const RenderOptions& options) {
  switch (format) {
    case Format::kTable: return render_table(doc, options);
    case Format::kJson: return render_json(doc);
    case Format::kCsv: return render_csv(doc);
    case Format::kMarkdown: return render_markdown(doc, options);
    case Format::kHtml: return render_html(doc);
    case Format::kPrometheus: return render_prometheus(doc);
  }
  return render_json(doc);
}

std::string closing_line(const nlohmann::json& doc) {
  RenderOptions wide;
  wide.width = 1000;  // one line, as the view has it before wrapping
  std::istringstream text(render_table(doc, wide));
  std::string last;
  for (std::string line; std::getline(text, line);)
    if (const auto first = line.find_first_not_of(' '); first != std::string::npos)
      last = line.substr(first);
  return last;
}

}  // namespace gpucheck::report

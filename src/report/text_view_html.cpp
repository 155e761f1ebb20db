// A TextView as HTML: the terminal's summary of a document (probe's host, backends, devices and
// problems) as headings, label–value tables and paragraphs, so the page reads like the terminal
// and no second description of the document is kept for the browser.
#include "report/html_escape.h"
#include "report/text_view.h"

#include <fmt/format.h>

namespace gpucheck::report {

namespace {

const char* tone_class(Tone t) {
  switch (t) {
    case Tone::kGood:
      return "good";
    case Tone::kInfo:
      return "info";
    case Tone::kWarn:
      return "warn";
    case Tone::kBad:
      return "bad";
    case Tone::kMuted:
      return "muted";
    case Tone::kBold:
      return "bold";
    case Tone::kPlain:
      break;
  }
  return "";
}

std::string table_of(const TextTable& t) {
  std::string out = "<table class=\"view\">\n";
  if (t.header) {
    out += "<tr>";
    for (const auto& c : t.columns) out += "<th>" + html_escape(c.header) + "</th>";
    out += "</tr>\n";
  }
  for (const auto& r : t.rows) {
    out += "<tr>";
    for (std::size_t i = 0; i < t.columns.size(); ++i) {
      std::string cell = i < r.cells.size() ? html_escape(r.cells[i]) : std::string();
      if (i + 1 == t.columns.size())
        for (const auto& n : r.notes) cell += "<br>" + html_escape(n);
      out += "<td>" + cell + "</td>";
    }
    out += "</tr>\n";
  }
  return out + "</table>\n";
}

}  // namespace

std::string view_html(const TextView& view) {
  std::string out;
  bool in_pairs = false;  // inside a <table class="pairs"> of flows
  auto close_pairs = [&] {
    if (in_pairs) out += "</td></tr>\n</table>\n";
    in_pairs = false;
  };
  for (const auto& b : view.blocks()) {
    switch (b.kind) {
      case TextBlock::Kind::kHeading:
        close_pairs();
        out += "<h2>" + html_escape(b.text) + "</h2>\n";
        break;
      case TextBlock::Kind::kBlank:
        close_pairs();
        break;
      case TextBlock::Kind::kText:
        close_pairs();
        out += fmt::format("<p class=\"{}\">{}</p>\n", tone_class(b.tone), html_escape(b.text));
        break;
      case TextBlock::Kind::kFlow: {
        std::string items;
        for (const auto& i : b.items) items += (items.empty() ? "" : ", ") + html_escape(i);
        if (b.tone == Tone::kBold) items = "<strong>" + items + "</strong>";
        // A flow without a label continues the row above (a probe device's details).
        if (b.text.empty() && in_pairs) {
          out += "<br>" + items;
          break;
        }
        if (!in_pairs)
          out += "<table class=\"pairs\">\n";
        else
          out += "</td></tr>\n";
        in_pairs = true;
        out += "<tr><th>" + html_escape(b.text) + "</th><td>" + items;
        break;
      }
      case TextBlock::Kind::kTable:
        close_pairs();
        out += table_of(b.table);
        break;
    }
  }
  close_pairs();
  return out;
}

}  // namespace gpucheck::report

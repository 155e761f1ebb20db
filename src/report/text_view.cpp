// The text view's blocks, their terminal and markdown renderings, and the choice of view.
#include "report/text_view.h"

#include "core/json_keys.h"
#include "report/stress_view.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::report {

namespace k = keys;

// Every adder passes its text through printable (text_layout.h): a view built from a loaded
// document cannot forget to, and both renderings (terminal, markdown) read only these blocks.
void TextView::heading(std::string text) {
  TextBlock b;
  b.kind = TextBlock::Kind::kHeading;
  b.text = printable(text);
  blocks_.push_back(std::move(b));
}

void TextView::text(std::string text, std::size_t indent, std::size_t hang, Tone tone) {
  TextBlock b;
  b.kind = TextBlock::Kind::kText;
  b.text = printable(text);
  b.indent = indent;
  b.hang = hang;
  b.tone = tone;
  blocks_.push_back(std::move(b));
}

void TextView::flow(std::string label, std::vector<std::string> items, std::size_t indent,
                    std::size_t label_width, Tone tone) {
  TextBlock b;
  b.kind = TextBlock::Kind::kFlow;
  b.text = printable(label);
  for (auto& item : items) b.items.push_back(printable(item));
  b.indent = indent;
  b.hang = label_width;
  b.tone = tone;
  blocks_.push_back(std::move(b));
}

void TextView::table(TextTable t) {
  for (auto& c : t.columns) c.header = printable(c.header);
  for (auto& r : t.rows) {
    for (auto& cell : r.cells) cell = printable(cell);
    for (auto& note : r.notes) note = printable(note);
  }
  TextBlock b;
  b.kind = TextBlock::Kind::kTable;
  b.table = std::move(t);
  blocks_.push_back(std::move(b));
}

void TextView::blank() {
  if (!blocks_.empty() && blocks_.back().kind == TextBlock::Kind::kBlank) return;
  TextBlock b;
  b.kind = TextBlock::Kind::kBlank;
  blocks_.push_back(std::move(b));
}

void TextView::pairs(const std::vector<std::pair<std::string, std::string>>& rows,
                     std::size_t indent) {
  TextTable t;
  t.header = false;
  t.indent = indent;
  t.columns = {{"key", false, false, true, false, 4}, {"value", false, true, true, false, 12}};
  for (const auto& [key, value] : rows) t.add({key, value});
  table(std::move(t));
}

void TextView::append(const TextView& other) {
  for (const auto& b : other.blocks_) blocks_.push_back(b);
}

std::optional<TextBlock> TextView::take_last() {
  if (blocks_.empty()) return std::nullopt;
  TextBlock b = std::move(blocks_.back());
  blocks_.pop_back();
  return b;
}

namespace {

// Items on lines of at most `avail` columns, ", " between them, a line break only between
// items (an item longer than a line is wrapped on its own).
std::vector<std::string> flow_lines(const std::vector<std::string>& items, std::size_t avail) {
  std::vector<std::string> lines;
  std::string line;
  for (std::size_t i = 0; i < items.size(); ++i) {
    std::string item = items[i] + (i + 1 < items.size() ? "," : "");
    if (line.empty()) {
      line = item;
    } else if (display_width(line) + 1 + display_width(item) <= avail) {
      line += " " + item;
    } else {
      lines.push_back(line);
      line = item;
    }
    if (display_width(line) > avail) {
      auto parts = wrap(line, avail);
      for (std::size_t p = 0; p + 1 < parts.size(); ++p) lines.push_back(parts[p]);
      line = parts.back();
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

}  // namespace

std::string render_text(const TextView& view, std::size_t width, bool color) {
  if (width < 20) width = 20;
  std::string out;
  for (const auto& b : view.blocks()) {
    switch (b.kind) {
      case TextBlock::Kind::kBlank:
        out += "\n";
        break;
      case TextBlock::Kind::kHeading: {
        auto lines = wrap(b.text, width, width - 2);
        for (std::size_t i = 0; i < lines.size(); ++i)
          out += paint((i ? "  " : "") + lines[i], Tone::kBold, color) + "\n";
        break;
      }
      case TextBlock::Kind::kText: {
        const std::size_t first = std::min(b.indent, width / 2);
        const std::size_t rest = std::min(b.indent + b.hang, width / 2);
        auto lines = wrap(b.text, width - first, width - rest);
        for (std::size_t i = 0; i < lines.size(); ++i)
          out += std::string(i == 0 ? first : rest, ' ') + paint(lines[i], b.tone, color) + "\n";
        break;
      }
      case TextBlock::Kind::kFlow: {
        std::size_t label_w = std::max(b.hang, display_width(b.text) + 1);
        std::size_t indent = std::min(b.indent, width / 4);
        if (indent + label_w > width / 2) label_w = width / 2 - indent;
        const std::size_t avail = width - indent - label_w;
        auto lines = flow_lines(b.items, avail);
        if (lines.empty()) lines.push_back("");
        for (std::size_t i = 0; i < lines.size(); ++i) {
          std::string label =
              i == 0 ? pad_right(shorten(b.text, label_w - 1), label_w) : std::string(label_w, ' ');
          std::string l = std::string(indent, ' ') + paint(label, b.tone, color) + lines[i];
          while (!l.empty() && l.back() == ' ') l.pop_back();
          out += l + "\n";
        }
        break;
      }
      case TextBlock::Kind::kTable:
        for (const auto& l : b.table.render(width, color)) out += l + "\n";
        break;
    }
  }
  return out;
}

namespace {

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|')
      out += "\\|";
    else if (c == '\n')
      out += "<br>";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string view_markdown(const TextView& view) {
  std::string out;
  for (const auto& b : view.blocks()) {
    switch (b.kind) {
      case TextBlock::Kind::kBlank:
        break;
      case TextBlock::Kind::kHeading:
        out += "\n## " + md_cell(b.text) + "\n\n";
        break;
      case TextBlock::Kind::kText:
        // A bold line at the margin titles what follows (a bench op, a compare device).
        if (b.tone == Tone::kBold && b.indent == 0)
          out += "\n### " + md_cell(b.text) + "\n\n";
        else
          out += (b.indent ? "  " : "") + md_cell(b.text) + "\n\n";
        break;
      case TextBlock::Kind::kFlow: {
        std::string items;
        for (const auto& i : b.items) items += (items.empty() ? "" : ", ") + i;
        // A flow without a label continues the one above (a probe device's details).
        if (b.text.empty())
          out += "  - " + md_cell(items) + "\n";
        else
          out += fmt::format("- **{}** {}\n", md_cell(b.text), md_cell(items));
        break;
      }
      case TextBlock::Kind::kTable: {
        const auto& t = b.table;
        // As on the terminal, a column empty in every row is left out; the notes go in the
        // last column kept.
        std::vector<std::size_t> kept;
        for (std::size_t i = 0; i < t.columns.size(); ++i)
          if (std::any_of(t.rows.begin(), t.rows.end(), [&](const TextRow& r) {
                return i < r.cells.size() && !r.cells[i].empty();
              }))
            kept.push_back(i);
        const bool any_notes = std::any_of(t.rows.begin(), t.rows.end(),
                                           [](const TextRow& r) { return !r.notes.empty(); });
        if (any_notes && (kept.empty() || kept.back() + 1 != t.columns.size()))
          kept.push_back(t.columns.size() - 1);
        if (kept.empty()) break;
        // Markdown tables need a header row: a table printed without one on the terminal still
        // names its columns here.
        out += "\n|";
        for (auto i : kept) out += " " + md_cell(t.columns[i].header) + " |";
        out += "\n|";
        for (auto i : kept) out += t.columns[i].right ? "---:|" : "---|";
        out += "\n";
        for (const auto& r : t.rows) {
          out += "|";
          for (auto i : kept) {
            std::string cell = i < r.cells.size() ? r.cells[i] : "";
            if (i == kept.back())
              for (const auto& n : r.notes) cell += (cell.empty() ? "" : "<br>") + n;
            out += " " + md_cell(cell) + " |";
          }
          out += "\n";
        }
        out += "\n";
        break;
      }
    }
  }
  // No leading blank line, one trailing newline.
  std::size_t start = out.find_first_not_of('\n');
  out = start == std::string::npos ? std::string() : out.substr(start);
  while (out.size() > 1 && out[out.size() - 1] == '\n' && out[out.size() - 2] == '\n')
    out.pop_back();
  return out;
}

TextView make_text_view(const nlohmann::json& doc, const ViewOptions& o) {
  TextView view;
  const std::string command = text_at(doc, k::kCommand);
  if (doc.contains(k::kFleet))
    fleet_view(view, doc, o);
  else if (doc.contains(k::kComparison))
    compare_view(view, doc, o);
  else if (doc.contains(k::kQualify))
    qualify_view(view, doc, o);
  else if (doc.contains(k::kStress))
    stress_view(view, doc, o);
  else if (doc.contains(k::kChecks))
    doctor_view(view, doc, o);
  else if (doc.contains(k::kResults))
    bench_view(view, doc, o);
  else
    probe_view(view, doc, o);
  return view;
}

}  // namespace gpucheck::report

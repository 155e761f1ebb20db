// The table (terminal), CSV and markdown views, all drawn from one view model.
#include "core/json_keys.h"
#include "report/render.h"
#include "report/view_model.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::report {

namespace {

// Width in terminal columns, counting UTF-8 code points (no wide-glyph handling needed for
// the ASCII-dominated text drivers report).
std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}

std::string pad(std::string_view s, std::size_t width) {
  std::string out(s);
  std::size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string emphasis(std::string_view s, bool color) {
  return color ? fmt::format("\x1b[1m{}\x1b[0m", s) : std::string(s);
}

std::string md_cell(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else out += c;
  }
  return out;
}

}  // namespace

std::string render_table(const nlohmann::json& doc, bool color) {
  ViewModel vm = make_view_model(doc);
  std::string out;
  for (const auto& s : vm.facts) {
    std::size_t w = 0;
    for (const auto& [key, value] : s.rows) w = std::max(w, display_width(key));
    out += emphasis(fmt::format("== {}", s.title), color) + "\n";
    for (const auto& [key, value] : s.rows) out += "  " + pad(key, w) + "  " + value + "\n";
    out += "\n";
  }
  for (const auto& t : vm.tables) {
    // Columns that are empty in every row are left out of the terminal view.
    std::vector<std::size_t> widths(t.columns.size(), 0);
    std::vector<bool> used(t.columns.size(), false);
    for (const auto& row : t.rows)
      for (std::size_t c = 0; c < row.size(); ++c) {
        widths[c] = std::max(widths[c], display_width(row[c]));
        used[c] = used[c] || !row[c].empty();
      }
    std::string header, line;
    for (std::size_t c = 0; c < t.columns.size(); ++c) {
      if (!used[c]) continue;
      widths[c] = std::max(widths[c], display_width(t.columns[c]));
      header += pad(t.columns[c], widths[c]) + "  ";
    }
    out += emphasis(fmt::format("== {}", t.title), color) + "\n";
    out += emphasis(header, color) + "\n";
    for (const auto& row : t.rows) {
      std::string l;
      for (std::size_t c = 0; c < row.size(); ++c)
        if (used[c]) l += pad(row[c], widths[c]) + "  ";
      out += l + "\n";
    }
    if (t.rows.empty()) out += "(none)\n";
    out += "\n";
  }
  return out;
}

std::string csv_field(std::string_view s) {
  if (s.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(s);
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

std::string render_csv(const nlohmann::json& doc) {
  ViewModel vm = make_view_model(doc);
  std::string out;
  auto line = [&](const std::vector<std::string>& fields) {
    for (std::size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
    out += "\r\n";
  };
  if (!vm.tables.empty()) {
    // A results document is one table: the records, one a row.
    const auto& t = vm.tables.front();
    line(t.columns);
    for (const auto& row : t.rows) line(row);
    return out;
  }
  line({"section", "key", "value"});
  for (const auto& s : vm.facts)
    for (const auto& [key, value] : s.rows) line({s.title, key, value});
  return out;
}

std::string render_markdown(const nlohmann::json& doc) {
  ViewModel vm = make_view_model(doc);
  std::string out;
  for (const auto& s : vm.facts) {
    out += fmt::format("## {}\n\n| key | value |\n|---|---|\n", md_cell(s.title));
    for (const auto& [key, value] : s.rows)
      out += fmt::format("| {} | {} |\n", md_cell(key), md_cell(value));
    out += "\n";
  }
  for (const auto& t : vm.tables) {
    out += fmt::format("## {}\n\n|", md_cell(t.title));
    for (const auto& c : t.columns) out += " " + md_cell(c) + " |";
    out += "\n|";
    for (std::size_t i = 0; i < t.columns.size(); ++i) out += "---|";
    out += "\n";
    for (const auto& row : t.rows) {
      out += "|";
      for (const auto& cell : row) out += " " + md_cell(cell) + " |";
      out += "\n";
    }
    out += "\n";
  }
  return out;
}

}  // namespace gpucheck::report

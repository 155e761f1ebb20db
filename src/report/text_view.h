// What the table (terminal) and markdown views print, as blocks: headings, wrapped text and
// fitted tables. Each command's view (probe, doctor, bench, qualify, compare) builds one.
#pragma once

#include "report/text_layout.h"

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace gpucheck::report {

// How a document is shown: its width, colour, and how much of it.
struct ViewOptions {
  std::size_t width = 100;  // terminal columns: no line is longer
  bool color = false;       // ANSI colour (table view only)
  bool details = false;     // doctor: every check's evidence; others: the system facts too
  bool full = false;        // probe: every field of the document
  bool list = false;        // probe: one line per device
  std::string device;       // probe: only this device (cuda0, opencl1, cpu or a stable id)
};

struct TextBlock {
  enum class Kind { kHeading, kText, kFlow, kTable, kBlank };
  Kind kind = Kind::kText;
  std::string text;                // kHeading, kText; kFlow: the label
  std::vector<std::string> items;  // kFlow: kept whole where they fit, ", " between them
  std::size_t indent = 0;          // kText: spaces before every line
  std::size_t hang = 0;  // kText: further spaces before continuation lines; kFlow: label width
  Tone tone = Tone::kPlain;
  TextTable table;
};

class TextView {
 public:
  void heading(std::string text);
  void text(std::string text, std::size_t indent = 0, std::size_t hang = 0,
            Tone tone = Tone::kPlain);
  // A label, then items separated by ", " and wrapped between items under the first one.
  void flow(std::string label, std::vector<std::string> items, std::size_t indent,
            std::size_t label_width, Tone tone = Tone::kPlain);
  void table(TextTable t);
  void blank();
  // Key–value lines: keys aligned, values wrapped beside them.
  void pairs(const std::vector<std::pair<std::string, std::string>>& rows, std::size_t indent = 2);
  const std::vector<TextBlock>& blocks() const { return blocks_; }
  void append(const TextView& other);
  // Removes the last block and returns it (a view's closing verdict line, to lead a page).
  std::optional<TextBlock> take_last();

 private:
  std::vector<TextBlock> blocks_;
};

// The document as the terminal shows it.
TextView make_text_view(const nlohmann::json& doc, const ViewOptions& options);

std::string render_text(const TextView& view, std::size_t width, bool color);
std::string view_markdown(const TextView& view);
// The view as HTML elements (headings, label–value tables, tables, paragraphs classed by tone)
// for a page's body; html_report.cpp gives probe documents this page.
std::string view_html(const TextView& view);

}  // namespace gpucheck::report

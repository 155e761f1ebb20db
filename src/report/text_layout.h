// Laying text out for a terminal of a given width: display width, wrapping, shortening, colour,
// and tables whose columns shrink (wrapping or shortening their cells) until every line fits.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::report {

// Text from a document as a terminal may show it: C0 controls and DEL as "\xNN", C1 controls
// and the Unicode bidi and line/paragraph separators as "\uNNNN", invalid UTF-8 as U+FFFD. A
// loaded document is anyone's text: an escape sequence in a hostname would clear the screen or
// retitle the window, a newline would forge a line of the report. Every text view passes its
// text through this (report/text_view.h's TextView does it on entry).
std::string printable(std::string_view s);

// Terminal columns of UTF-8 text (one per code point; drivers' text is ASCII-dominated).
std::size_t display_width(std::string_view s);

// Word-wrapped lines of at most width columns (rest_width for the lines after the first, when
// not 0); a word longer than its line is split. Newlines in text start new lines.
std::vector<std::string> wrap(std::string_view text, std::size_t width, std::size_t rest_width = 0);

// At most width columns, the cut marked with "…".
std::string shorten(std::string_view text, std::size_t width);

// Pads with spaces to width columns (left-aligned) or right-aligns.
std::string pad_right(std::string_view s, std::size_t width);
std::string pad_left(std::string_view s, std::size_t width);

// What a piece of text means, for colour on a terminal.
enum class Tone { kPlain, kGood, kInfo, kWarn, kBad, kMuted, kBold };

// ANSI colour around text when color is on; the text itself otherwise.
std::string paint(std::string_view text, Tone tone, bool color);

// The tone of a status or verdict word (PASS, ok, met, REGRESSION, ...); kPlain if none.
Tone tone_of(std::string_view word);

struct TextColumn {
  std::string header;
  bool right = false;     // numbers: right-aligned
  bool flexible = false;  // may shrink below its content: cells wrap (or are shortened)
  bool wrap = true;       // a flexible column's long cell wraps onto more lines; else "…"
  bool toned = false;     // cells are status words, painted with tone_of
  std::size_t min_width = 6;
  std::size_t at_least = 0;  // natural width at least this (aligns tables printed one by one)
};

struct TextRow {
  std::vector<std::string> cells;
  // Lines under the row, indented past the first column and wrapped to the width (a failed
  // record's reason, a check's fix).
  std::vector<std::string> notes;
  Tone tone = Tone::kPlain;  // of the notes
};

// A table that fits: columns empty in every row are dropped, flexible columns shrink (widest
// first) until the rows fit the width, and no line is ever longer than the width.
struct TextTable {
  std::vector<TextColumn> columns;
  std::vector<TextRow> rows;
  std::size_t indent = 0;  // spaces before every line
  bool header = true;

  void add(std::vector<std::string> cells, std::vector<std::string> notes = {},
           Tone tone = Tone::kPlain) {
    rows.push_back({std::move(cells), std::move(notes), tone});
  }
  std::vector<std::string> render(std::size_t width, bool color) const;
};

}  // namespace gpucheck::report

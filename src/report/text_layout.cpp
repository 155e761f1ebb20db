// Wrapping, shortening, colour and fitted tables for the terminal views.
#include "report/text_layout.h"

#include "core/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <utility>

namespace gpucheck::report {

namespace {

bool continuation(char c) {
  return (static_cast<unsigned char>(c) & 0xC0) == 0x80;
}

// The byte offset after `cols` code points of s (or s.size()).
std::size_t offset_of_columns(std::string_view s, std::size_t cols) {
  std::size_t i = 0, seen = 0;
  while (i < s.size()) {
    if (!continuation(s[i])) {
      if (seen == cols) return i;
      ++seen;
    }
    ++i;
  }
  return s.size();
}

std::string rtrim(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

// The code point of the 2- or 3-byte UTF-8 sequence at s[i] that a terminal must not see raw (C1
// controls, bidi embeddings, overrides, isolates and marks, line and paragraph separators), with
// its length; 0 for any other.
std::pair<char32_t, std::size_t> hidden_control(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  if (i + 1 < s.size() && b(0) == 0xC2 && b(1) >= 0x80 && b(1) <= 0x9F) return {b(1), 2};
  if (i + 1 < s.size() && b(0) == 0xD8 && b(1) == 0x9C) return {0x061C, 2};  // Arabic letter mark
  if (i + 2 >= s.size() || b(0) != 0xE2) return {0, 0};
  const char32_t cp = (char32_t{b(1)} & 0x3F) << 6 | (char32_t{b(2)} & 0x3F);
  const char32_t full = 0x2000 | cp;
  if ((b(1) == 0x80 || b(1) == 0x81) &&
      (full == 0x200E || full == 0x200F || (full >= 0x2028 && full <= 0x202E) ||
       (full >= 0x2066 && full <= 0x2069)))
    return {full, 3};
  return {0, 0};
}

}  // namespace

std::string printable(std::string_view raw) {
  // sanitize: valid UTF-8, C0 and DEL escaped; the loop below also escapes any C0 that a future
  // sanitize let through.
  const std::string s = sanitize(raw);
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x20 || c == 0x7F) {
      out += fmt::format("\\x{:02x}", c);
      ++i;
      continue;
    }
    if (auto [cp, len] = hidden_control(s, i); len != 0) {
      out += fmt::format("\\u{:04x}", static_cast<std::uint32_t>(cp));
      i += len;
      continue;
    }
    out += s[i++];
  }
  return out;
}

std::size_t display_width(std::string_view s) {
  return static_cast<std::size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return !continuation(c); }));
}

std::vector<std::string> wrap(std::string_view text, std::size_t first_width,
                              std::size_t rest_width) {
  std::vector<std::string> lines;
  if (first_width == 0) first_width = 1;
  if (rest_width == 0) rest_width = first_width;
  std::string line;
  auto limit = [&] { return lines.empty() ? first_width : rest_width; };
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == '\n') {
      lines.push_back(rtrim(line));
      line.clear();
      ++pos;
      continue;
    }
    if (text[pos] == ' ') {
      ++pos;
      continue;
    }
    std::size_t end = text.find_first_of(" \n", pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view word = text.substr(pos, end - pos);
    pos = end;
    const std::size_t used = display_width(line);
    const std::size_t w = display_width(word);
    if (!line.empty() && used + 1 + w <= limit()) {
      line += ' ';
      line += word;
      continue;
    }
    if (!line.empty()) {
      lines.push_back(line);
      line.clear();
    }
    while (display_width(word) > limit()) {  // a path or an id longer than the line
      std::size_t cut = offset_of_columns(word, limit());
      lines.emplace_back(word.substr(0, cut));
      word.remove_prefix(cut);
    }
    line = std::string(word);
  }
  if (!line.empty() || lines.empty()) lines.push_back(line);
  return lines;
}

std::string shorten(std::string_view text, std::size_t width) {
  if (display_width(text) <= width) return std::string(text);
  if (width == 0) return {};
  return rtrim(std::string(text.substr(0, offset_of_columns(text, width - 1)))) + "\xE2\x80\xA6";
}

std::string pad_right(std::string_view s, std::size_t width) {
  std::string out(s);
  std::size_t w = display_width(s);
  if (w < width) out.append(width - w, ' ');
  return out;
}

std::string pad_left(std::string_view s, std::size_t width) {
  std::size_t w = display_width(s);
  return std::string(w < width ? width - w : 0, ' ') + std::string(s);
}

std::string paint(std::string_view text, Tone tone, bool color) {
  if (!color || tone == Tone::kPlain || text.empty()) return std::string(text);
  const char* code = "";
  switch (tone) {
    case Tone::kGood:
      code = "32";
      break;
    case Tone::kInfo:
      code = "36";
      break;
    case Tone::kWarn:
      code = "33";
      break;
    case Tone::kBad:
      code = "1;31";
      break;
    case Tone::kMuted:
      code = "2";
      break;
    case Tone::kBold:
      code = "1";
      break;
    case Tone::kPlain:
      break;
  }
  return fmt::format("\x1b[{}m{}\x1b[0m", code, text);
}

Tone tone_of(std::string_view word) {
  std::string w(word);
  for (char& c : w) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  static constexpr std::array<std::pair<std::string_view, Tone>, 18> kTones{{
      {"pass", Tone::kGood},
      {"ok", Tone::kGood},
      {"met", Tone::kGood},
      {"improvement", Tone::kGood},
      {"info", Tone::kInfo},
      {"new", Tone::kInfo},
      {"warn", Tone::kWarn},
      {"noisy", Tone::kWarn},
      {"changed", Tone::kWarn},
      {"missing", Tone::kWarn},
      {"skipped", Tone::kMuted},
      {"fail", Tone::kBad},
      {"failed", Tone::kBad},
      {"mismatch", Tone::kBad},
      {"unmet", Tone::kBad},
      {"regression", Tone::kBad},
      {"skip", Tone::kMuted},
      {"unsupported", Tone::kMuted},
  }};
  for (const auto& [name, tone] : kTones)
    if (name == w) return tone;
  return Tone::kPlain;
}

std::vector<std::string> TextTable::render(std::size_t width, bool color) const {
  // Columns with no text in any row are left out.
  std::vector<std::size_t> cols;
  for (std::size_t c = 0; c < columns.size(); ++c)
    if (std::any_of(rows.begin(), rows.end(),
                    [&](const TextRow& r) { return c < r.cells.size() && !r.cells[c].empty(); }))
      cols.push_back(c);
  std::vector<std::string> out;
  if (cols.empty()) return out;
  auto cell = [&](const TextRow& r, std::size_t c) -> std::string_view {
    return c < r.cells.size() ? std::string_view(r.cells[c]) : std::string_view();
  };
  std::vector<std::size_t> w(cols.size(), 0);
  for (std::size_t i = 0; i < cols.size(); ++i) {
    w[i] = columns[cols[i]].at_least;
    if (header) w[i] = std::max(w[i], display_width(columns[cols[i]].header));
    for (const auto& r : rows) w[i] = std::max(w[i], display_width(cell(r, cols[i])));
  }
  // Columns that cannot fit even one character wide are left out, from the right.
  while (cols.size() > 1 && 2 * (cols.size() - 1) + indent + cols.size() > width) {
    cols.pop_back();
    w.pop_back();
  }
  const std::size_t gaps = 2 * (cols.size() - 1) + indent;
  const std::size_t avail = width > gaps ? width - gaps : cols.size();
  auto total = [&] {
    std::size_t t = 0;
    for (auto x : w) t += x;
    return t;
  };
  // Shrink the widest flexible column one step at a time down to its minimum; then, if that is
  // not enough, the widest of the others but the status words; then any: every line fits,
  // whatever the data.
  for (int pass = 0; pass < 3 && total() > avail; ++pass) {
    while (total() > avail) {
      std::size_t best = cols.size();
      for (std::size_t i = 0; i < cols.size(); ++i) {
        const auto& col = columns[cols[i]];
        const std::size_t floor = pass == 0 ? col.min_width : 1;
        if ((pass == 0 && !col.flexible) || (pass == 1 && col.toned) || w[i] <= floor) continue;
        if (best == cols.size() || w[i] > w[best]) best = i;
      }
      if (best == cols.size()) break;
      --w[best];
    }
  }
  auto line_of = [&](const std::vector<std::string>& parts, const std::vector<Tone>& tones) {
    std::string l(indent, ' ');
    for (std::size_t i = 0; i < parts.size(); ++i) {
      const auto& col = columns[cols[i]];
      std::string text = parts[i];
      std::size_t pad = w[i] > display_width(text) ? w[i] - display_width(text) : 0;
      if (i) l += "  ";
      if (col.right) l += std::string(pad, ' ');
      l += paint(text, tones[i], color);
      if (!col.right) l += std::string(pad, ' ');
    }
    return rtrim(l);
  };
  if (header) {
    std::vector<std::string> parts;
    for (std::size_t i = 0; i < cols.size(); ++i)
      parts.push_back(shorten(columns[cols[i]].header, w[i]));
    std::string l(indent, ' ');
    for (std::size_t i = 0; i < parts.size(); ++i) {
      if (i) l += "  ";
      l += columns[cols[i]].right ? pad_left(parts[i], w[i]) : pad_right(parts[i], w[i]);
    }
    out.push_back(paint(rtrim(l), Tone::kBold, color));
  }
  const std::size_t note_indent = std::min(indent + w[0] + 2, indent + 8);
  for (const auto& r : rows) {
    std::vector<std::vector<std::string>> lines(cols.size());
    std::size_t height = 1;
    for (std::size_t i = 0; i < cols.size(); ++i) {
      const auto& col = columns[cols[i]];
      std::string_view text = cell(r, cols[i]);
      if (col.flexible && col.wrap)
        lines[i] = wrap(text, w[i]);
      else
        lines[i] = {shorten(text, w[i])};
      height = std::max(height, lines[i].size());
    }
    for (std::size_t h = 0; h < height; ++h) {
      std::vector<std::string> parts;
      std::vector<Tone> tones;
      for (std::size_t i = 0; i < cols.size(); ++i) {
        parts.push_back(h < lines[i].size() ? lines[i][h] : "");
        tones.push_back(columns[cols[i]].toned ? tone_of(parts.back()) : Tone::kPlain);
      }
      out.push_back(line_of(parts, tones));
    }
    const std::size_t note_width = width > note_indent ? width - note_indent : 1;
    for (const auto& note : r.notes)
      for (const auto& l : wrap(note, note_width))
        out.push_back(std::string(note_indent, ' ') + paint(l, r.tone, color));
  }
  return out;
}

}  // namespace gpucheck::report

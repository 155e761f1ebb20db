#include "core/toml_text_guard.h"

#include "core/errors.h"

#include <fmt/format.h>

namespace gpucheck {

namespace {

class Scanner {
 public:
  Scanner(std::string_view text, const std::string& path) : t_(text), path_(path) {}

  void run() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (bare_) {
        // toml++ scans a bare value (a number, a date, true, ...) up to a value terminator,
        // classifying every character; quotes and brackets inside it are just characters.
        if (!ends_bare_value(c)) {
          if (non_ascii(c)) refuse("a non-ASCII character in a bare value");
          last_ = c;
          advance();
          continue;
        }
        bare_ = false;
      }
      if (c == '#') {
        skip_to_line_end();
      } else if (starts_with(R"(""")") && opens_string()) {
        multi_line('"');
      } else if (starts_with("'''") && opens_string()) {
        multi_line('\'');
      } else if ((c == '"' || c == '\'') && opens_string()) {
        single_line(c);
      } else {
        if (non_ascii(c)) refuse("a non-ASCII character outside a string or comment");
        structure(c);
        if (c != ' ' && c != '\t') last_ = c;
        advance();
      }
    }
  }

 private:
  static bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

  // toml++'s is_value_terminator for ASCII: whitespace, line breaks, ] } , #.
  static bool ends_bare_value(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r' || c == ']' ||
           c == '}' || c == ',' || c == '#';
  }

  bool in_array() const { return !nest_.empty() && nest_.back() == '['; }

  // Where a value starts: after '=', or in an array after its '[', a ',' or a line break
  // (elsewhere, such as a table header or an inline table's keys, a bare run is a key).
  bool value_position() const {
    return last_ == '=' || ((last_ == '[' || last_ == ',' || last_ == '\n') && in_array());
  }

  // Arrays and inline tables nest; a bare character in a value position starts a bare value.
  void structure(char c) {
    if (c == '[' || c == '{') {
      if (value_position()) nest_.push_back(c);
    } else if (c == ']' || c == '}') {
      if (!nest_.empty() && nest_.back() == (c == ']' ? '[' : '{')) nest_.pop_back();
    } else if (!ends_bare_value(c) && c != ',' && c != '=' && c != '.' && value_position()) {
      bare_ = true;
    }
  }

  // A quote starts a string only where TOML allows one (a value, a quoted key): after '=',
  // '[', ',', '{', '.', or first on its line, and never inside a bare value.
  bool opens_string() const {
    return !bare_ && (last_ == '\n' || last_ == '=' || last_ == '[' || last_ == ',' ||
                      last_ == '{' || last_ == '.');
  }

  bool starts_with(std::string_view s) const { return t_.substr(i_, s.size()) == s; }

  void advance(std::size_t n = 1) {
    for (; n > 0 && i_ < t_.size(); --n, ++i_) {
      if (t_[i_] == '\n') {
        ++line_;
        line_start_ = i_ + 1;
      }
    }
  }

  void skip_to_line_end() {
    while (i_ < t_.size() && t_[i_] != '\n') advance();
  }

  // "..." or '...': ends at its quote or the line's end (an unterminated string is the parser's
  // error to report); a backslash in a basic string escapes the next character.
  void single_line(char quote) {
    advance();
    while (i_ < t_.size() && t_[i_] != '\n') {
      if (quote == '"' && t_[i_] == '\\') {
        advance(2);
        continue;
      }
      if (t_[i_] == quote) {
        advance();
        last_ = quote;
        return;
      }
      advance();
    }
  }

  // """...""" or '''...'''. In a basic one a backslash at a line's end trims the whitespace and
  // newlines after it: there toml++ classifies the next character as whitespace or not.
  void multi_line(char quote) {
    const std::string close(3, quote);
    advance(3);
    while (i_ < t_.size()) {
      if (starts_with(close)) {
        advance(3);
        while (i_ < t_.size() && t_[i_] == quote) advance();  // up to two quotes inside
        last_ = quote;
        return;
      }
      if (quote == '"' && t_[i_] == '\\') {
        std::size_t j = i_ + 1;
        while (j < t_.size() && (t_[j] == ' ' || t_[j] == '\t')) ++j;
        if (j < t_.size() && non_ascii(t_[j])) {
          // toml++ classifies what follows a backslash here (whitespace or not) before reading
          // it as an escape; no escape starts with a non-ASCII character.
          advance(j - i_);
          refuse("a non-ASCII character after a backslash");
        }
        if (j < t_.size() && (t_[j] == '\n' || t_[j] == '\r')) {
          advance(j - i_);
          while (i_ < t_.size() &&
                 (t_[i_] == ' ' || t_[i_] == '\t' || t_[i_] == '\n' || t_[i_] == '\r'))
            advance();
          if (i_ < t_.size() && non_ascii(t_[i_]))
            refuse("a non-ASCII character right after a line-ending backslash");
          continue;
        }
        advance(2);
        continue;
      }
      advance();
    }
  }

  [[noreturn]] void refuse(std::string_view what) const {
    throw UsageError(fmt::format(
        "{}:{}:{}: {} (not valid TOML there, and this gpucheck's TOML library, toml++ 3.3, "
        "would misparse it)",
        path_, line_, i_ - line_start_ + 1, what));
  }

  std::string_view t_;
  const std::string& path_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  char last_ = '\n';   // the last character outside strings and comments, blanks skipped
  bool bare_ = false;  // inside a bare value
  std::string nest_;   // the open arrays ('[') and inline tables ('{') around the position
};

}  // namespace

std::string_view without_utf8_bom(std::string_view text) {
  return text.starts_with("\xEF\xBB\xBF") ? text.substr(3) : text;
}

void refuse_text_toml_parser_mishandles(std::string_view text, const std::string& path) {
  Scanner(text, path).run();
}

}  // namespace gpucheck

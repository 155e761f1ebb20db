// A regular-expression matcher whose time is linear in the text: patterns compile to a small
// program run as a Pike VM (every alternative advanced in step, one thread per instruction),
// so nested quantifiers such as (.*)*x or (a|a)*b cannot backtrack catastrophically as
// std::regex does. Used for patterns that come from files (qualify profiles' name_regex).
#pragma once

#include <bitset>
#include <cstddef>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace gpucheck {

// Where a pattern stops parsing: the 0-based offset of the offending character and why.
struct RegexError {
  std::size_t offset = 0;
  std::string message;
};

// The ECMAScript subset device-name patterns need, matched byte by byte (ASCII):
//   literals, ., [...] and [^...] with ranges, \d \D \w \W \s \S and escaped punctuation,
//   groups ( ) and (?: ), alternation |, quantifiers * + ? {n} {n,} {n,m} (and their lazy
//   forms, which match the same strings), anchors ^ and $.
// Back-references, look-around and \b are refused with their place: they need backtracking.
class SafeRegex {
 public:
  // The compiled pattern, or where and why it does not parse. Patterns longer than
  // kMaxPatternLength, nesting groups deeper than kMaxNesting or whose counted repeats expand
  // past kMaxProgram instructions are refused too.
  static std::variant<SafeRegex, RegexError> compile(std::string_view pattern);

  // Whether the pattern matches anywhere in `text` (std::regex_search's question).
  bool search(std::string_view text) const;

  static constexpr std::size_t kMaxPatternLength = 256;
  static constexpr int kMaxNesting = 8;
  static constexpr std::size_t kMaxProgram = 20000;

  struct Instruction {
    enum class Code { kByte, kSplit, kJump, kBegin, kEnd, kWordEdge, kNotWordEdge, kMatch };
    Code op = Code::kMatch;
    std::bitset<256> bytes;    // kByte: the bytes it accepts
    std::size_t x = 0, y = 0;  // kSplit: both targets; kJump: x
  };

 private:
  std::vector<Instruction> program_;
};

}  // namespace gpucheck

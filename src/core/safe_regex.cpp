// A recursive-descent parser to a syntax tree, a compiler to Pike VM instructions and the VM.
// The VM keeps at most one thread per instruction, so a search costs at most
// (text length + 1) × (program size) steps whatever the pattern nests.
#include "core/safe_regex.h"

#include <fmt/format.h>

#include <cctype>
#include <optional>

namespace gpucheck {

namespace {

using Bytes = std::bitset<256>;
using RegexCode = SafeRegex::Instruction::Code;

constexpr int kUnbounded = -1;
constexpr int kMaxCount = 1000;

struct Node {
  enum class Kind { kBytes, kConcat, kAlt, kRepeat, kBegin, kEnd, kWordEdge, kNotWordEdge };
  Kind kind = Kind::kConcat;
  Bytes bytes;
  std::vector<Node> kids;
  int min = 0, max = 0;  // kRepeat; max kUnbounded for * and +
};

// A parse failure carries its offset up to compile().
struct ParseFailure {
  RegexError error;
};

Bytes range(unsigned char lo, unsigned char hi) {
  Bytes b;
  for (unsigned c = lo; c <= hi; ++c) b.set(c);
  return b;
}
Bytes one(unsigned char c) {
  Bytes b;
  b.set(c);
  return b;
}
Bytes digits() {
  return range('0', '9');
}
Bytes word() {
  return range('a', 'z') | range('A', 'Z') | digits() | one('_');
}
Bytes space() {
  return one(' ') | one('\t') | one('\n') | one('\r') | one('\f') | one('\v');
}
bool is_word_byte(unsigned char c) {
  return std::isalnum(c) != 0 || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view p) : p_(p) {}

  Node parse() {
    Node n = alternation(0);
    if (pos_ < p_.size()) fail(pos_, "an unmatched ')'");
    return n;
  }

 private:
  [[noreturn]] void fail(std::size_t at, std::string message) const {
    throw ParseFailure{{at, std::move(message)}};
  }
  bool at_end() const { return pos_ >= p_.size(); }
  char peek() const { return p_[pos_]; }

  Node alternation(int depth) {
    Node first = concatenation(depth);
    if (at_end() || peek() != '|') return first;
    Node alt;
    alt.kind = Node::Kind::kAlt;
    alt.kids.push_back(std::move(first));
    while (!at_end() && peek() == '|') {
      ++pos_;
      alt.kids.push_back(concatenation(depth));
    }
    return alt;
  }

  Node concatenation(int depth) {
    Node cat;
    cat.kind = Node::Kind::kConcat;
    while (!at_end() && peek() != '|' && peek() != ')') cat.kids.push_back(repeat(depth));
    return cat;
  }

  Node repeat(int depth) {
    Node atom_node = atom(depth);
    const bool anchor =
        atom_node.kind == Node::Kind::kBegin || atom_node.kind == Node::Kind::kEnd ||
        atom_node.kind == Node::Kind::kWordEdge || atom_node.kind == Node::Kind::kNotWordEdge;
    bool quantified = false;
    while (!at_end()) {
      const std::size_t q = pos_;
      int min = 0, max = 0;
      if (peek() == '*') {
        min = 0, max = kUnbounded, ++pos_;
      } else if (peek() == '+') {
        min = 1, max = kUnbounded, ++pos_;
      } else if (peek() == '?') {
        min = 0, max = 1, ++pos_;
      } else if (peek() == '{') {
        braces(min, max);
      } else {
        break;
      }
      if (anchor) fail(q, "nothing to repeat (an anchor cannot be repeated)");
      if (quantified) fail(q, "a quantifier right after another (nothing to repeat)");
      quantified = true;
      if (!at_end() && peek() == '?') ++pos_;  // lazy: the same strings match
      Node r;
      r.kind = Node::Kind::kRepeat;
      r.min = min;
      r.max = max;
      r.kids.push_back(std::move(atom_node));
      atom_node = std::move(r);
    }
    return atom_node;
  }

  // {n}, {n,} or {n,m} at pos_.
  void braces(int& min, int& max) {
    const std::size_t open = pos_++;
    auto number = [&]() -> std::optional<int> {
      const std::size_t from = pos_;
      long v = 0;
      while (!at_end() && std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + (peek() - '0');
        if (v > kMaxCount) fail(from, fmt::format("a repeat count of at most {}", kMaxCount));
        ++pos_;
      }
      if (pos_ == from) return std::nullopt;
      return static_cast<int>(v);
    };
    auto lo = number();
    if (!lo) fail(open, "'{' starts a count {n}, {n,} or {n,m} (write \\{ for the character)");
    min = *lo;
    max = *lo;
    if (!at_end() && peek() == ',') {
      ++pos_;
      auto hi = number();
      max = hi ? *hi : kUnbounded;
      if (hi && *hi < min) fail(open, "a count {n,m} with m below n");
    }
    if (at_end() || peek() != '}') fail(open, "an unclosed count (expected '}')");
    ++pos_;
  }

  Node atom(int depth) {
    const std::size_t at = pos_;
    const char c = peek();
    Node n;
    n.kind = Node::Kind::kBytes;
    switch (c) {
      case '(': {
        if (depth + 1 > SafeRegex::kMaxNesting)
          fail(at, fmt::format("groups nested at most {} deep", SafeRegex::kMaxNesting));
        ++pos_;
        if (!at_end() && peek() == '?') {
          if (pos_ + 1 < p_.size() && p_[pos_ + 1] == ':')
            pos_ += 2;
          else
            fail(at, "look-around and named groups are not supported (they need backtracking)");
        }
        Node inner = alternation(depth + 1);
        if (at_end()) fail(at, "an unclosed group (expected ')')");
        ++pos_;
        return inner;
      }
      case '[':
        n.bytes = char_class();
        return n;
      case '.':
        ++pos_;
        n.bytes = ~(one('\n') | one('\r'));
        return n;
      case '^':
        ++pos_;
        n.kind = Node::Kind::kBegin;
        return n;
      case '$':
        ++pos_;
        n.kind = Node::Kind::kEnd;
        return n;
      case '*':
      case '+':
      case '?':
      case '{':
        fail(at, "nothing to repeat");
      case '\\': {
        ++pos_;
        if (at_end()) fail(at, "a pattern cannot end in '\\'");
        if (peek() == 'b' || peek() == 'B') {
          n.kind = peek() == 'b' ? Node::Kind::kWordEdge : Node::Kind::kNotWordEdge;
          ++pos_;
          return n;
        }
        n.bytes = escape(at);
        return n;
      }
      default:
        ++pos_;
        n.bytes = one(static_cast<unsigned char>(c));
        return n;
    }
  }

  // After a backslash (pos_ at the escaped character): the bytes it stands for.
  Bytes escape(std::size_t at) {
    const char c = peek();
    ++pos_;
    switch (c) {
      case 'd':
        return digits();
      case 'D':
        return ~digits();
      case 'w':
        return word();
      case 'W':
        return ~word();
      case 's':
        return space();
      case 'S':
        return ~space();
      case 't':
        return one('\t');
      case 'n':
        return one('\n');
      case 'r':
        return one('\r');
      case 'f':
        return one('\f');
      case 'v':
        return one('\v');
      case 'b':
        return one('\b');  // inside a class, ECMAScript's backspace
      case 'x': {
        auto hex = [&](std::size_t i) -> int {
          if (i >= p_.size() || !std::isxdigit(static_cast<unsigned char>(p_[i]))) return -1;
          const char h = static_cast<char>(std::tolower(static_cast<unsigned char>(p_[i])));
          return h <= '9' ? h - '0' : h - 'a' + 10;
        };
        const int hi = hex(pos_), lo = hex(pos_ + 1);
        if (hi < 0 || lo < 0) fail(at, "\\x needs two hex digits");
        pos_ += 2;
        return one(static_cast<unsigned char>(hi * 16 + lo));
      }
      default:
        break;
    }
    if (std::isdigit(static_cast<unsigned char>(c)))
      fail(at, "back-references are not supported (they need backtracking)");
    if (std::isalnum(static_cast<unsigned char>(c)))
      fail(at, fmt::format("an unknown escape '\\{}'", c));
    return one(static_cast<unsigned char>(c));
  }

  // [...] at pos_.
  Bytes char_class() {
    const std::size_t open = pos_++;
    bool negate = false;
    if (!at_end() && peek() == '^') negate = true, ++pos_;
    Bytes set;
    bool first = true;
    while (true) {
      if (at_end()) fail(open, "an unclosed class (expected ']')");
      if (peek() == ']' && !first) break;
      first = false;
      // One member: a byte (maybe the start of a range) or a class escape.
      auto member = [&](bool& single, unsigned char& byte) -> Bytes {
        const std::size_t here = pos_;
        const auto ch = static_cast<unsigned char>(peek());
        if (ch >= 0x80) fail(here, "a non-ASCII character in a class");
        if (ch == '\\') {
          ++pos_;
          if (at_end()) fail(here, "a pattern cannot end in '\\'");
          Bytes b = escape(here);
          single = b.count() == 1;
          if (single)
            for (unsigned v = 0; v < 256; ++v)
              if (b.test(v)) byte = static_cast<unsigned char>(v);
          return b;
        }
        ++pos_;
        single = true;
        byte = ch;
        return one(ch);
      };
      bool lo_single = false;
      unsigned char lo = 0;
      const std::size_t lo_at = pos_;
      Bytes lo_set = member(lo_single, lo);
      if (pos_ + 1 < p_.size() && peek() == '-' && p_[pos_ + 1] != ']') {
        ++pos_;
        bool hi_single = false;
        unsigned char hi = 0;
        member(hi_single, hi);
        if (!lo_single || !hi_single) fail(lo_at, "a range needs a character at each end");
        if (hi < lo) fail(lo_at, "a range out of order");
        set |= range(lo, hi);
      } else {
        set |= lo_set;
      }
    }
    ++pos_;
    return negate ? ~set : set;
  }

  std::string_view p_;
  std::size_t pos_ = 0;
};

class Compiler {
 public:
  std::vector<SafeRegex::Instruction> program;

  void emit(const Node& n) {
    if (program.size() > SafeRegex::kMaxProgram) throw TooLarge{};
    switch (n.kind) {
      case Node::Kind::kBytes:
        add(RegexCode::kByte).bytes = n.bytes;
        return;
      case Node::Kind::kBegin:
        add(RegexCode::kBegin);
        return;
      case Node::Kind::kEnd:
        add(RegexCode::kEnd);
        return;
      case Node::Kind::kWordEdge:
      case Node::Kind::kNotWordEdge:
        add(n.kind == Node::Kind::kWordEdge ? RegexCode::kWordEdge : RegexCode::kNotWordEdge);
        return;
      case Node::Kind::kConcat:
        for (const auto& k : n.kids) emit(k);
        return;
      case Node::Kind::kAlt: {
        std::vector<std::size_t> jumps;
        for (std::size_t i = 0; i < n.kids.size(); ++i) {
          if (i + 1 < n.kids.size()) {
            const std::size_t split = program.size();
            add(RegexCode::kSplit).x = split + 1;
            emit(n.kids[i]);
            jumps.push_back(program.size());
            add(RegexCode::kJump);
            program[split].y = program.size();
          } else {
            emit(n.kids[i]);
          }
        }
        for (std::size_t j : jumps) program[j].x = program.size();
        return;
      }
      case Node::Kind::kRepeat: {
        const Node& body = n.kids.front();
        for (int i = 0; i < n.min; ++i) emit(body);
        if (n.max == kUnbounded) {
          const std::size_t split = program.size();
          add(RegexCode::kSplit).x = split + 1;
          emit(body);
          add(RegexCode::kJump).x = split;
          program[split].y = program.size();
          return;
        }
        std::vector<std::size_t> splits;
        for (int i = n.min; i < n.max; ++i) {
          splits.push_back(program.size());
          add(RegexCode::kSplit).x = program.size();
          emit(body);
        }
        for (std::size_t s : splits) program[s].y = program.size();
        return;
      }
    }
  }

  struct TooLarge {};

 private:
  SafeRegex::Instruction& add(RegexCode op) {
    program.emplace_back();
    program.back().op = op;
    return program.back();
  }
};

}  // namespace

std::variant<SafeRegex, RegexError> SafeRegex::compile(std::string_view pattern) {
  if (pattern.size() > kMaxPatternLength)
    return RegexError{kMaxPatternLength,
                      fmt::format("a pattern of at most {} characters (this one has {})",
                                  kMaxPatternLength, pattern.size())};
  Node tree;
  try {
    tree = Parser(pattern).parse();
  } catch (const ParseFailure& f) {
    return f.error;
  }
  Compiler c;
  try {
    c.emit(tree);
  } catch (const Compiler::TooLarge&) {
    return RegexError{
        0, fmt::format("a pattern whose counted repeats expand to at most {} steps", kMaxProgram)};
  }
  if (c.program.size() > kMaxProgram)
    return RegexError{
        0, fmt::format("a pattern whose counted repeats expand to at most {} steps", kMaxProgram)};
  c.program.emplace_back();  // kMatch
  SafeRegex re;
  re.program_ = std::move(c.program);
  return re;
}

bool SafeRegex::search(std::string_view text) const {
  const std::size_t size = program_.size();
  std::vector<std::size_t> current, next, stack;
  std::vector<std::size_t> mark(size, 0);
  std::size_t generation = 0;
  // Follows the empty steps from pc at text position pos, adding the byte steps reached to
  // `list` once each; true when the pattern has matched.
  auto add = [&](std::vector<std::size_t>& list, std::size_t start, std::size_t pos) {
    stack.push_back(start);
    while (!stack.empty()) {
      const std::size_t pc = stack.back();
      stack.pop_back();
      if (mark[pc] == generation) continue;
      mark[pc] = generation;
      const Instruction& in = program_[pc];
      switch (in.op) {
        case RegexCode::kMatch:
          stack.clear();
          return true;
        case RegexCode::kByte:
          list.push_back(pc);
          break;
        case RegexCode::kJump:
          stack.push_back(in.x);
          break;
        case RegexCode::kSplit:
          stack.push_back(in.y);
          stack.push_back(in.x);
          break;
        case RegexCode::kBegin:
          if (pos == 0) stack.push_back(pc + 1);
          break;
        case RegexCode::kEnd:
          if (pos == text.size()) stack.push_back(pc + 1);
          break;
        case RegexCode::kWordEdge:
        case RegexCode::kNotWordEdge: {
          const bool before = pos > 0 && is_word_byte(static_cast<unsigned char>(text[pos - 1]));
          const bool after =
              pos < text.size() && is_word_byte(static_cast<unsigned char>(text[pos]));
          if ((before != after) == (in.op == RegexCode::kWordEdge)) stack.push_back(pc + 1);
          break;
        }
      }
    }
    return false;
  };
  ++generation;
  if (add(current, 0, 0)) return true;
  for (std::size_t pos = 0; pos < text.size(); ++pos) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    ++generation;
    next.clear();
    for (std::size_t pc : current)
      if (program_[pc].bytes.test(byte) && add(next, pc + 1, pos + 1)) return true;
    if (add(next, 0, pos + 1)) return true;
    current.swap(next);
  }
  return false;
}

}  // namespace gpucheck

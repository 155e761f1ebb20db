// Depth-checked JSON parsing with an optional stream of the "results" records, and the files
// gpucheck keeps for itself.
#include "core/json_input.h"

#include "core/errors.h"
#include "core/files.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <vector>

namespace gpucheck {

namespace {

// The bytes of a file descriptor as an input iterator, read in 1 MiB pieces; counts what it
// has consumed so errors can say where.
class FdBytes {
 public:
  struct State {
    int fd = -1;
    std::vector<char> buf = std::vector<char>(1u << 20);
    std::size_t pos = 0, len = 0;
    std::size_t consumed = 0;
    bool eof = false;
    std::string error;
    void fill() {
      while (!eof && pos == len) {
        ssize_t n = ::read(fd, buf.data(), buf.size());
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) error = std::strerror(errno);
        if (n <= 0) {
          eof = true;
          break;
        }
        pos = 0;
        len = static_cast<std::size_t>(n);
      }
    }
  };

  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;

  FdBytes() = default;  // the end
  explicit FdBytes(State* s) : s_(s) { s_->fill(); }
  reference operator*() const { return s_->buf[s_->pos]; }
  FdBytes& operator++() {
    ++s_->pos;
    ++s_->consumed;
    s_->fill();
    return *this;
  }
  FdBytes operator++(int) {
    FdBytes old = *this;
    ++*this;
    return old;
  }
  bool operator==(const FdBytes& o) const { return at_end() == o.at_end(); }
  bool operator!=(const FdBytes& o) const { return !(*this == o); }

 private:
  bool at_end() const { return s_ == nullptr || (s_->eof && s_->pos == s_->len); }
  State* s_ = nullptr;
};

// A pointer over text that records how far the parser has read.
struct Counting {
  using iterator_category = std::input_iterator_tag;
  using value_type = char;
  using difference_type = std::ptrdiff_t;
  using pointer = const char*;
  using reference = const char&;
  const char* p;
  const char** high;
  reference operator*() const { return *p; }
  Counting& operator++() {
    *high = ++p;
    return *this;
  }
  Counting operator++(int) {
    Counting old = *this;
    ++*this;
    return old;
  }
  bool operator==(const Counting& o) const { return p == o.p; }
  bool operator!=(const Counting& o) const { return p != o.p; }
};

// nlohmann's message without its "[json.exception.parse_error.101] parse error at " preamble:
// "line 1, column 1: syntax error while parsing value - invalid literal; last read: 'b'".
std::string parse_error_words(const nlohmann::json::parse_error& e) {
  std::string_view what = e.what();
  if (const auto tag = what.find("] "); tag != std::string_view::npos) what.remove_prefix(tag + 2);
  for (std::string_view lead : {"parse error at ", "parse error: "})
    if (what.substr(0, lead.size()) == lead) what.remove_prefix(lead.size());
  return std::string(what);
}

// Thrown from the parse callback to stop at the first level too deep.
struct TooDeep {};

// Why a text is refused, without its source: "not JSON: ...", "nested deeper than 64 levels
// (byte N)".
struct Refused {
  std::string why;
};

// Builds the document from nlohmann's SAX events, refusing the first level too deep and handing
// each record of a top-level "results" array to the sink as it completes. nlohmann's own
// callback parser (3.11.2) scans the whole parent array for a discarded value after every
// object ends, which made an array of n objects cost n^2 (a 3 MB state file of 20,000 events
// took 12 CPU seconds under ASan); this builder appends and pops at the end only.
class DomBuilder {
 public:
  using Json = nlohmann::json;
  explicit DomBuilder(const RecordSink& records) : records_(records) {}
  Json take() { return std::move(root_); }

  bool null() { return scalar(Json(nullptr)); }
  bool boolean(bool v) { return scalar(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    return scalar(Json(v));
  }
  bool string(Json::string_t& v) { return scalar(Json(std::move(v))); }
  bool binary(Json::binary_t& v) { return scalar(Json::binary(std::move(v))); }
  bool key(Json::string_t& k) {
    key_ = std::move(k);
    // A member named "results" of the top object is where the records are.
    if (open_.size() == 1) top_key_is_results_ = key_ == keys::kResults;
    return true;
  }
  bool start_object(std::size_t /*elements*/) { return open(Json::object()); }
  bool start_array(std::size_t /*elements*/) { return open(Json::array()); }
  bool end_object() { return close(); }
  bool end_array() { return close(); }
  template <class Exception>
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const Exception& e) {
    throw e;
  }

 private:
  // Depths as the callback parser counted them: the top value is at 0, its members at 1,
  // records at 2.
  bool open(Json container) {
    if (open_.size() >= kMaxJsonDepth) throw TooDeep{};
    open_.push_back(place(std::move(container)));
    if (open_.size() == 2) in_results_ = records_ && top_key_is_results_ && open_[1]->is_array();
    return true;
  }
  bool close() {
    open_.pop_back();
    if (open_.size() == 2 && in_results_) {
      // The record just closed is the last element of the results array.
      auto& array = open_[1]->get_ref<Json::array_t&>();
      Json record = std::move(array.back());
      array.pop_back();
      records_(index_++, std::move(record));
    }
    if (open_.size() == 1) in_results_ = false;
    return true;
  }
  bool scalar(Json v) {
    if (open_.size() == 2 && in_results_)
      records_(index_++, std::move(v));
    else
      place(std::move(v));
    return true;
  }
  // Where a new value goes: the root, the next element of an array, or the member named by
  // the last key (a repeated key keeps its last value, as nlohmann's own parser does).
  Json* place(Json v) {
    if (open_.empty()) {
      root_ = std::move(v);
      return &root_;
    }
    Json& parent = *open_.back();
    if (parent.is_array()) {
      auto& array = parent.get_ref<Json::array_t&>();
      array.push_back(std::move(v));
      return &array.back();
    }
    Json& slot = parent[key_];
    slot = std::move(v);
    return &slot;
  }

  const RecordSink& records_;
  Json root_;
  std::vector<Json*> open_;  // the containers not yet closed, outermost first
  std::string key_;
  bool top_key_is_results_ = false;
  bool in_results_ = false;
  std::size_t index_ = 0;
};

template <typename It>
nlohmann::json parse_with(It first, It last, const RecordSink& records,
                          const std::function<std::size_t()>& position) {
  DomBuilder builder(records);
  try {
    nlohmann::json::sax_parse(first, last, &builder);
    return builder.take();
  } catch (const TooDeep&) {
    throw Refused{fmt::format("nested deeper than {} levels (byte {})", kMaxJsonDepth, position())};
  } catch (const nlohmann::json::parse_error& e) {
    throw Refused{fmt::format("not JSON: {}", parse_error_words(e))};
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e999) is no value a gpucheck document holds.
    throw Refused{fmt::format("a number out of range (byte {}): {}", position(), e.what())};
  }
}

nlohmann::json parse_text(std::string_view text, const RecordSink& records) {
  // The byte of the opening bracket that went too deep: nlohmann has read just past it.
  const char* read_to = text.data();
  return parse_with(Counting{text.data(), &read_to}, Counting{text.data() + text.size(), &read_to},
                    records, [&] { return static_cast<std::size_t>(read_to - text.data()); });
}

}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& source,
                                const RecordSink& records) {
  try {
    return parse_text(text, records);
  } catch (const Refused& r) {
    throw UsageError(fmt::format("{}: {}", source, r.why));
  }
}

nlohmann::json read_json_file(const std::string& path, std::size_t max_bytes, std::string_view flag,
                              const std::string& source, const RecordSink& records) {
  FdBytes::State state;
  state.fd = open_input_file(path, max_bytes, flag);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{state.fd};
  nlohmann::json doc;
  try {
    doc = parse_with(FdBytes(&state), FdBytes(), records, [&] { return state.consumed; });
  } catch (const Refused& r) {
    throw UsageError(fmt::format("{}: {}", source, r.why));
  }
  if (!state.error.empty())
    throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, state.error));
  return doc;
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  try {
    return parse_text(text, {});
  } catch (const Refused&) {
    return nlohmann::json(nlohmann::json::value_t::discarded);
  }
}

KeptJsonFile read_kept_json_file(const std::filesystem::path& path, std::size_t max_bytes) {
  KeptJsonFile out;
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    // ENOTDIR: a part of its directory is a file, so there is no such file either.
    if (errno != ENOENT && errno != ENOTDIR) {
      out.outcome = KeptJsonFile::Outcome::kUnreadable;
      out.why = std::strerror(errno);
    }
    return out;
  }
  // A file too large is judged before it is read: it cannot be one gpucheck wrote.
  if (S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    out.outcome = KeptJsonFile::Outcome::kDamaged;
    out.why = fmt::format("it is {} bytes; the limit is {}", st.st_size, max_bytes);
    return out;
  }
  auto text = read_text_file(path, max_bytes, &out.why);
  if (!text) {
    // A FIFO or directory (never opened for reading), or an open or read that failed.
    out.outcome = KeptJsonFile::Outcome::kUnreadable;
    return out;
  }
  try {
    out.doc = parse_text(*text, {});
    out.outcome = KeptJsonFile::Outcome::kParsed;
  } catch (const Refused& r) {
    out.outcome = KeptJsonFile::Outcome::kDamaged;
    out.why = r.why;
  }
  return out;
}

std::optional<std::filesystem::path> set_aside_bad_file(const std::filesystem::path& path,
                                                        std::string* why) {
  std::filesystem::path bad = path;
  bad += ".bad";
  if (::rename(path.c_str(), bad.c_str()) == 0) return bad;
  *why = fmt::format("rename to '{}': {}", bad.string(), std::strerror(errno));
  return std::nullopt;
}

}  // namespace gpucheck

// Depth-checked JSON parsing with an optional stream of the "results" records.
#include "core/json_input.h"

#include "core/errors.h"
#include "core/files.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
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

// Thrown from the parse callback to stop at the first level too deep.
struct TooDeep {};

template <typename It>
nlohmann::json parse_with(It first, It last, const std::string& source, const RecordSink& records,
                          const std::function<std::size_t()>& position) {
  using Event = nlohmann::json::parse_event_t;
  // Depths as nlohmann reports them: the top value is at 0, its members at 1, records at 2.
  std::string top_key;
  bool in_results = false;
  std::size_t index = 0;
  nlohmann::json::parser_callback_t callback = [&](int depth, Event event, nlohmann::json& value) {
    if ((event == Event::object_start || event == Event::array_start) &&
        static_cast<std::size_t>(depth) >= kMaxJsonDepth)
      throw TooDeep{};
    if (!records) return true;
    if (depth == 1 && event == Event::key) {
      top_key = value.is_string() ? value.get<std::string>() : std::string();
    } else if (depth == 1 && event == Event::array_start) {
      in_results = top_key == keys::kResults;
    } else if (depth == 1 && event == Event::array_end) {
      in_results = false;
    } else if (in_results && depth == 2 &&
               (event == Event::object_end || event == Event::array_end || event == Event::value)) {
      records(index++, std::move(value));
      return false;  // dropped: the sink has it
    }
    return true;
  };
  try {
    return nlohmann::json::parse(first, last, callback);
  } catch (const TooDeep&) {
    throw UsageError(fmt::format("{}: nested deeper than {} levels (byte {})", source,
                                 kMaxJsonDepth, position()));
  } catch (const nlohmann::json::parse_error& e) {
    throw UsageError(fmt::format("{}: not JSON: {}", source, e.what()));
  } catch (const nlohmann::json::out_of_range& e) {
    // A number beyond double's range (1e999) is no value a gpucheck document holds.
    throw UsageError(fmt::format("{}: a number out of range (byte {}): {}", source, position(),
                                 e.what()));
  }
}

}  // namespace

nlohmann::json parse_json_input(std::string_view text, const std::string& source,
                                const RecordSink& records) {
  // The byte of the opening bracket that went too deep: nlohmann has read just past it.
  const char* read_to = text.data();
  return parse_with(Counting{text.data(), &read_to}, Counting{text.data() + text.size(), &read_to},
                    source, records,
                    [&] { return static_cast<std::size_t>(read_to - text.data()); });
}

nlohmann::json read_json_file(const std::string& path, std::size_t max_bytes, std::string_view flag,
                              const std::string& source, const RecordSink& records) {
  FdBytes::State state;
  state.fd = open_input_file(path, max_bytes, flag);
  struct Closer {
    int fd;
    ~Closer() { ::close(fd); }
  } closer{state.fd};
  nlohmann::json doc =
      parse_with(FdBytes(&state), FdBytes(), source, records, [&] { return state.consumed; });
  if (!state.error.empty())
    throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, state.error));
  return doc;
}

}  // namespace gpucheck

// Bounded, non-blocking reads of regular files.
#include "core/files.h"

#include "core/errors.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpucheck {

namespace {

// What a file that is no regular file is, for messages.
const char* file_kind(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

struct ReadOutcome {
  std::optional<std::string> data;
  std::string why;  // when data is empty
};

// Opens without blocking (a FIFO without a writer would block a plain open), checks the kind,
// then reads at most max_bytes + 1 bytes: a file that grows while read is still bounded.
ReadOutcome read_bounded(const char* path, std::size_t max_bytes) {
  ReadOutcome out;
  int fd = ::open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) {
    out.why = std::strerror(errno);
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    out.why = fmt::format("it is {}", file_kind(st.st_mode));
    ::close(fd);
    return out;
  }
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    out.why = fmt::format("it is {} bytes; the limit is {}", st.st_size, max_bytes);
    ::close(fd);
    return out;
  }
  std::string data;
  // /proc and /sys files report size 0 or 4096 whatever they hold: read in chunks.
  data.resize(std::min<std::size_t>(max_bytes + 1, std::max<std::size_t>(st.st_size + 1, 8192)));
  std::size_t got = 0;
  while (true) {
    if (got == data.size()) {
      if (data.size() > max_bytes) break;
      data.resize(std::min(max_bytes + 1, data.size() * 2));
    }
    ssize_t n = ::read(fd, data.data() + got, data.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      out.why = std::strerror(errno);
      ::close(fd);
      return out;
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (got > max_bytes) {
    out.why = fmt::format("it holds more than {} bytes", max_bytes);
    return out;
  }
  data.resize(got);
  out.data = std::move(data);
  return out;
}

}  // namespace

std::filesystem::path under_root(const std::filesystem::path& root, std::string_view rel) {
  return (root.empty() ? std::filesystem::path("/") : root) / rel;
}

std::optional<std::string> read_text_file(const std::filesystem::path& path, std::size_t max_bytes,
                                          std::string* why) {
  ReadOutcome r = read_bounded(path.c_str(), max_bytes);
  if (!r.data && why) *why = r.why;
  return std::move(r.data);
}

int open_input_file(const std::string& path, std::size_t max_bytes, std::string_view flag) {
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  std::string why;
  struct stat st {};
  if (fd < 0)
    why = std::strerror(errno);
  else if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode))
    why = fmt::format("it is {}", file_kind(st.st_mode));
  else if (static_cast<std::uint64_t>(st.st_size) > max_bytes)
    why = fmt::format("it is {} bytes; the limit is {}", st.st_size, max_bytes);
  if (why.empty()) return fd;
  if (fd >= 0) ::close(fd);
  throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, why));
}

std::string read_input_file(const std::string& path, std::size_t max_bytes, std::string_view flag) {
  ReadOutcome r = read_bounded(path.c_str(), max_bytes);
  if (!r.data) throw UsageError(fmt::format("{}: cannot read '{}': {}", flag, path, r.why));
  return std::move(*r.data);
}

std::string dirname_of(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos || slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace gpucheck

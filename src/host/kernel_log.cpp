// Reading the kernel log: /dev/kmsg gives one record per read() and EAGAIN at its end
// (O_NONBLOCK); a saved copy under a fixture root is a plain file that ends with EOF; both are
// read the same way. syslog(2) (klogctl) is what dmesg falls back to.
#include "host/kernel_log.h"

#include <fcntl.h>
#include <sys/klog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <regex>
#include <sstream>

namespace gpucheck::host {

namespace {

constexpr std::size_t kMaxBytes = kMaxKernelLogBytes;

std::string under_root(const std::string& root, const char* path) {
  if (root.empty() || root == "/") return path;
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + path;
}

// Drops whole lines from the front of text until it holds at most max bytes; returns how many
// bytes went.
std::size_t keep_newest_lines(std::string& text, std::size_t max) {
  if (text.size() <= max) return 0;
  std::size_t cut = text.size() - max;
  // The line the cut falls in goes too, unless the cut is at a line's start.
  if (text[cut - 1] != '\n') {
    const auto nl = text.find('\n', cut);
    cut = nl == std::string::npos ? text.size() : nl + 1;
  }
  text.erase(0, cut);
  return cut;
}

bool is_regular_file(int fd) {
  struct stat st {};
  return ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

// /dev/kmsg: one record per read() until EAGAIN, each made a line; false (error set) on a read
// error. Past max bytes the oldest lines go, so the newest are judged.
bool read_records_fd(int fd, std::string& out, std::string* error, std::uint64_t* skipped,
                     std::size_t max = kMaxBytes) {
  std::vector<char> buf(16384);
  // A device that never ends (/dev/zero where a sysroot's dev/kmsg should be) is read no
  // further than twice what is kept: a live ring buffer holds at most 32 MiB.
  for (std::uint64_t total = 0; total < 2 * std::uint64_t{max};) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      total += static_cast<std::uint64_t>(n);
      out.append(buf.data(), static_cast<std::size_t>(n));
      if (out.back() != '\n') out += '\n';
      // Trimmed in steps of a MiB, so a long log is not copied once per record.
      if (out.size() > max + (1u << 20)) *skipped += keep_newest_lines(out, max);
      continue;
    }
    if (n == 0 || errno == EAGAIN) break;
    if (errno == EPIPE || errno == EINTR) continue;  // records overwritten while reading: go on
    *error = std::string("read: ") + std::strerror(errno);
    return false;
  }
  *skipped += keep_newest_lines(out, max);
  return true;
}

// Bytes from fd's position to its end (at most max), as they are: a plain file is not split
// into records. false (error set) on a read error.
bool read_plain_fd(int fd, std::string& out, std::string* error, std::size_t max) {
  std::vector<char> buf(1u << 16);
  while (out.size() < max) {
    const ssize_t n = ::read(fd, buf.data(), std::min(buf.size(), max - out.size()));
    if (n > 0) {
      out.append(buf.data(), static_cast<std::size_t>(n));
      continue;
    }
    if (n == 0) return true;
    if (errno == EINTR || errno == EAGAIN) continue;
    *error = std::string("read: ") + std::strerror(errno);
    return false;
  }
  return true;
}

// A saved log (a regular file): its newest whole lines up to max bytes, read from the tail so
// a log of any size costs the same; *skipped counts the bytes before them.
bool read_saved_log(int fd, std::string& out, std::string* error, std::uint64_t* skipped) {
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    *error = std::string("fstat: ") + std::strerror(errno);
    return false;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // One byte before the tail too: it says whether the tail starts at a line's start.
  const std::uint64_t from = size > kMaxBytes ? size - kMaxBytes - 1 : 0;
  if (from > 0 && ::lseek(fd, static_cast<off_t>(from), SEEK_SET) < 0) {
    *error = std::string("lseek: ") + std::strerror(errno);
    return false;
  }
  if (!read_plain_fd(fd, out, error, kMaxBytes + 1)) return false;
  *skipped = from;
  if (from > 0) {
    const auto nl = out.find('\n');
    const std::size_t cut = nl == std::string::npos ? out.size() : nl + 1;
    out.erase(0, cut);
    *skipped += cut;
  }
  if (!out.empty() && out.back() != '\n') out += '\n';
  return true;
}

int open_log(const std::string& path, std::string* error) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) *error = std::strerror(errno);
  return fd;
}

// syslog(2)'s whole buffer, or nullopt with the error.
std::optional<std::string> read_syslog(std::string* error) {
  const int size = ::klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, nullptr, 0);
  if (size > 0) {
    std::string buf(static_cast<std::size_t>(size), '\0');
    const int n = ::klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf.data(), size);
    if (n >= 0) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
  }
  *error = std::strerror(errno);
  return std::nullopt;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// "0000:17:00" or "17:00.0" into (domain, bus, device); nullopt when it does not parse.
std::optional<std::array<unsigned, 3>> pci_parts(std::string_view s) {
  if (auto dot = s.find('.'); dot != std::string_view::npos) s = s.substr(0, dot);
  std::vector<unsigned> parts;
  while (!s.empty()) {
    const auto colon = s.find(':');
    const std::string_view part = s.substr(0, colon);
    unsigned v = 0;
    auto [end, ec] = std::from_chars(part.data(), part.data() + part.size(), v, 16);
    if (part.empty() || ec != std::errc() || end != part.data() + part.size()) return std::nullopt;
    parts.push_back(v);
    s = colon == std::string_view::npos ? std::string_view{} : s.substr(colon + 1);
  }
  if (parts.size() == 2) parts.insert(parts.begin(), 0);
  if (parts.size() != 3) return std::nullopt;
  return std::array<unsigned, 3>{parts[0], parts[1], parts[2]};
}

// kmsg's "PRIO,SEQ,USEC,FLAGS;" gives SEQ; syslog(2)'s "<PRIO>[SECONDS.MICROS] " its time.
std::optional<std::uint64_t> line_position(std::string_view line) {
  auto number = [](std::string_view s, std::uint64_t* v) {
    auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
    return ec == std::errc() && end == s.data() + s.size() && !s.empty();
  };
  std::uint64_t v = 0;
  if (const auto semi = line.find(';'); semi != std::string_view::npos) {
    const std::string_view head = line.substr(0, semi);
    const auto c1 = head.find(','), c2 = head.find(',', c1 + 1);
    if (c1 != std::string_view::npos && c2 != std::string_view::npos &&
        number(head.substr(0, c1), &v) && number(head.substr(c1 + 1, c2 - c1 - 1), &v))
      return v;
  }
  if (const auto open = line.find('['), close = line.find(']'); open != std::string_view::npos &&
                                                                close != std::string_view::npos &&
                                                                open < close && open <= 4) {
    std::string_view t = line.substr(open + 1, close - open - 1);
    while (!t.empty() && t.front() == ' ') t.remove_prefix(1);
    const auto dot = t.find('.');
    std::uint64_t secs = 0, micros = 0;
    if (dot != std::string_view::npos && dot <= 12 && t.size() - dot - 1 == 6 &&
        number(t.substr(0, dot), &secs) && number(t.substr(dot + 1), &micros))
      return secs * 1000000 + micros;
  }
  return std::nullopt;
}

}  // namespace

KernelLog read_kernel_log(const std::string& root) {
  KernelLog log;
  std::string error;
  const std::string kmsg = under_root(root, "/dev/kmsg");
  if (const int fd = open_log(kmsg, &error); fd >= 0) {
    std::string text;
    const bool ok = is_regular_file(fd) ? read_saved_log(fd, text, &error, &log.skipped_bytes)
                                        : read_records_fd(fd, text, &error, &log.skipped_bytes);
    ::close(fd);
    if (ok) {
      log.text = std::move(text);
      log.source = "/dev/kmsg";
      return log;
    }
  }
  log.unreadable.push_back("/dev/kmsg (" + error + ")");
  if (!(root.empty() || root == "/")) {
    log.unreadable.emplace_back(
        "dmesg's syslog(2) (not tried: --sysroot describes another system)");
    return log;
  }
  // What dmesg reads: syslog(2), refused to unprivileged users under kernel.dmesg_restrict=1.
  if (auto t = read_syslog(&error)) {
    log.skipped_bytes = keep_newest_lines(*t, kMaxBytes);
    log.text = std::move(t);
    log.source = "syslog(2), as dmesg reads it";
    return log;
  }
  log.unreadable.push_back(fmt::format("dmesg's syslog(2) ({})", error));
  return log;
}

std::vector<XidEvent> parse_xids(std::string_view text) {
  // The code is at most 9 digits, so it fits an int; a longer number is no Xid line.
  static const std::regex kXid(
      R"(NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): ([0-9]{1,9})(?![0-9])[,:]?([^\n]*))");
  std::vector<XidEvent> out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (line.find("NVRM: Xid") == std::string::npos) continue;  // the regex is slow
    std::smatch m;
    if (!std::regex_search(line, m, kXid)) continue;
    int code = 0;
    const std::string digits = m[2];
    std::from_chars(digits.data(), digits.data() + digits.size(), code);
    out.push_back({code, m[1].str(), m[3].str(), line_position(line), line});
  }
  return out;
}

bool same_pci_device(std::string_view xid_pci, std::string_view pci_bus_id) {
  const auto a = pci_parts(xid_pci), b = pci_parts(pci_bus_id);
  return a && b && *a == *b;
}

KernelLogWatch::KernelLogWatch(const std::string& root) {
  std::string error;
  fd_ = open_log(under_root(root, "/dev/kmsg"), &error);
  if (fd_ >= 0) {
    // A first read tells a kmsg we may not read (EPERM on read under dmesg_restrict) from one
    // we may; then the position moves to the end, past everything logged before the run.
    char probe[1];
    const ssize_t n = ::read(fd_, probe, 0);
    if (n < 0 && errno != EAGAIN && errno != EINVAL) {
      error = std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
    } else if (::lseek(fd_, 0, SEEK_END) < 0) {
      error = std::string("lseek: ") + std::strerror(errno);
      ::close(fd_);
      fd_ = -1;
    } else {
      readable_ = true;
      regular_file_ = is_regular_file(fd_);
      source_ = "/dev/kmsg";
      return;
    }
  }
  why_ = "/dev/kmsg (" + error + ")";
  if (!(root.empty() || root == "/")) {
    why_ += "; dmesg's syslog(2) not tried: --sysroot describes another system";
    return;
  }
  if (auto t = read_syslog(&error)) {
    seen_ = lines_of(*t);
    std::sort(seen_.begin(), seen_.end());
    readable_ = true;
    source_ = "syslog(2), as dmesg reads it";
    why_.clear();
    return;
  }
  why_ += fmt::format(
      "; dmesg's syslog(2) ({}): run as root, give CAP_SYSLOG, or sudo sysctl "
      "kernel.dmesg_restrict=0",
      error);
}

KernelLogWatch::~KernelLogWatch() {
  if (fd_ >= 0) ::close(fd_);
}

std::string KernelLogWatch::read_new() {
  if (!readable_) return {};
  std::string text, error;
  if (fd_ >= 0 && regular_file_) {
    // Whole lines only: a line still being written is kept for the next call.
    text = std::move(partial_);
    partial_.clear();
    read_plain_fd(fd_, text, &error, kMaxBytes);
    const auto nl = text.rfind('\n');
    if (nl == std::string::npos && text.size() >= kMaxBytes) return {};  // no line: dropped
    partial_ = text.substr(nl == std::string::npos ? 0 : nl + 1);
    text.resize(text.size() - partial_.size());
    return text;
  }
  if (fd_ >= 0) {
    std::uint64_t skipped = 0;
    read_records_fd(fd_, text, &error, &skipped);
    return text;
  }
  auto now = read_syslog(&error);
  if (!now) return {};
  // Lines not there at the start (a multiset difference: a repeated line counts once per copy).
  std::vector<std::string> seen = seen_;
  for (auto& line : lines_of(*now)) {
    auto it = std::lower_bound(seen.begin(), seen.end(), line);
    if (it != seen.end() && *it == line) {
      seen.erase(it);
      continue;
    }
    text += line + "\n";
  }
  return text;
}

}  // namespace gpucheck::host

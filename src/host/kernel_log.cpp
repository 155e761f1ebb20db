// Reading the kernel log: /dev/kmsg gives one record per read() and EAGAIN at its end
// (O_NONBLOCK); a saved copy under a fixture root is a plain file that ends with EOF; both are
// read the same way. syslog(2) (klogctl) is what dmesg falls back to.
#include "host/kernel_log.h"

#include <fcntl.h>
#include <sys/klog.h>
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

constexpr std::size_t kMaxBytes = 32u << 20;

std::string under_root(const std::string& root, const char* path) {
  if (root.empty() || root == "/") return path;
  std::string base = root;
  while (base.size() > 1 && base.back() == '/') base.pop_back();
  return base + path;
}

// Reads records from fd until its end; false (error set) on a read error.
bool read_records_fd(int fd, std::string& out, std::string* error) {
  std::vector<char> buf(16384);
  while (out.size() < kMaxBytes) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n > 0) {
      out.append(buf.data(), static_cast<std::size_t>(n));
      if (out.back() != '\n') out += '\n';
      continue;
    }
    if (n == 0 || errno == EAGAIN) return true;
    if (errno == EPIPE || errno == EINTR) continue;  // records overwritten while reading: go on
    *error = std::strerror(errno);
    return false;
  }
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

}  // namespace

KernelLog read_kernel_log(const std::string& root) {
  KernelLog log;
  std::string error;
  const std::string kmsg = under_root(root, "/dev/kmsg");
  if (const int fd = open_log(kmsg, &error); fd >= 0) {
    std::string text;
    const bool ok = read_records_fd(fd, text, &error);
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
    log.text = std::move(t);
    log.source = "syslog(2), as dmesg reads it";
    return log;
  }
  log.unreadable.push_back(fmt::format("dmesg's syslog(2) ({})", error));
  return log;
}

std::vector<XidEvent> parse_xids(std::string_view text) {
  static const std::regex kXid(R"(NVRM: Xid \(PCI:([0-9A-Fa-f:.]+)\): ([0-9]+)[,:]?([^\n]*))");
  std::vector<XidEvent> out;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (!std::regex_search(line, m, kXid)) continue;
    int code = 0;
    const std::string digits = m[2];
    std::from_chars(digits.data(), digits.data() + digits.size(), code);
    out.push_back({code, m[1].str(), m[3].str()});
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
  if (fd_ >= 0) {
    read_records_fd(fd_, text, &error);
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

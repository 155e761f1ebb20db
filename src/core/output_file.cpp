// Atomic output files (mkstemp + fsync + rename) and checked writes to stdout.
#include "core/output_file.h"

#include "core/errors.h"
#include "core/stop_signals.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <system_error>

namespace gpucheck {

namespace {

[[noreturn]] void fail(std::string_view flag, const std::string& path, int error,
                       std::string_view detail = {}) {
  throw UsageError(
      fmt::format("{}: cannot write '{}'{}: {}", flag, path, detail, std::strerror(error)));
}

std::string parent_dir(const std::string& path) {
  std::string dir = std::filesystem::path(path).parent_path().string();
  return dir.empty() ? "." : dir;
}

// Writes everything, retrying short writes and EINTR; errno of the failure, or 0.
int write_fully(int fd, std::string_view data) {
  std::size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) return EIO;
    done += static_cast<std::size_t>(n);
  }
  return 0;
}

mode_t new_file_mode() {
  mode_t mask = ::umask(0);
  ::umask(mask);
  return 0666 & ~mask;
}

void write_in_place(const std::string& path, std::string_view data, std::string_view flag) {
  int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
  if (fd < 0) fail(flag, path, errno);
  int e = write_fully(fd, data);
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e != 0) fail(flag, path, e);
}

// The file a path names once its symbolic links are followed, even when the last link dangles
// (its target is then created, as `echo > link` does, rather than the link replaced). Links
// inside the directories are left to the kernel; only the final component is followed here.
std::string follow_links(const std::string& path) {
  std::string current = path;
  for (int hop = 0; hop < 40; ++hop) {
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return current;
    std::string target(static_cast<std::size_t>(PATH_MAX), '\0');
    const ssize_t n = ::readlink(current.c_str(), target.data(), target.size());
    if (n < 0) return current;
    target.resize(static_cast<std::size_t>(n));
    current = target.front() == '/' ? target : parent_dir(current) + "/" + target;
  }
  return current;  // a loop: the write below fails with ELOOP and says so
}

// Another user's file keeps its owner (and so stays readable to them): the new file is given
// the old one's owner and group. False where that is not allowed (not root, not a member of the
// group): the caller then writes in place, which keeps both.
bool keep_owner(int fd, const struct stat& old) {
  struct stat now {};
  if (::fstat(fd, &now) != 0) return false;
  if (now.st_uid == old.st_uid && now.st_gid == old.st_gid) return true;
  return ::fchown(fd, old.st_uid, old.st_gid) == 0;
}

}  // namespace

bool same_file(const std::string& a, const std::string& b) {
  const std::string ta = follow_links(a), tb = follow_links(b);
  struct stat sa {
  }, sb{};
  if (::stat(ta.c_str(), &sa) == 0 && ::stat(tb.c_str(), &sb) == 0)
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(ta, ea);
  const auto cb = std::filesystem::weakly_canonical(tb, eb);
  if (ea || eb)
    return std::filesystem::absolute(ta).lexically_normal() ==
           std::filesystem::absolute(tb).lexically_normal();
  return ca == cb;
}

void check_distinct_outputs(const std::vector<std::pair<std::string, std::string>>& outputs) {
  for (std::size_t i = 0; i < outputs.size(); ++i)
    for (std::size_t j = i + 1; j < outputs.size(); ++j)
      if (!outputs[i].second.empty() && !outputs[j].second.empty() &&
          same_file(outputs[i].second, outputs[j].second))
        throw UsageError(fmt::format(
            "{} and {} name the same file ('{}', '{}'): one output would overwrite the other",
            outputs[i].first, outputs[j].first, outputs[i].second, outputs[j].second));
}

void check_output_path(const std::string& path, std::string_view flag) {
  if (path.empty()) throw UsageError(fmt::format("{}: an empty file name", flag));
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) fail(flag, path, EISDIR);
    if (::access(path.c_str(), W_OK) != 0) fail(flag, path, errno);
    if (!S_ISREG(st.st_mode)) return;  // written in place
  }
  // A new file (or one replaced by rename) needs a writable directory: the link target's.
  const std::string target = follow_links(path);
  const std::string dir = parent_dir(target);
  struct stat ds {};
  if (::stat(dir.c_str(), &ds) != 0) fail(flag, path, errno, fmt::format(" (directory '{}')", dir));
  if (!S_ISDIR(ds.st_mode)) fail(flag, path, ENOTDIR, fmt::format(" ('{}')", dir));
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    fail(flag, path, errno, fmt::format(" (directory '{}')", dir));
}

void write_output_file(const std::string& path, std::string_view data, std::string_view flag) {
  check_output_path(path, flag);
  struct stat st {};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) return write_in_place(path, data, flag);
  // Beside a symbolic link's target (a dangling one's too), so the link stays a link.
  const std::string target = follow_links(path);
  const std::string name = std::filesystem::path(target).filename().string();
  std::string temp = fmt::format("{}/.{}.tmp-XXXXXX", parent_dir(target), name);
  int fd = -1;
  std::optional<StoppableTempFile> guard;  // the stop handler unlinks it until renamed
  {
    StopSignalsBlocked blocked;
    fd = ::mkostemp(temp.data(), O_CLOEXEC);
    if (fd < 0) fail(flag, path, errno);
    guard.emplace(temp);
  }
  if (exists && !keep_owner(fd, st)) {
    ::close(fd);
    ::unlink(temp.c_str());
    guard->release();
    return write_in_place(path, data, flag);
  }
  int e = write_fully(fd, data);
  if (e == 0 && ::fchmod(fd, exists ? (st.st_mode & 07777) : new_file_mode()) != 0) e = errno;
  if (e == 0 && ::fsync(fd) != 0 && errno != EINVAL) e = errno;  // EINVAL: no fsync here
  if (::close(fd) != 0 && e == 0) e = errno;
  if (e == 0 && ::rename(temp.c_str(), target.c_str()) != 0) e = errno;
  if (e != 0) ::unlink(temp.c_str());
  guard->release();
  if (e != 0) fail(flag, path, e);
}

void write_stdout(std::string_view data) {
  int e = write_fully(STDOUT_FILENO, data);
  if (e == EBADF) throw UsageError("cannot write to stdout: it is closed (Bad file descriptor)");
  if (e != 0) throw UsageError(fmt::format("cannot write to stdout: {}", std::strerror(e)));
}

void reserve_standard_fds() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free number is fd itself; O_PATH refuses reads and writes with EBADF.
    int got = fd == STDIN_FILENO ? ::open("/dev/null", O_RDONLY) : ::open("/", O_PATH);
    if (got >= 0 && got != fd) {
      ::dup2(got, fd);
      ::close(got);
    }
  }
}

}  // namespace gpucheck

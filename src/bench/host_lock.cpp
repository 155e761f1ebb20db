#include "bench/host_lock.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace gpucheck::bench {

namespace {

std::runtime_error os_error(const std::string& call, const std::string& path) {
  const int e = errno;
  return std::runtime_error(fmt::format("{} of the host transfer lock '{}' failed: {} ({})", call,
                                        path, std::strerror(e), e));
}

}  // namespace

HostLock::HostLock(std::string path) : path_(std::move(path)) {}

HostLock::~HostLock() {
  if (fd_ >= 0) ::close(fd_);
}

HostLock::Guard HostLock::hold(bool when) {
  if (path_.empty() || !when) return Guard(-1);
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd_ < 0) throw os_error("open(2)", path_);
  }
  while (::flock(fd_, LOCK_EX) != 0)
    if (errno != EINTR) throw os_error("flock(2, LOCK_EX)", path_);
  return Guard(fd_);
}

HostLock::Guard::Guard(int fd) : fd_(fd) {}

HostLock::Guard::~Guard() {
  if (fd_ >= 0) ::flock(fd_, LOCK_UN);
}

HostLockFile::HostLockFile() {
  const char* dir = std::getenv("TMPDIR");
  std::string pattern = fmt::format("{}/gpucheck-host-lock-XXXXXX", dir && *dir ? dir : "/tmp");
  std::vector<char> name(pattern.begin(), pattern.end());
  name.push_back('\0');
  const int fd = ::mkstemp(name.data());
  if (fd < 0) throw os_error("mkstemp(3)", pattern);
  ::close(fd);
  path_ = name.data();
}

HostLockFile::~HostLockFile() {
  ::unlink(path_.c_str());
}

}  // namespace gpucheck::bench

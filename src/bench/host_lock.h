// One device at a time for the timed host transfers of concurrent bench children.
//
// GPUs benchmarked at the same time share the host's memory and PCIe root: two pageable H2D
// copies at once each get part of the host's memcpy bandwidth (-42 % measured on an
// H100 pair), so a figure would depend on what the sibling child was doing. Children of one
// wave take an exclusive flock(2) on a file the parent made, around each host-bound timed
// region only; GPU-bound cells still run side by side. Each child opens the file itself: flock
// locks belong to open file descriptions, and an inherited descriptor would be shared.
#pragma once

#include <string>

namespace gpucheck::bench {

class HostLock {
 public:
  // An empty path: no lock (one device, or --serial).
  explicit HostLock(std::string path);
  ~HostLock();
  HostLock(const HostLock&) = delete;
  HostLock& operator=(const HostLock&) = delete;

  // Held until the guard goes out of scope; the kernel lets go if the child dies.
  class Guard {
   public:
    explicit Guard(int fd);
    ~Guard();
    Guard(const Guard&) = delete;
    Guard& operator=(const Guard&) = delete;

   private:
    int fd_;
  };
  // Blocks until no sibling holds the lock (`when` false: holds nothing); throws naming
  // open(2)/flock(2) and errno.
  [[nodiscard]] Guard hold(bool when = true);
  bool active() const { return !path_.empty(); }

 private:
  std::string path_;
  int fd_ = -1;
};

// A lock file for one wave of concurrent children, removed when the owner goes.
class HostLockFile {
 public:
  HostLockFile();  // throws naming mkstemp(3) and errno
  ~HostLockFile();
  HostLockFile(const HostLockFile&) = delete;
  HostLockFile& operator=(const HostLockFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpucheck::bench

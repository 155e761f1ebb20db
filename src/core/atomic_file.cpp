// Temporary file in the same directory (rename is atomic only within one file system), fsync,
// rename, fsync of the directory so the rename survives a crash.
#include "core/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <random>
#include <stdexcept>
#include <string>
#include <system_error>

namespace gpucheck {

namespace {

[[noreturn]] void fail(const std::filesystem::path& path, const char* call, int err) {
  throw std::runtime_error(
      fmt::format("writing {}: {} failed: {}", path.string(), call, std::strerror(err)));
}

// Closes the descriptor and removes the temporary file unless the rename happened.
struct TempFile {
  int fd = -1;
  std::filesystem::path path;
  bool renamed = false;
  ~TempFile() {
    if (fd >= 0) ::close(fd);
    if (!renamed && !path.empty()) ::unlink(path.c_str());
  }
};

}  // namespace

void write_file_atomically(const std::filesystem::path& path, std::string_view text) {
  const std::filesystem::path dir = path.parent_path().empty() ? "." : path.parent_path();
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw std::runtime_error(
        fmt::format("writing {}: cannot create {}: {}", path.string(), dir.string(), ec.message()));
  std::random_device rd;
  TempFile tmp;
  for (int attempt = 0; attempt < 8 && tmp.fd < 0; ++attempt) {
    tmp.path = dir / fmt::format(".{}.{}-{:08x}.tmp", path.filename().string(), ::getpid(), rd());
    tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (tmp.fd < 0 && errno != EEXIST) {
      const int err = errno;
      tmp.path.clear();
      fail(path, "open", err);
    }
  }
  if (tmp.fd < 0) fail(path, "open", EEXIST);
  for (std::size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(tmp.fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail(path, "write", errno);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fsync(tmp.fd) != 0) fail(path, "fsync", errno);
  if (::close(tmp.fd) != 0) {
    tmp.fd = -1;
    fail(path, "close", errno);
  }
  tmp.fd = -1;
  if (::rename(tmp.path.c_str(), path.c_str()) != 0) fail(path, "rename", errno);
  tmp.renamed = true;
  if (int d = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); d >= 0) {
    ::fsync(d);  // best effort: the file is complete either way
    ::close(d);
  }
}

}  // namespace gpucheck

// A fresh private directory under $TMPDIR (or /tmp), removed with everything in it when its owner
// goes: the .icd copies the isolation probes and the loader guard point OpenCL loaders at.
#pragma once

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>

namespace gpucheck::opencl {

class TempDir {
 public:
  TempDir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = fmt::format("{}/gpucheck-icd-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    // A failure leaves path_ empty: the caller reports it or does without.
    if (::mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace gpucheck::opencl

// Page-aligned ordinary host memory: what a program's own arrays are. The GPU backends hand it
// out for HostMemory::kPageable, so a pageable copy is timed from the same kind of memory
// whichever backend runs it.
#pragma once

#include "backends/device.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <stdexcept>

namespace gpucheck {

class PageableHost final : public HostAllocation {
 public:
  explicit PageableHost(std::size_t bytes) : bytes_(bytes) {
    const std::size_t rounded = std::max<std::size_t>((bytes + 4095) / 4096 * 4096, 4096);
    ptr_ = std::aligned_alloc(4096, rounded);
    if (ptr_ == nullptr)
      throw std::runtime_error(fmt::format("host allocation of {} bytes failed", bytes));
  }
  ~PageableHost() override { std::free(ptr_); }
  PageableHost(const PageableHost&) = delete;
  PageableHost& operator=(const PageableHost&) = delete;
  void* data() override { return ptr_; }
  std::size_t bytes() const override { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

}  // namespace gpucheck

// The staged copies' memcpy on several threads copies every byte, whatever the size.
#include "core/parallel_copy.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace gpucheck {
namespace {

TEST(ParallelCopy, EveryByteAtSizesAroundThePieces) {
  for (std::size_t bytes : {std::size_t{0}, std::size_t{1}, kParallelCopyMin - 1, kParallelCopyMin,
                            kParallelCopyMin + 4097, 5 * kParallelCopyMin + 3}) {
    std::vector<unsigned char> src(bytes + 2), dst(bytes + 2, 0xEE);
    for (std::size_t i = 0; i < src.size(); ++i)
      src[i] = static_cast<unsigned char>((i * 2654435761u) >> 24);
    // From one byte in, so neither side is aligned; the bytes around stay untouched.
    parallel_copy(dst.data() + 1, src.data() + 1, bytes);
    EXPECT_EQ(dst[0], 0xEE) << bytes;
    EXPECT_EQ(dst[bytes + 1], 0xEE) << bytes;
    for (std::size_t i = 1; i <= bytes; ++i)
      if (dst[i] != src[i]) FAIL() << "byte " << i << " of " << bytes;
  }
}

}  // namespace
}  // namespace gpucheck

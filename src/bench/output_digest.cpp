#include "bench/output_digest.h"

#include "core/parallel_ranges.h"

#include <cstring>
#include <vector>

namespace gpucheck::bench {

namespace {

// splitmix64's finaliser: every input bit reaches every output bit.
std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xBF58476D1CE4E5B9ull;
  x ^= x >> 27;
  x *= 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

// Blocks of this many words are digested alone (in any thread), then the block digests in
// order: the split never depends on the thread count.
constexpr std::size_t kBlockWords = std::size_t{1} << 14;

std::uint64_t block_digest(const unsigned char* p, std::size_t words, std::uint64_t block) {
  std::uint64_t h = mix(block + 0x9E3779B97F4A7C15ull);
  for (std::size_t i = 0; i < words; ++i) {
    std::uint64_t w = 0;
    std::memcpy(&w, p + 8 * i, 8);
    h = mix(h ^ w) + i;
  }
  return h;
}

}  // namespace

std::uint64_t output_digest(const void* data, std::size_t bytes) {
  const auto* p = static_cast<const unsigned char*>(data);
  const std::size_t words = bytes / 8;
  const std::size_t blocks = (words + kBlockWords - 1) / kBlockWords;
  std::vector<std::uint64_t> digests(blocks);
  parallel_ranges(
      blocks,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t b = begin; b < end; ++b) {
          const std::size_t first = b * kBlockWords;
          digests[b] = block_digest(p + 8 * first, std::min(kBlockWords, words - first), b);
        }
      },
      16);
  std::uint64_t h = mix(bytes);
  for (const std::uint64_t d : digests) h = mix(h ^ d);
  std::uint64_t tail = 0;
  if (bytes % 8 != 0) std::memcpy(&tail, p + 8 * words, bytes % 8);
  return mix(h ^ tail ^ (static_cast<std::uint64_t>(bytes % 8) << 56));
}

}  // namespace gpucheck::bench

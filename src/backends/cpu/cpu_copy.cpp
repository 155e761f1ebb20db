// Multithreaded memcpy; the streaming variant uses SSE2 non-temporal stores (x86-64 baseline, so
// no ISA dispatch: write-combining makes 16-byte streaming stores as fast as wider ones).
#include "backends/cpu/cpu_copy.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "backends/cpu/cpu_cache.h"
#include "backends/cpu/parallel.h"

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace gpucheck::cpu {

namespace {

constexpr std::size_t kMinParallelBytes = std::size_t{256} << 10;
// Threads split the buffer in 4 KiB blocks, so that ranges start on page and line boundaries.
constexpr std::size_t kBlockBytes = 4096;

void copy_streaming(unsigned char* dst, const unsigned char* src, std::size_t bytes) {
#if defined(__x86_64__)
  // Regular copy up to the destination's first 64-byte boundary, then whole lines streamed.
  const std::size_t head = std::min(bytes, (64 - reinterpret_cast<std::uintptr_t>(dst) % 64) % 64);
  std::memcpy(dst, src, head);
  std::size_t i = head;
  for (; i + 64 <= bytes; i += 64) {
    const auto* s = reinterpret_cast<const __m128i*>(src + i);
    auto* d = reinterpret_cast<__m128i*>(dst + i);
    const __m128i a = _mm_loadu_si128(s), b = _mm_loadu_si128(s + 1);
    const __m128i c = _mm_loadu_si128(s + 2), e = _mm_loadu_si128(s + 3);
    _mm_stream_si128(d, a);
    _mm_stream_si128(d + 1, b);
    _mm_stream_si128(d + 2, c);
    _mm_stream_si128(d + 3, e);
  }
  std::memcpy(dst + i, src + i, bytes - i);
  _mm_sfence();  // streaming stores are weakly ordered: publish them before the caller syncs
#else
  std::memcpy(dst, src, bytes);
#endif
}

}  // namespace

void copy_bytes(void* dst, const void* src, std::size_t bytes, int threads, CopyStores stores) {
  if (bytes == 0) return;
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  const bool stream = stores == CopyStores::kStreaming ||
                      (stores == CopyStores::kAuto && 2 * bytes >= last_level_cache_bytes());
  const std::size_t blocks = (bytes + kBlockBytes - 1) / kBlockBytes;
  const int t = bytes < kMinParallelBytes ? 1 : threads;
  parallel_for(blocks, t, [&](std::size_t b, std::size_t e) {
    const std::size_t begin = b * kBlockBytes;
    const std::size_t count = std::min(e * kBlockBytes, bytes) - begin;
    if (stream)
      copy_streaming(d + begin, s + begin, count);
    else
      std::memcpy(d + begin, s + begin, count);
  });
}

}  // namespace gpucheck::cpu

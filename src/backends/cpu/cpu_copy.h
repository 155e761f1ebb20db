// Host memory bandwidth: a multithreaded memcpy of large buffers.
#pragma once

#include <cstddef>

namespace gpucheck::cpu {

// How the copy writes the destination. Streaming (non-temporal) stores skip the read-for-ownership
// of destination lines (2 bytes of traffic a byte copied instead of 3); kAuto streams when source
// + destination are at least the size of the last-level cache and otherwise lets memcpy decide.
enum class CopyStores { kAuto, kRegular, kStreaming };

// memcpy(dst, src, bytes), split into contiguous 4 KiB-aligned ranges that the threads share out
// (threads <= 0: all hardware threads; copies below 256 KiB stay on the calling thread). The
// buffers must not overlap.
void copy_bytes(void* dst, const void* src, std::size_t bytes, int threads,
                CopyStores stores = CopyStores::kAuto);

}  // namespace gpucheck::cpu

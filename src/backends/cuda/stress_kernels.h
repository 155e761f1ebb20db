// Launchers of the stress kernels (stress_kernels.cu): the checksum of a buffer's 64-bit words
// and one memory-test pass (backends/stress_math.h holds the math both share with the host).
#pragma once

#include "backends/stress_math.h"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace gpucheck::cuda {

// Blocks the checksum uses on a device with `sms` multiprocessors: the partials buffer must hold
// this many 64-bit words.
int checksum_blocks(int sms);

// sums[slot] = Σ checksum_term(words[i], i) over n words, in two kernels: per-block partial
// sums into `partials` (checksum_blocks(sms) words), then one block adds them up. words must be
// 16-byte aligned (cudaMalloc gives 256).
cudaError_t launch_checksum(const std::uint64_t* words, std::size_t n, std::uint64_t* partials,
                            std::uint64_t* sums, std::size_t slot, int sms, cudaStream_t stream);

// One memory-test pass (StressOps::memtest): result[0] += mismatches, result[1] = min(result[1],
// lowest bad index), with 64-bit atomics only where a thread saw a mismatch.
cudaError_t launch_memtest(std::uint64_t* words, std::size_t n, std::uint64_t first_word,
                           stress_math::PatternKind check, std::uint64_t check_param,
                           stress_math::PatternKind write, std::uint64_t write_param,
                           unsigned long long* result, int sms, cudaStream_t stream);

}  // namespace gpucheck::cuda

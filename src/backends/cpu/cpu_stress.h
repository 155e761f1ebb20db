// The stress primitives on host memory: the checksum of a buffer's 64-bit words and one
// memory-test pass, both on the shared thread pool (backends/stress_math.h defines the math).
#pragma once

#include "backends/device.h"

#include <cstddef>
#include <cstdint>

namespace gpucheck::cpu {

// Σ stress_math::checksum_term(words[i], i) modulo 2^64.
std::uint64_t checksum_words(const std::uint64_t* words, std::size_t n, int threads);

// StressOps::memtest on host memory: result[0] += mismatches, result[1] = min(result[1], lowest
// bad index counted from first_word).
void memtest_words(std::uint64_t* words, std::size_t n, std::uint64_t first_word, MemPattern check,
                   MemPattern write, std::uint64_t result[2], int threads);

}  // namespace gpucheck::cpu

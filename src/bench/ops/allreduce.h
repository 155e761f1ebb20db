// What the group engine and the tests use of allreduce's unit (bench/ops/allreduce.cpp).
#pragma once

#include <cstddef>

namespace gpucheck::bench {

// busbw / algbw of an all-reduce over n devices (nccl-tests): 2(n−1)/n; 0 for n = 0.
double allreduce_bus_factor(std::size_t n);

// All-reduce calls per timed repetition (nccl-tests' -n).
inline constexpr int kAllreducesPerRep = 20;

}  // namespace gpucheck::bench

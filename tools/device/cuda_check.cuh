// The status check of the standalone CUDA programs here (exp_variants.cu, sgemm_control.cu):
// a failed call prints itself, its code and its meaning, and the program exits 1.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                           \
  do {                                                                                        \
    cudaError_t e = (call);                                                                   \
    if (e != cudaSuccess) {                                                                   \
      std::fprintf(stderr, "%s: %d %s\n", #call, static_cast<int>(e), cudaGetErrorString(e)); \
      std::exit(1);                                                                           \
    }                                                                                         \
  } while (0)

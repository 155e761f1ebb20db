// 2-D convolution on host arrays (cross-correlation as PyTorch's conv2d: no kernel flip), zero
// padding, one stride for both axes; im2col into a bounded scratch buffer, then OpenBLAS sgemm.
#pragma once

#include <cstddef>

#include "bench/workload.h"

namespace gpucheck::cpu {

// Default bound on the im2col scratch a call allocates; larger problems are processed in blocks
// (NCHW: blocks of one image's output pixels; NHWC: blocks of the batch's output pixels).
inline constexpr std::size_t kConvScratchBytes = std::size_t{64} << 20;

// y[n,k,p,q] = Σ_{c,r,s} x[n,c,p·stride−pad+r, q·stride−pad+s] · w[k,c,r,s] (out-of-range x is 0).
// x is N×C×H×W, w K×C×R×S, y N×K×P×Q (P = shape.p(), Q = shape.q()), all packed row-major.
// threads <= 0 means all hardware threads. Throws std::invalid_argument for a shape with a zero
// dimension or stride, a filter larger than the padded input, or a dimension beyond BLAS's int.
// shape.layout is not consulted: the function name says the layout. At most max_scratch_bytes of
// scratch are allocated, but always room for one output pixel's column.
void conv2d_nchw_f32(const bench::ConvShape& shape, const float* x, const float* w, float* y,
                     int threads, std::size_t max_scratch_bytes = kConvScratchBytes);

// The same in channels-last layout, as cuDNN's NHWC and PyTorch's channels_last store it:
// x is N×H×W×C, w K×R×S×C, y N×P×Q×K.
void conv2d_nhwc_f32(const bench::ConvShape& shape, const float* x, const float* w, float* y,
                     int threads, std::size_t max_scratch_bytes = kConvScratchBytes);

// Bytes of im2col scratch a call with this shape allocates (0 when it needs none: 1×1 filters,
// stride 1, no padding).
std::size_t conv2d_scratch_bytes(const bench::ConvShape& shape, bench::Layout layout,
                                 std::size_t max_scratch_bytes = kConvScratchBytes);

}  // namespace gpucheck::cpu

// 2-D convolution on host arrays (cross-correlation as PyTorch's conv2d: no kernel flip), zero
// padding, one stride for both axes; im2col into a bounded scratch buffer, then the BLAS's sgemm.
#pragma once

#include <cstddef>
#include <memory>

#include "backends/cpu/blas_library.h"
#include "core/workload.h"

namespace gpucheck::cpu {

// Problems are processed in blocks of output pixels (NCHW: of one image; NHWC: of the batch)
// whose im2col matrix takes about kConvBlockBytes a thread: small enough to stay in cache for the
// GEMM that reads it, large enough for an efficient GEMM. kConvScratchBytes is the default bound
// on a call's scratch over all threads.
inline constexpr std::size_t kConvBlockBytes = std::size_t{4} << 20;
inline constexpr std::size_t kConvScratchBytes = std::size_t{64} << 20;

// Reusable im2col scratch. A caller that convolves repeatedly (benchmark repetitions) passes the
// same one, so that the memory is allocated and faulted in once rather than every call.
class ConvScratch {
 public:
  // At least `floats` floats, uninitialised; grows, never shrinks.
  float* reserve(std::size_t floats);
  std::size_t capacity() const { return floats_; }

 private:
  std::unique_ptr<float[]> data_;
  std::size_t floats_ = 0;
};

struct ConvOptions {
  std::size_t max_scratch_bytes = kConvScratchBytes;
  ConvScratch* scratch = nullptr;  // nullptr: allocate for the call
};

// y[n,k,p,q] = Σ_{c,r,s} x[n,c,p·stride−pad+r, q·stride−pad+s] · w[k,c,r,s] (out-of-range x is 0).
// x is N×C×H×W, w K×C×R×S, y N×K×P×Q (P = shape.p(), Q = shape.q()), all packed row-major.
// threads <= 0 means all hardware threads. Throws std::invalid_argument for a shape with a zero
// dimension or stride, a filter larger than the padded input, or a dimension beyond BLAS's int.
// shape.layout is not consulted: the function name says the layout. With at least two units of
// work (image blocks) a thread, the units run in parallel with single-threaded BLAS calls;
// otherwise one by one with the BLAS's threads. Sets the BLAS's process-wide thread count, so calls
// must not run concurrently with other BLAS use.
void conv2d_nchw_f32(const BlasLibrary& blas, const ConvShape& shape, const float* x,
                     const float* w, float* y, int threads, const ConvOptions& options = {});

// The same in channels-last layout, as cuDNN's NHWC and PyTorch's channels_last store it:
// x is N×H×W×C, w K×R×S×C, y N×P×Q×K.
void conv2d_nhwc_f32(const BlasLibrary& blas, const ConvShape& shape, const float* x,
                     const float* w, float* y, int threads, const ConvOptions& options = {});

// Bytes of im2col scratch a call with this shape and thread count uses: at most
// max_scratch_bytes, unless one output pixel's column a thread needs more; 0 when no im2col is
// needed (1×1 filters, stride 1, no padding). threads <= 0 means all hardware threads.
std::size_t conv2d_scratch_bytes(const ConvShape& shape, Layout layout, int threads,
                                 std::size_t max_scratch_bytes = kConvScratchBytes);

}  // namespace gpucheck::cpu

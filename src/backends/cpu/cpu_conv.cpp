// conv2d as im2col + sgemm. NCHW: per image, Y_n[K×PQ] = W[K×CRS] · col[CRS×PQ], in column blocks
// when one image's col exceeds the scratch bound. NHWC: the whole batch is one GEMM
// Y[NPQ×K] = col[NPQ×RSC] · Wᵀ, in row blocks under the same bound.
#include "backends/cpu/cpu_conv.h"

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "backends/cpu/parallel.h"

namespace gpucheck::cpu {

namespace {

using bench::ConvShape;

// Checked integer sizes of a convolution; everything fits BLAS's int where a GEMM dimension needs.
struct Dims {
  std::int64_t n, c, h, w, k, r, s, stride, pad, p, q;
  std::int64_t crs() const { return c * r * s; }
  std::int64_t pq() const { return p * q; }
  // 1×1 filter, stride 1, no padding: the input already is the col matrix.
  bool pointwise() const { return r == 1 && s == 1 && stride == 1 && pad == 0; }
};

Dims check_shape(const ConvShape& sh) {
  constexpr std::uint64_t kMaxDim = std::numeric_limits<blasint>::max();
  auto fail = [](const std::string& why) { throw std::invalid_argument("conv2d: " + why); };
  if (sh.n == 0 || sh.c == 0 || sh.h == 0 || sh.w == 0 || sh.k == 0 || sh.r == 0 || sh.s == 0)
    fail("every dimension must be at least 1");
  if (sh.stride == 0) fail("stride must be at least 1");
  for (std::uint64_t v : {sh.n, sh.c, sh.h, sh.w, sh.k, sh.r, sh.s, sh.stride, sh.pad})
    if (v > kMaxDim) fail("a dimension exceeds the BLAS integer range");
  if (sh.h + 2 * sh.pad < sh.r || sh.w + 2 * sh.pad < sh.s)
    fail("the filter is larger than the padded input");
  const std::uint64_t p = sh.p(), q = sh.q();
  // A product of dimensions that fits BLAS's int, or kMaxDim + 1 when it does not.
  auto product = [&](std::initializer_list<std::uint64_t> vs) {
    std::uint64_t acc = 1;
    for (std::uint64_t v : vs)
      if (__builtin_mul_overflow(acc, v, &acc) || acc > kMaxDim) return kMaxDim + 1;
    return acc;
  };
  if (product({sh.c, sh.r, sh.s}) > kMaxDim || product({sh.n, p, q}) > kMaxDim)
    fail("a GEMM dimension exceeds the BLAS integer range");
  auto i = [](std::uint64_t v) { return static_cast<std::int64_t>(v); };
  return {i(sh.n), i(sh.c),      i(sh.h),   i(sh.w), i(sh.k), i(sh.r),
          i(sh.s), i(sh.stride), i(sh.pad), i(p),    i(q)};
}

// Output pixels per block so that a block's col matrix (CRS floats a pixel) fits `max_bytes`:
// at least 1, at most `limit` (one image's pixels for NCHW, the batch's for NHWC).
std::int64_t block_pixels(const Dims& d, std::size_t max_bytes, std::int64_t limit) {
  const std::size_t per_pixel = sizeof(float) * static_cast<std::size_t>(d.crs());
  const auto fit = static_cast<std::int64_t>(std::min<std::size_t>(
      max_bytes / per_pixel, static_cast<std::size_t>(std::numeric_limits<std::int64_t>::max())));
  return std::clamp<std::int64_t>(fit, 1, limit);
}

// col[row, j − j0] for rows (c, r, s) and output pixels j ∈ [j0, j1) of image `xn` (C×H×W).
void im2col_nchw(const Dims& d, const float* xn, std::int64_t j0, std::int64_t j1, float* col,
                 int threads) {
  const std::int64_t cols = j1 - j0;
  parallel_for(static_cast<std::size_t>(d.crs()), threads, [&](std::size_t rb, std::size_t re) {
    for (auto row = static_cast<std::int64_t>(rb); row < static_cast<std::int64_t>(re); ++row) {
      const std::int64_t c = row / (d.r * d.s), r = row / d.s % d.r, s = row % d.s;
      float* dst = col + row * cols;
      const float* plane = xn + c * d.h * d.w;
      for (std::int64_t j = j0; j < j1;) {
        const std::int64_t p = j / d.q, q0 = j % d.q;
        const std::int64_t q1 = std::min(d.q, q0 + (j1 - j));
        const std::int64_t ih = p * d.stride - d.pad + r;
        if (ih < 0 || ih >= d.h) {
          std::fill(dst, dst + (q1 - q0), 0.0f);
        } else {
          const float* src = plane + ih * d.w;
          if (d.stride == 1) {
            // Valid q: 0 <= q − pad + s < W. Zeros before and after one contiguous run.
            const std::int64_t lo = std::clamp(d.pad - s, q0, q1);
            const std::int64_t hi = std::clamp(d.w + d.pad - s, lo, q1);
            std::fill(dst, dst + (lo - q0), 0.0f);
            std::memcpy(dst + (lo - q0), src + (lo - d.pad + s),
                        static_cast<std::size_t>(hi - lo) * sizeof(float));
            std::fill(dst + (hi - q0), dst + (q1 - q0), 0.0f);
          } else {
            for (std::int64_t q = q0; q < q1; ++q) {
              const std::int64_t iw = q * d.stride - d.pad + s;
              dst[q - q0] = (iw >= 0 && iw < d.w) ? src[iw] : 0.0f;
            }
          }
        }
        dst += q1 - q0;
        j += q1 - q0;
      }
    }
  });
}

// col[row − r0, (r, s, c)] for output pixels row ∈ [r0, r1) over the batch (n, p, q).
void im2col_nhwc(const Dims& d, const float* x, std::int64_t r0, std::int64_t r1, float* col,
                 int threads) {
  const std::int64_t width = d.crs();
  const auto run = static_cast<std::size_t>(d.c) * sizeof(float);
  parallel_for(static_cast<std::size_t>(r1 - r0), threads, [&](std::size_t b, std::size_t e) {
    for (std::int64_t row = r0 + static_cast<std::int64_t>(b);
         row < r0 + static_cast<std::int64_t>(e); ++row) {
      const std::int64_t n = row / d.pq(), p = row / d.q % d.p, q = row % d.q;
      float* dst = col + (row - r0) * width;
      for (std::int64_t r = 0; r < d.r; ++r) {
        const std::int64_t ih = p * d.stride - d.pad + r;
        for (std::int64_t s = 0; s < d.s; ++s, dst += d.c) {
          const std::int64_t iw = q * d.stride - d.pad + s;
          if (ih < 0 || ih >= d.h || iw < 0 || iw >= d.w)
            std::memset(dst, 0, run);
          else
            std::memcpy(dst, x + ((n * d.h + ih) * d.w + iw) * d.c, run);
        }
      }
    }
  });
}

blasint bi(std::int64_t v) {
  return static_cast<blasint>(v);
}

}  // namespace

std::size_t conv2d_scratch_bytes(const ConvShape& shape, bench::Layout layout,
                                 std::size_t max_scratch_bytes) {
  const Dims d = check_shape(shape);
  if (d.pointwise()) return 0;
  const std::int64_t limit = layout == bench::Layout::kNchw ? d.pq() : d.n * d.pq();
  return static_cast<std::size_t>(d.crs() * block_pixels(d, max_scratch_bytes, limit)) *
         sizeof(float);
}

void conv2d_nchw_f32(const ConvShape& shape, const float* x, const float* w, float* y, int threads,
                     std::size_t max_scratch_bytes) {
  const Dims d = check_shape(shape);
  const int t = resolve_threads(threads);
  openblas_set_num_threads(t);
  const std::int64_t image_in = d.c * d.h * d.w, image_out = d.k * d.pq();
  if (d.pointwise()) {  // Y_n = W[K×C] · X_n[C×HW]
    for (std::int64_t n = 0; n < d.n; ++n)
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bi(d.k), bi(d.pq()), bi(d.c), 1.0f, w,
                  bi(d.c), x + n * image_in, bi(d.pq()), 0.0f, y + n * image_out, bi(d.pq()));
    return;
  }
  const std::int64_t block = block_pixels(d, max_scratch_bytes, d.pq());
  std::vector<float> col(static_cast<std::size_t>(d.crs() * block));
  for (std::int64_t n = 0; n < d.n; ++n) {
    for (std::int64_t j0 = 0; j0 < d.pq(); j0 += block) {
      const std::int64_t j1 = std::min(d.pq(), j0 + block);
      im2col_nchw(d, x + n * image_in, j0, j1, col.data(), t);
      // Y_n[:, j0:j1] = W · col, written in place with Y's leading dimension PQ.
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, bi(d.k), bi(j1 - j0), bi(d.crs()),
                  1.0f, w, bi(d.crs()), col.data(), bi(j1 - j0), 0.0f, y + n * image_out + j0,
                  bi(d.pq()));
    }
  }
}

void conv2d_nhwc_f32(const ConvShape& shape, const float* x, const float* w, float* y, int threads,
                     std::size_t max_scratch_bytes) {
  const Dims d = check_shape(shape);
  const int t = resolve_threads(threads);
  openblas_set_num_threads(t);
  const std::int64_t rows = d.n * d.pq();
  if (d.pointwise()) {  // Y[NHW×K] = X[NHW×C] · Wᵀ
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(rows), bi(d.k), bi(d.c), 1.0f, x,
                bi(d.c), w, bi(d.c), 0.0f, y, bi(d.k));
    return;
  }
  const std::int64_t block = block_pixels(d, max_scratch_bytes, rows);
  std::vector<float> col(static_cast<std::size_t>(d.crs() * block));
  for (std::int64_t r0 = 0; r0 < rows; r0 += block) {
    const std::int64_t r1 = std::min(rows, r0 + block);
    im2col_nhwc(d, x, r0, r1, col.data(), t);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, bi(r1 - r0), bi(d.k), bi(d.crs()), 1.0f,
                col.data(), bi(d.crs()), w, bi(d.crs()), 0.0f, y + r0 * d.k, bi(d.k));
  }
}

}  // namespace gpucheck::cpu

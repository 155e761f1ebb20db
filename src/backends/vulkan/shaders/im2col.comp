// im2col for convolution as GEMM (cross-correlation, zero padding), as the CPU conv defines it
// and kernels/opencl_im2col.cl builds it. f32 by default; -DGC_F16 copies f16. Elements are
// copied, never computed on, so the result is exact in either. NHWC (constant 1) picks the
// layout; each invocation writes elements of the column matrix grid-stride, for images
// n0 .. n0+images-1:
//   NCHW: image j's (C·R·S) × (P·Q) matrix, row-major, at j·C·R·S·P·Q: row (c·R + r)·S + s,
//         column p·Q + q, so that W (K × C·R·S) · col is the image's K × P·Q output.
//   NHWC: one (images·P·Q) × (R·S·C) matrix: row (j·P + p)·Q + q, column (r·S + s)·C + c, so
//         that col · Wᵀ (W is K × R·S·C) is the images' NHWC output.
// The host keeps every index within 32 bits (x's and col's element counts, H + 2·pad, W + 2·pad).
#version 450
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#else
#define ELEM float
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const bool NHWC = false;

layout(push_constant) uniform Params {
  uint n0, images;
  uint C, H, W, R, S, P, Q;
  uint stride, pad;
} p;
layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Col { ELEM col[]; };

void main() {
  const uint pq = p.P * p.Q;
  const uint crs = p.C * p.R * p.S;
  const uint total = p.images * pq * crs;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += step) {
    uint j, c, r, s, pp, q;
    if (NHWC) {
      const uint row = idx / crs, column = idx % crs;
      c = column % p.C;
      s = column / p.C % p.S;
      r = column / (p.C * p.S);
      q = row % p.Q;
      pp = row / p.Q % p.P;
      j = row / pq;
    } else {
      j = idx / (crs * pq);
      const uint in_image = idx % (crs * pq);
      const uint row = in_image / pq, column = in_image % pq;
      s = row % p.S;
      r = row / p.S % p.R;
      c = row / (p.R * p.S);
      pp = column / p.Q;
      q = column % p.Q;
    }
    // Coordinates in the padded input: unsigned, and in bounds when pad <= hh < H + pad.
    const uint hh = pp * p.stride + r, ww = q * p.stride + s;
    ELEM v = ELEM(0);
    if (hh >= p.pad && hh - p.pad < p.H && ww >= p.pad && ww - p.pad < p.W) {
      const uint n = p.n0 + j, h = hh - p.pad, w = ww - p.pad;
      v = x[NHWC ? ((n * p.H + h) * p.W + w) * p.C + c : ((n * p.C + c) * p.H + h) * p.W + w];
    }
    col[idx] = v;
  }
}

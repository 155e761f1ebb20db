// im2col for convolution as GEMM (cross-correlation, zero padding), as the CPU conv defines it
// and kernels/opencl_im2col.cl builds it. f32 by default; -DGC_F16 copies f16. Elements are
// copied, never computed on, so the result is exact in either. NHWC (constant 1) picks the
// layout; each invocation writes elements of the column matrix grid-stride, for images
// n0 .. n0+images-1:
//   NCHW: image j's TAPS × (P·Q) matrix, row-major, at j·TAPS·P·Q: row (c·R + r)·S + s,
//         column p·Q + q, so that W (K × TAPS) · col is the image's K × P·Q output.
//   NHWC: one (images·P·Q) × TAPS matrix: row (j·P + p)·Q + q, column (r·S + s)·C + c, so
//         that col · Wᵀ (W is K × TAPS) is the images' NHWC output.
// TAPS is C·R·S rounded up for the 16-byte GEMM shader; the taps past C·R·S are zero (the host
// pads W likewise, with this shader: K images of 1×1 with C·R·S channels, NHWC).
// The shape is specialization constants, so that the index arithmetic divides by constants
// (a multiply and a shift) rather than by run-time values: with push constants the divisions,
// eight an element, cost more than the copy. The host keeps every index within 32 bits (x's and
// col's element counts, H + 2·pad, W + 2·pad).
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
layout(constant_id = 2) const uint C = 1;
layout(constant_id = 3) const uint H = 1;
layout(constant_id = 4) const uint W = 1;
layout(constant_id = 5) const uint R = 1;
layout(constant_id = 6) const uint S = 1;
layout(constant_id = 7) const uint P = 1;
layout(constant_id = 8) const uint Q = 1;
layout(constant_id = 9) const uint STRIDE = 1;
layout(constant_id = 10) const uint PAD = 0;
layout(constant_id = 11) const uint TAPS = 1;

layout(push_constant) uniform Params { uint n0, images; } p;
layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Col { ELEM col[]; };

void main() {
  const uint pq = P * Q;
  const uint crs = C * R * S;
  const uint total = p.images * pq * TAPS;
  const uint step = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint idx = gl_GlobalInvocationID.x; idx < total; idx += step) {
    uint j, tap, pp, q;
    if (NHWC) {
      const uint row = idx / TAPS;
      tap = idx % TAPS;
      q = row % Q;
      pp = row / Q % P;
      j = row / pq;
    } else {
      j = idx / (TAPS * pq);
      const uint in_image = idx % (TAPS * pq);
      tap = in_image / pq;
      const uint column = in_image % pq;
      pp = column / Q;
      q = column % Q;
    }
    ELEM v = ELEM(0);
    if (tap < crs) {
      uint c, r, s;
      if (NHWC) {
        c = tap % C;
        s = tap / C % S;
        r = tap / (C * S);
      } else {
        s = tap % S;
        r = tap / S % R;
        c = tap / (R * S);
      }
      // Coordinates in the padded input: unsigned, and in bounds when PAD <= hh < H + PAD.
      const uint hh = pp * STRIDE + r, ww = q * STRIDE + s;
      if (hh >= PAD && hh - PAD < H && ww >= PAD && ww - PAD < W) {
        const uint n = p.n0 + j, h = hh - PAD, w = ww - PAD;
        v = x[NHWC ? ((n * H + h) * W + w) * C + c : ((n * C + c) * H + h) * W + w];
      }
    }
    col[idx] = v;
  }
}

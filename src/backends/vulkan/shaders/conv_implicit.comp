// NCHW convolution as implicit GEMM: gemm_tiles.glsl's tiling and summation, A loaded as
// shaders/gemm_vec4.comp loads it (the filters, K × TAPS, 16-byte loads along taps), but B, the
// column matrix of shaders/im2col.comp (TAPS × P·Q per image), is never built: each B-tile
// element is read from x where im2col would have copied it from. A batch of z work groups is one image each. im2col writes and the GEMM
// re-reads a column matrix R·S times the size of x (231 MB for N=32, C=64, 56×56 under 3×3),
// about 30 % of the two-pass conv's time on an H200.
// The constants 0–5 are gemm_tiles.glsl's (BT unused: B is never transposed here); 6 is unused
// and the shape from 7 on is as im2col.comp has it, so the index arithmetic divides by constants.
// The host keeps every index within 32 bits (x's, y's and W's element counts).
#version 450
#extension GL_EXT_control_flow_attributes : require
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define VEC f16vec4
#define ELEM float16_t
#else
#define VEC vec4
#define ELEM float
#endif

// constant_id 6: unused
layout(constant_id = 7) const uint C = 1;
layout(constant_id = 8) const uint H = 1;
layout(constant_id = 9) const uint W = 1;
layout(constant_id = 10) const uint R = 1;
layout(constant_id = 11) const uint S = 1;
layout(constant_id = 12) const uint P = 1;
layout(constant_id = 13) const uint Q = 1;
layout(constant_id = 14) const uint STRIDE = 1;
layout(constant_id = 15) const uint PAD = 0;
layout(constant_id = 16) const uint TAPS = 4;  // C·R·S rounded up to 4; W's rows are this long

// m: the filters (K); x_off, c_off: the first image's x and y; x_batch, c_batch: an image's.
layout(push_constant) uniform Params {
  uint m;
  uint x_off, c_off;
  uint x_batch, c_batch;
} p;
layout(std430, binding = 0) readonly buffer A { VEC a[]; };
layout(std430, binding = 1) readonly buffer X { ELEM x[]; };
// y in vectors where every row starts on one (P·Q a multiple of 4), else element by element.
layout(std430, binding = 2) writeonly buffer Y4 { VEC y4[]; };
layout(std430, binding = 2) writeonly buffer Y1 { ELEM y1[]; };

#include "gemm_tiles.glsl"

const uint PQ = P * Q;
const uint CRS = C * R * S;
const uint HW = H * W;

// This work group's image, worked out where used (in variables they cost registers, as in
// gemm_vec4.comp).
uint x_off() { return p.x_off + gl_WorkGroupID.z * p.x_batch; }
uint c_off() { return p.c_off + gl_WorkGroupID.z * p.c_batch; }

// Each B-tile vector an invocation loads covers the same four output positions at every
// k-step: their rows and columns in the padded input (p·STRIDE, q·STRIDE) and which of them
// exist (bit e: position 4·c4 + e < P·Q), worked out once.
uint pos_h[B_PER * 4];
uint pos_w[B_PER * 4];
uint pos_ok[B_PER];

void positions(uint col0, uint tid) {
  for (uint u = 0; u < B_PER; ++u) {
    const uint i = tid + u * THREADS;
    const uint c4 = i % BN4;
    pos_ok[u] = 0;
    for (uint e = 0; e < 4; ++e) {
      const uint j = col0 + c4 * 4 + e;
      pos_h[u * 4 + e] = j / Q * STRIDE;
      pos_w[u * 4 + e] = j % Q * STRIDE;
      if (i < B_VECS && j < PQ) pos_ok[u] |= 1u << e;
    }
  }
}

// B's columns are positions()'s, worked out once from col0.
void load_tiles(uint row0, uint col0, uint k0, uint tid) {
  for (uint u = 0; u < A_PER; ++u) {
    const uint i = tid + u * THREADS;
    const uint r = i / (BK / 4), kq = i % (BK / 4);
    const uint gr = row0 + r, gk = k0 + kq * 4;
    ra[u] = (i < A_VECS && gr < p.m && gk < TAPS) ? vec4(a[(gr * TAPS + gk) / 4]) : vec4(0.0f);
  }
  for (uint u = 0; u < B_PER; ++u) {
    const uint i = tid + u * THREADS;
    const uint kk = i / BN4;
    const uint tap = k0 + kk;  // taps past C·R·S (TAPS's padding, the last k-step's) are zero
    vec4 v = vec4(0.0f);
    if (tap < CRS) {
      const uint c = tap / (R * S), r = tap / S % R, s = tap % S;
      const uint base = x_off() + c * HW;
      for (uint e = 0; e < 4; ++e) {
        // Unsigned coordinates in the padded input: in x when PAD <= hh < H + PAD.
        const uint hh = pos_h[u * 4 + e] + r, ww = pos_w[u * 4 + e] + s;
        if ((pos_ok[u] & (1u << e)) != 0 && hh >= PAD && hh - PAD < H && ww >= PAD &&
            ww - PAD < W)
          v[e] = float(x[base + (hh - PAD) * W + (ww - PAD)]);
      }
    }
    rb[u] = v;
  }
}

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WX + tx;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;
  positions(col0, tid);

  sum_tiles(row0, col0, TAPS);

  for (uint i4 = 0; i4 < TM4; ++i4)
    for (uint q = 0; q < 4; ++q) {
      const uint r = row0 + (ty + i4 * WY) * 4 + q;
      if (r >= p.m) continue;
      for (uint j4 = 0; j4 < TN4; ++j4) {
        const uint cc = col0 + (tx + j4 * WX) * 4;
        if (cc >= PQ) continue;
        const vec4 v = acc[(i4 * 4 + q) * TN4 + j4];
        const uint at = c_off() + r * PQ + cc;
        if (PQ % 4 == 0) {
          y4[at / 4] = VEC(v);
        } else {
          for (uint e = 0; e < 4; ++e)
            if (cc + e < PQ) y1[at + e] = ELEM(v[e]);
        }
      }
    }
}

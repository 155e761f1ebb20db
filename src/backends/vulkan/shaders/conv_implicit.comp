// NCHW convolution as implicit GEMM: shaders/gemm_vec4.comp's tiling, summation and A (the
// filters, K × TAPS, 16-byte loads along taps), but B, the column matrix of shaders/im2col.comp
// (TAPS × P·Q per image), is never built: each B-tile element is read from x where im2col would
// have copied it from. A batch of z work groups is one image each. im2col writes and the GEMM
// re-reads a column matrix R·S times the size of x (231 MB for N=32, C=64, 56×56 under 3×3),
// about 30 % of the two-pass conv's time on an H200.
// The constants keep gemm_vec4.comp's ids (0–5, BT unused), leave 6 unused, and give the shape
// from 7 on as im2col.comp has it, so the index arithmetic divides by constants.
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

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint TM = 8;
layout(constant_id = 3) const uint TN = 8;
layout(constant_id = 4) const uint BK = 16;
layout(constant_id = 5) const bool BT = false;  // gemm_vec4.comp's; B is never transposed here
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

const uint WX = gl_WorkGroupSize.x;
const uint WY = gl_WorkGroupSize.y;
const uint THREADS = WX * WY;
const uint BM = WY * TM;
const uint BN = WX * TN;
const uint BM4 = BM / 4;
const uint BN4 = BN / 4;
const uint TM4 = TM / 4;
const uint TN4 = TN / 4;
const uint A_VECS = BM * BK / 4;
const uint B_VECS = BK * BN4;
const uint A_PER = (A_VECS + THREADS - 1) / THREADS;
const uint B_PER = (B_VECS + THREADS - 1) / THREADS;
const uint PQ = P * Q;
const uint CRS = C * R * S;
const uint HW = H * W;

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

shared vec4 as[2 * BK * BM4];
shared vec4 bs[2 * BK * BN4];

// This work group's image, worked out where used (in variables they cost registers, as in
// gemm_vec4.comp).
uint x_off() { return p.x_off + gl_WorkGroupID.z * p.x_batch; }
uint c_off() { return p.c_off + gl_WorkGroupID.z * p.c_batch; }

vec4 ra[A_PER];
vec4 rb[B_PER];
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

void load_tiles(uint row0, uint k0, uint tid) {
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

void store_tiles(uint tid, uint which) {
  const uint a0 = which * BK * BM4, b0 = which * BK * BN4;
  for (uint u = 0; u < A_PER; ++u) {
    const uint i = tid + u * THREADS;
    if (i >= A_VECS) break;
    const uint r = i / (BK / 4), kq = i % (BK / 4);
    for (uint q = 0; q < 4; ++q) as[a0 + (kq * 4 + q) * BM4 + r / 4][r % 4] = ra[u][q];
  }
  for (uint u = 0; u < B_PER; ++u) {
    const uint i = tid + u * THREADS;
    if (i >= B_VECS) break;
    bs[b0 + i] = rb[u];
  }
}

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WX + tx;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;
  positions(col0, tid);

  vec4 acc[TM * TN4];
  for (uint i = 0; i < TM * TN4; ++i) acc[i] = vec4(0.0f);
  vec4 bv[TN4];

  load_tiles(row0, 0, tid);
  store_tiles(tid, 0);
  barrier();
  uint cur = 0;
  [[dont_unroll]] for (uint k0 = 0; k0 < TAPS; k0 += BK) {
    const bool more = k0 + BK < TAPS;
    if (more) load_tiles(row0, k0 + BK, tid);
    const uint a0 = cur * BK * BM4, b0 = cur * BK * BN4;
    for (uint kk = 0; kk < BK; ++kk) {
      for (uint j4 = 0; j4 < TN4; ++j4) bv[j4] = bs[b0 + kk * BN4 + tx + j4 * WX];
      for (uint i4 = 0; i4 < TM4; ++i4) {
        const vec4 av = as[a0 + kk * BM4 + ty + i4 * WY];
        for (uint q = 0; q < 4; ++q)
          for (uint j4 = 0; j4 < TN4; ++j4) {
            const uint at = (i4 * 4 + q) * TN4 + j4;
            acc[at] = fma(vec4(av[q]), bv[j4], acc[at]);
          }
      }
    }
    // The other buffer was last read before the previous step's barrier.
    if (more) store_tiles(tid, cur ^ 1);
    barrier();
    cur ^= 1;
  }
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

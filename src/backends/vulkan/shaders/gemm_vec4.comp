// C[m×n] = A[m×k] · B[k×n] as shaders/gemm.comp computes it (the same push and specialization
// constants, f32 sums, batches of z work groups), for blocks whose k, n, offsets, batch strides
// and leading dimensions are multiples of 4: the host picks this shader only then. What it does
// that the general one cannot:
// - every global load and every shared-memory read is a 4-element vector (16 bytes of f32), so
//   each invocation's TM × TN sums cost TM/4 + TN/4 shared reads per k instead of TM + TN;
// - an invocation's rows are TM/4 groups of 4 adjacent rows, strided by 4·WY, and its columns
//   TN/4 groups of 4, strided by 4·WX, so neighbouring invocations read neighbouring vectors;
// - the next k-step's tiles are loaded into registers while the current ones are summed, and
//   stored into the other of two shared buffers, so the loads' latency hides behind the
//   arithmetic with one barrier a step;
// - registers are spent on the sums only: the batch offsets are worked out where used, one
//   vector of A is live at a time, and the k loop is not unrolled. On an H200 this took
//   128×128 tiles of 8×8 sums from 130 registers an invocation to 128, two work groups an SM
//   instead of one, and f32 GEMM 4096 from 25.2 to 37.3 TFLOP/s (docs/PERFORMANCE.md).
// Bᵀ (BT, NHWC conv's filters) is read as A is: 16-byte vectors along k, stored transposed.
// TM, TN and BK must be multiples of 4 (the host checks). Rows past m and columns past n are
// zero-filled on load and skipped on store, so m is free.
#version 450
#extension GL_EXT_control_flow_attributes : require
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define VEC f16vec4
#else
#define VEC vec4
#endif

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint TM = 8;
layout(constant_id = 3) const uint TN = 8;
layout(constant_id = 4) const uint BK = 16;
layout(constant_id = 5) const bool BT = false;

const uint WX = gl_WorkGroupSize.x;
const uint WY = gl_WorkGroupSize.y;
const uint THREADS = WX * WY;
const uint BM = WY * TM;
const uint BN = WX * TN;
const uint BM4 = BM / 4;
const uint BN4 = BN / 4;
const uint TM4 = TM / 4;
const uint TN4 = TN / 4;
// Vectors of a tile and how many each invocation loads.
const uint A_VECS = BM * BK / 4;
const uint B_VECS = BK * BN4;
const uint A_PER = (A_VECS + THREADS - 1) / THREADS;
const uint B_PER = (B_VECS + THREADS - 1) / THREADS;

layout(push_constant) uniform Params {
  uint m, n, k;
  uint a_off, b_off, c_off;
  uint lda, ldb, ldc;
  uint a_batch, b_batch, c_batch;
} p;
layout(std430, binding = 0) readonly buffer A { VEC a[]; };
layout(std430, binding = 1) readonly buffer B { VEC b[]; };
layout(std430, binding = 2) writeonly buffer C { VEC c[]; };

// Two buffers of each, at 0 and at one tile's length.
shared vec4 as[2 * BK * BM4];  // as[kk * BM4 + r4]: rows 4·r4 … 4·r4+3 at k = kk
shared vec4 bs[2 * BK * BN4];  // bs[kk * BN4 + c4]: columns 4·c4 … 4·c4+3 at k = kk

// This work group's matrices: the push constants' offsets plus its batch's, worked out where
// they are used (in variables they are held in registers throughout).
uint a_off() { return p.a_off + gl_WorkGroupID.z * p.a_batch; }
uint b_off() { return p.b_off + gl_WorkGroupID.z * p.b_batch; }
uint c_off() { return p.c_off + gl_WorkGroupID.z * p.c_batch; }

vec4 ra[A_PER];
vec4 rb[B_PER];

// A's tile (and Bᵀ's): BK/4 neighbouring invocations read one row's vectors along k; B's:
// neighbouring invocations read neighbouring vectors of a row.
void load_tiles(uint row0, uint col0, uint k0, uint tid) {
  for (uint u = 0; u < A_PER; ++u) {
    const uint i = tid + u * THREADS;
    const uint r = i / (BK / 4), kq = i % (BK / 4);
    const uint gr = row0 + r, gk = k0 + kq * 4;
    ra[u] = (i < A_VECS && gr < p.m && gk < p.k) ? vec4(a[(a_off() + gr * p.lda + gk) / 4])
                                                 : vec4(0.0f);
  }
  for (uint u = 0; u < B_PER; ++u) {
    const uint i = tid + u * THREADS;
    if (BT) {
      const uint cc = i / (BK / 4), kq = i % (BK / 4);
      const uint gc = col0 + cc, gk = k0 + kq * 4;
      rb[u] = (i < B_VECS && gc < p.n && gk < p.k) ? vec4(b[(b_off() + gc * p.ldb + gk) / 4])
                                                   : vec4(0.0f);
    } else {
      const uint kk = i / BN4, c4 = i % BN4;
      const uint gk = k0 + kk, gc = col0 + c4 * 4;
      rb[u] = (i < B_VECS && gk < p.k && gc < p.n) ? vec4(b[(b_off() + gk * p.ldb + gc) / 4])
                                                   : vec4(0.0f);
    }
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
    if (BT) {
      const uint cc = i / (BK / 4), kq = i % (BK / 4);
      for (uint q = 0; q < 4; ++q) bs[b0 + (kq * 4 + q) * BN4 + cc / 4][cc % 4] = rb[u][q];
    } else {
      bs[b0 + i] = rb[u];
    }
  }
}

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WX + tx;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;

  vec4 acc[TM * TN4];  // acc[i * TN4 + j4]: row i's columns of group j4
  for (uint i = 0; i < TM * TN4; ++i) acc[i] = vec4(0.0f);
  vec4 bv[TN4];

  load_tiles(row0, col0, 0, tid);
  store_tiles(tid, 0);
  barrier();
  uint cur = 0;
  [[dont_unroll]] for (uint k0 = 0; k0 < p.k; k0 += BK) {
    const bool more = k0 + BK < p.k;
    if (more) load_tiles(row0, col0, k0 + BK, tid);
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
        if (cc < p.n) c[(c_off() + r * p.ldc + cc) / 4] = VEC(acc[(i4 * 4 + q) * TN4 + j4]);
      }
    }
}

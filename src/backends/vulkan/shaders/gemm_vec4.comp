// C[m×n] = A[m×k] · B[k×n] as shaders/gemm.comp computes it (the same push and specialization
// constants, f32 sums, batches of z work groups), for blocks whose k, n, offsets, batch strides
// and leading dimensions are multiples of 4: the host picks this shader only then. Every global
// load is a 16-byte vector (4 elements of f32); the tiling and summation are gemm_tiles.glsl's.
// Bᵀ (BT, NHWC conv's filters) is read as A is: 16-byte vectors along k, stored transposed.
// Rows past m and columns past n are zero-filled on load and skipped on store, so m is free.
#version 450
#extension GL_EXT_control_flow_attributes : require
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define VEC f16vec4
#else
#define VEC vec4
#endif

layout(push_constant) uniform Params {
  uint m, n, k;
  uint a_off, b_off, c_off;
  uint lda, ldb, ldc;
  uint a_batch, b_batch, c_batch;
} p;
layout(std430, binding = 0) readonly buffer A { VEC a[]; };
layout(std430, binding = 1) readonly buffer B { VEC b[]; };
layout(std430, binding = 2) writeonly buffer C { VEC c[]; };

#include "gemm_tiles.glsl"

// This work group's matrices: the push constants' offsets plus its batch's, worked out where
// they are used (in variables they are held in registers throughout).
uint a_off() { return p.a_off + gl_WorkGroupID.z * p.a_batch; }
uint b_off() { return p.b_off + gl_WorkGroupID.z * p.b_batch; }
uint c_off() { return p.c_off + gl_WorkGroupID.z * p.c_batch; }

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

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;

  sum_tiles(row0, col0, p.k);

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

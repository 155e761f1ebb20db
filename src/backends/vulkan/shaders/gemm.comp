// C[m×n] = A[m×k] · B[k×n], row-major, f32 sums (fma). Each matrix may be a block of a larger
// one: it starts at an element offset and its rows are ld elements apart, so that conv's im2col
// GEMMs run on one image's slice of a buffer. A dispatch's z work groups are a batch: group z's
// matrices start a_batch, b_batch and c_batch elements after the first's (NCHW conv's images in
// one dispatch: W shared, a_batch 0). BT (constant 5) reads B stored as n×k, i.e. Bᵀ,
// which NHWC convolution's filters are. Tiled through shared memory: a work group
// of WX × WY invocations computes a BM × BN tile of C (BM = WY·TM, BN = WX·TN), stepping along k
// by BK; each invocation keeps TM × TN sums in registers, its rows and columns strided by WY and
// WX so that neighbouring invocations read neighbouring shared words. The parameters are
// specialization constants: one SPIR-V module serves every parameter set. Edges are checked, so
// any shape runs. -DGC_F16 stores A, B and C in f16 and sums in f32 (each product of two f16
// values is exact in f32; C is rounded once on store).
#version 450
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#else
#define ELEM float
#endif

layout(local_size_x_id = 0, local_size_y_id = 1) in;
layout(constant_id = 2) const uint TM = 4;
layout(constant_id = 3) const uint TN = 4;
layout(constant_id = 4) const uint BK = 16;
layout(constant_id = 5) const bool BT = false;

const uint WX = gl_WorkGroupSize.x;
const uint WY = gl_WorkGroupSize.y;
const uint BM = WY * TM;
const uint BN = WX * TN;

// The host keeps every element index within 32 bits.
layout(push_constant) uniform Params {
  uint m, n, k;
  uint a_off, b_off, c_off;
  uint lda, ldb, ldc;
  uint a_batch, b_batch, c_batch;
} p;
layout(std430, binding = 0) readonly buffer A { ELEM a[]; };
layout(std430, binding = 1) readonly buffer B { ELEM b[]; };
layout(std430, binding = 2) writeonly buffer C { ELEM c[]; };

shared float as[BK * BM];  // as[kk * BM + row]
shared float bs[BK * BN];  // bs[kk * BN + col]

void main() {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WX + tx;
  const uint threads = WX * WY;
  const uint row0 = gl_WorkGroupID.y * BM;
  const uint col0 = gl_WorkGroupID.x * BN;
  const uint a_off = p.a_off + gl_WorkGroupID.z * p.a_batch;
  const uint b_off = p.b_off + gl_WorkGroupID.z * p.b_batch;
  const uint c_off = p.c_off + gl_WorkGroupID.z * p.c_batch;

  float acc[TM * TN];
  for (uint i = 0; i < TM * TN; ++i) acc[i] = 0.0f;
  float av[TM];
  float bv[TN];

  for (uint k0 = 0; k0 < p.k; k0 += BK) {
    // Neighbouring invocations read neighbouring k of one row of A and neighbouring columns of
    // one row of B.
    for (uint i = tid; i < BM * BK; i += threads) {
      const uint r = i / BK, kk = i % BK;
      const uint gr = row0 + r, gk = k0 + kk;
      as[kk * BM + r] = (gr < p.m && gk < p.k) ? float(a[a_off + gr * p.lda + gk]) : 0.0f;
    }
    // Bᵀ's rows run along k: there neighbouring invocations read neighbouring k, as in A.
    for (uint i = tid; i < BK * BN; i += threads) {
      const uint kk = BT ? i % BK : i / BN, cc = BT ? i / BK : i % BN;
      const uint gk = k0 + kk, gc = col0 + cc;
      bs[kk * BN + cc] =
          (gk < p.k && gc < p.n)
              ? float(b[b_off + (BT ? gc * p.ldb + gk : gk * p.ldb + gc)])
              : 0.0f;
    }
    barrier();
    for (uint kk = 0; kk < BK; ++kk) {
      for (uint i = 0; i < TM; ++i) av[i] = as[kk * BM + ty + i * WY];
      for (uint j = 0; j < TN; ++j) bv[j] = bs[kk * BN + tx + j * WX];
      for (uint i = 0; i < TM; ++i)
        for (uint j = 0; j < TN; ++j) acc[i * TN + j] = fma(av[i], bv[j], acc[i * TN + j]);
    }
    barrier();
  }
  for (uint i = 0; i < TM; ++i) {
    const uint r = row0 + ty + i * WY;
    if (r >= p.m) continue;
    for (uint j = 0; j < TN; ++j) {
      const uint cc = col0 + tx + j * WX;
      if (cc < p.n) c[c_off + r * p.ldc + cc] = ELEM(acc[i * TN + j]);
    }
  }
}

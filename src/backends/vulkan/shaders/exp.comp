// y[i] = exp(x[i]) over n elements. f32 by default; -DGC_F16 stores f16 and computes in f32
// (rounded once on store). The exponential is computed here rather than with GLSL's exp(), whose
// required accuracy (3 + 2|x| ulp) is looser than what bench verifies (2e-6): a Cody-Waite
// reduction x = j ln2 + r, |r| <= ln2/2, and a degree-7 Taylor polynomial of e^r (truncation below
// 6e-9 relative), scaled by 2^j.
//
// As CUDA's kernel does (src/backends/cuda/cuda_kernels.cu): 16-byte vectors (4 elements of f32, 8
// of f16, read as uvec4 words: an f16vec4 would be an 8-byte load), UNROLL of them loaded by each
// invocation before any is computed, so several loads are in flight per invocation. The work groups
// are numbered over x and y (x alone is limited to 65535 on some devices) and loop while the
// numbered groups do not cover the array: a GPU gets one group per UNROLL × group size vectors and
// loops once, a CPU implementation a few groups that loop over many. The first group also does the
// tail (n not a multiple of a vector).
#version 450
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#define VEC uvec4
const uint PER_VEC = 8;
#else
#define ELEM float
#define VEC vec4
const uint PER_VEC = 4;
#endif

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNROLL = 4;
layout(push_constant) uniform Params { uint n; } p;
layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Y { ELEM y[]; };
// The same buffers as vectors.
layout(std430, binding = 0) readonly buffer XV { VEC xv[]; };
layout(std430, binding = 1) writeonly buffer YV { VEC yv[]; };

float exp_accurate(float v) {
  if (v > 88.72283f) return 1.0f / 0.0f;
  if (v < -103.97208f) return 0.0f;
  precise float j = round(v * 1.44269504f);
  precise float r = fma(j, -0.693145752f, v);  // ln2's high part: exact product for |j| < 2^9
  r = fma(j, -1.42860677e-6f, r);              // ln2 - high part
  precise float e = 1.0f / 5040.0f;
  e = fma(e, r, 1.0f / 720.0f);
  e = fma(e, r, 1.0f / 120.0f);
  e = fma(e, r, 1.0f / 24.0f);
  e = fma(e, r, 1.0f / 6.0f);
  e = fma(e, r, 0.5f);
  e = fma(e, r, 1.0f);
  e = fma(e, r, 1.0f);
  // 2^j in two steps, so that j down to -150 (subnormal results) stays representable.
  const int ij = int(j);
  const int half_j = ij / 2;
  return e * exp2(float(half_j)) * exp2(float(ij - half_j));
}

#ifdef GC_F16
// Two halves a word, each rounded once to f16 after an f32 exponential. GLSL's exp() is used
// here: its error bound (3 + 2|x| ulp of f32, under 3e-6 relative on f16's inputs, |x| <= 11)
// is far inside f16's rounding (5e-4) and bench's 2e-3, and exp_accurate's extra arithmetic
// made this loop compute-bound at twice f32's elements per byte (0.70-0.74 of CUDA's kernel on
// an H200, whose expf() is cheap).
uint exp2x16(uint w) {
  const vec2 e = exp(vec2(unpackFloat2x16(w)));
  return packFloat2x16(f16vec2(e));
}
VEC exp_vec(VEC v) { return VEC(exp2x16(v.x), exp2x16(v.y), exp2x16(v.z), exp2x16(v.w)); }
#else
VEC exp_vec(VEC v) {
  return VEC(exp_accurate(v.x), exp_accurate(v.y), exp_accurate(v.z), exp_accurate(v.w));
}
#endif

void main() {
  const uint wg = gl_WorkGroupSize.x;
  const uint per_group = wg * UNROLL;
  const uint vectors = p.n / PER_VEC;
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  VEC v[UNROLL];
  for (uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; g * per_group < vectors;
       g += groups) {
    const uint base = g * per_group + gl_LocalInvocationID.x;
    for (uint u = 0; u < UNROLL; ++u) {
      const uint i = base + u * wg;
      if (i < vectors) v[u] = xv[i];
    }
    for (uint u = 0; u < UNROLL; ++u) {
      const uint i = base + u * wg;
      if (i < vectors) yv[i] = exp_vec(v[u]);
    }
  }
  if (gl_WorkGroupID.x == 0 && gl_WorkGroupID.y == 0)
    for (uint i = vectors * PER_VEC + gl_LocalInvocationID.x; i < p.n; i += wg)
      y[i] = ELEM(exp_accurate(float(x[i])));
}

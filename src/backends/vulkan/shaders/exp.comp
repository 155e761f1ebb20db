// y[i] = exp(x[i]) over n elements, grid-stride. f32 by default; -DGC_F16 stores f16 and computes
// in f32 (rounded once on store). The exponential is computed here rather than with GLSL's
// exp(), whose required accuracy (3 + 2|x| ulp) is looser than what bench verifies (2e-6): a
// Cody-Waite reduction x = j ln2 + r, |r| <= ln2/2, and a degree-7 Taylor polynomial of e^r
// (truncation below 6e-9 relative), scaled by 2^j.
#version 450
#ifdef GC_F16
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define ELEM float16_t
#else
#define ELEM float
#endif

layout(local_size_x_id = 0) in;
layout(push_constant) uniform Params { uint n; } p;
layout(std430, binding = 0) readonly buffer X { ELEM x[]; };
layout(std430, binding = 1) writeonly buffer Y { ELEM y[]; };

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

void main() {
  const uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
  for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride)
    y[i] = ELEM(exp_accurate(float(x[i])));
}

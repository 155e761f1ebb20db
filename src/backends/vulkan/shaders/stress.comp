// The stress shaders: the checksum of a buffer's 64-bit words and one memory-test pass,
// restating src/backends/stress_math.h (a test compares the results with the CPU's). Each work
// group writes a partial result; a one-group pass folds the partials, so no 64-bit atomics are
// needed. MODE (a specialization constant) picks the pass: 0 checksum partials, 1 checksum
// final, 2 memory test, 3 memory-test final. The work group is a power of two (constant 0).
#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint MODE = 0;

const uint64_t kGolden = 0x9E3779B97F4A7C15UL;
const uint64_t kMix = 0xBF58476D1CE4E5B9UL;
const uint64_t kMix2 = 0x94D049BB133111EBUL;
const uint64_t kNoIndex = 0xFFFFFFFFFFFFFFFFUL;

// n: words (or partials); first: the index of word 0 (memtest) or the sums slot (checksum final).
layout(push_constant) uniform Params {
  uint64_t n;
  uint64_t first;
  uint64_t check_param;
  uint64_t write_param;
  uint check_kind;
  uint write_kind;
} p;
layout(std430, binding = 0) buffer Words { uint64_t w[]; };
layout(std430, binding = 1) buffer Partials { uint64_t partials[]; };
layout(std430, binding = 2) buffer Result { uint64_t result[]; };

shared uint64_t scratch[gl_WorkGroupSize.x];

uint64_t splitmix64(uint64_t z) {
  z = (z ^ (z >> 30)) * kMix;
  z = (z ^ (z >> 27)) * kMix2;
  return z ^ (z >> 31);
}

uint64_t pattern(uint kind, uint64_t param, uint64_t index) {
  if (kind == 1) return param;
  if (kind == 2) return index ^ param;
  return splitmix64(param + index * kGolden);
}

uint64_t group_sum(uint64_t v) {
  const uint l = gl_LocalInvocationID.x;
  barrier();
  scratch[l] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier();
  }
  return scratch[0];
}

uint64_t group_min(uint64_t v) {
  const uint l = gl_LocalInvocationID.x;
  barrier();
  scratch[l] = v;
  barrier();
  for (uint s = gl_WorkGroupSize.x / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] = min(scratch[l], scratch[l + s]);
    barrier();
  }
  return scratch[0];
}

void main() {
  const uint l = gl_LocalInvocationID.x;
  // A product with a run-time value: converting the work-group size (a specialization
  // constant) to 64 bits alone needs SPIR-V 1.4.
  const uint64_t stride = uint64_t(gl_NumWorkGroups.x * gl_WorkGroupSize.x);
  const uint parts = uint(p.n);
  if (MODE == 0) {
    uint64_t sum = 0;
    for (uint64_t i = gl_GlobalInvocationID.x; i < p.n; i += stride)
      sum += splitmix64(w[uint(i)] ^ (i * kGolden));
    sum = group_sum(sum);
    if (l == 0) partials[gl_WorkGroupID.x] = sum;
  } else if (MODE == 1) {
    uint64_t sum = 0;
    for (uint i = l; i < parts; i += gl_WorkGroupSize.x) sum += partials[i];
    sum = group_sum(sum);
    if (l == 0) result[uint(p.first)] = sum;
  } else if (MODE == 2) {
    uint64_t bad = 0, low = kNoIndex;
    for (uint64_t i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
      const uint64_t index = p.first + i;
      if (p.check_kind != 0 && w[uint(i)] != pattern(p.check_kind, p.check_param, index)) {
        ++bad;
        low = min(low, index);
      }
      if (p.write_kind != 0) w[uint(i)] = pattern(p.write_kind, p.write_param, index);
    }
    bad = group_sum(bad);
    low = group_min(low);
    if (l == 0) {
      partials[2 * gl_WorkGroupID.x] = bad;
      partials[2 * gl_WorkGroupID.x + 1] = low;
    }
  } else {
    uint64_t bad = 0, low = kNoIndex;
    for (uint i = l; i < parts; i += gl_WorkGroupSize.x) {
      bad += partials[2 * i];
      low = min(low, partials[2 * i + 1]);
    }
    bad = group_sum(bad);
    low = group_min(low);
    if (l == 0) {
      result[0] += bad;
      result[1] = min(result[1], low);
    }
  }
}

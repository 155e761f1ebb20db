// dst[i] = src[i] over 16-byte words: the device-to-device copy on the compute units. NVIDIA's
// driver runs vkCmdCopyBuffer on a copy engine even from a compute queue, far below what the memory
// does; this shader reached 0.97 of cudaMemcpy D2D on an H200 (docs/PERFORMANCE.md). Numbered as
// exp.comp's groups: UNROLL words loaded by each invocation before any is stored; groups loop while
// they do not cover the words. The caller copies a tail that is not a whole word with
// vkCmdCopyBuffer.
#version 450

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint UNROLL = 4;
// Offsets and counts in 16-byte words.
layout(push_constant) uniform Params { uint words; uint src_first; uint dst_first; } p;
layout(std430, binding = 0) readonly buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uvec4 dst[]; };

void main() {
  const uint wg = gl_WorkGroupSize.x;
  const uint per_group = wg * UNROLL;
  const uint groups = gl_NumWorkGroups.x * gl_NumWorkGroups.y;
  uvec4 v[UNROLL];
  for (uint g = gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x; g * per_group < p.words;
       g += groups) {
    const uint base = g * per_group + gl_LocalInvocationID.x;
    for (uint u = 0; u < UNROLL; ++u) {
      const uint i = base + u * wg;
      if (i < p.words) v[u] = src[p.src_first + i];
    }
    for (uint u = 0; u < UNROLL; ++u) {
      const uint i = base + u * wg;
      if (i < p.words) dst[p.dst_first + i] = v[u];
    }
  }
}

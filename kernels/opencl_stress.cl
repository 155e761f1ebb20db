// The stress kernels in OpenCL C: the checksum of a buffer's 64-bit words and one memory-test
// pass, restating src/backends/stress_math.h (a test compares the results with the CPU's). Each
// work-group writes a partial result; a one-group kernel folds the partials, so no 64-bit
// atomics are needed. The work-group size is GC_WG (a power of two, set at build time).

#define GC_GOLDEN 0x9E3779B97F4A7C15UL
#define GC_MIX 0xBF58476D1CE4E5B9UL
#define GC_MIX2 0x94D049BB133111EBUL

ulong gc_splitmix64(ulong z) {
  z = (z ^ (z >> 30)) * GC_MIX;
  z = (z ^ (z >> 27)) * GC_MIX2;
  return z ^ (z >> 31);
}

ulong gc_checksum_term(ulong word, ulong index) { return gc_splitmix64(word ^ (index * GC_GOLDEN)); }

// kind: 1 constant, 2 address (index xor param), 3 seeded random.
ulong gc_pattern(uint kind, ulong param, ulong index) {
  if (kind == 1) return param;
  if (kind == 2) return index ^ param;
  return gc_splitmix64(param + index * GC_GOLDEN);
}

// Sum of the group's values into scratch[0] (every item calls it).
ulong gc_group_sum(ulong v, __local ulong* scratch) {
  const uint l = get_local_id(0);
  scratch[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = GC_WG / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] += scratch[l + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

ulong gc_group_min(ulong v, __local ulong* scratch) {
  const uint l = get_local_id(0);
  barrier(CLK_LOCAL_MEM_FENCE);
  scratch[l] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = GC_WG / 2; s > 0; s >>= 1) {
    if (l < s) scratch[l] = min(scratch[l], scratch[l + s]);
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  return scratch[0];
}

__kernel void gc_checksum_partial(__global const ulong* restrict w, ulong n,
                                  __global ulong* restrict partials) {
  __local ulong scratch[GC_WG];
  ulong sum = 0;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) sum += gc_checksum_term(w[i], i);
  sum = gc_group_sum(sum, scratch);
  if (get_local_id(0) == 0) partials[get_group_id(0)] = sum;
}

__kernel void gc_checksum_final(__global const ulong* restrict partials, uint count,
                                __global ulong* restrict sums, ulong slot) {
  __local ulong scratch[GC_WG];
  ulong sum = 0;
  for (uint i = get_local_id(0); i < count; i += GC_WG) sum += partials[i];
  sum = gc_group_sum(sum, scratch);
  if (get_local_id(0) == 0) sums[slot] = sum;
}

// partials[2·group] = mismatches, partials[2·group + 1] = lowest bad index (or ~0).
__kernel void gc_memtest(__global ulong* restrict w, ulong n, ulong first, uint check_kind,
                         ulong check_param, uint write_kind, ulong write_param,
                         __global ulong* restrict partials) {
  __local ulong scratch[GC_WG];
  ulong bad = 0, low = ~0UL;
  for (ulong i = get_global_id(0); i < n; i += get_global_size(0)) {
    const ulong index = first + i;
    if (check_kind != 0 && w[i] != gc_pattern(check_kind, check_param, index)) {
      ++bad;
      low = min(low, index);
    }
    if (write_kind != 0) w[i] = gc_pattern(write_kind, write_param, index);
  }
  bad = gc_group_sum(bad, scratch);
  low = gc_group_min(low, scratch);
  if (get_local_id(0) == 0) {
    partials[2 * get_group_id(0)] = bad;
    partials[2 * get_group_id(0) + 1] = low;
  }
}

// result[0] += Σ counts, result[1] = min(result[1], every group's lowest).
__kernel void gc_memtest_final(__global const ulong* restrict partials, uint count,
                               __global ulong* restrict result) {
  __local ulong scratch[GC_WG];
  ulong bad = 0, low = ~0UL;
  for (uint i = get_local_id(0); i < count; i += GC_WG) {
    bad += partials[2 * i];
    low = min(low, partials[2 * i + 1]);
  }
  bad = gc_group_sum(bad, scratch);
  low = gc_group_min(low, scratch);
  if (get_local_id(0) == 0) {
    result[0] += bad;
    result[1] = min(result[1], low);
  }
}

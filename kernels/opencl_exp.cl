// exp over n elements, written for memory bandwidth: every work item moves 16-byte vectors in a
// grid-stride loop; the last n % width elements are done one by one. The element type is chosen
// at build time: -DGC_F32, -DGC_F64 (needs cl_khr_fp64) or -DGC_F16 (half storage through
// vload_half/vstore_half, core functions that need no cl_khr_fp16; computed in float and
// rounded once to nearest even). Also the empty kernel timed for launch latency.

#if defined(GC_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double2 vec_t;
#define GC_WIDTH 2
#define GC_LOAD(i, p) (((__global const vec_t*)(p))[i])
#define GC_STORE(v, i, p) (((__global vec_t*)(p))[i] = (v))
#define GC_EXP_ONE(i, x, y) ((y)[i] = exp((x)[i]))
typedef double elem_t;
#elif defined(GC_F16)
#define GC_WIDTH 8
#define GC_LOAD(i, p) vload_half8((i), (p))
#define GC_STORE(v, i, p) vstore_half8_rte((v), (i), (p))
#define GC_EXP_ONE(i, x, y) vstore_half_rte(exp(vload_half((i), (x))), (i), (y))
typedef half elem_t;
#else
typedef float4 vec_t;
#define GC_WIDTH 4
#define GC_LOAD(i, p) (((__global const vec_t*)(p))[i])
#define GC_STORE(v, i, p) (((__global vec_t*)(p))[i] = (v))
#define GC_EXP_ONE(i, x, y) ((y)[i] = exp((x)[i]))
typedef float elem_t;
#endif

__kernel void gc_exp(__global const elem_t* restrict x, __global elem_t* restrict y, ulong n) {
  const ulong gid = get_global_id(0);
  const ulong stride = get_global_size(0);
  const ulong vectors = n / GC_WIDTH;
  for (ulong i = gid; i < vectors; i += stride) GC_STORE(exp(GC_LOAD(i, x)), i, y);
  const ulong tail = vectors * GC_WIDTH + gid;
  if (tail < n) GC_EXP_ONE(tail, x, y);
}

__kernel void gc_empty(void) {}

// gpucheck's own GEMM, C = A·op(B), row-major, with the shape of its work chosen at build time
// so that the tuner can search it (backends/opencl/gemm_params.*). C is m×n, A m×k, op(B) k×n:
// B itself (k×n) or, with -DBT=1, Bᵀ of a B stored n×k (the NHWC convolution's weights).
//
// Element type: -DGC_F32, -DGC_F64 (needs cl_khr_fp64) or -DGC_F16 (half storage through
// vload_half/vstore_half, core functions that need no cl_khr_fp16; products summed in float and
// rounded once to nearest even on the store).
//
// The work: a work-group of MDIM×NDIM items computes an MWG×NWG tile of C, KWG columns of A
// (rows of op(B)) at a time; each item owns MWG/MDIM rows and NWG/NDIM columns of the tile, in
// runs of VWM rows and VWN columns spaced MDIM·VWM and NDIM·VWN apart, so neighbouring items read
// neighbouring memory. SA=1 / SB=1 stage A's / B's slice in local memory (A's read KVA elements
// at a time along k, its rows padded by PADA against bank conflicts; B's read VWN at a time);
// 0 reads it straight from global memory, which suits CPUs, where local memory is ordinary
// memory and a barrier costs a pass over the work-group. MFIRST=1 numbers the work-groups down
// the columns of C first, so neighbouring groups share B's column panel (a CPU's cache keeps
// it). PF=1 (with SA or SB) reads the next slice from global memory into registers before the
// current one is computed and stores it into a second local buffer afterwards, so the loads'
// latency hides behind the arithmetic and one barrier a slice remains; PF=0 loads, stores and
// waits between slices. EDGE=1 checks every index against m, n and k; EDGE=0 is the build for
// shapes that are multiples of the tile.

#define GC_CAT_(a, b) a##b
#define GC_CAT(a, b) GC_CAT_(a, b)

#if defined(GC_F64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef double store_t;
typedef double real_t;
#define REALV_2 double2
#define REALV_4 double4
#define REALV_8 double8
#define REALV_16 double16
#else
#if defined(GC_F16)
typedef half store_t;
#else
typedef float store_t;
#endif
typedef float real_t;
#define REALV_2 float2
#define REALV_4 float4
#define REALV_8 float8
#define REALV_16 float16
#endif
#define REALV_1 real_t
#define REALV(w) GC_CAT(REALV_, w)

// Loads of w elements from global memory at p + i, as real_t values (a scalar when w is 1:
// OpenCL has no float1, vload1 or vstore1), and the matching stores, rounding f16 to nearest even.
#if defined(GC_F16)
#define GLOAD_1(p, i) vload_half(0, (p) + (i))
#define GLOAD_2(p, i) vload_half2(0, (p) + (i))
#define GLOAD_4(p, i) vload_half4(0, (p) + (i))
#define GLOAD_8(p, i) vload_half8(0, (p) + (i))
#define GLOAD_16(p, i) vload_half16(0, (p) + (i))
#define GSTORE_1(v, p, i) vstore_half_rte((v), 0, (p) + (i))
#define GSTORE_2(v, p, i) vstore_half2_rte((v), 0, (p) + (i))
#define GSTORE_4(v, p, i) vstore_half4_rte((v), 0, (p) + (i))
#define GSTORE_8(v, p, i) vstore_half8_rte((v), 0, (p) + (i))
#define GSTORE_16(v, p, i) vstore_half16_rte((v), 0, (p) + (i))
#elif GALIGN
// Every run starts on its vector's boundary (the host checked the leading dimensions and
// offsets): whole-vector accesses, which NVIDIA's compiler turns into one wide load or store;
// vloadN promises only element alignment and becomes one instruction per element there.
#define GLOAD_1(p, i) ((p)[i])
#define GSTORE_1(v, p, i) ((p)[i] = (v))
#define GLOAD(w, p, i) (*(__global const REALV(w)*)((p) + (i)))
#define GSTORE(w, v, p, i) (*(__global REALV(w)*)((p) + (i)) = (v))
#else
#define GLOAD_1(p, i) ((p)[i])
#define GLOAD_2(p, i) vload2(0, (p) + (i))
#define GLOAD_4(p, i) vload4(0, (p) + (i))
#define GLOAD_8(p, i) vload8(0, (p) + (i))
#define GLOAD_16(p, i) vload16(0, (p) + (i))
#define GSTORE_1(v, p, i) ((p)[i] = (v))
#define GSTORE_2(v, p, i) vstore2((v), 0, (p) + (i))
#define GSTORE_4(v, p, i) vstore4((v), 0, (p) + (i))
#define GSTORE_8(v, p, i) vstore8((v), 0, (p) + (i))
#define GSTORE_16(v, p, i) vstore16((v), 0, (p) + (i))
#endif
#ifndef GLOAD
#define GLOAD(w, p, i) GC_CAT(GLOAD_, w)(p, i)
#define GSTORE(w, v, p, i) GC_CAT(GSTORE_, w)(v, p, i)
#endif

// The same for local memory, which holds real_t (f16 is converted once, on the way in). The
// staged slices start on a 128-byte boundary and every run the kernel reads or writes there as a
// vector starts on its vector's boundary (A's only where its padded rows keep them so: ALIGNED_AS),
// so these are whole-vector accesses: one wide load of local memory per run, not one per element.
#define LLOAD(w, p, i) (*(__local const REALV(w)*)((p) + (i)))
#define LSTORE(w, v, p, i) (*(__local REALV(w)*)((p) + (i)) = (v))

// Component q of a private vector: OpenCL C has no subscript on vectors, but a pointer to a
// private vector's elements is allowed.
#define ELEM(v, q) (((real_t*)&(v))[q])

typedef REALV(VWN) realn_t;
typedef REALV(VWM) realm_t;
typedef REALV(KVA) realk_t;

#define MWI (MWG / MDIM)  // rows of the tile one item owns
#define NWI (NWG / NDIM)  // columns
#define MRUNS (MWI / VWM)
#define NRUNS (NWI / VWN)
#define THREADS (MDIM * NDIM)
#define ALD (MWG + PADA)  // row length of A's staged slice, stored k-major: as[p][row]
#define NBUF (1 + PF)      // local buffers of each staged slice
#define ALIGNED_AS (ALD % VWM == 0)  // A's runs in local memory start on vector boundaries
#define A_LOADS ((MWG * KWG) / (KVA * THREADS))  // an item's loads of A's slice
#if BT
#define B_LOADS ((KWG * NWG) / THREADS)  // an item's loads of op(B)'s slice, one element each
typedef real_t realb_t;
#else
#define B_LOADS ((KWG * NWG) / (VWN * THREADS))  // VWN elements each
typedef realn_t realb_t;
#endif

#if SA
// An item's part of A's slice at column p0 (MWG rows × KWG columns), KVA at a time along k,
// from global memory into registers; zeros outside the matrix.
inline void load_a(realk_t* ra, __global const store_t* restrict a, const uint lda, const uint m,
                   const uint k, const uint i0, const uint p0, const uint tid) {
#pragma unroll
  for (uint e = 0; e < A_LOADS; ++e) {
    const uint idx = tid + e * THREADS;
    const uint row = idx / (KWG / KVA), col = idx % (KWG / KVA) * KVA;
    const ulong at = (ulong)(i0 + row) * lda + p0 + col;
    realk_t v = (realk_t)0;
#if EDGE
    if (i0 + row < m) {
      if (p0 + col + KVA <= k) {
        v = GLOAD(KVA, a, at);
      } else {
        for (uint q = 0; q < KVA; ++q)
          if (p0 + col + q < k) ELEM(v, q) = GLOAD_1(a, at + q);
      }
    }
#endif
#if !EDGE
    v = GLOAD(KVA, a, at);
#endif
    ra[e] = v;
  }
}

// The same registers into local memory, k-major: as[p][row].
inline void store_a(const realk_t* ra, __local real_t* as, const uint tid) {
#pragma unroll
  for (uint e = 0; e < A_LOADS; ++e) {
    const uint idx = tid + e * THREADS;
    const uint row = idx / (KWG / KVA), col = idx % (KWG / KVA) * KVA;
    realk_t v = ra[e];
#pragma unroll
    for (uint q = 0; q < KVA; ++q) as[(col + q) * ALD + row] = ELEM(v, q);
  }
}
#endif

#if SB
// An item's part of op(B)'s slice at row p0 (KWG rows × NWG columns) into registers.
inline void load_b(realb_t* rb, __global const store_t* restrict b, const uint ldb, const uint n,
                   const uint k, const uint j0, const uint p0, const uint tid) {
#pragma unroll
  for (uint e = 0; e < B_LOADS; ++e) {
    const uint idx = tid + e * THREADS;
#if BT
    // B is n×k: read along k, one element at a time.
    const uint col = idx / KWG, row = idx % KWG;
    real_t v = 0;
#if EDGE
    if (p0 + row < k && j0 + col < n)
#endif
      v = GLOAD_1(b, (ulong)(j0 + col) * ldb + p0 + row);
#else
    // B is k×n: read VWN at a time along n.
    const uint row = idx / (NWG / VWN), col = idx % (NWG / VWN) * VWN;
    const ulong at = (ulong)(p0 + row) * ldb + j0 + col;
    realn_t v = (realn_t)0;
#if EDGE
    if (p0 + row < k) {
      if (j0 + col + VWN <= n) {
        v = GLOAD(VWN, b, at);
      } else {
        for (uint q = 0; q < VWN; ++q)
          if (j0 + col + q < n) ELEM(v, q) = GLOAD_1(b, at + q);
      }
    }
#endif
#if !EDGE
    v = GLOAD(VWN, b, at);
#endif
#endif
    rb[e] = v;
  }
}

// The same registers into local memory as the slice is used: bs[p][col].
inline void store_b(const realb_t* rb, __local real_t* bs, const uint tid) {
#pragma unroll
  for (uint e = 0; e < B_LOADS; ++e) {
    const uint idx = tid + e * THREADS;
#if BT
    const uint col = idx / KWG, row = idx % KWG;
    bs[row * NWG + col] = rb[e];
#else
    const uint row = idx / (NWG / VWN), col = idx % (NWG / VWN) * VWN;
    LSTORE(VWN, rb[e], bs, row * NWG + col);
#endif
  }
}
#endif

__kernel __attribute__((reqd_work_group_size(NDIM, MDIM, 1))) void gc_gemm(
    const uint m, const uint n, const uint k, __global const store_t* restrict a, const ulong a_off,
    const uint lda, __global const store_t* restrict b, const ulong b_off, const uint ldb,
    __global store_t* restrict c, const ulong c_off, const uint ldc) {
  const uint lx = get_local_id(0);  // along n
  const uint ly = get_local_id(1);  // along m
#if MFIRST
  const uint i0 = get_group_id(0) * MWG;
  const uint j0 = get_group_id(1) * NWG;
#else
  const uint i0 = get_group_id(1) * MWG;
  const uint j0 = get_group_id(0) * NWG;
#endif
  a += a_off;
  b += b_off;
  c += c_off;
#if SA || SB
  const uint tid = ly * NDIM + lx;
#endif
#if SA
  __local real_t as_all[NBUF * KWG * ALD] __attribute__((aligned(128)));
  realk_t ra[A_LOADS];
  load_a(ra, a, lda, m, k, i0, 0, tid);
  store_a(ra, as_all, tid);
#endif
#if SB
  __local real_t bs_all[NBUF * KWG * NWG] __attribute__((aligned(128)));
  realb_t rb[B_LOADS];
  load_b(rb, b, ldb, n, k, j0, 0, tid);
  store_b(rb, bs_all, tid);
#endif
#if SA || SB
  barrier(CLK_LOCAL_MEM_FENCE);
  uint buf = 0;  // the local buffer that holds the slice being computed
#endif

  realn_t acc[MWI][NRUNS];
#pragma unroll
  for (int r = 0; r < MWI; ++r)
#pragma unroll
    for (int t = 0; t < NRUNS; ++t) acc[r][t] = (realn_t)0;

  for (uint p0 = 0; p0 < k; p0 += KWG) {
#if SA || SB
    const bool more = p0 + KWG < k;
#endif
#if PF && SA
    if (more) load_a(ra, a, lda, m, k, i0, p0 + KWG, tid);
#endif
#if PF && SB
    if (more) load_b(rb, b, ldb, n, k, j0, p0 + KWG, tid);
#endif
#if SA
    __local const real_t* as = as_all + buf * (KWG * ALD);
#endif
#if SB
    __local const real_t* bs = bs_all + buf * (KWG * NWG);
#endif

#if EDGE
    const uint kk = min((uint)KWG, k - p0);  // staged slices are zero-filled; direct reads stop
#else
    const uint kk = KWG;
#endif
#pragma unroll
    for (uint p = 0; p < KWG; ++p) {
#if EDGE && !(SA && SB)
      if (p >= kk) break;
#endif
      realn_t bv[NRUNS];
#pragma unroll
      for (int t = 0; t < NRUNS; ++t) {
        const uint col = (t * NDIM + lx) * VWN;
#if SB
        bv[t] = LLOAD(VWN, bs, p * NWG + col);
#else
        realn_t v = (realn_t)0;
#if BT
        // Bᵀ straight from global memory: the run's columns are rows of B, one element each.
        for (uint q = 0; q < VWN; ++q)
#if EDGE
          if (j0 + col + q < n)
#endif
            ELEM(v, q) = GLOAD_1(b, (ulong)(j0 + col + q) * ldb + p0 + p);
#else
        const ulong at = (ulong)(p0 + p) * ldb + j0 + col;
#if EDGE
        if (j0 + col + VWN <= n) {
          v = GLOAD(VWN, b, at);
        } else {
          for (uint q = 0; q < VWN; ++q)
            if (j0 + col + q < n) ELEM(v, q) = GLOAD_1(b, at + q);
        }
#else
        v = GLOAD(VWN, b, at);
#endif
#endif
        bv[t] = v;
#endif
      }
#pragma unroll
      for (int s = 0; s < MRUNS; ++s) {
        const uint row = (s * MDIM + ly) * VWM;
#if SA && ALIGNED_AS
        realm_t av = LLOAD(VWM, as, p * ALD + row);
#elif SA
        realm_t av;
#pragma unroll
        for (uint q = 0; q < VWM; ++q) ELEM(av, q) = as[p * ALD + row + q];
#else
        realm_t av = (realm_t)0;
#pragma unroll
        for (uint q = 0; q < VWM; ++q)
#if EDGE
          if (i0 + row + q < m)
#endif
            ELEM(av, q) = GLOAD_1(a, (ulong)(i0 + row + q) * lda + p0 + p);
#endif
#pragma unroll
        for (int u = 0; u < VWM; ++u) {
          const real_t x = ELEM(av, u);
#pragma unroll
          for (int t = 0; t < NRUNS; ++t)
            acc[s * VWM + u][t] = mad((realn_t)x, bv[t], acc[s * VWM + u][t]);
        }
      }
    }
#if SA || SB
#if PF
    // The next slice goes into the other buffer, which every item finished reading before the
    // previous barrier; one barrier then makes it visible and frees this one.
    buf ^= 1;
#if SA
    if (more) store_a(ra, as_all + buf * (KWG * ALD), tid);
#endif
#if SB
    if (more) store_b(rb, bs_all + buf * (KWG * NWG), tid);
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
#else
    if (more) {
      barrier(CLK_LOCAL_MEM_FENCE);  // every item is done with the slice before it is replaced
#if SA
      load_a(ra, a, lda, m, k, i0, p0 + KWG, tid);
      store_a(ra, as_all, tid);
#endif
#if SB
      load_b(rb, b, ldb, n, k, j0, p0 + KWG, tid);
      store_b(rb, bs_all, tid);
#endif
      barrier(CLK_LOCAL_MEM_FENCE);
    }
#endif
#endif
  }

#pragma unroll
  for (int s = 0; s < MRUNS; ++s)
#pragma unroll
    for (int u = 0; u < VWM; ++u) {
      const uint row = i0 + (s * MDIM + ly) * VWM + u;
#if EDGE
      if (row >= m) continue;
#endif
#pragma unroll
      for (int t = 0; t < NRUNS; ++t) {
        const uint col = j0 + (t * NDIM + lx) * VWN;
        const ulong at = (ulong)row * ldc + col;
#if EDGE
        if (col + VWN > n) {
          for (uint q = 0; q < VWN; ++q)
            if (col + q < n) GSTORE_1(ELEM(acc[s * VWM + u][t], q), c, at + q);
          continue;
        }
#endif
        GSTORE(VWN, acc[s * VWM + u][t], c, at);
      }
    }
}

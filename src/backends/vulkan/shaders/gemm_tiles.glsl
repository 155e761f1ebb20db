// The register-blocked tile GEMM that gemm_vec4.comp and conv_implicit.comp share; they differ
// only in where A's and B's tiles come from (load_tiles, each shader's own) and where the sums
// go. What it does:
// - every shared-memory read is a 4-element vector, so each invocation's TM × TN sums cost
//   TM/4 + TN/4 shared reads per k instead of TM + TN;
// - an invocation's rows are TM/4 groups of 4 adjacent rows, strided by 4·WY, and its columns
//   TN/4 groups of 4, strided by 4·WX, so neighbouring invocations read neighbouring vectors;
// - the next k-step's tiles are loaded into registers (ra, rb) while the current ones are
//   summed, and stored into the other of two shared buffers, so the loads' latency hides
//   behind the arithmetic with one barrier a step;
// - registers are spent on the sums only: one vector of A is live at a time and the k loop is
//   not unrolled. On an H200 this took 128×128 tiles of 8×8 sums from 130 registers an
//   invocation to 128, two work groups an SM instead of one (docs/PERFORMANCE.md).
// A tile is loaded as vectors along k for A (and for Bᵀ, stored transposed), along n for B.
// TM, TN and BK must be multiples of 4 (the host checks). Constant ids 0–5 are these; a shader
// that includes this gives its own from 6 on.

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

// Two buffers of each, at 0 and at one tile's length.
shared vec4 as[2 * BK * BM4];  // as[kk * BM4 + r4]: rows 4·r4 … 4·r4+3 at k = kk
shared vec4 bs[2 * BK * BN4];  // bs[kk * BN4 + c4]: columns 4·c4 … 4·c4+3 at k = kk

// What load_tiles loads: A's vector i (row i / (BK/4), k (i % (BK/4))·4) in ra[u] and B's in
// rb[u], for i = tid + u·THREADS; zero past the matrices' edges.
vec4 ra[A_PER];
vec4 rb[B_PER];
void load_tiles(uint row0, uint col0, uint k0, uint tid);  // the including shader's

// acc[i * TN4 + j4]: the sums of the invocation's row i and its columns of group j4.
vec4 acc[TM * TN4];

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

// The work group's tile of A·B over k in [0, k_end), summed into acc.
void sum_tiles(uint row0, uint col0, uint k_end) {
  const uint tx = gl_LocalInvocationID.x;
  const uint ty = gl_LocalInvocationID.y;
  const uint tid = ty * WX + tx;
  for (uint i = 0; i < TM * TN4; ++i) acc[i] = vec4(0.0f);
  vec4 bv[TN4];

  load_tiles(row0, col0, 0, tid);
  store_tiles(tid, 0);
  barrier();
  uint cur = 0;
  [[dont_unroll]] for (uint k0 = 0; k0 < k_end; k0 += BK) {
    const bool more = k0 + BK < k_end;
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
}

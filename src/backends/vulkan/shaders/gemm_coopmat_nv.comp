// C[m×n] = A[m×k] · B[k×n] in f16, row-major, summed in f32, through VK_NV_cooperative_matrix:
// the tensor cores, where the tiled shader (gemm.comp) reaches a few percent of them.
//
// The technique of NVIDIA's vk_cooperative_matrix_perf sample: a work group of 8 subgroups
// (2 high, 4 wide) computes a TILE_M × TILE_N tile of C; each step along k the group copies
// TILE_M × TILE_K of A and TILE_K × TILE_N of B into shared memory as 16-byte words (rows
// padded by one word against bank conflicts), loading the next step's words into registers
// while the subgroups multiply the current ones. Each subgroup holds C_ROWS × C_COLS
// accumulators of lM × lN (the device's supported shape, specialization constants 1–3) and
// stores them rounded to f16 once. The host runs this shader only where m and n are multiples of
// the tile and k of TILE_K (so there are no edges), else the tiled shader.
#version 450
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_control_flow_attributes : require

layout(local_size_x_id = 0) in;  // 8 subgroups
layout(constant_id = 1) const uint lM = 16;
layout(constant_id = 2) const uint lN = 16;
layout(constant_id = 3) const uint lK = 16;
layout(constant_id = 4) const uint TILE_M = 128;
layout(constant_id = 5) const uint TILE_N = 256;
layout(constant_id = 6) const uint TILE_K = 32;

layout(push_constant) uniform Params { uint m; uint n; uint k; } p;
layout(std430, binding = 0) readonly buffer A { uvec4 a[]; };  // 8 f16 a word
layout(std430, binding = 1) readonly buffer B { uvec4 b[]; };
layout(std430, binding = 2) writeonly buffer C { float16_t c[]; };

const uint PER_WORD = 8;
const uint SG_WIDE = 4;
const uint SG_HIGH = 2;
const uint THREADS = gl_WorkGroupSize.x;
const uint C_ROWS = TILE_M / SG_HIGH / lM;
const uint C_COLS = TILE_N / SG_WIDE / lN;
// Shared rows, in words, with one word of padding.
const uint A_STRIDE = TILE_K / PER_WORD + 1;
const uint B_STRIDE = TILE_N / PER_WORD + 1;
shared uvec4 as[TILE_M * A_STRIDE];
shared uvec4 bs[TILE_K * B_STRIDE];

// Each invocation moves A_LOADS words of A and B_LOADS of B a step.
const uint A_WORDS_ROW = TILE_K / PER_WORD;
const uint A_ROWS_PASS = THREADS / A_WORDS_ROW;
const uint A_LOADS = TILE_M / A_ROWS_PASS;
const uint B_WORDS_ROW = TILE_N / PER_WORD;
const uint B_ROWS_PASS = THREADS / B_WORDS_ROW;
const uint B_LOADS = TILE_K / B_ROWS_PASS;

fcoopmatNV<32, gl_ScopeSubgroup, lM, lN> acc[C_ROWS][C_COLS];

void main() {
  const uint tid = gl_LocalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * TILE_M;
  const uint col0 = gl_WorkGroupID.x * TILE_N;
  const uint sg_x = gl_SubgroupID % SG_WIDE;
  const uint sg_y = gl_SubgroupID / SG_WIDE;
  const uint ka = tid % A_WORDS_ROW;  // this invocation's word within a row of A's tile
  const uint ra = tid / A_WORDS_ROW;
  const uint cb = tid % B_WORDS_ROW;
  const uint rb = tid / B_WORDS_ROW;
  const uint k_words = p.k / PER_WORD;
  const uint n_words = p.n / PER_WORD;

  [[unroll]] for (uint i = 0; i < C_ROWS; ++i)
    [[unroll]] for (uint j = 0; j < C_COLS; ++j)
      acc[i][j] = fcoopmatNV<32, gl_ScopeSubgroup, lM, lN>(0.0);

  uvec4 next_a[A_LOADS];
  uvec4 next_b[B_LOADS];
  [[unroll]] for (uint l = 0; l < A_LOADS; ++l)
    next_a[l] = a[(row0 + ra + l * A_ROWS_PASS) * k_words + ka];
  [[unroll]] for (uint l = 0; l < B_LOADS; ++l)
    next_b[l] = b[(rb + l * B_ROWS_PASS) * n_words + col0 / PER_WORD + cb];

  for (uint k0 = 0; k0 < p.k; k0 += TILE_K) {
    barrier();  // the previous step's reads of shared memory are done
    [[unroll]] for (uint l = 0; l < A_LOADS; ++l)
      as[(ra + l * A_ROWS_PASS) * A_STRIDE + ka] = next_a[l];
    [[unroll]] for (uint l = 0; l < B_LOADS; ++l)
      bs[(rb + l * B_ROWS_PASS) * B_STRIDE + cb] = next_b[l];
    barrier();
    // The next step's words, in flight while this step multiplies.
    const uint k1 = k0 + TILE_K;
    if (k1 < p.k) {
      [[unroll]] for (uint l = 0; l < A_LOADS; ++l)
        next_a[l] = a[(row0 + ra + l * A_ROWS_PASS) * k_words + k1 / PER_WORD + ka];
      [[unroll]] for (uint l = 0; l < B_LOADS; ++l)
        next_b[l] = b[(k1 + rb + l * B_ROWS_PASS) * n_words + col0 / PER_WORD + cb];
    }
    [[unroll]] for (uint kk = 0; kk < TILE_K; kk += lK) {
      fcoopmatNV<16, gl_ScopeSubgroup, lM, lK> ma[C_ROWS];
      [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        const uint r = (sg_y * C_ROWS + i) * lM;
        coopMatLoadNV(ma[i], as, r * A_STRIDE + kk / PER_WORD, A_STRIDE, false);
      }
      [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
        const uint cc = (sg_x * C_COLS + j) * lN;
        fcoopmatNV<16, gl_ScopeSubgroup, lK, lN> mb;
        coopMatLoadNV(mb, bs, kk * B_STRIDE + cc / PER_WORD, B_STRIDE, false);
        [[unroll]] for (uint i = 0; i < C_ROWS; ++i) acc[i][j] = coopMatMulAddNV(ma[i], mb, acc[i][j]);
      }
    }
  }

  [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
    const uint r = row0 + (sg_y * C_ROWS + i) * lM;
    [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
      const uint cc = col0 + (sg_x * C_COLS + j) * lN;
      fcoopmatNV<16, gl_ScopeSubgroup, lM, lN> out16 =
          fcoopmatNV<16, gl_ScopeSubgroup, lM, lN>(acc[i][j]);
      coopMatStoreNV(out16, c, r * p.n + cc, p.n, false);
    }
  }
}

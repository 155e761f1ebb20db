// Verification of exp, GEMM and conv results against float64 on the host: elementwise where
// affordable, else sampled elements plus Freivalds-style projections, always with a full scan
// for NaN, Inf and poison (never-written) values. Each op's check is in its unit
// (bench/ops/<op>.h); this header keeps what the checks share and the error model they follow.
//
// What the numbers mean (the record's verification.max_rel_error and .tolerance; ok iff
// max_rel_error <= tolerance; max_rel_error is +inf when an element is NaN, Inf, poison or of the
// wrong sign — writers must not emit it as a JSON number then):
//
//  * exp: max over checked elements of |y − e| / max(e, min_normal(dtype of y)), e = std::exp of
//    the stored (already rounded) input in float64. The min_normal floor makes an underflowing or
//    subnormal result count by absolute error (tolerance · min_normal), since such a result
//    cannot carry the relative accuracy; generated inputs never get there.
//
//  * gemm / conv: every check has an observed error and an allowance from the error model
//    below; max_rel_error = tolerance · max(observed / allowance). Reading it against tolerance
//    says how much of the allowance the worst check used; for a single element it is (up to the
//    underflow floor) at least the element's error relative to Σ|a||b| (conv: Σ|x||w|), the
//    magnitude the products summed to.
//
// Error model of one output element c = Σ_l a_l·b_l (k products; conv: k = C·R·S):
//   |ĉ − c| <= out·(|c| + min_normal(out dtype)) + prod·Σ_l |a_l||b_l|
//   out  = 3·u(output)                    rounding of the result to the output dtype (a
//                                         truncating conversion, up to 1 ulp = 2u, included)
//   prod = 5·u_in + min(2k, λ_k·√k)·u_acc  rounding of inputs to the compute type, accumulation
// with u(f64) = 2^-53, u(f32) = 2^-24, u(tf32) = u(f16) = 2^-11, u(bf16) = 2^-8, u(fp8) = 2^-4;
// u_in = u(compute) when the data is wider than the compute type (f32 data in tf32 math:
// truncation or rounding of each factor, at most (1+2u)² − 1 < 5u per product), else 0;
// u_acc = u(compute), except tf32 math which accumulates in f32. The accumulation term is the
// probabilistic bound λ√k·u (Higham & Mary 2019) capped by the worst case 2k·u (a factor 2 for
// truncating accumulators, as in tensor cores); it assumes zero-mean data, which the inputs are.
// λ_k = 8 for GEMM; 32 for conv, whose libraries may pick Winograd or FFT algorithms with larger
// (norm-wise) errors.
//   fp8 (e4m3 inputs, bf16 output, f32 compute): out = 3·2^-8 (bf16), u_in = 0 (the inputs are
//   generated as e4m3 values and the reference reads them decoded, so only arithmetic errs; a
//   product of two e4m3 values is exact), and prod adds the tensor core's own accumulator,
//   about 14 bits (e8m13, truncating) summed over at most 128 products before the library adds
//   the partial sum into f32: + min(2·c, λ_k·√c)·2^-14 with c = min(k, 128), per chunk and so
//   for the whole Σ|a||b|. For k = 8192 that is 3·2^-8 + 5.5e-3 + 4.3e-5.
//
// Freivalds (large cells). For random ±1 vectors x (two, from the seed), row i of C·x − A·(B·x)
// is Σ_j e_ij·x_j with e the error matrix. By Hoeffding, whenever every element meets the model,
// |(C·x − A·(B·x))_i| <= λ·‖e_i‖₂ except with probability 2·exp(−λ²/2) ≈ 2.5e−14 (λ = 8), and
//   ‖e_i‖₂ <= out·(‖ĉ_i‖₂ + √n·min_normal)/(1−out) + prod·‖a_i‖₂·‖B‖_F
// (Cauchy–Schwarz: Σ_l|a_il||b_lj| <= ‖a_i‖₂‖b_:j‖₂), all computable in O(mk + kn + mn). The
// host sums in double-double (TwoSum/TwoProduct), so its own rounding is negligible even for
// f64. conv: the same over output channels, Σ_k u_k·y[n,k,p,q] = conv(x, Σ_k u_k·w_k), per
// output position (n,p,q), with ‖patch‖₂·‖W‖_F. A failing row or position is recomputed in
// full to name the first element outside its own allowance.
//
// What a projection can see: a single wrong element is caught by it when its error exceeds its
// row's allowance, λ times the model's bound on ‖e_i‖₂ — for f32 or f16 GEMM of 8192 about 3–4×
// a typical |c| — so faults spanning a tile, a row or a k-block are caught everywhere, while a
// lone element wrong by less than that is left to the sampled checks (and to the elementwise
// check of small cells). first_bad_index is the lowest index among the elements found bad (with
// very many bad elements, not necessarily the lowest bad index of all).
#pragma once

#include <nlohmann/json_fwd.hpp>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "bench/inputs.h"
#include "core/workload.h"

namespace gpucheck::bench {

struct Verification {
  bool ok = false;
  double max_rel_error = 0;
  double tolerance = 0;
  std::string method;  // "elementwise" | "sampled+scan" | "freivalds+sampled+scan"
  std::optional<std::uint64_t> first_bad_index;  // flat index into the output buffer
  std::string detail;  // what failed (or what was checked), for the record's reason
};

// A record's "verification" object (bench's and stress's records).
nlohmann::json verification_json(const Verification& v);

struct VerifyOptions {
  std::uint64_t seed = kDefaultSeed;                     // picks samples and ±1 vectors
  std::uint64_t exp_full_max = std::uint64_t{1} << 24;   // exp: every element up to this count
  std::size_t exp_samples = 4096;                        // exp: sampled elements above it
  std::uint64_t full_max_macs = std::uint64_t{1} << 22;  // gemm/conv: elementwise up to this
  std::size_t samples = 256;                             // gemm/conv: sampled elements
  std::size_t max_localized = 8;  // failing rows/positions recomputed in full to name elements
};

inline constexpr double kFreivaldsLambda = 8;

// 2^-p for the dtype's p significand bits (tf32: 11).
double unit_roundoff(DType dtype);
// The compute type a dtype's GEMM/conv uses when nothing else is said: f16, bf16 and fp8
// accumulate in f32, tf32 is tf32 math, f32 and f64 themselves.
DType default_compute(DType data);

struct ErrorModel {
  double out = 0;        // coefficient of |c|
  double prod = 0;       // coefficient of Σ|a||b|
  double tolerance = 0;  // out + prod: the relative tolerance the record shows
};
ErrorModel gemm_error_model(DType in, DType out, DType compute, std::uint64_t k);
ErrorModel conv_error_model(DType in, DType out, DType compute, std::uint64_t crs);

// Byte-for-byte equality of a copy with what was sent (method "exact", tolerance 0); `what`
// names the buffer in the detail ("copied bytes differ from the source").
Verification verify_exact(const void* expected, const void* got, std::size_t bytes,
                          const std::string& what);

}  // namespace gpucheck::bench

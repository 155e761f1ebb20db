// gemm: C = A·B of m×k and k×n row-major matrices, the compute-bound op.
#include "bench/ops/gemm.h"

#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "bench/size_text.h"
#include "bench/verify_parts.h"
#include "core/errors.h"
#include "core/json_keys.h"

#include <algorithm>

namespace gpucheck::bench {

// ---- inputs

GemmInputs make_gemm_inputs(DType dtype, const GemmShape& shape, std::uint64_t seed) {
  GemmInputs in{
      HostBuffer(dtype, host_size(checked_elements(shape.m, shape.k, "gemm A"), "gemm A")),
      HostBuffer(dtype, host_size(checked_elements(shape.k, shape.n, "gemm B"), "gemm B")),
      HostBuffer()};
  fill_normal(in.a, seed, kStreamGemmA);
  fill_normal(in.b, seed, kStreamGemmB);
  if (gemm_b_k_major(dtype)) {
    // Element (l, j) of B at j·k + l. One byte each (fp8): transposed in cache-sized blocks.
    const std::uint64_t k = shape.k, n = shape.n;
    in.b_k_major = HostBuffer(dtype, in.b.size());
    const auto* src = static_cast<const std::uint8_t*>(in.b.data());
    auto* dst = static_cast<std::uint8_t*>(in.b_k_major.data());
    constexpr std::uint64_t kTile = 64;
    for (std::uint64_t l0 = 0; l0 < k; l0 += kTile)
      for (std::uint64_t j0 = 0; j0 < n; j0 += kTile)
        for (std::uint64_t l = l0; l < std::min(k, l0 + kTile); ++l)
          for (std::uint64_t j = j0; j < std::min(n, j0 + kTile); ++j)
            dst[j * k + l] = src[l * n + j];
  }
  return in;
}

HostBuffer make_gemm_output(DType dtype, const GemmShape& shape) {
  return make_output(gemm_output_dtype(dtype),
                     host_size(checked_elements(shape.m, shape.n, "gemm C"), "gemm C"));
}

// ---- float64 check

Verification verify_gemm(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
                         const HostBuffer& c, DType compute, const VerifyOptions& opt) {
  using namespace verify_parts;
  const std::uint64_t m = shape.m, n = shape.n, k = shape.k;
  if (a.size() != checked_mul(m, k) || b.size() != checked_mul(k, n) ||
      c.size() != checked_mul(m, n))
    throw std::invalid_argument(
        fmt::format("verify_gemm: buffers of {}, {}, {} elements for m={} n={} k={}", a.size(),
                    b.size(), c.size(), m, n, k));
  const ErrorModel model = gemm_error_model(a.dtype(), c.dtype(), compute, k);
  Verification v;
  v.tolerance = model.tolerance;
  const bool full = mul_sat(mul_sat(m, n), k) <= opt.full_max_macs;
  v.method = full ? "elementwise" : "freivalds+sampled+scan";
  if (m == 0 || n == 0) {
    v.ok = true;
    v.detail = "empty result";
    return v;
  }
  const ScanResult scan = scan_outputs(c, false);
  if (scan.bad != 0) {
    v.ok = false;
    v.max_rel_error = kInf;
    v.first_bad_index = scan.first;
    v.detail = describe_scan(scan, c);
    return v;
  }
  const double out_mn = min_normal(c.dtype());

  // Row i of A·B in double-double with Σ|a||b|, checked element by element against C. Each
  // range of rows (tracked_ranges) has scratch rows of its own.
  struct RowScratch {
    std::vector<double> a_row, b_row, mag;
    std::vector<Acc> acc;
  };
  auto make_scratch = [&] {
    return RowScratch{std::vector<double>(k), std::vector<double>(n), std::vector<double>(n),
                      std::vector<Acc>(n)};
  };
  auto check_row = [&](std::uint64_t i, Tracker& t, RowScratch& w) {
    load(a, i * k, k, w.a_row.data());
    std::fill(w.acc.begin(), w.acc.end(), Acc{});
    std::fill(w.mag.begin(), w.mag.end(), 0.0);
    for (std::uint64_t l = 0; l < k; ++l) {
      load(b, l * n, n, w.b_row.data());
      const double al = w.a_row[l], abs_al = std::fabs(al);
      for (std::uint64_t j = 0; j < n; ++j) {
        w.acc[j].add_product(al, w.b_row[j]);
        w.mag[j] += abs_al * std::fabs(w.b_row[j]);
      }
    }
    for (std::uint64_t j = 0; j < n; ++j) {
      const double ref = w.acc[j].value(), got = c.get(i * n + j);
      const double allow = element_allowance(model, out_mn, ref, w.mag[j], k);
      t.observe(i * n + j, std::fabs(got - ref) / allow, [&] {
        return fmt::format("C[{},{}] (element {}) = {} where float64 gives {} (allowed ±{:.3g})", i,
                           j, i * n + j, got, ref, allow);
      });
    }
  };
  // Rows of about a million multiply-adds per thread at least: fewer are not worth a thread.
  const std::size_t rows_per_range = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / (k + n));

  Tracker t(1.0);
  if (full) {
    tracked_ranges(t, m, std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / mul_sat(k, n)),
                   [&](std::size_t begin, std::size_t end, Tracker& part) {
                     RowScratch w = make_scratch();
                     for (std::size_t i = begin; i < end; ++i) check_row(i, part, w);
                   });
    finish(v, t, 0, "", fmt::format("all {} elements within their allowance", m * n));
    return v;
  }

  // Freivalds with two ±1 vectors: y_v = B·x_v (double-double), then per row (A·y_v) − (C·x_v).
  std::vector<double> x[2] = {std::vector<double>(n), std::vector<double>(n)};
  for (std::uint64_t j = 0; j < n; ++j)
    for (int vv = 0; vv < 2; ++vv) x[vv][j] = sign_of(opt.seed, j, vv);
  std::vector<Acc> y[2] = {std::vector<Acc>(k), std::vector<Acc>(k)};
  std::vector<double> b_abs(k), b_sq(k);
  parallel_ranges(
      k,
      [&](std::size_t begin, std::size_t end) {
        std::vector<double> b_row(n);
        for (std::size_t l = begin; l < end; ++l) {
          load(b, l * n, n, b_row.data());
          Acc s0, s1;
          double abs_sum = 0, sq = 0;
          for (std::uint64_t j = 0; j < n; ++j) {
            const double bv = b_row[j];
            s0.add(x[0][j] * bv);
            s1.add(x[1][j] * bv);
            abs_sum += std::fabs(bv);
            sq += bv * bv;
          }
          y[0][l] = s0;
          y[1][l] = s1;
          b_abs[l] = abs_sum;
          b_sq[l] = sq;
        }
      },
      rows_per_range);
  double b_frob_sq = 0;  // summed in order, as one thread would
  for (const double sq : b_sq) b_frob_sq += sq;
  const double b_frob = std::sqrt(b_frob_sq);
  const double kn = static_cast<double>(k + n + 2);
  const double host_noise = 4 * kn * kn * kU64 * kU64;
  // Each row's residual and allowance, then the rows judged in order.
  std::vector<double> row_residual(m), row_allow(m);
  parallel_ranges(
      m,
      [&](std::size_t begin, std::size_t end) {
        std::vector<double> a_row(k), c_row(n);
        for (std::size_t i = begin; i < end; ++i) {
          load(a, i * k, k, a_row.data());
          load(c, i * n, n, c_row.data());
          Acc t0, t1, s0, s1;
          double p_abs = 0, a_sq = 0, q_abs = 0, c_sq = 0;
          for (std::uint64_t l = 0; l < k; ++l) {
            const double al = a_row[l];
            t0.add_product(al, y[0][l].hi);
            t0.lo += al * y[0][l].lo;
            t1.add_product(al, y[1][l].hi);
            t1.lo += al * y[1][l].lo;
            p_abs += std::fabs(al) * b_abs[l];
            a_sq += al * al;
          }
          for (std::uint64_t j = 0; j < n; ++j) {
            const double cv = c_row[j];
            s0.add(x[0][j] * cv);
            s1.add(x[1][j] * cv);
            q_abs += std::fabs(cv);
            c_sq += cv * cv;
          }
          row_residual[i] = freivalds_residual(s0, t0, s1, t1);
          row_allow[i] =
              freivalds_allowance(model, out_mn, c_sq, n, a_sq, b_frob, host_noise, p_abs + q_abs);
        }
      },
      rows_per_range);
  std::vector<std::pair<std::uint64_t, double>> failing_rows;  // row, observed/allowed
  double worst_row = 0;
  std::uint64_t worst_row_index = 0;
  double worst_row_residual = 0, worst_row_allow = 0;
  for (std::uint64_t i = 0; i < m; ++i) {
    const double ratio = row_residual[i] / row_allow[i];
    if (!(ratio <= 1)) failing_rows.emplace_back(i, ratio);
    if (std::isnan(ratio) || ratio > worst_row) {
      worst_row = std::isnan(ratio) ? kInf : ratio;
      worst_row_index = i;
      worst_row_residual = row_residual[i];
      worst_row_allow = row_allow[i];
    }
  }
  t.raise_max(worst_row);

  // Sampled elements, each against its own allowance.
  const auto samples = sample_indices(m * n, opt.samples, opt.seed);
  tracked_ranges(t, samples.size(), std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / k),
                 [&](std::size_t begin, std::size_t end, Tracker& part) {
                   for (std::size_t s_i = begin; s_i < end; ++s_i) {
                     const std::uint64_t idx = samples[s_i];
                     const std::uint64_t i = idx / n, j = idx % n;
                     Acc s;
                     double mg = 0;
                     for (std::uint64_t l = 0; l < k; ++l) {
                       const double av = a.get(i * k + l), bv = b.get(l * n + j);
                       s.add_product(av, bv);
                       mg += std::fabs(av * bv);
                     }
                     const double ref = s.value(), got = c.get(idx);
                     const double allow = element_allowance(model, out_mn, ref, mg, k);
                     part.observe(idx, std::fabs(got - ref) / allow, [&] {
                       return fmt::format(
                           "C[{},{}] (element {}) = {} where float64 gives {} (allowed ±{:.3g})", i,
                           j, idx, got, ref, allow);
                     });
                   }
                 });

  // Name the elements of failing rows.
  std::string row_detail;
  if (!failing_rows.empty()) {
    const std::uint64_t bad_before = t.bad();
    const std::size_t localized = std::min(failing_rows.size(), opt.max_localized);
    RowScratch w = make_scratch();
    for (std::size_t r = 0; r < localized; ++r) check_row(failing_rows[r].first, t, w);
    row_detail = fmt::format(
        "{} of {} rows fail Freivalds' test (row {}: |C·x − A·(B·x)| = {:.3g}, allowed {:.3g})",
        failing_rows.size(), m, worst_row_index, worst_row_residual, worst_row_allow);
    if (t.bad() == bad_before) {
      // No single element of the localized rows is outside its own allowance (errors spread
      // thinly over a row): name the row's first element.
      // Named members, not a structured binding: clang before 16 cannot capture a binding.
      const auto row = failing_rows.front().first;
      const auto ratio = failing_rows.front().second;
      t.observe(row * n, ratio, [&] {
        return fmt::format("row {} of C is off as a whole, no single element beyond its allowance",
                           row);
      });
    }
  }
  finish(v, t, failing_rows.size(), row_detail,
         fmt::format("{} rows × 2 Freivalds vectors and {} sampled elements within allowance", m,
                     samples.size()));
  return v;
}

namespace gemm_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (const Shape& s : req.sizes.of(Op::kGemm))
    for (DType dt : req.dtypes) cells.push_back(planned_cell(Op::kGemm, dt, s));
  return cells;
}

// MxNxK, or N for a square problem.
Shape parse_size(std::string_view item, std::string_view where) {
  auto parts = split_text(item, 'x');
  if (parts.size() == 1) {
    auto n = positive_count(parts[0], where, "matrix size");
    return GemmShape{n, n, n};
  }
  if (parts.size() != 3)
    throw UsageError(
        fmt::format("{}: '{}' is not MxNxK (for example 2048x2048x2048)", where, item));
  return GemmShape{positive_count(parts[0], where, "M"), positive_count(parts[1], where, "N"),
                   positive_count(parts[2], where, "K")};
}

Work work(const Cell& cell) {
  const auto& s = std::get<GemmShape>(cell.shape);
  return {2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k),
          "TFLOP/s"};
}

Footprint footprint(const Cell& cell, bool host_device) {
  const auto& s = std::get<GemmShape>(cell.shape);
  const std::uint64_t in = element_size(cell.dtype);
  const std::uint64_t out = element_size(gemm_output_dtype(cell.dtype));
  if (in == out)
    return tensor_footprint({checked_mul(s.m, s.k), checked_mul(s.k, s.n), checked_mul(s.m, s.n)},
                            in, host_device);
  // fp8: byte-sized inputs, a bf16 result, counted in bytes; B's K-major copy on the host too.
  const std::uint64_t b = checked_mul(checked_mul(s.k, s.n), in);
  Footprint f = tensor_footprint(
      {checked_mul(checked_mul(s.m, s.k), in), b, checked_mul(checked_mul(s.m, s.n), out)}, 1,
      host_device);
  if (gemm_b_k_major(cell.dtype)) f.host_total = checked_add(f.host_total, b);
  return f;
}

bool shrink(Cell& cell) {
  auto& s = std::get<GemmShape>(cell.shape);
  if (s.m <= 64 || s.n <= 64 || s.k <= 64) return false;
  s.m /= 2, s.n /= 2, s.k /= 2;
  return true;
}

// The device's word, then fp8's shape rule: its kernels read A and Bᵀ in 16-byte rows.
std::optional<std::string> refusal(const Cell& cell, Device& device) {
  if (auto why = gemm_unsupported(device, cell.dtype)) return why;
  const auto& s = std::get<GemmShape>(cell.shape);
  if (cell.dtype == DType::kFp8 &&
      (s.m % kFp8GemmMultiple != 0 || s.n % kFp8GemmMultiple != 0 || s.k % kFp8GemmMultiple != 0))
    return fmt::format(
        "fp8 GEMM runs M, N and K that are multiples of {} (its kernels read 16-byte-aligned rows "
        "of A and Bᵀ); {}x{}x{} is not",
        kFp8GemmMultiple, s.m, s.n, s.k);
  return std::nullopt;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<GemmShape>(shape);
  return {{k::kM, s.m}, {k::kN, s.n}, {k::kKk, s.k}};
}

Shape from_json(const nlohmann::json& j) {
  auto u = [&](std::string_view key) { return j.at(std::string(key)).get<std::uint64_t>(); };
  return GemmShape{u(k::kM), u(k::kN), u(k::kKk)};
}

void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<GemmShape>(cell.shape);
  Device& dev = ctx.device();
  const auto kept = shared_inputs<GemmInputs>(
      ctx,
      checked_mul(checked_add(checked_mul(s.m, s.k), checked_mul(2 * s.k, s.n)),
                  element_size(cell.dtype)),
      [&] { return make_gemm_inputs(cell.dtype, s, ctx.seed()); });
  const GemmInputs& in = *kept;
  HostBuffer c = make_gemm_output(cell.dtype, s);
  ctx.mark("inputs");
  std::vector<DeviceTensor> d;
  d.push_back(to_device(dev, in.a));
  d.push_back(to_device(dev, in.device_b()));
  DeviceTensor dc{dev.allocate(c.size_bytes()), c.size_bytes()};
  VerifyOptions vo;
  vo.seed = ctx.seed();
  const DType compute = gemm_check_compute(dev, cell.dtype);
  ctx.measure_op(
      {&in.a, &in.device_b()}, d, c, dc,
      [&] { dev.gemm(cell.dtype, s, *d[0].buf, *d[1].buf, *dc.buf); },
      [&](const HostBuffer& out) { return verify_gemm(s, in.a, in.b, out, compute, vo); });
}

std::vector<HostBuffer> inputs(const Cell& cell, std::uint64_t seed) {
  auto g = make_gemm_inputs(cell.dtype, std::get<GemmShape>(cell.shape), seed);
  std::vector<HostBuffer> in;
  in.push_back(std::move(g.a));
  in.push_back(std::move(g.b));
  return in;
}

OpOutput output(const Cell& cell) {
  const auto& s = std::get<GemmShape>(cell.shape);
  const DType out = gemm_output_dtype(cell.dtype);
  return {s.m * s.n, out, s.m * s.n * element_size(out)};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got,
                    DType compute, const VerifyOptions& vo) {
  return verify_gemm(std::get<GemmShape>(cell.shape), in.at(0), in.at(1),
                     output_buffer(output(cell), got), compute, vo);
}

}  // namespace

}  // namespace gemm_op

std::optional<std::string> gemm_unsupported(const Device& device, DType dtype) {
  return device.unsupported_reason(Op::kGemm, dtype, Layout::kNchw);
}

DType gemm_check_compute(const Device& device, DType dtype) {
  return device.verify_compute(Op::kGemm, dtype).value_or(default_compute(dtype));
}

std::string gemm_impl(const Device& device, DType dtype) {
  return device.impl(Op::kGemm, dtype);
}

std::string gemm_compute_type(const Device& device, DType dtype) {
  return device.compute_type(Op::kGemm, dtype);
}

OpUnit gemm_unit() {
  OpUnit u;
  u.op = Op::kGemm;
  u.in_default_plan = true;
  u.end_to_end = true;
  u.tunes_gemm = true;
  u.bf16_gemm_accumulation = true;
  u.profile_shape = {{{"m"}, {"n"}, {"k"}}, {}, {}};
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16, DType::kF64};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{64, 8192, "m=n=k"};
  u.size_spec = SizeSpec{"gemm",
                         "gemm",
                         "GEMM shapes MxNxK (or N), comma-separated",
                         "SHAPES",
                         ',',
                         true,
                         gemm_op::parse_size};
  u.plan = gemm_op::plan;
  u.work = gemm_op::work;
  u.footprint = gemm_op::footprint;
  u.shrink = gemm_op::shrink;
  u.shape_to_json = gemm_op::to_json;
  u.shape_from_json = gemm_op::from_json;
  u.refusal = gemm_op::refusal;
  u.run = gemm_op::run;
  u.inputs = gemm_op::inputs;
  u.output = gemm_op::output;
  u.verify = gemm_op::verify;
  return u;
}

}  // namespace gpucheck::bench

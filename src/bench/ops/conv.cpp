// conv: a 2-D convolution (cross-correlation with zero padding) in NCHW or NHWC.
#include "bench/ops/conv.h"

#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "bench/size_text.h"
#include "bench/verify_parts.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/text.h"

#include <fmt/format.h>

#include <stdexcept>

namespace gpucheck::bench {

// ---- tensors and inputs

std::uint64_t conv_x_elements(const ConvShape& s) {
  return checked_elements(checked_elements(checked_elements(s.n, s.c, "conv x"), s.h, "conv x"),
                          s.w, "conv x");
}
std::uint64_t conv_w_elements(const ConvShape& s) {
  return checked_elements(checked_elements(checked_elements(s.k, s.c, "conv w"), s.r, "conv w"),
                          s.s, "conv w");
}
std::uint64_t conv_y_elements(const ConvShape& s) {
  if (s.stride == 0 || s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.s)
    throw std::invalid_argument("conv: zero stride or a filter larger than the padded input");
  return checked_elements(checked_elements(checked_elements(s.n, s.k, "conv y"), s.p(), "conv y"),
                          s.q(), "conv y");
}

ConvInputs make_conv_inputs(DType dtype, const ConvShape& shape, std::uint64_t seed) {
  ConvInputs in{HostBuffer(dtype, host_size(conv_x_elements(shape), "conv x")),
                HostBuffer(dtype, host_size(conv_w_elements(shape), "conv w"))};
  fill_normal(in.x, seed, kStreamConvX);
  fill_normal(in.w, seed, kStreamConvW);
  if (shape.layout == Layout::kNhwc) {
    permute_to_channels_last(in.x, shape.n, shape.c, shape.h, shape.w);
    permute_to_channels_last(in.w, shape.k, shape.c, shape.r, shape.s);
  }
  return in;
}

// ---- float64 check

Verification verify_conv(const ConvShape& shape, const HostBuffer& xb, const HostBuffer& wb,
                         const HostBuffer& yb, DType compute, const VerifyOptions& opt) {
  using namespace verify_parts;
  const std::uint64_t N = shape.n, C = shape.c, H = shape.h, W = shape.w;
  const std::uint64_t K = shape.k, R = shape.r, S = shape.s;
  const std::uint64_t stride = shape.stride, pad = shape.pad;
  if (xb.size() != conv_x_elements(shape) || wb.size() != conv_w_elements(shape) ||
      yb.size() != conv_y_elements(shape))
    throw std::invalid_argument(
        fmt::format("verify_conv: buffers of {}, {}, {} elements do not match the shape", xb.size(),
                    wb.size(), yb.size()));
  const std::uint64_t P = shape.p(), Q = shape.q();
  const std::uint64_t crs = C * R * S;
  const ErrorModel model = conv_error_model(xb.dtype(), yb.dtype(), compute, crs);
  Verification v;
  v.tolerance = model.tolerance;
  const bool full = mul_sat(yb.size(), crs) <= opt.full_max_macs;
  v.method = full ? "elementwise" : "freivalds+sampled+scan";
  if (yb.size() == 0) {
    v.ok = true;
    v.detail = "empty result";
    return v;
  }
  const ScanResult scan = scan_outputs(yb, false);
  if (scan.bad != 0) {
    v.ok = false;
    v.max_rel_error = kInf;
    v.first_bad_index = scan.first;
    v.detail = describe_scan(scan, yb);
    return v;
  }
  const double out_mn = min_normal(yb.dtype());

  // x as N×C×H×W and w as K×C×R×S doubles, whatever the layout.
  std::vector<double> x(xb.size()), w(wb.size());
  {
    const auto xs = load_all(xb), ws = load_all(wb);
    for (std::uint64_t n = 0; n < N; ++n)
      for (std::uint64_t c = 0; c < C; ++c)
        for (std::uint64_t h = 0; h < H; ++h)
          for (std::uint64_t q = 0; q < W; ++q)
            x[((n * C + c) * H + h) * W + q] = xs[conv_x_index(shape, n, c, h, q)];
    for (std::uint64_t k = 0; k < K; ++k)
      for (std::uint64_t c = 0; c < C; ++c)
        for (std::uint64_t r = 0; r < R; ++r)
          for (std::uint64_t s = 0; s < S; ++s)
            w[((k * C + c) * R + r) * S + s] = ws[conv_w_index(shape, k, c, r, s)];
  }
  // Calls f(c·R·S + r·S + s, x value) for each in-bounds tap of output position (n, p, q).
  auto for_each_tap = [&](std::uint64_t n, std::uint64_t p, std::uint64_t q, auto&& f) {
    for (std::uint64_t c = 0; c < C; ++c)
      for (std::uint64_t r = 0; r < R; ++r) {
        const std::uint64_t hh = p * stride + r;  // padded coordinate
        if (hh < pad || hh - pad >= H) continue;
        const double* xrow = &x[((n * C + c) * H + (hh - pad)) * W];
        for (std::uint64_t s = 0; s < S; ++s) {
          const std::uint64_t ww = q * stride + s;
          if (ww < pad || ww - pad >= W) continue;
          f((c * R + r) * S + s, xrow[ww - pad]);
        }
      }
  };
  auto check_point = [&](std::uint64_t n, std::uint64_t k, std::uint64_t p, std::uint64_t q,
                         Tracker& t) {
    Acc s;
    double mg = 0;
    const double* wk = &w[k * crs];
    for_each_tap(n, p, q, [&](std::uint64_t tap, double xv) {
      s.add_product(xv, wk[tap]);
      mg += std::fabs(xv * wk[tap]);
    });
    const std::uint64_t idx = conv_y_index(shape, n, k, p, q);
    const double ref = s.value(), got = yb.get(idx);
    const double allow = element_allowance(model, out_mn, ref, mg, crs);
    t.observe(idx, std::fabs(got - ref) / allow, [&] {
      return fmt::format(
          "y[n={},k={},p={},q={}] (element {}) = {} where float64 gives {} "
          "(allowed ±{:.3g})",
          n, k, p, q, idx, got, ref, allow);
    });
  };

  // Output points (or positions) per thread at least: about a million multiply-adds.
  const std::size_t points_per_range = std::max<std::uint64_t>(1, (std::uint64_t{1} << 20) / crs);
  Tracker t(1.0);
  if (full) {
    // Logical N×K×P×Q order; the tracker keeps the lowest layout index as one pass would.
    tracked_ranges(t, N * K * P * Q, points_per_range,
                   [&](std::size_t begin, std::size_t end, Tracker& part) {
                     for (std::size_t i = begin; i < end; ++i)
                       check_point(i / (K * P * Q), i / (P * Q) % K, i / Q % P, i % Q, part);
                   });
    finish(v, t, 0, "", fmt::format("all {} elements within their allowance", yb.size()));
    return v;
  }

  // Σ_k u_k·y[n,k,p,q] against conv(x, Σ_k u_k·w_k), two ±1 vectors u over the K channels.
  std::vector<double> uk[2] = {std::vector<double>(K), std::vector<double>(K)};
  for (std::uint64_t k = 0; k < K; ++k)
    for (int vv = 0; vv < 2; ++vv) uk[vv][k] = sign_of(opt.seed, k, vv);
  std::vector<Acc> wu[2] = {std::vector<Acc>(crs), std::vector<Acc>(crs)};
  std::vector<double> w_abs(crs, 0.0);
  double w_frob_sq = 0;
  for (std::uint64_t k = 0; k < K; ++k)
    for (std::uint64_t tap = 0; tap < crs; ++tap) {
      const double wv = w[k * crs + tap];
      wu[0][tap].add(uk[0][k] * wv);
      wu[1][tap].add(uk[1][k] * wv);
      w_abs[tap] += std::fabs(wv);
      w_frob_sq += wv * wv;
    }
  const double w_frob = std::sqrt(w_frob_sq);
  const double kk = static_cast<double>(K + crs + 2);
  const double host_noise = 4 * kk * kk * kU64 * kU64;

  struct Position {
    std::uint64_t n, p, q;
  };
  // Each position's residual and allowance (positions n·P·Q + p·Q + q), then judged in order.
  const std::uint64_t positions = N * P * Q;
  std::vector<double> pos_residual(positions), pos_allow(positions);
  parallel_ranges(
      positions,
      [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) {
          const std::uint64_t n = i / (P * Q), p = i / Q % P, q = i % Q;
          Acc t0, t1, s0, s1;
          double p_abs = 0, patch_sq = 0, q_abs = 0, y_sq = 0;
          for_each_tap(n, p, q, [&](std::uint64_t tap, double xv) {
            t0.add_product(xv, wu[0][tap].hi);
            t0.lo += xv * wu[0][tap].lo;
            t1.add_product(xv, wu[1][tap].hi);
            t1.lo += xv * wu[1][tap].lo;
            p_abs += std::fabs(xv) * w_abs[tap];
            patch_sq += xv * xv;
          });
          for (std::uint64_t k = 0; k < K; ++k) {
            const double yv = yb.get(conv_y_index(shape, n, k, p, q));
            s0.add(uk[0][k] * yv);
            s1.add(uk[1][k] * yv);
            q_abs += std::fabs(yv);
            y_sq += yv * yv;
          }
          pos_residual[i] = freivalds_residual(s0, t0, s1, t1);
          pos_allow[i] = freivalds_allowance(model, out_mn, y_sq, K, patch_sq, w_frob, host_noise,
                                             p_abs + q_abs);
        }
      },
      points_per_range);
  std::vector<std::pair<Position, double>> failing;  // position, observed/allowed
  double worst = 0, worst_residual = 0, worst_allow = 0;
  Position worst_pos{0, 0, 0};
  for (std::uint64_t i = 0; i < positions; ++i) {
    const double ratio = pos_residual[i] / pos_allow[i];
    const Position pos{i / (P * Q), i / Q % P, i % Q};
    if (!(ratio <= 1)) failing.push_back({pos, ratio});
    if (std::isnan(ratio) || ratio > worst) {
      worst = std::isnan(ratio) ? kInf : ratio;
      worst_pos = pos;
      worst_residual = pos_residual[i];
      worst_allow = pos_allow[i];
    }
  }
  t.raise_max(worst);

  const auto samples = sample_indices(N * K * P * Q, opt.samples, opt.seed);
  tracked_ranges(t, samples.size(), points_per_range,
                 [&](std::size_t begin, std::size_t end, Tracker& part) {
                   for (std::size_t s_i = begin; s_i < end; ++s_i) {
                     // A logical N×K×P×Q index, so the sample does not depend on the layout.
                     const std::uint64_t logical = samples[s_i];
                     const std::uint64_t q = logical % Q, p = logical / Q % P,
                                         k = logical / (P * Q) % K, n = logical / (K * P * Q);
                     check_point(n, k, p, q, part);
                   }
                 });

  std::string pos_detail;
  if (!failing.empty()) {
    const std::uint64_t bad_before = t.bad();
    const std::size_t localized = std::min(failing.size(), opt.max_localized);
    for (std::size_t f = 0; f < localized; ++f)
      for (std::uint64_t k = 0; k < K; ++k)
        check_point(failing[f].first.n, k, failing[f].first.p, failing[f].first.q, t);
    pos_detail = fmt::format(
        "{} of {} output positions fail the channel-projection test (n={}, p={}, q={}: "
        "|Σ_k u_k·y − conv(x, Σ_k u_k·w_k)| = {:.3g}, allowed {:.3g})",
        failing.size(), N * P * Q, worst_pos.n, worst_pos.p, worst_pos.q, worst_residual,
        worst_allow);
    if (t.bad() == bad_before) {
      const auto& f = failing.front().first;
      const auto ratio = failing.front().second;
      t.observe(conv_y_index(shape, f.n, 0, f.p, f.q), ratio, [&] {
        return fmt::format(
            "output position n={}, p={}, q={} is off as a whole, no single channel beyond its "
            "allowance",
            f.n, f.p, f.q);
      });
    }
  }
  finish(v, t, failing.size(), pos_detail,
         fmt::format("{} output positions × 2 projections and {} sampled elements within "
                     "allowance",
                     N * P * Q, samples.size()));
  return v;
}

namespace conv_op {

namespace {

namespace k = keys;

// N,C,H,W,K,R,S,stride,pad (layout left at NCHW: the bench's --layout list applies).
Shape parse_size(std::string_view item, std::string_view where) {
  auto f = split_text(trim_space(item), ',');
  if (f.size() != 9)
    throw UsageError(fmt::format("{}: '{}' has {} fields; a conv shape is N,C,H,W,K,R,S,stride,pad",
                                 where, item, f.size()));
  ConvShape s;
  const char* names[] = {"N", "C", "H", "W", "K", "R", "S", "stride"};
  std::uint64_t* fields[] = {&s.n, &s.c, &s.h, &s.w, &s.k, &s.r, &s.s, &s.stride};
  for (int i = 0; i < 8; ++i) *fields[i] = positive_count(f[i], where, names[i]);
  std::string why;
  auto pad = parse_count(f[8], &why);
  if (!pad)
    throw UsageError(fmt::format("{}: pad '{}' is not a count: {}", where, trim_space(f[8]), why));
  s.pad = *pad;
  if (s.h + 2 * s.pad < s.r || s.w + 2 * s.pad < s.s)
    throw UsageError(fmt::format("{}: '{}': the filter ({}x{}) is larger than the padded input",
                                 where, item, s.r, s.s));
  return s;
}

// Each preset or flag shape in each layout.
std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (const Shape& size : req.sizes.of(Op::kConv))
    for (auto layout : req.layouts)
      for (DType dt : req.dtypes) {
        auto s = std::get<ConvShape>(size);
        s.layout = layout;
        cells.push_back(planned_cell(Op::kConv, dt, s));
      }
  return cells;
}

Work work(const Cell& cell) {
  const auto& s = std::get<ConvShape>(cell.shape);
  return {
      2.0 * static_cast<double>(s.n * s.k * s.p() * s.q()) * static_cast<double>(s.c * s.r * s.s),
      "TFLOP/s"};
}

Footprint footprint(const Cell& cell, bool host_device) {
  const auto& s = std::get<ConvShape>(cell.shape);
  return tensor_footprint({conv_x_elements(s), conv_w_elements(s), conv_y_elements(s)},
                          element_size(cell.dtype), host_device);
}

bool shrink(Cell& cell) {
  auto& s = std::get<ConvShape>(cell.shape);
  if (s.n <= 1) return false;
  s.n /= 2;
  return true;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<ConvShape>(shape);
  return {{k::kN, s.n},     {k::kC, s.c},
          {k::kH, s.h},     {k::kW, s.w},
          {k::kKk, s.k},    {k::kR, s.r},
          {k::kS, s.s},     {k::kStride, s.stride},
          {k::kPad, s.pad}, {k::kLayout, to_string(s.layout)}};
}

Shape from_json(const nlohmann::json& j) {
  auto u = [&](std::string_view key) { return j.at(std::string(key)).get<std::uint64_t>(); };
  ConvShape s{u(k::kN), u(k::kC), u(k::kH),      u(k::kW),   u(k::kKk),
              u(k::kR), u(k::kS), u(k::kStride), u(k::kPad), Layout::kNchw};
  s.layout = plan_enum<Layout>(j.at(std::string(k::kLayout)), layout_from_string, "layout");
  return s;
}

// The device's support depends on the layout too.
std::optional<std::string> refusal(const Cell& cell, Device& device) {
  return device.unsupported_reason(cell.op, cell.dtype, std::get<ConvShape>(cell.shape).layout);
}

void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<ConvShape>(cell.shape);
  Device& dev = ctx.device();
  const auto kept = shared_inputs<ConvInputs>(
      ctx,
      checked_mul(checked_add(conv_x_elements(s), conv_w_elements(s)), element_size(cell.dtype)),
      [&] { return make_conv_inputs(cell.dtype, s, ctx.seed()); });
  const ConvInputs& in = *kept;
  HostBuffer y = make_output(cell.dtype, conv_y_elements(s));
  ctx.mark("inputs");
  std::vector<DeviceTensor> d;
  d.push_back(to_device(dev, in.x));
  d.push_back(to_device(dev, in.w));
  DeviceTensor dy{dev.allocate(y.size_bytes()), y.size_bytes()};
  VerifyOptions vo;
  vo.seed = ctx.seed();
  DType compute = dev.verify_compute(Op::kConv, cell.dtype).value_or(default_compute(cell.dtype));
  ctx.measure_op(
      {&in.x, &in.w}, d, y, dy, [&] { dev.conv2d(cell.dtype, s, *d[0].buf, *d[1].buf, *dy.buf); },
      [&](const HostBuffer& out) { return verify_conv(s, in.x, in.w, out, compute, vo); });
}

std::vector<HostBuffer> inputs(const Cell& cell, std::uint64_t seed) {
  auto c = make_conv_inputs(cell.dtype, std::get<ConvShape>(cell.shape), seed);
  std::vector<HostBuffer> in;
  in.push_back(std::move(c.x));
  in.push_back(std::move(c.w));
  return in;
}

OpOutput output(const Cell& cell) {
  const std::uint64_t n = conv_y_elements(std::get<ConvShape>(cell.shape));
  return {n, cell.dtype, n * element_size(cell.dtype)};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got,
                    DType compute, const VerifyOptions& vo) {
  return verify_conv(std::get<ConvShape>(cell.shape), in.at(0), in.at(1),
                     output_buffer(output(cell), got), compute, vo);
}

// The swept size is the batch of ResNet's 64-channel 56×56 3×3 layer.
std::string sweep_flag(const std::vector<std::uint64_t>& sizes) {
  std::string out;
  for (auto s : sizes) out += fmt::format("{}{},64,56,56,64,3,3,1,1", out.empty() ? "" : ";", s);
  return out;
}

}  // namespace

}  // namespace conv_op

OpUnit conv_unit() {
  OpUnit u;
  u.op = Op::kConv;
  u.in_default_plan = true;
  u.end_to_end = true;
  u.tunes_gemm = true;
  u.profile_shape = {
      {{"n"}, {"c"}, {"h"}, {"w"}, {"k"}, {"r"}, {"s"}, {"stride", 1, 1}, {"pad", 0, 0}},
      {{"layout", {"nchw", "nhwc"}, "nchw"}},
      {}};
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{1, 256, "batch n", conv_op::sweep_flag};
  u.size_spec = SizeSpec{"conv",
                         "conv",
                         "conv shapes N,C,H,W,K,R,S,stride,pad; ';' between shapes",
                         "SHAPES",
                         ';',
                         true,
                         conv_op::parse_size};
  u.plan = conv_op::plan;
  u.work = conv_op::work;
  u.footprint = conv_op::footprint;
  u.shrink = conv_op::shrink;
  u.shape_to_json = conv_op::to_json;
  u.shape_from_json = conv_op::from_json;
  u.refusal = conv_op::refusal;
  u.run = conv_op::run;
  u.inputs = conv_op::inputs;
  u.output = conv_op::output;
  u.verify = conv_op::verify;
  return u;
}

}  // namespace gpucheck::bench

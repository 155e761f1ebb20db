// exp: y = exp(x) over n elements, the memory-bound op (reads and writes each element once).
#include "bench/ops/exp.h"

#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "bench/size_text.h"
#include "bench/verify_parts.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

// ---- inputs

std::pair<double, double> exp_input_range(DType dtype) {
  if (dtype == DType::kF16 || dtype == DType::kBf16) return {-8.0, 8.0};
  return {-10.0, 10.0};
}

HostBuffer make_exp_input(DType dtype, const ExpShape& shape, std::uint64_t seed) {
  HostBuffer x(dtype, host_size(shape.n, "exp input"));
  const auto [lo, hi] = exp_input_range(dtype);
  fill_uniform(x, lo, hi, seed, kStreamExpX);
  return x;
}

// ---- float64 check

double exp_tolerance(DType dtype) {
  switch (dtype) {
    case DType::kF64:
      return 1e-14;
    case DType::kF16:
      return 2e-3;
    case DType::kBf16:
      return 1.6e-2;
    case DType::kFp8:
      return 0.25;  // no device runs exp in fp8; a bound for its 4 bits, never reached
    case DType::kF32:
    case DType::kTf32:
      break;
  }
  return 2e-6;
}

Verification verify_exp(const HostBuffer& x, const HostBuffer& y, const VerifyOptions& opt) {
  using namespace verify_parts;
  if (x.size() != y.size())
    throw std::invalid_argument(
        fmt::format("verify_exp: {} inputs but {} outputs", x.size(), y.size()));
  Verification v;
  v.tolerance = exp_tolerance(y.dtype());
  const std::uint64_t n = y.size();
  const bool full = n <= opt.exp_full_max;
  v.method = full ? "elementwise" : "sampled+scan";
  const double floor = min_normal(y.dtype());
  const ScanResult scan = scan_outputs(y, /*reject_negative=*/true);

  Tracker t(v.tolerance);
  auto check = [&](std::uint64_t i, double xi, double yi, Tracker& into) {
    if (!std::isfinite(yi)) return;  // the scan names it
    const double e = std::exp(xi);
    const double rel = std::fabs(yi - e) / std::max(e, floor);
    into.observe(i, rel, [&] {
      return fmt::format("element {}: {} where exp({}) = {} (relative error {:.3g} > {:.3g})", i,
                         yi, xi, e, rel, v.tolerance);
    });
  };
  std::uint64_t checked = 0;
  if (full) {
    tracked_ranges(t, n, std::size_t{1} << 16,
                   [&](std::size_t range_begin, std::size_t range_end, Tracker& part) {
                     std::vector<double> xb(kBlock), yb(kBlock);
                     for (std::size_t begin = range_begin; begin < range_end; begin += kBlock) {
                       const std::size_t count = std::min<std::size_t>(kBlock, range_end - begin);
                       load(x, begin, count, xb.data());
                       load(y, begin, count, yb.data());
                       for (std::size_t j = 0; j < count; ++j) check(begin + j, xb[j], yb[j], part);
                     }
                   });
    checked = n;
  } else {
    for (const std::uint64_t i : sample_indices(n, opt.exp_samples, opt.seed)) {
      check(i, x.get(i), y.get(i), t);
      ++checked;
    }
  }

  v.max_rel_error = scan.bad != 0 ? kInf : t.max();
  v.ok = scan.bad == 0 && t.bad() == 0;
  v.first_bad_index = t.first();
  if (scan.bad != 0 && (!t.first() || scan.first < *t.first())) v.first_bad_index = scan.first;
  if (v.ok) {
    v.detail = full ? fmt::format("all {} elements within {:.3g}", n, v.tolerance)
                    : fmt::format("{} sampled elements within {:.3g}; scan of {} elements clean",
                                  checked, v.tolerance, n);
    return v;
  }
  // Every kind of failure found, the one at the lowest index first.
  std::vector<std::pair<std::uint64_t, std::string>> parts;
  if (t.bad() != 0)
    parts.emplace_back(*t.first(), fmt::format("{}; {} of {} checked elements out of tolerance",
                                               t.first_what(), t.bad(), checked));
  if (scan.bad != 0) parts.emplace_back(scan.first, describe_scan(scan, y));
  std::sort(parts.begin(), parts.end());
  for (const auto& [index, text] : parts) v.detail += (v.detail.empty() ? "" : "; ") + text;
  return v;
}

namespace exp_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (const Shape& s : req.sizes.of(Op::kExp))
    for (DType dt : req.dtypes) cells.push_back(planned_cell(Op::kExp, dt, s));
  return cells;
}

// An element count, N or 2^K.
Shape parse_size(std::string_view item, std::string_view where) {
  return ExpShape{positive_count(item, where, "element count")};
}

Work work(const Cell& cell) {
  const double es = static_cast<double>(element_size(cell.dtype));
  return {2.0 * static_cast<double>(std::get<ExpShape>(cell.shape).n) * es, "GB/s"};
}

Footprint footprint(const Cell& cell, bool host_device) {
  const auto& s = std::get<ExpShape>(cell.shape);
  return tensor_footprint({s.n, s.n}, element_size(cell.dtype), host_device);
}

bool shrink(Cell& cell) {
  auto& s = std::get<ExpShape>(cell.shape);
  if (s.n <= 1024) return false;
  s.n /= 2;
  return true;
}

nlohmann::json to_json(const Shape& shape) {
  return {{k::kN, std::get<ExpShape>(shape).n}};
}

Shape from_json(const nlohmann::json& j) {
  return ExpShape{j.at(std::string(k::kN)).get<std::uint64_t>()};
}

void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<ExpShape>(cell.shape);
  Device& dev = ctx.device();
  const auto kept = shared_inputs<HostBuffer>(ctx, checked_mul(s.n, element_size(cell.dtype)), [&] {
    return make_exp_input(cell.dtype, s, ctx.seed());
  });
  const HostBuffer& x = *kept;
  HostBuffer y = make_output(cell.dtype, s.n);
  ctx.mark("inputs");
  std::vector<DeviceTensor> dx;
  dx.push_back(to_device(dev, x));
  DeviceTensor dy{dev.allocate(y.size_bytes()), y.size_bytes()};
  VerifyOptions vo;
  vo.seed = ctx.seed();
  ctx.measure_op(
      {&x}, dx, y, dy, [&] { dev.exp(cell.dtype, *dx[0].buf, *dy.buf, s.n); },
      [&](const HostBuffer& out) { return verify_exp(x, out, vo); });
}

std::vector<HostBuffer> inputs(const Cell& cell, std::uint64_t seed) {
  std::vector<HostBuffer> in;
  in.push_back(make_exp_input(cell.dtype, std::get<ExpShape>(cell.shape), seed));
  return in;
}

OpOutput output(const Cell& cell) {
  const std::uint64_t n = std::get<ExpShape>(cell.shape).n;
  return {n, cell.dtype, n * element_size(cell.dtype)};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got, DType,
                    const VerifyOptions& vo) {
  return verify_exp(in.at(0), output_buffer(output(cell), got), vo);
}

}  // namespace

}  // namespace exp_op

OpUnit exp_unit() {
  OpUnit u;
  u.op = Op::kExp;
  u.in_default_plan = true;
  u.computes_in_dtype = true;
  u.end_to_end = true;
  u.profile_shape = {{{"n"}}, {}, {}};
  u.default_dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBf16};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{std::uint64_t{1} << 10, std::uint64_t{1} << 28, "elements"};
  u.size_spec = SizeSpec{"exp",
                         "exp",
                         "exp element counts, e.g. 1048576,2^24",
                         "COUNTS",
                         ',',
                         false,
                         exp_op::parse_size};
  u.plan = exp_op::plan;
  u.work = exp_op::work;
  u.footprint = exp_op::footprint;
  u.shrink = exp_op::shrink;
  u.shape_to_json = exp_op::to_json;
  u.shape_from_json = exp_op::from_json;
  u.run = exp_op::run;
  u.inputs = exp_op::inputs;
  u.output = exp_op::output;
  u.verify = exp_op::verify;
  return u;
}

}  // namespace gpucheck::bench

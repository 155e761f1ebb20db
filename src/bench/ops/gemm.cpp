// gemm: C = A·B of m×k and k×n row-major matrices, the compute-bound op.
#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace gemm_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (const auto& s : req.sizes.gemm)
    for (DType dt : req.dtypes) cells.push_back(planned_cell(Op::kGemm, dt, s));
  return cells;
}

Work work(const Cell& cell) {
  const auto& s = std::get<GemmShape>(cell.shape);
  return {2.0 * static_cast<double>(s.m) * static_cast<double>(s.n) * static_cast<double>(s.k),
          "TFLOP/s"};
}

Footprint footprint(const Cell& cell, bool host_device) {
  const auto& s = std::get<GemmShape>(cell.shape);
  return tensor_footprint({checked_mul(s.m, s.k), checked_mul(s.k, s.n), checked_mul(s.m, s.n)},
                          element_size(cell.dtype), host_device);
}

bool shrink(Cell& cell) {
  auto& s = std::get<GemmShape>(cell.shape);
  if (s.m <= 64 || s.n <= 64 || s.k <= 64) return false;
  s.m /= 2, s.n /= 2, s.k /= 2;
  return true;
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
  GemmInputs in = make_gemm_inputs(cell.dtype, s, ctx.seed());
  HostBuffer c = make_output(cell.dtype, checked_mul(s.m, s.n));
  std::vector<DeviceTensor> d;
  d.push_back(to_device(dev, in.a));
  d.push_back(to_device(dev, in.b));
  DeviceTensor dc{dev.allocate(c.size_bytes()), c.size_bytes()};
  VerifyOptions vo;
  vo.seed = ctx.seed();
  DType compute = dev.verify_compute(Op::kGemm, cell.dtype).value_or(default_compute(cell.dtype));
  ctx.measure_op(
      {&in.a, &in.b}, d, c, dc, [&] { dev.gemm(cell.dtype, s, *d[0].buf, *d[1].buf, *dc.buf); },
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
  return {s.m * s.n, cell.dtype, s.m * s.n * element_size(cell.dtype)};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got,
                    DType compute, const VerifyOptions& vo) {
  return verify_gemm(std::get<GemmShape>(cell.shape), in.at(0), in.at(1),
                     output_buffer(output(cell), got), compute, vo);
}

}  // namespace

}  // namespace gemm_op

OpUnit gemm_unit() {
  OpUnit u;
  u.op = Op::kGemm;
  u.in_default_plan = true;
  u.end_to_end = true;
  u.tunes_gemm = true;
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16, DType::kF64};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{64, 8192, "m=n=k"};
  u.plan = gemm_op::plan;
  u.work = gemm_op::work;
  u.footprint = gemm_op::footprint;
  u.shrink = gemm_op::shrink;
  u.shape_to_json = gemm_op::to_json;
  u.shape_from_json = gemm_op::from_json;
  u.run = gemm_op::run;
  u.inputs = gemm_op::inputs;
  u.output = gemm_op::output;
  u.verify = gemm_op::verify;
  return u;
}

}  // namespace gpucheck::bench

// exp: y = exp(x) over n elements, the memory-bound op (reads and writes each element once).
#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace exp_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (const auto& s : req.sizes.exp)
    for (DType dt : req.dtypes) cells.push_back(planned_cell(Op::kExp, dt, s));
  return cells;
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
  HostBuffer x = make_exp_input(cell.dtype, s, ctx.seed());
  HostBuffer y = make_output(cell.dtype, s.n);
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
  u.default_dtypes = {DType::kF32, DType::kF64, DType::kF16, DType::kBf16};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{std::uint64_t{1} << 10, std::uint64_t{1} << 28, "elements"};
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

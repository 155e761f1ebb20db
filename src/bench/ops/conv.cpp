// conv: a 2-D convolution (cross-correlation with zero padding) in NCHW or NHWC.
#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <stdexcept>

namespace gpucheck::bench {

namespace conv_op {

namespace {

namespace k = keys;

// Each preset or flag shape in each layout.
std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  for (auto s : req.sizes.conv)
    for (auto layout : req.layouts)
      for (DType dt : req.dtypes) {
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
  ConvInputs in = make_conv_inputs(cell.dtype, s, ctx.seed());
  HostBuffer y = make_output(cell.dtype, conv_y_elements(s));
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
  u.default_dtypes = {DType::kF32, DType::kTf32, DType::kF16, DType::kBf16};
  // The sweep: ×2 steps over the full range.
  u.sweep = SweepRange{1, 256, "batch n", conv_op::sweep_flag};
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

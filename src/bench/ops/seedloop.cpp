// seedloop: Theano's gputest.py, exp of n floats called `calls` times with the input resident on
// the device; host wall time per call, optionally bringing the result back after every call.
#include "bench/ops/exp.h"
#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace seedloop_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  auto add = [&](SeedloopShape s) { cells.push_back(planned_cell(Op::kSeedloop, DType::kF32, s)); };
  add(SeedloopShape{});
  // Theano's own loop handed a numpy array back on every call: accelerators only.
  if (!req.host_device) add(SeedloopShape{230400, 1000, true});
  return cells;
}

Work work(const Cell& cell) {
  const auto& s = std::get<SeedloopShape>(cell.shape);
  return {2.0 * static_cast<double>(s.n) * 4.0, "GB/s"};
}

Footprint footprint(const Cell& cell, bool) {
  const auto& s = std::get<SeedloopShape>(cell.shape);
  Footprint f;
  f.device_total = checked_mul(checked_mul(s.n, 4), 2);
  f.device_largest = checked_mul(s.n, 4);
  f.host_total = checked_mul(checked_mul(s.n, 4), 3);
  return f;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<SeedloopShape>(shape);
  return {{k::kN, s.n}, {k::kCalls, s.calls}, {k::kD2hEachCall, s.d2h_each_call}};
}

Shape from_json(const nlohmann::json& j) {
  return SeedloopShape{j.at(std::string(k::kN)).get<std::uint64_t>(),
                       j.at(std::string(k::kCalls)).get<std::uint64_t>(),
                       j.at(std::string(k::kD2hEachCall)).get<bool>()};
}

// Every record is the shape's: with or without the copy back after each call.
Transfers transfers(const Cell& cell) {
  return std::get<SeedloopShape>(cell.shape).d2h_each_call ? Transfers::kIncluded
                                                           : Transfers::kExcluded;
}

// The same exp called `calls` times; host wall time per call.
void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<SeedloopShape>(cell.shape);
  Device& dev = ctx.device();
  HostBuffer x = make_exp_input(DType::kF32, ExpShape{s.n}, ctx.seed());
  HostBuffer y = make_output(DType::kF32, s.n);
  DeviceTensor dx = to_device(dev, x);
  DeviceTensor dy{dev.allocate(y.size_bytes()), y.size_bytes()};
  dev.upload(*dy.buf, y.data(), dy.bytes);
  auto host_out = ctx.host_memory(y.size_bytes(), HostMemory::kPinned);
  dev.synchronize();
  nlohmann::json r = ctx.record(transfers(cell), s.d2h_each_call);
  bool truncated = false;
  auto alone = ctx.hold_host(s.d2h_each_call);
  auto times = ctx.reps(
      [&] {
        auto t0 = std::chrono::steady_clock::now();
        for (std::uint64_t i = 0; i < s.calls; ++i) {
          dev.exp(DType::kF32, *dx.buf, *dy.buf, s.n);
          if (s.d2h_each_call) {
            // Synchronous, as Theano handed a numpy array back on every call.
            dev.download(host_out->data(), *dy.buf, dy.bytes);
            dev.synchronize();
          }
        }
        dev.synchronize();
        return seconds_since(t0);
      },
      &truncated);
  for (double& t : times) t /= static_cast<double>(s.calls);  // the record is per call
  dev.download(y.data(), *dy.buf, dy.bytes);
  dev.synchronize();
  ctx.plant(y);
  VerifyOptions vo;
  vo.seed = ctx.seed();
  ctx.collect(std::move(r), std::move(times), truncated, verify_exp(x, y, vo));
}

std::vector<HostBuffer> inputs(const Cell& cell, std::uint64_t seed) {
  std::vector<HostBuffer> in;
  in.push_back(make_exp_input(DType::kF32, ExpShape{std::get<SeedloopShape>(cell.shape).n}, seed));
  return in;
}

OpOutput output(const Cell& cell) {
  const std::uint64_t n = std::get<SeedloopShape>(cell.shape).n;
  return {n, DType::kF32, n * 4};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got, DType,
                    const VerifyOptions& vo) {
  return verify_exp(in.at(0), output_buffer(output(cell), got), vo);
}

}  // namespace

}  // namespace seedloop_op

OpUnit seedloop_unit() {
  OpUnit u;
  u.op = Op::kSeedloop;
  u.rated = false;
  u.computes_in_dtype = true;
  u.profile_shape = {{{"n"}, {"calls"}}, {}, {ProfileShape::Flag("d2h_each_call")}};
  u.plan = seedloop_op::plan;
  u.work = seedloop_op::work;
  u.footprint = seedloop_op::footprint;
  u.shape_to_json = seedloop_op::to_json;
  u.shape_from_json = seedloop_op::from_json;
  u.run = seedloop_op::run;
  u.inputs = seedloop_op::inputs;
  u.transfers = seedloop_op::transfers;
  u.output = seedloop_op::output;
  u.verify = seedloop_op::verify;
  return u;
}

}  // namespace gpucheck::bench

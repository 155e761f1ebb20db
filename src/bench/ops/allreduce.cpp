// allreduce: an f32 sum all-reduce over a group's devices (NCCL); run by bench/group_engine.cpp
// and planned by app/bench_multi.cpp.
#include "bench/ops/allreduce.h"

#include "bench/ops/op_unit.h"
#include "bench/size_text.h"
#include "core/errors.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace allreduce_op {

namespace {

namespace k = keys;

// One all-reduce per size over every device of the group.
std::vector<Cell> group_plan(const GroupPlanRequest& req) {
  std::vector<Cell> cells;
  for (const Shape& size : req.sizes)
    cells.push_back(
        planned_cell(Op::kAllreduce, DType::kF32,
                     AllreduceShape{std::get<AllreduceShape>(size).bytes, req.devices}));
  return cells;
}

// Bytes per device, a whole number of f32 elements.
Shape parse_size(std::string_view item, std::string_view where) {
  const std::uint64_t bytes = byte_count(item, where);
  if (bytes % 4 != 0)
    throw UsageError(fmt::format(
        "{}: {} bytes is not a whole number of f32 elements (a multiple of 4)", where, bytes));
  return AllreduceShape{bytes, {}};
}

// Bus bandwidth (nccl-tests): algbw · 2(n−1)/n, what each link carries.
Work work(const Cell& cell) {
  const auto& s = std::get<AllreduceShape>(cell.shape);
  return {static_cast<double>(s.bytes) * allreduce_bus_factor(s.devices.size()), "GB/s"};
}

// On each device: its input and output.
Footprint footprint(const Cell& cell, bool) {
  const auto& a = std::get<AllreduceShape>(cell.shape);
  Footprint f;
  f.device_total = a.bytes * 2;
  f.device_largest = a.bytes;
  f.host_total = a.bytes * 3;
  return f;
}

// Halved, in whole f32 elements.
bool shrink(Cell& cell) {
  auto& bytes = std::get<AllreduceShape>(cell.shape).bytes;
  if (bytes <= 4096) return false;
  bytes /= 2;
  bytes -= bytes % 4;
  return true;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<AllreduceShape>(shape);
  return {{k::kBytes, s.bytes}, {k::kDevices, s.devices}};
}

// Where no group runs: the first size over the one device there is.
Shape lone_shape(const std::vector<Shape>& sizes, const std::string& device) {
  return AllreduceShape{sizes.empty() ? 0 : std::get<AllreduceShape>(sizes.front()).bytes,
                        {device}};
}

Shape from_json(const nlohmann::json& j) {
  return AllreduceShape{j.at(std::string(k::kBytes)).get<std::uint64_t>(),
                        j.at(std::string(k::kDevices)).get<std::vector<std::string>>()};
}

}  // namespace

}  // namespace allreduce_op

double allreduce_bus_factor(std::size_t n) {
  return n == 0 ? 0.0 : 2.0 * static_cast<double>(n - 1) / static_cast<double>(n);
}

OpUnit allreduce_unit() {
  OpUnit u;
  u.op = Op::kAllreduce;
  u.group = GroupOp{"all-reduce", "nccl", true, allreduce_op::lone_shape};
  u.size_spec = SizeSpec{"allreduce",
                         "allreduce",
                         "all-reduce sizes in bytes per GPU (KiB/MiB/GiB suffixes; default 1 MiB "
                         "to 1 GiB, x4)",
                         "BYTES",
                         ',',
                         false,
                         allreduce_op::parse_size,
                         "1MiB,1GiB"};
  u.group_plan = allreduce_op::group_plan;
  u.work = allreduce_op::work;
  u.footprint = allreduce_op::footprint;
  u.shrink = allreduce_op::shrink;
  u.shape_to_json = allreduce_op::to_json;
  u.shape_from_json = allreduce_op::from_json;
  return u;
}

}  // namespace gpucheck::bench

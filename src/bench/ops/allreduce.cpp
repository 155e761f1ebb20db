// allreduce: an f32 sum all-reduce over a group's devices (NCCL); run by bench/group_engine.cpp
// and planned by app/bench_multi.cpp.
#include "bench/ops/op_unit.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace allreduce_op {

namespace {

namespace k = keys;

// Bus bandwidth (nccl-tests): algbw · 2(n−1)/n, what each link carries.
Work work(const Cell& cell) {
  const auto& s = std::get<AllreduceShape>(cell.shape);
  return {static_cast<double>(s.bytes) * allreduce_bus_factor(s.devices.size()), "GB/s"};
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<AllreduceShape>(shape);
  return {{k::kBytes, s.bytes}, {k::kDevices, s.devices}};
}

Shape from_json(const nlohmann::json& j) {
  return AllreduceShape{j.at(std::string(k::kBytes)).get<std::uint64_t>(),
                        j.at(std::string(k::kDevices)).get<std::vector<std::string>>()};
}

}  // namespace

}  // namespace allreduce_op

OpUnit allreduce_unit() {
  OpUnit u;
  u.op = Op::kAllreduce;
  u.group = true;
  u.work = allreduce_op::work;
  u.shape_to_json = allreduce_op::to_json;
  u.shape_from_json = allreduce_op::from_json;
  return u;
}

}  // namespace gpucheck::bench

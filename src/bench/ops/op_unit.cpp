// The table of op units: one line per op, in the order of Op.
#include "bench/ops/op_unit.h"

#include "core/json_keys.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>
#include <string>
#include <utility>

namespace gpucheck::bench {

static_assert(std::variant_size_v<Shape> == 8, "one shape per op, in the order of Op");
static_assert(op_for<SeedloopShape> == Op::kSeedloop);
static_assert(op_for<AllreduceShape> == Op::kAllreduce);

// The units, one per op (bench/ops/<op>.cpp).
OpUnit exp_unit();
OpUnit gemm_unit();
OpUnit conv_unit();
OpUnit copy_unit();
OpUnit latency_unit();
OpUnit seedloop_unit();
OpUnit p2p_unit();
OpUnit allreduce_unit();

namespace {

const std::array<OpUnit, 8>& units() {
  static const std::array<OpUnit, 8> kUnits = {exp_unit(),  gemm_unit(),     conv_unit(),
                                               copy_unit(), latency_unit(),  seedloop_unit(),
                                               p2p_unit(),  allreduce_unit()};
  return kUnits;
}

}  // namespace

const OpUnit& unit_of(Op op) {
  const auto i = static_cast<std::size_t>(op);
  if (i >= units().size() || units()[i].op != op)
    throw std::logic_error("bench: no unit for op " + std::to_string(i));
  return units()[i];
}

bool records_have_dtype(std::string_view op) {
  const std::optional<Op> known = op_from_string(op);
  return !known || unit_of(*known).has_dtype;
}

std::span<const OpUnit> op_units() {
  return units();
}

Op op_of(const Shape& shape) {
  return static_cast<Op>(shape.index());
}

Cell planned_cell(Op op, DType dtype, Shape shape) {
  Cell c;
  c.op = op;
  c.dtype = dtype;
  c.shape = std::move(shape);
  return c;
}

Cell planned_cell(DType dtype, Shape shape) {
  const Op op = op_of(shape);
  return planned_cell(op, dtype, std::move(shape));
}

nlohmann::json group_refusal(Op op, const std::vector<Shape>& sizes, const std::string& device,
                             const std::string& backend, const std::string& why) {
  namespace k = keys;
  const OpUnit& unit = unit_of(op);
  nlohmann::json r = {{k::kDevice, device},
                      {k::kBackend, backend},
                      {k::kOp, to_string(op)},
                      {k::kImpl, unit.group->impl},
                      {k::kShape, unit.shape_to_json(unit.group->lone_shape(sizes, device))},
                      {k::kTransfers, to_string(Transfers::kExcluded)},
                      {k::kStatus, "unsupported"},
                      {k::kReason, why}};
  if (unit.has_dtype) r[k::kDtype] = to_string(unit.default_dtypes.front());
  return r;
}

std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) throw std::overflow_error("size overflows 64 bits");
  return r;
}

std::uint64_t checked_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) throw std::overflow_error("size overflows 64 bits");
  return r;
}

Footprint tensor_footprint(std::initializer_list<std::uint64_t> elements,
                           std::uint64_t element_size, bool host_device) {
  Footprint f;
  for (auto n : elements) {
    std::uint64_t b = checked_mul(n, element_size);
    f.device_total = checked_add(f.device_total, b);
    f.device_largest = std::max(f.device_largest, b);
  }
  // Inputs and the output live on the host too; accelerators add pinned copies of each.
  f.host_total = checked_mul(f.device_total, host_device ? 1 : 2);
  return f;
}

HostBuffer output_buffer(const OpOutput& output, const void* got) {
  HostBuffer out(output.dtype, output.elements);
  std::memcpy(out.data(), got, output.bytes);
  return out;
}

}  // namespace gpucheck::bench

// The op table (bench/ops/op_unit.h): one unit per op in the order of Op, each with what its
// runner needs; every shape read back from its plan JSON; the cells the units plan.
#include "bench/cell.h"
#include "bench/ops/op_unit.h"

#include <gtest/gtest.h>

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;

TEST(OpUnits, OnePerOpInTheOrderOfOpWithWhatItsRunnerNeeds) {
  const auto units = op_units();
  ASSERT_EQ(units.size(), std::variant_size_v<Shape>);
  for (std::size_t i = 0; i < units.size(); ++i) {
    const OpUnit& u = units[i];
    SCOPED_TRACE(std::string(to_string(u.op)));
    EXPECT_EQ(static_cast<std::size_t>(u.op), i);
    EXPECT_EQ(&unit_of(u.op), &u);
    EXPECT_TRUE(u.work && u.shape_to_json && u.shape_from_json);
    // core's answer, for the layers that cannot read the unit.
    EXPECT_EQ(u.group.has_value(), runs_between_devices(u.op));
    if (u.group) {
      EXPECT_TRUE(u.group_plan);
      EXPECT_FALSE(u.plan || u.run || u.in_default_plan);
    } else {
      EXPECT_TRUE(u.plan && u.run);
      EXPECT_FALSE(u.group_plan);
    }
    // A framework runs an op only with all three of its pieces.
    EXPECT_EQ(u.inputs != nullptr, u.output != nullptr);
    EXPECT_EQ(u.inputs != nullptr, u.verify != nullptr);
  }
}

TEST(OpUnits, AShapeNamesItsOp) {
  static_assert(op_for<CopyShape> == Op::kCopy);
  const Cell c = planned_cell(DType::kF16, GemmShape{1, 2, 3});
  EXPECT_EQ(c.op, Op::kGemm);
  EXPECT_EQ(c.dtype, DType::kF16);
  EXPECT_EQ(std::get<GemmShape>(c.shape).k, 3u);
}

TEST(OpUnits, EveryShapeReadsBackFromThePlanJson) {
  LatencyShape peer_latency;
  peer_latency.mode = LatencyMode::kP2p;
  peer_latency.src = "cuda0", peer_latency.dst = "cuda1", peer_latency.bytes = 4;
  P2pShape fan{1 << 20, false, std::string(kAllDevices), "cuda1", true, CopyEngine::kCe};
  fan.fan = P2pFan::kAllToOne;
  fan.copies = 2;
  const std::vector<Shape> shapes = {
      ExpShape{4096},
      GemmShape{64, 32, 16},
      ConvShape{2, 3, 9, 9, 4, 3, 3, 2, 1, Layout::kNhwc},
      CopyShape{4096, Direction::kD2h, HostMemory::kPinned},
      CopyShape{4096, Direction::kD2d, HostMemory::kPageable},
      LatencyShape{},
      peer_latency,
      SeedloopShape{230400, 10, true},
      P2pShape{1 << 20, true, "cuda0", "cuda1", false, CopyEngine::kSm},
      fan,
      AllreduceShape{1 << 20, {"cuda0", "cuda1"}}};
  BenchPlan plan;
  plan.device = "cpu";
  plan.backend = "cpu";
  for (const auto& s : shapes) plan.cells.push_back(planned_cell(op_of(s), DType::kF32, s));
  const BenchPlan back = plan_from_json(to_json(plan));
  ASSERT_EQ(back.cells.size(), shapes.size());
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    EXPECT_EQ(back.cells[i].op, op_of(shapes[i]));
    EXPECT_EQ(back.cells[i].shape.index(), shapes[i].index());
    EXPECT_EQ(shape_to_json(back.cells[i].shape), shape_to_json(shapes[i]));
  }
  // A copy within one memory names no host memory; a copy through the host does.
  EXPECT_FALSE(shape_to_json(shapes[4]).contains("host_memory"));
  EXPECT_EQ(shape_to_json(shapes[3])["host_memory"], "pinned");
}

TEST(OpUnits, PlanCellsFromSizesDtypesAndTheDevice) {
  SizeSet sizes;
  sizes.lists[Op::kExp] = {ExpShape{1024}, ExpShape{2048}};
  sizes.lists[Op::kConv] = {ConvShape{1, 3, 9, 9, 4, 3, 3, 1, 0, Layout::kNchw}};
  sizes.lists[Op::kCopy] = {CopyShape{4096}};
  const std::vector<DType> dtypes = {DType::kF32, DType::kF16};
  const std::vector<Layout> layouts = {Layout::kNchw, Layout::kNhwc};
  const PlanRequest host{sizes, dtypes, layouts, true, false};
  const PlanRequest device{sizes, dtypes, layouts, false, true};
  EXPECT_EQ(unit_of(Op::kExp).plan(host).size(), 4u);  // sizes × dtypes
  const auto conv = unit_of(Op::kConv).plan(host);
  ASSERT_EQ(conv.size(), 4u);  // layouts × dtypes
  EXPECT_EQ(std::get<ConvShape>(conv[2].shape).layout, Layout::kNhwc);
  // The host copies host to host only; a device each way pinned and pageable, device to
  // device, and both ways at once when asked.
  EXPECT_EQ(unit_of(Op::kCopy).plan(host).size(), 1u);
  EXPECT_EQ(unit_of(Op::kCopy).plan(device).size(), 6u);
  EXPECT_EQ(unit_of(Op::kSeedloop).plan(host).size(), 1u);
  EXPECT_EQ(unit_of(Op::kSeedloop).plan(device).size(), 2u);
  for (const auto& c : unit_of(Op::kLatency).plan(device)) EXPECT_EQ(c.op, Op::kLatency);
}

// qualify asks by name whether a record carries a dtype; the answer is the unit's, and a name no
// op has is judged by all its fields.
TEST(OpUnits, RecordsHaveADtypeAsTheirUnitSays) {
  for (const auto& unit : op_units())
    EXPECT_EQ(records_have_dtype(to_string(unit.op)), unit.has_dtype) << to_string(unit.op);
  EXPECT_FALSE(records_have_dtype("copy"));
  EXPECT_FALSE(records_have_dtype("latency"));
  EXPECT_TRUE(records_have_dtype("gemm"));
  EXPECT_TRUE(records_have_dtype("softmax"));
}

}  // namespace

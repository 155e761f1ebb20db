// A device that offers only the core of backends/device.h: it compiles with the core's pure
// methods alone, bench runs its GEMM untuned, and stress says why it cannot run rather than
// crashing where it asks for the stress primitives or telemetry it lacks.
#include "backends/registry.h"
#include "bench/engine.h"
#include "bench_one_cell.h"
#include "core/json_keys.h"
#include "forwarding_device.h"
#include "stress/events.h"
#include "stress/plan.h"
#include "stress/runner.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpucheck {
namespace {

namespace k = keys;

// The CPU device behind the core alone (ForwardingDevice overrides exactly the core's pure
// methods), under a backend name of its own.
class CoreOnlyDevice final : public fakes::ForwardingDevice {
 public:
  CoreOnlyDevice() : ForwardingDevice(make_backend("cpu", {})->open_device("cpu", {})) {
    id_ = inner().identity();
    id_.backend = "coreonly";
  }
  const DeviceIdentity& identity() const override { return id_; }

 private:
  DeviceIdentity id_;
};

TEST(DeviceCore, ACoreOnlyDeviceOffersNoCapabilityButTheCpuDeviceOffersStress) {
  CoreOnlyDevice core;
  EXPECT_EQ(core.gemm_tuner(), nullptr);
  EXPECT_EQ(core.stress_ops(), nullptr);
  EXPECT_EQ(core.telemetry(), nullptr);
  EXPECT_EQ(missing_capability(core, "stress primitives"),
            "the coreonly backend offers no stress primitives");
  auto cpu = make_backend("cpu", {})->open_device("cpu", {});
  EXPECT_NE(cpu->stress_ops(), nullptr);
  EXPECT_EQ(cpu->gemm_tuner(), nullptr);
}

TEST(DeviceCore, StressSaysEveryTestIsUnsupportedWithoutTheStressPrimitives) {
  CoreOnlyDevice core;
  stress::StressPlan plan;
  plan.device = "cpu";
  plan.backend = "cpu";
  plan.tests = {stress::Test::kGemm, stress::Test::kMemory, stress::Test::kCopy};
  plan.dtypes = {DType::kF32};
  plan.duration_s = 0.3;
  plan.threads = 1;
  std::vector<nlohmann::json> records;
  nlohmann::json started, telemetry;
  bool done = false;
  stress::run_stress(plan, core, {}, [&](const nlohmann::json& line) {
    const std::string key = line.at(stress::event::kKey);
    const nlohmann::json& payload = line.at(stress::event::kPayload);
    if (key == stress::event::kRecord) records.push_back(payload);
    if (key == stress::event::kStarted) started = payload;
    if (key == stress::event::kTelemetry) telemetry = payload;
    if (key == stress::event::kDone) done = true;
  });
  EXPECT_TRUE(done);
  EXPECT_FALSE(started.contains(k::kFreeBytes)) << started.dump();
  EXPECT_EQ(started[k::kTelemetry], false);
  ASSERT_EQ(records.size(), 3u);
  for (const auto& r : records) {
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r[k::kStatus], "unsupported");
    EXPECT_EQ(r[k::kReason], "the coreonly backend offers no stress primitives");
  }
  EXPECT_TRUE(telemetry.is_object());
}

// Copies both ways at once need queues of the device's own: a device without stress primitives
// (and the CPU, whose copies are memory to memory) says so instead of timing them in turn.
TEST(DeviceCore, CopiesBothWaysNeedCopyQueuesOfTheDevicesOwn) {
  CoreOnlyDevice core;
  auto cpu = make_backend("cpu", {})->open_device("cpu", {});
  for (Device* dev : {static_cast<Device*>(&core), cpu.get()}) {
    bench::Cell cell;
    cell.op = Op::kCopy;
    cell.dtype = DType::kF32;
    cell.shape = CopyShape{4096, Direction::kBoth, HostMemory::kPinned};
    const auto records = fakes::bench_one_cell(*dev, cell, 2);
    ASSERT_EQ(records.size(), 1u);
    SCOPED_TRACE(records[0].dump());
    EXPECT_EQ(records[0][k::kStatus], "unsupported");
    EXPECT_NE(records[0][k::kReason].get<std::string>().find("copy queues of the device's own"),
              std::string::npos);
  }
}

TEST(DeviceCore, BenchRunsACoreOnlyDevicesGemmUntuned) {
  CoreOnlyDevice core;
  bench::Cell cell;
  cell.op = Op::kGemm;
  cell.dtype = DType::kF32;
  cell.shape = GemmShape{64, 64, 64};
  // Retune asks for tuning the device cannot do.
  const auto records = fakes::bench_one_cell(core, cell, 2, 0, TuningMode::kRetune);
  ASSERT_EQ(records.size(), 1u);
  const auto& r = records[0];
  EXPECT_EQ(r[k::kStatus], "ok") << r.dump();
  EXPECT_FALSE(r.contains(k::kContext) && r[k::kContext].contains(k::kTuning)) << r.dump();
}

}  // namespace
}  // namespace gpucheck

// A stress child's run: started, status lines, one record per test (and GEMM dtype), the
// telemetry summary, done.
#include "stress/runner.h"

#include "bench/ops/gemm.h"
#include "core/graceful_stop.h"
#include "core/json_keys.h"
#include "stress/events.h"
#include "stress/test_units.h"

#include <fmt/format.h>

namespace gpucheck::stress {

namespace k = keys;

std::vector<DType> gemm_dtypes(const StressPlan& plan, const Device& device) {
  if (!plan.dtypes.empty()) return plan.dtypes;
  for (DType d : {default_gemm_dtype(plan.backend), DType::kF16, DType::kF32})
    if (!bench::gemm_unsupported(device, d)) return {d};
  return {default_gemm_dtype(plan.backend)};  // its record says why it cannot run
}

void run_stress(const StressPlan& plan, Device& device, std::vector<Fault> faults, const Emit& emit,
                PeerOpener open_peers) {
  StressRunContext ctx(device, plan, std::move(faults), emit);
  ctx.set_peer_opener(std::move(open_peers));
  nlohmann::json started = {{k::kDevice, device.identity().device},
                            {k::kDeviceName, device.identity().device_name},
                            {k::kBackend, device.identity().backend},
                            {k::kTelemetry, ctx.has_telemetry()}};
  if (const StressOps* ops = device.stress_ops()) {
    const MemoryInfo mem = ops->memory_info();
    started[k::kFreeBytes] = mem.free_bytes;
    started[k::kTotalBytes] = mem.total_bytes;
  }
  if (!device.identity().device_uuid.empty())
    started[k::kDeviceUuid] = device.identity().device_uuid;
  if (!device.identity().pci_bus_id.empty()) started[k::kPciBusId] = device.identity().pci_bus_id;
  emit({{event::kKey, event::kStarted}, {event::kPayload, started}});

  // The tests share what is left of the run: from the parent's deadline where it set one (its
  // probe and this child's device set-up have used some), else the whole duration.
  const double begin = ctx.now_s();
  const double left =
      plan.deadline_s ? std::max(0.0, *plan.deadline_s - monotonic_now_s()) : plan.duration_s;
  const double share = left / static_cast<double>(std::max<std::size_t>(plan.tests.size(), 1));
  for (std::size_t i = 0; i < plan.tests.size(); ++i) {
    const double start = begin + share * static_cast<double>(i);
    std::vector<std::pair<std::optional<DType>, double>> parts;  // (GEMM dtype, end)
    const TestUnit& unit = unit_of(plan.tests[i]);
    if (unit.per_dtype) {
      const auto dtypes = gemm_dtypes(plan, device);
      for (std::size_t j = 0; j < dtypes.size(); ++j)
        parts.emplace_back(dtypes[j], start + share * static_cast<double>(j + 1) /
                                                  static_cast<double>(dtypes.size()));
    } else {
      parts.emplace_back(std::nullopt, start + share);
    }
    for (const auto& [dtype, end] : parts) {
      if (ctx.stopping()) break;  // stopped: the tests not begun send no record
      nlohmann::json r;
      if (ctx.lost()) {
        r = record_base(device, plan.tests[i]);
        r[k::kStatus] = "failed";
        r[k::kReason] = "not run: the device became unusable in an earlier test";
      } else {
        r = unit.run(ctx, dtype, end);
      }
      emit({{event::kKey, event::kRecord}, {event::kPayload, r}});
    }
  }
  emit({{event::kKey, event::kTelemetry}, {event::kPayload, ctx.finish_telemetry()}});
  nlohmann::json done = nlohmann::json::object();
  if (ctx.stopping()) done[event::kStoppedBy] = signal_name(GracefulStop::stop_signal());
  emit({{event::kKey, event::kDone}, {event::kPayload, done}});
}

}  // namespace gpucheck::stress

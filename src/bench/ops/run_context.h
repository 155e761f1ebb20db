// What an op's run step (OpUnit::run) may use of the engine's cell runner: the device, the seed,
// the records, the timed repetitions and the host lock; the engine keeps the rest (rounds,
// tuning, the record's finishing).
#pragma once

#include "backends/device.h"
#include "bench/host_lock.h"
#include "bench/inputs.h"
#include "bench/verify.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

// One cell's buffer on the device, uploaded from a host input.
struct DeviceTensor {
  std::unique_ptr<DeviceBuffer> buf;
  std::size_t bytes = 0;
};

DeviceTensor to_device(Device& dev, const HostBuffer& h);

// The op itself, on resident device buffers.
using Launch = std::function<void()>;

// Seconds on the host's steady clock since t0: the host-timed repetitions' clock.
double seconds_since(std::chrono::steady_clock::time_point t0);

class RunContext {
 public:
  virtual ~RunContext() = default;

  virtual Device& device() = 0;
  virtual std::uint64_t seed() const = 0;
  // Host memory for transfers: pinned memory comes from the run's pool (bench/host_pool.h),
  // pageable memory is fresh.
  virtual std::unique_ptr<HostAllocation> host_memory(std::size_t bytes, HostMemory kind) = 0;

  // A record of the running cell with its transfers. host_bound: its timed region moves data
  // through host memory, so with siblings running it runs under the host lock and says so.
  virtual nlohmann::json record(Transfers transfers, bool host_bound) = 0;
  // Holds the host lock (when `when` and siblings share one) until the guard goes.
  [[nodiscard]] virtual HostLock::Guard hold_host(bool when) = 0;
  // The timed repetitions of `once` under the plan's policy, inside the device's timed region.
  virtual std::vector<double> reps(const std::function<double()>& once, bool* truncated) = 0;
  // Adds one round's record with its timings and verification.
  virtual void collect(nlohmann::json record, std::vector<double> times, bool truncated,
                       std::optional<Verification> verification) = 0;
  // The running cell's inputs as an earlier round kept them (null in its first round, or when
  // they were not kept), and the keeping of them for its later rounds: every round makes the
  // same inputs from the seed, so making them once is enough where host memory allows
  // (shared_inputs below).
  virtual std::shared_ptr<const void> kept_inputs() = 0;
  virtual void keep_inputs(std::shared_ptr<const void> inputs, std::size_t bytes) = 0;
  // Names the time since the last mark in GPUCHECK_TRACE_FILE's line (bench/phase_trace.h).
  virtual void mark(std::string_view phase) = 0;
  // The planted-error test hook (GPUCHECK_TEST_PLANT) on an output just brought back.
  virtual void plant(HostBuffer& out) = 0;
  // Times `launch` on the device's clock, brings `out` back and verifies it; then, for
  // accelerators, the same end to end (inputs up, op, result down) on the host clock.
  virtual void measure_op(const std::vector<const HostBuffer*>& inputs,
                          std::vector<DeviceTensor>& dev_inputs, HostBuffer& out,
                          DeviceTensor& dev_out, const Launch& launch,
                          const std::function<Verification(const HostBuffer&)>& verify) = 0;
};

// The cell's inputs: those an earlier round kept, else make() (offered for keeping, `bytes` of
// host memory).
template <class T, class Make>
std::shared_ptr<const T> shared_inputs(RunContext& ctx, std::size_t bytes, const Make& make) {
  if (auto kept = ctx.kept_inputs()) return std::static_pointer_cast<const T>(kept);
  auto made = std::make_shared<const T>(make());
  ctx.keep_inputs(made, bytes);
  return made;
}

}  // namespace gpucheck::bench

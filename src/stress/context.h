// What every stress test of one child shares: the device, the plan, the run's clock, telemetry
// polled as the tests go, status lines about once a second, and the planted faults.
#pragma once

#include "backends/device.h"
#include "backends/peer_group.h"
#include "stress/faults.h"
#include "stress/plan.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::stress {

using Emit = std::function<void(const nlohmann::json& line)>;

struct Progress {
  std::string_view test;
  double rate = 0;  // in `unit`, over the last status interval
  const char* unit = "";
  std::uint64_t iterations = 0;  // results (GEMM) or passes (memory) or transfers (copy)
  std::uint64_t mismatches = 0;
};

// Opens several devices of the child's backend together (Backend::open_group), for peer copies.
using PeerOpener = std::function<std::unique_ptr<PeerGroup>(const std::vector<std::string>&)>;

// One stress child's run, shared by its tests (named apart from bench::RunContext, the cell
// runner's narrow view for one op).
class StressRunContext {
 public:
  StressRunContext(Device& device, const StressPlan& plan, std::vector<Fault> faults, Emit emit);
  ~StressRunContext();
  StressRunContext(const StressRunContext&) = delete;
  StressRunContext& operator=(const StressRunContext&) = delete;

  Device& device() { return device_; }
  const StressPlan& plan() const { return plan_; }
  bool has_telemetry() const { return telemetry_; }
  // Seconds since the run began; the telemetry samples use the same clock.
  double now_s() const;
  // A stop signal came (core/graceful_stop.h): tests end at their next batch end, with records
  // of what they did, and tests not yet begun are not run.
  bool stopping() const;
  // The test whose time ends at end_s should end now (its time is up, or a stop came).
  bool time_up(double end_s) const { return stopping() || now_s() >= end_s; }
  // Called at every batch end: takes the new telemetry samples, writes a status line when a
  // second passed since the last, and acts on a planted hang or death whose time came.
  void tick(const Progress& p);
  // A sign of life during long setup steps (allocating, verifying the reference).
  void heartbeat(std::string_view test, std::string_view what);
  std::optional<Fault> fault(FaultKind kind) const;
  // The samples so far (tick() and finish_telemetry() add to them).
  const std::vector<TelemetrySample>& samples() const { return samples_; }
  // Ends sampling and returns the run's telemetry summary (stress/telemetry.h).
  nlohmann::json finish_telemetry();
  void emit(const nlohmann::json& line) { emit_(line); }
  // A test saw the device become unusable (DeviceLostError): later tests are not run.
  void mark_lost() { lost_ = true; }
  bool lost() const { return lost_; }
  void set_peer_opener(PeerOpener open) { open_peers_ = std::move(open); }
  const PeerOpener& peer_opener() const { return open_peers_; }

 private:
  void poll_telemetry();
  void act_on_faults();

  Device& device_;
  const StressPlan& plan_;
  std::vector<Fault> faults_;
  Emit emit_;
  std::chrono::steady_clock::time_point start_;
  double last_status_s_ = -1;
  bool telemetry_ = false;
  bool telemetry_open_ = false;
  bool lost_ = false;
  std::map<std::string, std::uint64_t> counters_before_;
  std::vector<TelemetrySample> samples_;
  PeerOpener open_peers_;
};

// The identity fields every stress record starts with.
nlohmann::json record_base(const Device& device, Test test);

// The device's stress primitives; where the backend offers none, nullptr, and the record says
// "unsupported" with the reason.
StressOps* stress_ops_or_refuse(StressRunContext& ctx, nlohmann::json& record);

// Runs a test's body; an exception becomes the record's "failed" status with its message, and a
// lost device (DeviceLostError) also ends the child's later tests.
void run_guarded(StressRunContext& ctx, nlohmann::json& record, const std::function<void()>& body);

// The work done since the last status interval (a second), as the rate a status line shows.
class RateMeter {
 public:
  explicit RateMeter(double start_s) : since_s_(start_s) {}
  // Work finished at t_s; returns the rate (per second) over the interval so far.
  double add(double t_s, double amount);

 private:
  double since_s_, amount_ = 0;
};

}  // namespace gpucheck::stress

// The shared state of one stress child's run.
#include "stress/context.h"

#include "core/errors.h"
#include "core/graceful_stop.h"
#include "core/json_keys.h"
#include "stress/events.h"
#include "stress/telemetry.h"

#include <algorithm>
#include <csignal>
#include <thread>

namespace gpucheck::stress {

namespace k = keys;

namespace {

constexpr int kTelemetryIntervalMs = 100;
constexpr double kStatusIntervalS = 1.0;

}  // namespace

StressRunContext::StressRunContext(Device& device, const StressPlan& plan,
                                   std::vector<Fault> faults, Emit emit)
    : device_(device), plan_(plan), faults_(std::move(faults)), emit_(std::move(emit)) {
  DeviceTelemetry* t = device_.telemetry();
  if (t != nullptr) counters_before_ = t->health_counters();
  start_ = std::chrono::steady_clock::now();
  telemetry_ = telemetry_open_ = t != nullptr && t->telemetry_begin(kTelemetryIntervalMs);
}

StressRunContext::~StressRunContext() {
  if (telemetry_open_) device_.telemetry()->telemetry_end();
}

double StressRunContext::now_s() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

bool StressRunContext::stopping() const {
  return GracefulStop::stop_signal() != 0;
}

void StressRunContext::poll_telemetry() {
  if (!telemetry_open_) return;
  auto got = device_.telemetry()->telemetry_take();
  samples_.insert(samples_.end(), got.begin(), got.end());
}

std::optional<Fault> StressRunContext::fault(FaultKind kind) const {
  for (const auto& f : faults_)
    if (f.kind == kind) return f;
  return std::nullopt;
}

void StressRunContext::act_on_faults() {
  const double t = now_s();
  if (auto f = fault(FaultKind::kDie); f && t >= static_cast<double>(f->at)) std::raise(SIGKILL);
  if (auto f = fault(FaultKind::kHang); f && t >= static_cast<double>(f->at))
    while (true) std::this_thread::sleep_for(std::chrono::hours(1));
}

void StressRunContext::tick(const Progress& p) {
  act_on_faults();
  poll_telemetry();
  const double t = now_s();
  if (last_status_s_ >= 0 && t - last_status_s_ < kStatusIntervalS) return;
  last_status_s_ = t;
  nlohmann::json s = {{k::kTest, p.test},
                      {k::kSeconds, t},
                      {k::kValue, p.rate},
                      {k::kUnit, p.unit},
                      {k::kIterations, p.iterations},
                      {k::kMismatches, p.mismatches}};
  if (!samples_.empty()) {
    const auto& last = samples_.back();
    if (last.temperature_c) s[k::kTemperatureC] = *last.temperature_c;
    if (last.power_w) s[k::kPowerW] = *last.power_w;
    if (last.sm_clock_mhz) s[k::kSmClockMhz] = *last.sm_clock_mhz;
  }
  emit_({{event::kKey, event::kStatus}, {event::kPayload, s}});
}

void StressRunContext::heartbeat(std::string_view test, std::string_view what) {
  act_on_faults();
  poll_telemetry();
  emit_({{event::kKey, event::kStatus},
         {event::kPayload, {{k::kTest, test}, {k::kSeconds, now_s()}, {k::kWhat, what}}}});
}

nlohmann::json StressRunContext::finish_telemetry() {
  poll_telemetry();
  if (telemetry_open_) {
    device_.telemetry()->telemetry_end();
    telemetry_open_ = false;
  }
  TelemetryInput in;
  in.interval_ms = kTelemetryIntervalMs;
  in.samples = samples_;
  in.before = counters_before_;
  if (DeviceTelemetry* t = device_.telemetry()) {
    in.after = t->health_counters();
    in.max_sm_clock_mhz = t->max_sm_clock_mhz();
  }
  return summarize_telemetry(in);
}

StressOps* stress_ops_or_refuse(StressRunContext& ctx, nlohmann::json& record) {
  StressOps* ops = ctx.device().stress_ops();
  if (ops == nullptr) {
    record[k::kStatus] = "unsupported";
    record[k::kReason] = missing_capability(ctx.device(), "stress primitives");
  }
  return ops;
}

void run_guarded(StressRunContext& ctx, nlohmann::json& record, const std::function<void()>& body) {
  try {
    body();
  } catch (const DeviceLostError& e) {
    record[k::kStatus] = "failed";
    record[k::kReason] = e.what();
    ctx.mark_lost();
  } catch (const std::exception& e) {
    record[k::kStatus] = "failed";
    record[k::kReason] = e.what();
  }
}

double RateMeter::add(double t_s, double amount) {
  amount_ += amount;
  const double rate = amount_ / std::max(t_s - since_s_, 1e-9);
  if (t_s - since_s_ >= kStatusIntervalS) since_s_ = t_s, amount_ = 0;
  return rate;
}

nlohmann::json record_base(const Device& device, Test test) {
  const auto& id = device.identity();
  nlohmann::json r = {{k::kDevice, id.device},
                      {k::kDeviceName, id.device_name},
                      {k::kBackend, id.backend},
                      {k::kTest, to_string(test)}};
  if (!id.device_uuid.empty()) r[k::kDeviceUuid] = id.device_uuid;
  if (!id.pci_bus_id.empty()) r[k::kPciBusId] = id.pci_bus_id;
  return r;
}

}  // namespace gpucheck::stress

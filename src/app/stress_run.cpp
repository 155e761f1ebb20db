// The stress children: one per device, all at once, their event lines parsed as they arrive.
#include "app/stress_run.h"

#include "core/backend_descriptors.h"
#include "core/child_process.h"
#include "core/graceful_stop.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "stress/events.h"
#include "stress/test_units.h"
#include "stress/verdict.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpucheck::app {

namespace k = keys;
namespace ev = stress::event;

namespace {

// The last non-empty line of a child's stderr: where its own error message is.
std::string last_line(const std::string& err) {
  const std::size_t end = err.find_last_not_of("\n ");
  if (end == std::string::npos) return {};
  const std::size_t start = err.rfind('\n', end);
  return err.substr(start == std::string::npos ? 0 : start + 1,
                    end - (start == std::string::npos ? 0 : start + 1) + 1);
}

}  // namespace

std::vector<StressChildReport> run_stress_children(const std::vector<stress::StressPlan>& plans,
                                                   const StressRunLimits& limits,
                                                   StatusBoard& board) {
  std::vector<StressChildReport> reports(plans.size());
  std::vector<std::string> pending(plans.size());
  std::vector<ChildSpec> specs;
  double longest = 0;
  for (const auto& p : plans) {
    specs.push_back({{"__child", "stress", "--plan", stress::to_json(p).dump()}, {}});
    longest = std::max(longest, p.duration_s);
  }
  ChildLimits cl;
  // The run, its setup and the last checks: a child still there long after is stuck.
  cl.timeout = std::chrono::duration<double>(longest + limits.startup_timeout_s + 120);
  cl.max_output = 256u << 20;
  cl.max_silence = std::chrono::duration<double>(limits.hang_timeout_s);
  cl.startup_silence = std::chrono::duration<double>(limits.startup_timeout_s);
  cl.stop_signal = &GracefulStop::stop_signal;
  cl.stop_grace = std::chrono::duration<double>(limits.stop_grace_s);

  auto handle = [&](std::size_t i, const std::string& line) {
    if (line.empty()) return;
    auto e = parse_json_or_discarded(line);
    if (!e.is_object() || !e.contains(ev::kKey)) return;  // not one of our event lines
    const std::string kind = e[ev::kKey].get<std::string>();
    const nlohmann::json data = e.value(ev::kPayload, nlohmann::json::object());
    StressChildReport& r = reports[i];
    if (kind == ev::kStarted) {
      r.started = data;
    } else if (kind == ev::kStatus) {
      board.update(i, data);
    } else if (kind == ev::kRecord) {
      r.records.push_back(data);
    } else if (kind == ev::kTelemetry) {
      r.telemetry = data;
    } else if (kind == ev::kDone) {
      r.done = true;
      if (data.contains(ev::kStoppedBy)) r.stopped_by = data[ev::kStoppedBy].get<std::string>();
    }
  };
  auto results = run_children(specs, cl, [&](std::size_t i, std::string_view chunk) {
    pending[i].append(chunk);
    for (auto nl = pending[i].find('\n'); nl != std::string::npos; nl = pending[i].find('\n')) {
      handle(i, pending[i].substr(0, nl));
      pending[i].erase(0, nl + 1);
    }
  });
  for (std::size_t i = 0; i < plans.size(); ++i) {
    handle(i, pending[i]);
    const ChildResult& res = results[i];
    StressChildReport& r = reports[i];
    // gpucheck passes its own stop on to the children as SIGTERM: the signal that stopped the
    // run is the one it received (the user's SIGINT, a SIGHUP), not the one the child saw.
    if (r.stopped_by && GracefulStop::stop_signal() != 0)
      r.stopped_by = signal_name(GracefulStop::stop_signal());
    if (res.exited_ok() && r.done) {
      std::string fate = "finished";
      if (r.stopped_by)
        fate = GracefulStop::stop_signal() != 0
                   ? "stopped early by " + *r.stopped_by
                   : "FAIL: stopped by " + *r.stopped_by + " while gpucheck was not";
      board.note(i, fmt::format("{:<8} {}", plans[i].device, fate), true);
      continue;
    }
    std::string why = res.exited_ok()
                          ? "the stress child ended without finishing its run"
                          : "the stress child " + res.describe(cl.timeout, cl.max_output);
    if (const std::string err = last_line(res.err); !err.empty()) why += ": " + err;
    if (!r.started) why = "could not start: " + why;
    r.failure = why;
    spdlog::error("{}: {}", plans[i].device, why);
    board.note(i, fmt::format("{:<8} FAIL: {}", plans[i].device, why), true);
  }
  board.finish();
  return reports;
}

namespace {

std::size_t expected_records(const stress::StressPlan& p) {
  std::size_t n = 0;
  for (auto t : p.tests)
    n += stress::unit_of(t).per_dtype ? std::max<std::size_t>(p.dtypes.size(), 1) : 1;
  return n;
}

nlohmann::json xid_json(const host::XidEvent& x) {
  return {{k::kCode, x.code}, {k::kPciBusId, x.pci}, {k::kDetail, x.detail}};
}

}  // namespace

nlohmann::json stress_section(const stress::StressPlan& base,
                              const std::vector<stress::StressPlan>& plans,
                              const std::vector<StressChildReport>& reports,
                              const host::KernelLogWatch& watch, const std::string& new_log,
                              const std::vector<std::pair<std::string, std::string>>& missing,
                              const stress::VerdictLimits& vl, int stop_signal) {
  const auto xids = host::parse_xids(new_log);
  nlohmann::json devices = nlohmann::json::array();
  bool all_pass = true;
  std::vector<bool> attributed(xids.size(), false);
  for (std::size_t i = 0; i < plans.size(); ++i) {
    const StressChildReport& r = reports[i];
    stress::VerdictInput in;
    in.device = plans[i].device;
    in.child_failure = r.failure;
    in.records = r.records;
    // Stopped early with the whole run (the user's Ctrl-C): the tests the child had not begun
    // are not missing results. Stopped alone (a signal to the child only): they are, and the
    // device fails naming them.
    const bool run_stopped = stop_signal != 0;
    in.expected_records =
        r.stopped_by && run_stopped ? r.records.size() : expected_records(plans[i]);
    if (r.stopped_by && !run_stopped) in.stopped_alone = r.stopped_by;
    for (auto t : plans[i].tests) in.planned_tests.emplace_back(stress::to_string(t));
    in.telemetry = r.telemetry;
    in.telemetry_expected = backend_has_telemetry(plans[i].backend);
    in.xid_readable = watch.readable();
    in.xid_unreadable_why = watch.why();
    nlohmann::json entry = {{k::kDevice, plans[i].device}, {k::kBackend, plans[i].backend}};
    if (r.started) {
      for (auto key : {k::kDeviceName, k::kDeviceUuid, k::kPciBusId, k::kFreeBytes, k::kTotalBytes})
        if (r.started->contains(key)) entry[key] = (*r.started)[key];
    }
    const std::string bus = entry.value(std::string(k::kPciBusId), "");
    nlohmann::json dev_xids = nlohmann::json::array();
    for (std::size_t x = 0; x < xids.size(); ++x)
      if (!bus.empty() && host::same_pci_device(xids[x].pci, bus)) {
        in.xids.push_back(xids[x]);
        dev_xids.push_back(xid_json(xids[x]));
        attributed[x] = true;
      }
    const stress::DeviceVerdict v = stress::judge_device(in, vl);
    all_pass = all_pass && v.pass;
    entry.update(stress::to_json(v));
    nlohmann::json others = nlohmann::json::array();
    for (const auto& p : plans)
      if (p.device != plans[i].device) others.push_back(p.device);
    entry[k::kConcurrentWith] = others;
    if (r.stopped_by) entry[k::kStoppedBy] = *r.stopped_by;
    entry[k::kRecords] = r.records;
    if (r.telemetry) entry[k::kTelemetry] = *r.telemetry;
    entry[k::kXid] = dev_xids;
    devices.push_back(entry);
  }
  // A named device that is not there could not start: FAIL, never a silent skip.
  for (const auto& [name, why] : missing) {
    all_pass = false;
    devices.push_back(
        {{k::kDevice, name},
         {k::kVerdict, "fail"},
         {k::kReasons, {"started: could not start: " + why}},
         {k::kChecks, {{{k::kId, "started"}, {k::kStatus, "fail"}, {k::kDetail, why}}}},
         {k::kRecords, nlohmann::json::array()}});
  }

  nlohmann::json tests = nlohmann::json::array(), dtypes = nlohmann::json::array();
  for (auto t : base.tests) tests.push_back(stress::to_string(t));
  for (auto d : base.dtypes) dtypes.push_back(gpucheck::to_string(d));
  nlohmann::json watch_json = {{k::kStatus, watch.readable() ? "ok" : "skip"}};
  if (watch.readable()) {
    watch_json[k::kSource] = watch.source();
    nlohmann::json all = nlohmann::json::array(), unmatched = nlohmann::json::array();
    for (std::size_t x = 0; x < xids.size(); ++x) {
      all.push_back(xid_json(xids[x]));
      if (!attributed[x]) unmatched.push_back(xid_json(xids[x]));
    }
    watch_json[k::kXid] = all;
    watch_json[k::kUnmatched] = unmatched;
  } else {
    watch_json[k::kReason] = watch.why();
  }
  nlohmann::json section = {{k::kDurationS, base.duration_s},
                            {k::kTests, tests},
                            {k::kDtypes, dtypes},
                            {k::kWindowS, base.window_s},
                            {k::kClockFloor, vl.clock_floor},
                            {k::kSeed, base.seed},
                            {k::kVerdict, !all_pass          ? "fail"
                                          : stop_signal != 0 ? "stopped"
                                                             : "pass"},
                            {k::kXidWatch, watch_json},
                            {k::kDevices, devices}};
  if (stop_signal != 0) section[k::kStoppedBy] = signal_name(stop_signal);
  if (base.memory_fraction) section[k::kMemoryFraction] = *base.memory_fraction;
  if (base.gemm_size) section[k::kGemmSize] = base.gemm_size;

  return section;
}

}  // namespace gpucheck::app

// Metrics from a probe, bench, doctor, qualify or stress document, for node_exporter's textfile
// collector: gauges named gpucheck_*, labels escaped, one sample per series.
#include "report/prometheus.h"
#include "report/views.h"

#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_inject.h"
#include "core/json_keys_limits.h"
#include "core/json_keys_stress.h"
#include "core/sanitize.h"
#include "core/shape_text.h"
#include "report/render.h"
#include "report/same_gpu.h"
#include "report/view_model.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpucheck::report {

namespace k = keys;

namespace {

std::string number(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  return fmt::format("{}", v);
}

// A PCI bus id in NVML's form, the one dcgm-exporter's pci_bus_id carries ("00000000:1B:00.0":
// an 8-digit domain, upper-case hex); empty when the text is not domain:bus:device.function.
std::string nvml_pci_bus_id(std::string_view text) {
  unsigned part[4] = {};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 4; ++i) {
    auto r = std::from_chars(p, end, part[i], 16);
    if (r.ec != std::errc() || r.ptr == p) return {};
    p = r.ptr;
    if (i < 3) {
      if (p == end || *p != (i == 2 ? '.' : ':')) return {};
      ++p;
    }
  }
  if (p != end || part[1] > 0xff || part[2] > 0x1f || part[3] > 7) return {};
  return fmt::format("{:08X}:{:02X}:{:02X}.{:X}", part[0], part[1], part[2], part[3]);
}

// The labels that say which device a series is about, the same for every series so that
// `* on(UUID) group_left DCGM_FI_...` joins gpucheck's series to dcgm-exporter's: for an NVIDIA
// GPU dcgm-exporter's own names and value forms (gpu, UUID, pci_bus_id, device="nvidia<gpu>",
// modelName, hostname), and for every device gpucheck's id as gpucheck_device (dcgm-exporter
// already owns `device`). A label the document cannot fill is left out rather than guessed: the
// NVML index (gpu, device) is known only where NVML read the GPU, as CUDA's and OpenCL's
// numbering need not follow NVML's.
class DeviceLabels {
 public:
  explicit DeviceLabels(const nlohmann::json& doc) {
    hostname_ = text_at(member_or_empty(doc, k::kHost), k::kHostname);
    const auto& backends = member_or_empty(doc, k::kBackends);
    // A stress document's devices carry what bench records do (backend, UUID, bus id, name).
    maps_ = {GpuMap::from_backends(backends),
             GpuMap::from_results(member_or_empty(doc, k::kResults)),
             GpuMap::from_results(member_or_empty(member_or_empty(doc, k::kStress), k::kDevices))};
    if (!backends.is_array()) return;
    for (const auto& b : backends) {
      for (const auto& d : b.value(std::string(k::kDevices), nlohmann::json::array()))
        if (auto p = d.find(k::kProperties); p != d.end() && p->contains(k::kNvml))
          add_nvml((*p)[std::string(k::kNvml)]);
      if (auto nvml = b.find(k::kNvml); nvml != b.end() && nvml->is_object())
        for (auto list : {k::kDevices, k::kUnmatched})
          for (const auto& nd : nvml->value(std::string(list), nlohmann::json::array()))
            add_nvml(nd);
    }
  }

  // record: the device's own entry (an NVML-only GPU's reading) for what no map holds.
  PromLabels operator()(const std::string& device,
                        const nlohmann::json& record = nlohmann::json::object()) const {
    auto held = std::find_if(maps_.begin(), maps_.end(),
                             [&](const GpuMap& m) { return m.contains(device); });
    const GpuMap& map = held == maps_.end() ? maps_.front() : *held;
    auto known = [&](std::string v, std::string_view key) {
      return v.empty() ? text_at(record, key) : v;
    };
    std::string uuid = known(map.uuid(device), k::kDeviceUuid);
    const std::string pci = nvml_pci_bus_id(known(map.pci_bus_id(device), k::kPciBusId));
    const Nvml* nvml = find_nvml(uuid, pci);
    const bool nvidia = map.nvidia(device) || nvml;
    if (!nvidia) return {{"UUID", uuid}, {"gpucheck_device", device}};
    if (nvml && !nvml->uuid.empty()) uuid = nvml->uuid;
    const std::string index = nvml ? nvml->index : "";
    return {{"gpu", index},
            {"UUID", uuid},
            {"pci_bus_id", nvml && !nvml->pci.empty() ? nvml->pci : pci},
            {"device", index.empty() ? "" : "nvidia" + index},
            {"modelName",
             nvml && !nvml->name.empty() ? nvml->name : known(map.name(device), k::kDeviceName)},
            {"hostname", hostname_},
            {"gpucheck_device", device}};
  }

 private:
  struct Nvml {
    std::string index, uuid, pci, name;
  };

  void add_nvml(const nlohmann::json& n) {
    if (!n.is_object() || !n.contains(k::kIndex)) return;
    nvml_.push_back({text_at(n, k::kIndex), text_at(n, k::kDeviceUuid),
                     nvml_pci_bus_id(text_at(n, k::kPciBusId)), text_at(n, k::kDeviceName)});
  }

  const Nvml* find_nvml(const std::string& uuid, const std::string& pci) const {
    for (const auto& n : nvml_)
      if ((!uuid.empty() && uuid == n.uuid) || (!pci.empty() && pci == n.pci)) return &n;
    return nullptr;
  }

  std::string hostname_;
  std::array<GpuMap, 3> maps_;  // the probe's devices, bench records', stress devices
  std::vector<Nvml> nvml_;
};

// Labels of one device followed by a series' own.
PromLabels with(PromLabels labels, PromLabels more) {
  for (auto& l : more) labels.push_back(std::move(l));
  return labels;
}

// A state set: one sample per possible state, 1 for the actual one, so an alert can match
// `== 1` on the state it cares about and a missing state reads 0, not "no data".
void state_set(PromMetrics& m, const std::string& name, PromLabels labels, const std::string& label,
               const std::vector<std::string_view>& states, const std::string& actual) {
  labels.emplace_back(label, "");
  for (auto s : states) {
    labels.back().second = s;
    m.sample(name, labels, s == actual ? 1 : 0);
  }
}

// NVML's readings of a CUDA device as gauges in base units (bytes, watts, hertz, celsius).
void add_gpu_readings(PromMetrics& m, const PromLabels& labels, const nlohmann::json& nvml) {
  auto reading = [&](const char* family, std::string_view key, double scale,
                     PromLabels extra = {}) {
    auto it = nvml.find(key);
    if (it == nvml.end() || !it->is_number()) return;
    PromLabels l = labels;
    for (auto& e : extra) l.push_back(std::move(e));
    m.sample(family, l, it->get<double>() * scale);
  };
  reading("gpucheck_gpu_temperature_celsius", "temperature_c", 1);
  reading("gpucheck_gpu_power_draw_watts", "power_draw_mw", 1e-3);
  reading("gpucheck_gpu_power_limit_watts", "power_enforced_limit_mw", 1e-3);
  reading("gpucheck_gpu_memory_used_bytes", "memory_used_bytes", 1);
  reading("gpucheck_gpu_memory_total_bytes", "memory_total_bytes", 1);
  reading("gpucheck_gpu_clock_hertz", "sm_clock_mhz", 1e6, {{"clock", "sm"}});
  reading("gpucheck_gpu_clock_hertz", "mem_clock_mhz", 1e6, {{"clock", "memory"}});
  reading("gpucheck_gpu_clock_max_hertz", "max_sm_clock_mhz", 1e6, {{"clock", "sm"}});
  reading("gpucheck_gpu_clock_max_hertz", "max_mem_clock_mhz", 1e6, {{"clock", "memory"}});
  reading("gpucheck_gpu_pcie_link_generation", "pcie_link_gen_current", 1, {{"link", "current"}});
  reading("gpucheck_gpu_pcie_link_generation", "pcie_link_gen_max", 1, {{"link", "max"}});
  reading("gpucheck_gpu_pcie_link_width_lanes", "pcie_link_width_current", 1,
          {{"link", "current"}});
  reading("gpucheck_gpu_pcie_link_width_lanes", "pcie_link_width_max", 1, {{"link", "max"}});
  reading("gpucheck_gpu_pcie_replays", "pcie_replay_count", 1);
  if (auto e = nvml.find("ecc_errors"); e != nvml.end() && e->is_object())
    for (const auto& [counter, v] : e->items())
      if (v.is_number()) {
        PromLabels l = labels;
        l.emplace_back("counter", counter);
        m.sample("gpucheck_gpu_ecc_errors", l, v.get<double>());
      }
  // NVML's bits as they are, and a series per reason the reading names, so a panel or an alert
  // needs no bit mask.
  if (auto ce = nvml.find(k::kClocksEventReasons); ce != nvml.end() && ce->is_object()) {
    if (auto raw = ce->find(k::kRaw); raw != ce->end() && raw->is_number())
      m.sample("gpucheck_gpu_clocks_event_reasons", labels, raw->get<double>());
    for (const auto& name : ce->value(std::string(k::kNames), nlohmann::json::array()))
      if (name.is_string())
        m.sample("gpucheck_gpu_clocks_event_reason",
                 with(labels, {{"reason", name.get<std::string>()}}), 1);
  }
  if (auto nv = nvml.find(k::kNvlink); nv != nvml.end() && nv->is_object())
    for (const auto& link : nv->value(std::string(k::kLinks), nlohmann::json::array()))
      for (const auto& [counter, v] : member_or_empty(link, k::kErrorCounters).items())
        if (v.is_number())
          m.sample("gpucheck_gpu_nvlink_errors",
                   with(labels, {{"link", text_at(link, k::kLink)}, {"counter", counter}}),
                   v.get<double>());
  if (auto rr = nvml.find("remapped_rows"); rr != nvml.end() && rr->is_object())
    for (const auto& [kind, v] : rr->items()) {
      if (!v.is_number() && !v.is_boolean()) continue;
      PromLabels l = labels;
      l.emplace_back("kind", kind);
      m.sample("gpucheck_gpu_remapped_rows", l,
               v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<double>());
    }
}

constexpr const char* kFractionOfLimit = "gpucheck_fraction_of_limit";

// The share of the hardware's limit a record's figure reached (its limit.fraction), labelled
// with the series the figure is written as; none where the limit is a reason.
void fraction_of_limit(PromMetrics& m, const nlohmann::json& record, const std::string& metric,
                       PromLabels labels) {
  const auto& limit = member_or_empty(record, k::kLimit);
  auto f = limit.is_object() ? limit.find(k::kLimitFraction) : limit.end();
  if (!limit.is_object() || f == limit.end() || !f->is_number()) return;
  m.family(kFractionOfLimit,
           "Share of the hardware's limit (datasheet peak or the device's own figures) a "
           "measured figure reached, by metric: the series the figure is written as");
  labels.emplace_back("metric", metric);
  m.sample(kFractionOfLimit, labels, f->get<double>());
}

void add_backends(PromMetrics& m, const nlohmann::json& backends, const DeviceLabels& ids) {
  m.family("gpucheck_backend_status", "Backend probe status (1 for the actual state)");
  m.family("gpucheck_device_info",
           "A device the probe found (always 1); one GPU seen by CUDA and OpenCL has one UUID");
  m.family("gpucheck_gpu_temperature_celsius", "GPU temperature (NVML)");
  m.family("gpucheck_gpu_power_draw_watts", "GPU power draw (NVML)");
  m.family("gpucheck_gpu_power_limit_watts", "GPU enforced power limit (NVML)");
  m.family("gpucheck_gpu_memory_used_bytes", "GPU memory in use (NVML)");
  m.family("gpucheck_gpu_memory_total_bytes", "GPU memory in all (NVML)");
  m.family("gpucheck_gpu_clock_hertz", "Current clock (NVML), by clock: sm, memory");
  m.family("gpucheck_gpu_clock_max_hertz", "Maximum clock (NVML), by clock: sm, memory");
  m.family("gpucheck_gpu_pcie_link_generation", "PCIe link generation, current and max (NVML)");
  m.family("gpucheck_gpu_pcie_link_width_lanes", "PCIe link width, current and max (NVML)");
  m.family("gpucheck_gpu_pcie_replays", "PCIe replays since the driver loaded (NVML)");
  m.family("gpucheck_gpu_ecc_errors", "ECC error counts (NVML), by counter");
  m.family("gpucheck_gpu_remapped_rows",
           "Remapped memory rows (NVML): correctable, uncorrectable; pending, failure as 0/1");
  m.family("gpucheck_gpu_clocks_event_reasons",
           "Why the clocks are below their maximum (NVML's clocks event reasons, a bit mask)");
  m.family("gpucheck_gpu_clocks_event_reason",
           "A clocks event reason NVML named at the reading (always 1), by reason");
  m.family("gpucheck_gpu_nvlink_errors",
           "NVLink error counters (NVML) per link, by counter: replay, recovery, crc_flit, "
           "crc_data, ecc_data");
  for (const auto& b : backends) {
    std::string name = text_at(b, k::kName);
    state_set(m, "gpucheck_backend_status", {{"backend", name}}, "status",
              {"available", "unavailable", "failed", "not_built"}, text_at(b, k::kStatus));
    for (const auto& d : b.value(std::string(k::kDevices), nlohmann::json::array())) {
      const PromLabels labels = ids(text_at(d, k::kDevice), d);
      m.sample("gpucheck_device_info",
               with(labels, {{"backend", name}, {"name", text_at(d, k::kDeviceName)}}), 1);
      auto props = d.find(k::kProperties);
      if (props == d.end() || !props->contains(k::kNvml)) continue;
      add_gpu_readings(m, labels, (*props)[std::string(k::kNvml)]);
    }
    // GPUs NVML sees that CUDA does not (a broken driver's, or hidden ones): still readings.
    if (auto nvml = b.find(k::kNvml); nvml != b.end() && nvml->is_object())
      for (auto list : {k::kDevices, k::kUnmatched})
        for (const auto& nd : nvml->value(std::string(list), nlohmann::json::array()))
          add_gpu_readings(m, ids("nvml" + text_at(nd, k::kIndex), nd), nd);
  }
}

void add_results(PromMetrics& m, const nlohmann::json& results, const DeviceLabels& ids) {
  m.family("gpucheck_bench_device_info", "A device the benchmark ran on (always 1)");
  m.family("gpucheck_bench_records", "Benchmark records per device and status");
  m.family("gpucheck_bench_median_seconds", "Median time of one run");
  m.family("gpucheck_bench_throughput_bytes_per_second", "Bytes moved per second (median)");
  m.family("gpucheck_bench_throughput_flop_per_second",
           "Floating-point operations per second (median)");
  m.family("gpucheck_bench_speedup_vs_cpu", "CPU median time over the device's median time");
  constexpr std::array<std::string_view, 5> kStatuses{"ok", "unsupported", "skipped", "failed",
                                                      "mismatch"};
  std::map<std::string, std::map<std::string, int>> counts;  // device → status → records
  std::vector<std::string> order;
  for (const auto& r : results) {
    std::string device = text_at(r, k::kDevice), status = text_at(r, k::kStatus);
    if (!counts.count(device)) {
      order.push_back(device);
      m.sample("gpucheck_bench_device_info",
               with(ids(device, r),
                    {{"backend", text_at(r, k::kBackend)}, {"name", text_at(r, k::kDeviceName)}}),
               1);
    }
    ++counts[device][status];
    if (status != "ok") continue;
    const PromLabels labels =
        with(ids(device, r), {{"op", text_at(r, k::kOp)},
                              {"dtype", text_at(r, k::kDtype)},
                              {"shape", r.contains(k::kShape) ? shape_text(r[k::kShape]) : ""},
                              {"transfers", text_at(r, k::kTransfers)},
                              {"impl", text_at(r, k::kImpl)}});
    if (auto t = r.find(k::kTimeS); t != r.end() && t->contains(k::kMedian))
      m.sample("gpucheck_bench_median_seconds", labels, (*t)[k::kMedian].get<double>());
    if (auto tp = r.find(k::kThroughput); tp != r.end()) {
      double v = (*tp)[k::kValue].get<double>();
      const bool bytes = (*tp)[k::kUnit] == "GB/s";
      const std::string family = bytes ? "gpucheck_bench_throughput_bytes_per_second"
                                       : "gpucheck_bench_throughput_flop_per_second";
      m.sample(family, labels, v * (bytes ? 1e9 : 1e12));
      fraction_of_limit(m, r, family, labels);
    }
    if (auto sp = r.find(k::kSpeedupVsCpu); sp != r.end() && sp->is_number())
      m.sample("gpucheck_bench_speedup_vs_cpu", labels, sp->get<double>());
  }
  for (const auto& device : order)
    for (auto s : kStatuses) {
      auto it = counts[device].find(std::string(s));
      m.sample("gpucheck_bench_records", with(ids(device), {{"status", std::string(s)}}),
               it == counts[device].end() ? 0 : it->second);
    }
}

void add_sweep(PromMetrics& m, const nlohmann::json& sweep, const DeviceLabels& ids) {
  m.family("gpucheck_sweep_break_even_found",
           "1 when the device beats the CPU from some swept size on, 0 for none in range");
  m.family("gpucheck_sweep_break_even_size",
           "Smallest swept size from which the device beats the CPU (elements, m=n=k or batch)");
  for (const auto& s : sweep.value(std::string(k::kSeries), nlohmann::json::array())) {
    const PromLabels labels =
        with(ids(text_at(s, k::kDevice)), {{"op", text_at(sweep, k::kOp)},
                                           {"dtype", text_at(s, k::kDtype)},
                                           {"layout", text_at(s, k::kLayout)},
                                           {"transfers", text_at(s, k::kTransfers)}});
    auto be = s.find(k::kBreakEven);
    bool found = be != s.end() && be->is_number();
    m.sample("gpucheck_sweep_break_even_found", labels, found ? 1 : 0);
    if (found) m.sample("gpucheck_sweep_break_even_size", labels, be->get<double>());
  }
}

void add_checks(PromMetrics& m, const nlohmann::json& checks) {
  m.family("gpucheck_doctor_check_status", "Doctor check status (1 for the actual state)");
  m.family("gpucheck_doctor_checks", "Doctor checks per status");
  // The code changes with the result, so it is an info series of its own, not a label of the
  // state set (whose series must stay the same from run to run).
  m.family("gpucheck_doctor_check_fault",
           "Doctor check's fault code, repair action and NVML recovery action (always 1; "
           "docs/CHECKS.md lists codes)");
  m.family("gpucheck_health_status",
           "Doctor check's health as dcgm-exporter's DCGM_EXP_GPU_HEALTH_STATUS gives a "
           "subsystem's: 0 pass (info and skip too), 10 warn, 20 fail; severity is the status");
  const std::vector<std::string_view> states{"pass", "info", "warn", "fail", "skip"};
  std::map<std::string, int> counts;
  for (const auto& c : checks) {
    std::string status = text_at(c, k::kStatus);
    ++counts[status];
    state_set(m, "gpucheck_doctor_check_status", {{"check", text_at(c, k::kId)}}, "status", states,
              status);
    if (const std::string code = text_at(c, k::kCode); !code.empty())
      m.sample("gpucheck_doctor_check_fault",
               {{"check", text_at(c, k::kId)},
                {"code", code},
                {"action", text_at(c, k::kAction)},
                {"recovery_action", text_at(c, k::kRecoveryAction)}},
               1);
    // dcgm-exporter writes one series per health watch with DCGM's dcgmHealthWatchResult_t as
    // its value (DCGM_HEALTH_RESULT_PASS 0, _WARN 10, _FAIL 20; a watch without an incident is
    // PASS) and the failure code as a label (health_error_code, which changes with the
    // incident as code does here); an alert written for it (`> 0`, `== 20`) then reads
    // gpucheck's checks unchanged. DCGM has no result for INFO or SKIP: neither is an
    // incident, so both are 0, and the severity label keeps the difference.
    const int health = status == "fail" ? 20 : status == "warn" ? 10 : 0;
    m.sample("gpucheck_health_status",
             {{"check", text_at(c, k::kId)},
              {"code", text_at(c, k::kCode)},
              {"action", text_at(c, k::kAction)},
              {"severity", status}},
             health);
  }
  for (auto s : states)
    m.sample("gpucheck_doctor_checks", {{"status", std::string(s)}}, counts[std::string(s)]);
}

// doctor --quick's verdict: what an alert on the node's health matches.
void add_health(PromMetrics& m, const nlohmann::json& h) {
  m.family("gpucheck_doctor_health",
           "Health verdict of doctor --quick (1 for the actual one): healthy, unhealthy, unknown");
  m.family("gpucheck_doctor_unacknowledged_events",
           "State-file events (e.g. an Xid) not yet acknowledged with doctor --ack");
  state_set(m, "gpucheck_doctor_health", {}, "verdict", {"healthy", "unhealthy", "unknown"},
            text_at(h, k::kVerdict));
  if (auto u = h.find(k::kUnacknowledged); u != h.end() && u->is_array())
    m.sample("gpucheck_doctor_unacknowledged_events", {}, static_cast<double>(u->size()));
}

void add_qualify(PromMetrics& m, const nlohmann::json& q, const DeviceLabels& ids) {
  m.family("gpucheck_qualify_met", "1 when every requirement of the profile is met");
  m.family("gpucheck_qualify_requirements", "Requirements per verdict");
  m.family("gpucheck_qualify_verdict", "Verdict of one requirement (1 for the actual one)");
  m.family("gpucheck_qualify_measured", "The measured value a requirement was judged on");
  std::string profile = q.contains(k::kProfile) ? text_at(q[k::kProfile], k::kName) : "";
  m.sample("gpucheck_qualify_met", {{"profile", profile}},
           text_at(q, k::kVerdict) == "met" ? 1 : 0);
  const std::vector<std::string_view> verdicts{"met", "unmet", "skip"};
  if (auto s = q.find(k::kSummary); s != q.end())
    for (auto v : verdicts)
      m.sample("gpucheck_qualify_requirements", {{"profile", profile}, {"verdict", std::string(v)}},
               s->value(std::string(v), 0.0));
  for (const auto& v : q.value(std::string(k::kVerdicts), nlohmann::json::array())) {
    // A requirement on no device (the driver's version) carries no device labels.
    const std::string device = text_at(v, k::kDevice);
    PromLabels labels = with(
        {{"profile", profile}, {"requirement", text_at(v, k::kId)}, {"kind", text_at(v, k::kKind)}},
        device.empty() ? PromLabels{} : ids(device));
    state_set(m, "gpucheck_qualify_verdict", labels, "verdict", verdicts, text_at(v, k::kVerdict));
    if (auto me = v.find(k::kMeasured); me != v.end() && me->is_number()) {
      labels.emplace_back("unit", text_at(v, k::kUnit));
      m.sample("gpucheck_qualify_measured", labels, me->get<double>());
    }
  }
}

// stress: the run's verdict, each device's verdict and checks, and each test's status and
// sustained and lowest-window throughput, so an alert can fire on a failed burn-in.
void add_stress(PromMetrics& m, const nlohmann::json& s, const DeviceLabels& ids) {
  m.family("gpucheck_stress_verdict",
           "Verdict of the stress run (1 for the actual one): pass, fail, stopped");
  m.family("gpucheck_stress_device_verdict", "Verdict of one device (1 for the actual one)");
  m.family("gpucheck_stress_check_status",
           "Status of one verdict rule of a device (1 for the actual one)");
  m.family("gpucheck_stress_test_status", "Status of one test of a device (1 for the actual one)");
  m.family("gpucheck_stress_throughput_bytes_per_second",
           "Bytes moved per second under sustained load, by window: sustained, lowest, burst "
           "(the first half second)");
  m.family("gpucheck_stress_throughput_flop_per_second",
           "Floating-point operations per second under sustained load, by window: sustained, "
           "lowest, burst (the first half second)");
  state_set(m, "gpucheck_stress_verdict", {}, "verdict", {"pass", "fail", "stopped"},
            text_at(s, k::kVerdict));
  for (const auto& d : s.value(std::string(k::kDevices), nlohmann::json::array())) {
    const PromLabels device = ids(text_at(d, k::kDevice), d);
    state_set(m, "gpucheck_stress_device_verdict",
              with(device, {{"name", text_at(d, k::kDeviceName)}}), "verdict", {"pass", "fail"},
              text_at(d, k::kVerdict));
    for (const auto& c : d.value(std::string(k::kChecks), nlohmann::json::array())) {
      PromLabels labels = device;
      labels.emplace_back("check", text_at(c, k::kId));
      state_set(m, "gpucheck_stress_check_status", labels, "status", {"pass", "fail", "skip"},
                text_at(c, k::kStatus));
    }
    for (const auto& r : d.value(std::string(k::kRecords), nlohmann::json::array())) {
      PromLabels labels = device;
      labels.emplace_back("test", text_at(r, k::kTest));
      labels.emplace_back("dtype", text_at(r, k::kDtype));
      state_set(m, "gpucheck_stress_test_status", labels, "status",
                {"ok", "unsupported", "failed", "mismatch"}, text_at(r, k::kStatus));
      auto tp = r.find(k::kThroughput);
      if (tp == r.end() || !tp->is_object()) continue;
      const bool bytes = text_at(*tp, k::kUnit) == "GB/s";
      const std::string family = bytes ? "gpucheck_stress_throughput_bytes_per_second"
                                       : "gpucheck_stress_throughput_flop_per_second";
      for (auto [key, window] :
           {std::pair{k::kValue, "sustained"}, {k::kMinWindow, "lowest"}, {k::kBurst, "burst"}}) {
        auto v = tp->find(key);
        if (v == tp->end() || !v->is_number()) continue;
        PromLabels l = labels;
        l.emplace_back("window", window);
        m.sample(family, l, v->get<double>() * (bytes ? 1e9 : 1e12));
      }
      // The limit is the sustained figure's.
      fraction_of_limit(m, r, family, with(labels, {{"window", "sustained"}}));
    }
  }
}

// When the run started, so an alert can fire on a textfile that stopped being rewritten
// (`time() - gpucheck_last_run_timestamp_seconds > 900`), and how long it took where the document
// says (doctor's provenance.duration_s; stress's duration_s is the load's planned length, not the
// run's): a health check creeping towards its --timeout shows before it answers "unknown".
void add_run_time(PromMetrics& m, const std::string& command, const nlohmann::json& provenance) {
  if (auto d = provenance.find(k::kDurationS); d != provenance.end() && d->is_number()) {
    m.family("gpucheck_run_duration_seconds",
             "How long the gpucheck run this file comes from took (seconds)");
    m.sample("gpucheck_run_duration_seconds", {{"command", command}}, d->get<double>());
  }
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, s = 0;
  char z = 0;
  if (std::sscanf(text_at(provenance, k::kTime).c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d,
                  &h, &mi, &s, &z) != 7 ||
      z != 'Z')
    return;
  using namespace std::chrono;
  const year_month_day date{year{y}, month{static_cast<unsigned>(mo)},
                            day{static_cast<unsigned>(d)}};
  if (!date.ok()) return;
  const auto t = sys_days{date} + hours{h} + minutes{mi} + seconds{s};
  m.family("gpucheck_last_run_timestamp_seconds",
           "When the gpucheck run this file comes from started (Unix time)");
  m.sample("gpucheck_last_run_timestamp_seconds", {{"command", command}},
           static_cast<double>(duration_cast<seconds>(t.time_since_epoch()).count()));
}

// The text format's escapes: backslash and newline everywhere, the double quote in label values.
std::string escape(std::string_view raw, bool quote) {
  // Other control characters (ESC, BEL) as "\xNN" text: the format has no escape for them.
  const std::string s = sanitize_keeping(raw, "\n");
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\n')
      out += "\\n";
    else if (c == '"' && quote)
      out += "\\\"";
    else
      out += c;
  }
  return out;
}

}  // namespace

std::string prometheus_label_value(std::string_view s) {
  return escape(s, true);
}

std::string prometheus_help(std::string_view s) {
  return escape(s, false);
}

PromMetrics::Family* PromMetrics::find(const std::string& name) {
  for (auto& f : families_)
    if (f.name == name) return &f;
  return nullptr;
}

void PromMetrics::family(const std::string& name, const std::string& help) {
  if (!find(name)) families_.push_back({name, help, {}, {}});
}

void PromMetrics::sample(const std::string& name, const PromLabels& labels, double value) {
  Family* f = find(name);
  if (!f) {
    family(name, name);
    f = find(name);
  }
  std::string key = name;
  bool first = true;
  PromLabels all = labels;
  all.insert(all.end(), every_.begin(), every_.end());
  for (const auto& [label, v] : all) {
    if (v.empty()) continue;
    key += fmt::format("{}{}=\"{}\"", first ? "{" : ",", label, prometheus_label_value(v));
    first = false;
  }
  if (!first) key += "}";
  if (std::find(f->keys.begin(), f->keys.end(), key) != f->keys.end()) return;
  f->keys.push_back(key);
  f->series.push_back(key + " " + number(value));
}

std::string PromMetrics::text() const {
  std::string out;
  for (const auto& f : families_) {
    // A family without samples would be a HELP/TYPE pair describing nothing.
    if (f.series.empty()) continue;
    out += fmt::format("# HELP {} {}\n# TYPE {} gauge\n", f.name, prometheus_help(f.help), f.name);
    for (const auto& line : f.series) out += line + "\n";
  }
  return out;
}

std::string render_prometheus(const nlohmann::json& doc) {
  PromMetrics m;
  // doctor --inject: every series of the file says so, so an alert or a dashboard can tell a
  // test of the wiring from a fault (`injected!="true"`).
  if (auto i = doc.find(k::kInjected); i != doc.end() && i->is_array() && !i->empty())
    m.label_every({{"injected", "true"}});
  m.family("gpucheck_info", "The gpucheck run this file comes from (always 1)");
  const auto& provenance = member_or_empty(doc, k::kProvenance);
  const std::string command = text_at(doc, k::kCommand);
  m.sample("gpucheck_info",
           {{"command", command}, {"version", text_at(provenance, k::kGpucheckVersion)}}, 1);
  add_run_time(m, command, provenance);
  const DeviceLabels ids(doc);
  if (auto b = doc.find(k::kBackends); b != doc.end() && b->is_array()) add_backends(m, *b, ids);
  if (auto r = doc.find(k::kResults); r != doc.end() && r->is_array()) add_results(m, *r, ids);
  if (auto s = doc.find(k::kSweep); s != doc.end() && s->is_object()) add_sweep(m, *s, ids);
  if (auto c = doc.find(k::kChecks); c != doc.end() && c->is_array()) add_checks(m, *c);
  if (auto h = doc.find(k::kHealth); h != doc.end() && h->is_object()) add_health(m, *h);
  if (auto q = doc.find(k::kQualify); q != doc.end() && q->is_object()) add_qualify(m, *q, ids);
  if (auto st = doc.find(k::kStress); st != doc.end() && st->is_object()) add_stress(m, *st, ids);
  return m.text();
}

}  // namespace gpucheck::report

// InfiniBand / RoCE checks: port states and rates, error counters that grow, GPUDirect RDMA and
// the adapter nearest each GPU, judged from the probe's "infiniband" section (sysfs).
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "core/json_keys_infiniband.h"
#include "host/infiniband.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <map>
#include <string_view>

namespace gpucheck::doctor {

namespace {

namespace k = keys;
using Json = nlohmann::json;

// The probe's infiniband section; SKIP when there is no adapter, NotObservable for facts from a
// gpucheck that did not read it.
const Json& rdma_section(const SystemView& view) {
  auto it = view.facts.find(k::kInfiniband);
  if (it == view.facts.end() || !it->is_object())
    throw NotObservable("the probe's facts have no infiniband section (an older gpucheck)");
  return *it;
}

bool has_adapters(const Json& ib) {
  return !array_at(ib, k::kDevices).empty();
}

CheckResult no_adapter(const Json& ib) {
  const std::string why = text(ib, k::kReason);
  return not_applicable("no RDMA adapter in /sys/class/infiniband" +
                        (why.empty() ? std::string() : " (" + why + ")"));
}

// "mlx5_0 port 1"
std::string port_name(const Json& dev, const Json& port) {
  return fmt::format("{} port {}", text(dev, k::kName), port.value(k::kPort, 0));
}

// "InfiniBand, MT4129, fw 28.39.1002" of what is known.
std::string port_kind(const Json& dev, const Json& port) {
  std::vector<std::string> parts;
  for (auto [obj, key, prefix] :
       {std::tuple{&port, k::kLinkLayer, ""}, std::tuple{&dev, k::kHcaType, ""},
        std::tuple{&dev, k::kFwVer, "fw "}})
    if (auto v = text(*obj, key); !v.empty()) parts.push_back(prefix + v);
  return join(parts, ", ");
}

std::string port_line(const Json& dev, const Json& port) {
  std::vector<std::string> parts;
  for (auto key : {k::kState, k::kPhysState, k::kRate})
    parts.push_back(text(port, key).empty() ? "?" : text(port, key));
  std::string line =
      fmt::format("{} ({}): {}", port_name(dev, port), port_kind(dev, port), join(parts, " "));
  if (auto nd = text(port, k::kNetdev); !nd.empty()) line += " on " + nd;
  return line;
}

// Every device's unreadable files, said once as evidence: a missing file is tolerated.
void note_unreadable(const Json& ib, std::vector<std::string>& evidence) {
  for (const auto& d : array_at(ib, k::kDevices))
    for (const auto& u : array_at(d, k::kUnreadable))
      if (u.is_string())
        evidence.push_back(
            fmt::format("{}: could not read {}", text(d, k::kName), u.get<std::string>()));
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

// ---- infiniband_ports ----

CheckResult check_infiniband_ports(const SystemView& view) {
  const Json& ib = rdma_section(view);
  if (!has_adapters(ib)) return no_adapter(ib);
  std::vector<std::string> evidence;
  std::vector<Finding> findings;
  // The fastest active port per adapter model and link layer: a slower one trained down.
  std::map<std::string, double> best;
  auto model_of = [](const Json& d, const Json& p) {
    return text(d, k::kHcaType) + "/" + text(p, k::kLinkLayer);
  };
  int active = 0, ports = 0;
  for (const auto& d : array_at(ib, k::kDevices))
    for (const auto& p : array_at(d, k::kPorts)) {
      evidence.push_back(port_line(d, p));
      if (upper(text(p, k::kPhysState)) != "DISABLED") ++ports;
      if (upper(text(p, k::kState)) == "ACTIVE") {
        ++active;
        if (const auto rate = host::port_rate_gbps(p); rate && !text(d, k::kHcaType).empty()) {
          double& b = best[model_of(d, p)];
          b = std::max(b, *rate);
        }
      }
    }
  for (const auto& d : array_at(ib, k::kDevices))
    for (const auto& p : array_at(d, k::kPorts)) {
      const std::string name = port_name(d, p);
      const std::string state = upper(text(p, k::kState));
      const std::string phys = text(p, k::kPhysState);
      const std::string phys_up = upper(phys);
      if (state.empty()) {
        findings.push_back(
            {CheckStatus::kInfo, {}, name + ": its state cannot be read, so it is not judged", ""});
        continue;
      }
      if (phys_up == "DISABLED") {
        findings.push_back({CheckStatus::kInfo,
                            {},
                            name + " is disabled by an administrator (phys_state Disabled)",
                            ""});
        continue;
      }
      if (state == "ACTIVE") {
        auto it = best.find(model_of(d, p));
        const auto rate = host::port_rate_gbps(p);
        // A rate file of inf, nan, -400 or 1e308 says nothing of the link: said, not compared
        // (it would make the healthy siblings look slow).
        if (!rate && !text(p, k::kRate).empty())
          findings.push_back(
              {CheckStatus::kInfo,
               {},
               fmt::format("{}: its rate '{}' is no rate from 0 to {:g} Gb/sec, so it is not "
                           "compared",
                           name, text(p, k::kRate), host::kMaxPortRateGbps),
               ""});
        if (rate && it != best.end() && *rate < it->second)
          findings.push_back(
              {CheckStatus::kWarn, "GC-IB-RATE-LOW"_gc,
               fmt::format("{} runs at {} while other {} ports here run at {} Gb/sec", name,
                           text(p, k::kRate), text(d, k::kHcaType), it->second),
               "reseat or replace the cable or transceiver of the slow port (a link trained down "
               "in width or speed), then check it with ibstat / ibv_devinfo -v"});
        continue;
      }
      if (phys_up == "LINKUP" && (state == "INIT" || state == "ARMED")) {
        findings.push_back(
            {CheckStatus::kWarn, "GC-IB-PORT-NO-SM"_gc,
             fmt::format("{} has a physical link but stays {}: no subnet manager brought it up",
                         name, state),
             "start a subnet manager on the fabric (opensm, or the managed switch's UFM/SM) and "
             "check sminfo; the port turns ACTIVE when it is configured"});
        continue;
      }
      findings.push_back(
          {CheckStatus::kWarn, "GC-IB-PORT-DOWN"_gc,
           fmt::format("{} is {} ({})", name, state, phys.empty() ? "phys_state unreadable" : phys),
           "check the port's cable and transceiver and the switch port at the far end (ibstat, "
           "ibv_devinfo); Polling means no link partner answers"});
    }
  if (active == 0 && ports > 0)
    findings.insert(
        findings.begin(),
        {CheckStatus::kFail, "GC-IB-NO-ACTIVE-PORT"_gc,
         fmt::format("none of the {} enabled RDMA port{} here is active: multi-node jobs "
                     "cannot use the fabric",
                     ports, ports == 1 ? "" : "s"),
         "bring up a link: cable, transceiver, switch port and subnet manager "
         "(ibstat shows each port's state)"});
  const std::size_t before = evidence.size();
  note_unreadable(ib, evidence);
  const std::size_t unreadable = evidence.size() - before;
  return combine(
      findings, evidence,
      fmt::format("{} RDMA port{} active, each at its siblings' rate{}", active,
                  active == 1 ? "" : "s",
                  unreadable == 0 ? ""
                                  : fmt::format(" ({} file{} could not be read: "
                                                "judged without them)",
                                                unreadable, unreadable == 1 ? "" : "s")));
}

// ---- infiniband_errors ----

namespace {

enum class CounterClass { kFlap, kPhysical, kCongestion };

// The port counters that mean a fault when they grow (IBTA PortCounters; mlx5 names them so).
// Transmit discards and constraint errors are congestion or partitioning: said, not judged.
constexpr std::array<std::pair<std::string_view, CounterClass>, 10> kErrorCounters{{
    {"link_downed", CounterClass::kFlap},
    {"symbol_error", CounterClass::kPhysical},
    {"link_error_recovery", CounterClass::kPhysical},
    {"local_link_integrity_errors", CounterClass::kPhysical},
    {"port_rcv_errors", CounterClass::kPhysical},
    {"port_rcv_remote_physical_errors", CounterClass::kPhysical},
    {"excessive_buffer_overrun_errors", CounterClass::kPhysical},
    {"port_xmit_discards", CounterClass::kCongestion},
    {"port_xmit_constraint_errors", CounterClass::kCongestion},
    {"port_rcv_constraint_errors", CounterClass::kCongestion},
}};

// "mlx5_0/1" -> that port's error counters.
using Readings = std::map<std::string, std::map<std::string, std::uint64_t>>;

Readings error_counters(const Json& per_port) {
  Readings out;
  if (!per_port.is_object()) return out;
  for (const auto& [port, counters] : per_port.items()) {
    if (!counters.is_object()) continue;
    auto& slot = out[port];
    for (const auto& [name, cls] : kErrorCounters)
      if (auto it = counters.find(name);
          it != counters.end() &&
          (it->is_number_unsigned() || (it->is_number_integer() && it->get<long long>() >= 0)))
        slot[std::string(name)] = it->get<std::uint64_t>();
  }
  return out;
}

Json first_reading(const Json& ib) {
  Json out = Json::object();
  for (const auto& d : array_at(ib, k::kDevices))
    for (const auto& p : array_at(d, k::kPorts))
      out[fmt::format("{}/{}", text(d, k::kName), p.value(k::kPort, 0))] =
          p.value(k::kCounters, Json::object());
  return out;
}

std::string trimmed_file(const SystemView& view, std::string_view path) {
  std::string s = view.read_file(path).value_or("");
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

}  // namespace

CheckResult check_infiniband_errors(const SystemView& view) {
  const Json& ib = rdma_section(view);
  if (!has_adapters(ib)) return no_adapter(ib);
  const Readings first = error_counters(first_reading(ib));
  const Json after_json = ib.value(k::kCountersAfterLoad, Json::object());
  const Readings after = error_counters(after_json.value(k::kPorts, Json::object()));
  const Readings& latest = after.empty() ? first : after;

  // The window judged: since the last run of this boot (a state file), else doctor's own run
  // between the probe and the reading after the load; another boot restarts the counters.
  const std::string boot = trimmed_file(view, "/proc/sys/kernel/random/boot_id");
  const Json saved = view.saved_state.value("infiniband_errors", Json::object());
  const bool same_boot = !boot.empty() && saved.value("boot_id", std::string()) == boot;
  const Readings before_saved =
      same_boot ? error_counters(saved.value("counts", Json::object())) : Readings{};
  const Readings* before = nullptr;
  std::string window;
  if (same_boot) {
    before = &before_saved;
    window = "since the last run (state file)";
  } else if (!after.empty()) {
    before = &first;
    window = fmt::format("during doctor's run ({:.1f} s)", after_json.value(k::kIntervalS, 0.0));
  }

  std::vector<std::string> evidence;
  std::vector<Finding> findings;
  std::vector<std::string> lifetime;
  for (const auto& [port, counters] : latest)
    for (const auto& [name, value] : counters)
      if (value > 0) lifetime.push_back(fmt::format("{} {} {}", port, name, value));
  if (!lifetime.empty())
    evidence.push_back("non-zero since the driver loaded: " + join(lifetime, ", "));
  if (before != nullptr) {
    std::map<CounterClass, std::vector<std::string>> grew;
    for (const auto& [port, counters] : latest) {
      auto old = before->find(port);
      if (old == before->end()) continue;  // a port not read then: nothing to compare
      for (const auto& [name, cls] : kErrorCounters) {
        auto now_it = counters.find(std::string(name));
        auto was_it = old->second.find(std::string(name));
        if (now_it == counters.end() || was_it == old->second.end()) continue;
        if (now_it->second < was_it->second) {
          evidence.push_back(fmt::format("{} {} went back from {} to {} (reset): not judged", port,
                                         name, was_it->second, now_it->second));
          continue;
        }
        if (now_it->second > was_it->second)
          grew[cls].push_back(
              fmt::format("{} {} +{}", port, name, now_it->second - was_it->second));
      }
    }
    const std::string cable_fix =
        "reseat or replace the port's cable or transceiver (or the switch port); watch the "
        "counters with perfquery or ibdiagnet, and drain the node if they keep growing";
    if (!grew[CounterClass::kFlap].empty())
      findings.push_back({CheckStatus::kFail, "GC-IB-LINK-FLAP"_gc,
                          fmt::format("a link went down and retrained {}: {}", window,
                                      join(grew[CounterClass::kFlap], ", ")),
                          cable_fix});
    if (!grew[CounterClass::kPhysical].empty())
      findings.push_back({CheckStatus::kWarn, "GC-IB-LINK-ERRORS"_gc,
                          fmt::format("port error counters grew {}: {}", window,
                                      join(grew[CounterClass::kPhysical], ", ")),
                          cable_fix});
    if (!grew[CounterClass::kCongestion].empty())
      findings.push_back({CheckStatus::kInfo,
                          {},
                          fmt::format("discards grew {} (congestion or partitioning, not a "
                                      "fault of this node): {}",
                                      window, join(grew[CounterClass::kCongestion], ", ")),
                          ""});
  }
  note_unreadable(ib, evidence);
  CheckResult r;
  if (before == nullptr) {
    r = pass(fmt::format("{} port{} read once (no load run and no state file): lifetime counts "
                         "are in the evidence, growth is not judged",
                         latest.size(), latest.size() == 1 ? "" : "s"),
             evidence);
  } else {
    r = combine(findings, evidence,
                fmt::format("no error counter of {} port{} grew {}", latest.size(),
                            latest.size() == 1 ? "" : "s", window));
  }
  Json counts = Json::object();
  for (const auto& [port, counters] : latest) counts[port] = counters;
  r.state = {{"boot_id", boot}, {"counts", std::move(counts)}};
  return r;
}

// ---- gpudirect_rdma ----

namespace {

// "6.8.0-45-generic" -> {6, 8}; {0, 0} when it does not parse.
std::pair<int, int> kernel_version(const std::string& release) {
  int major = 0, minor = 0;
  if (std::sscanf(release.c_str(), "%d.%d", &major, &minor) != 2) return {0, 0};
  return {major, minor};
}

}  // namespace

CheckResult check_gpudirect_rdma(const SystemView& view) {
  const Json& ib = rdma_section(view);
  if (!has_adapters(ib)) return no_adapter(ib);
  std::vector<std::string> hcas, gpus;
  for (const auto& d : array_at(ib, k::kDevices))
    if (!text(d, k::kPciBusId).empty())
      hcas.push_back(text(d, k::kName) + " " + text(d, k::kPciBusId));
  if (hcas.empty())
    return not_applicable("only software RDMA devices (rdma_rxe, siw): no adapter to reach GPUs");
  for (const auto& g : array_at(ib, k::kGpus))
    if (text(g, k::kVendor) == "nvidia") gpus.push_back(text(g, k::kPciBusId));
  if (gpus.empty()) return not_applicable("no NVIDIA GPU on the PCI bus beside the RDMA adapters");
  if (!view.is_dir("/sys/module/nvidia"))
    return not_applicable(
        "the nvidia kernel module is not loaded (nvidia_kernel_module judges it)");
  std::vector<std::string> evidence{"RDMA adapters: " + join(hcas, ", "),
                                    "NVIDIA GPUs: " + join(gpus, ", ")};
  std::vector<std::string> modules;
  for (const auto& m : array_at(ib, k::kPeerMemoryModules))
    if (m.is_string()) modules.push_back(m.get<std::string>());
  if (!modules.empty())
    return pass(fmt::format("GPUDirect RDMA is on: {} is loaded", join(modules, ", ")), evidence);
  // Without a peer-memory module, NCCL 2.13+ registers GPU memory through dma-buf, which needs
  // NVIDIA's open kernel module and Linux 5.12 or later.
  const std::string version = view.read_file("/proc/driver/nvidia/version").value_or("");
  const bool open_module = version.find("Open Kernel Module") != std::string::npos;
  const std::string release = trimmed_file(view, "/proc/sys/kernel/osrelease");
  const auto [major, minor] = kernel_version(release);
  const bool dmabuf_kernel = major > 5 || (major == 5 && minor >= 12);
  evidence.push_back(fmt::format("nvidia module: {}; kernel {}",
                                 version.empty() ? "version unreadable"
                                 : open_module   ? "open kernel module"
                                                 : "proprietary kernel module",
                                 release.empty() ? "unknown" : release));
  if (open_module && dmabuf_kernel)
    return pass("GPUDirect RDMA through dma-buf (NVIDIA open kernel module on Linux " + release +
                    "; no nvidia_peermem needed)",
                evidence);
  return warn("GC-GPUDIRECT-RDMA-OFF"_gc,
              fmt::format("GPUDirect RDMA is off: NVIDIA GPUs and {} RDMA adapter{} but neither "
                          "nvidia_peermem is loaded nor dma-buf available ({}): NCCL and MPI "
                          "stage GPU buffers through host memory",
                          hcas.size(), hcas.size() == 1 ? "" : "s",
                          !open_module ? "the proprietary kernel module" : "a kernel before 5.12"),
              "sudo modprobe nvidia_peermem (it ships with the driver; load it at boot with echo "
              "nvidia_peermem | sudo tee /etc/modules-load.d/nvidia-peermem.conf), or use the "
              "open kernel module on Linux 5.12+ for dma-buf",
              evidence);
}

// ---- infiniband_gpu_affinity ----

namespace {

std::string_view topo_name(std::string_view distance) {
  if (distance == "pcie_switch") return "PIX/PXB: a PCIe switch";
  if (distance == "host_bridge") return "PHB: the same host bridge";
  if (distance == "numa_node") return "NODE: the same NUMA node";
  if (distance == "cpu_interconnect") return "SYS: across the CPU interconnect";
  return "unknown";
}

}  // namespace

CheckResult check_infiniband_gpu_affinity(const SystemView& view) {
  const Json& ib = rdma_section(view);
  if (!has_adapters(ib)) return no_adapter(ib);
  const Json& gpus = array_at(ib, k::kGpus);
  if (gpus.empty())
    return not_applicable("no GPU on the PCI bus, or no RDMA adapter with a PCI function");
  std::vector<std::string> evidence, remote, unknown;
  for (const auto& g : gpus) {
    std::vector<std::string> closest;
    for (const auto& h : array_at(g, k::kClosestHcas))
      if (h.is_string()) closest.push_back(h.get<std::string>());
    const std::string distance = text(g, k::kDistance);
    const std::string gpu = text(g, k::kPciBusId);
    evidence.push_back(
        fmt::format("GPU {}: nearest {} ({})", gpu, join(closest, ", "), topo_name(distance)));
    if (distance == "cpu_interconnect") remote.push_back(gpu);
    if (distance == "unknown") unknown.push_back(gpu);
  }
  std::vector<Finding> findings;
  if (!remote.empty())
    findings.push_back(
        {CheckStatus::kWarn, "GC-IB-HCA-REMOTE"_gc,
         fmt::format("GPU{} {}: the nearest RDMA adapter is on another CPU socket, so its "
                     "network traffic crosses the CPU interconnect",
                     remote.size() == 1 ? "" : "s", join(remote, ", ")),
         "put an adapter on each socket that has GPUs (the slot layout of the node's manual), or "
         "in a virtual machine ask for a NUMA-aligned shape; until then NCCL routes through the "
         "other socket"});
  if (!unknown.empty())
    findings.push_back({CheckStatus::kInfo,
                        {},
                        fmt::format("GPU{} {}: the adapters sit under other host bridges and the "
                                    "NUMA nodes are not known, so the distance is unknown",
                                    unknown.size() == 1 ? "" : "s", join(unknown, ", ")),
                        ""});
  return combine(findings, evidence,
                 fmt::format("each of the {} GPU{} has an RDMA adapter on its own CPU socket",
                             gpus.size(), gpus.size() == 1 ? "" : "s"));
}

}  // namespace gpucheck::doctor

// The GPUs of one machine together: NVLink links and their error counters around the
// load run, peer access between GPUs and what a peer copy reached under load, and a GPU slower
// than its siblings of the same model in the same run.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/nvlink_judge.h"

#include "core/json_keys.h"
#include "core/outliers.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

constexpr const char* kCounterNames[] = {"replay", "recovery", "crc_flit", "crc_data", "ecc_data"};

const Json& links_of(const NvmlGpu& g) {
  static const Json kNone = Json::array();
  auto nv = g.fields->find(k::kNvlink);
  if (nv == g.fields->end() || !nv->contains(k::kLinks)) return kNone;
  return (*nv)[std::string(k::kLinks)];
}

bool active(const Json& link) {
  return text(link, k::kState) == "active";
}

std::optional<double> number_at(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

// "cuda1" (or the NVML label) of the GPU at a PCI bus id, for naming a link's remote.
std::string name_of_pci(const std::vector<NvmlGpu>& gpus, const std::string& pci) {
  for (const auto& g : gpus)
    if (text(*g.fields, k::kPciBusId) == pci) return g.label;
  return pci.empty() ? std::string("an unknown remote") : pci;
}

std::string remote_of(const std::vector<NvmlGpu>& gpus, const Json& link) {
  const std::string type = text(link, k::kRemoteDeviceType);
  const std::string pci = text(link, k::kRemotePciBusId);
  if (type == "switch") return "an NVSwitch" + (pci.empty() ? "" : " (" + pci + ")");
  return name_of_pci(gpus, pci);
}

std::string mbps_text(double mbps) {
  return fmt::format("{:g} GB/s", mbps / 1000.0);
}

bool load_ran(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  for (const auto& e : array_at(cuda, k::kUnderLoad))
    if (text(e, k::kStatus) == "ok") return true;
  return false;
}

// The CUDA flat id ("cuda0") of an NVML GPU, or empty when CUDA does not see it.
std::string cuda_id(const NvmlGpu& g) {
  return g.cuda_device == nullptr ? std::string() : text(*g.cuda_device, k::kDevice);
}

// GB/s a PCIe link moves per direction after encoding: per lane, by generation.
std::optional<double> pcie_gbps(unsigned gen, unsigned width) {
  static constexpr double kPerLane[] = {0, 0.25, 0.5, 0.985, 1.969, 3.938, 7.563};
  if (gen == 0 || gen >= std::size(kPerLane) || width == 0) return std::nullopt;
  return kPerLane[gen] * width;
}

}  // namespace

// ---- nvlink_links ----

CheckResult check_nvlink_links(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  std::vector<std::string> evidence{nvml_origin(view)};
  std::vector<Finding> findings;
  std::size_t with_links = 0, any_active = 0;
  unsigned best_version = 0;
  double best_speed = 0;
  for (const auto& g : gpus)
    for (const auto& l : links_of(g)) {
      if (!active(l)) continue;
      best_version = std::max(best_version, l.value(std::string(k::kVersion), 0u));
      best_speed = std::max(best_speed, number_at(l, k::kSpeedMbps).value_or(0));
    }
  for (const auto& g : gpus) {
    const Json& links = links_of(g);
    if (links.empty()) continue;
    ++with_links;
    std::size_t up = 0;
    double total = 0;
    std::set<unsigned> versions;
    for (const auto& l : links)
      if (active(l)) {
        ++up;
        total += number_at(l, k::kSpeedMbps).value_or(0);
        versions.insert(l.value(std::string(k::kVersion), 0u));
      }
    any_active += up;
    std::vector<std::string> vs;
    for (auto v : versions) vs.push_back(fmt::format("{}", v));
    evidence.push_back(fmt::format("{}: {} NVLinks, {} active{}{}", g.label, links.size(), up,
                                   vs.empty() ? "" : ", version " + join(vs, "/"),
                                   total > 0 ? ", " + mbps_text(total) + " in all" : ""));
    const Json fabric = g.fields->value(std::string(k::kFabric), Json::object());
    if (!fabric.empty()) {
      evidence.push_back(fmt::format("{}: fabric {} {}", g.label, text(fabric, k::kState),
                                     text(fabric, k::kStatus)));
      if (text(fabric, k::kState) != "completed" ||
          (fabric.contains(k::kStatus) && text(fabric, k::kStatus) != "success"))
        findings.push_back(
            {CheckStatus::kFail, "GC-NVLINK-FABRIC"_gc,
             fmt::format("{}: its registration with the NVLink fabric is {} {} (Fabric Manager)",
                         g.label, text(fabric, k::kState), text(fabric, k::kStatus)),
             "sudo systemctl status nvidia-fabricmanager; journalctl -u nvidia-fabricmanager "
             "names the failing GPU or NVSwitch; nvidia-smi -q | grep -A3 Fabric"});
    }
    for (const auto& l : links) {
      const unsigned link = l.value(std::string(k::kLink), 0u);
      if (!active(l)) {
        // A GPU whose every link is down while others are up lost its NVLink; a single link down
        // among active ones is a downed link. With no link up anywhere, see below.
        if (up > 0 || any_active > 0 || gpus.size() > 1)
          findings.push_back(
              {CheckStatus::kFail, "GC-NVLINK-DOWN"_gc,
               fmt::format("{}: NVLink {} is inactive ({} of its {} links are active)", g.label,
                           link, up, links.size()),
               "nvidia-smi nvlink -s -i <index> shows each link; reseat the NVLink bridge or "
               "board, check `dmesg | grep -i xid` for Xid 74 (NVLink error); a link that stays "
               "down needs service"});
        continue;
      }
      const unsigned version = l.value(std::string(k::kVersion), 0u);
      if (version != 0 && version < best_version)
        findings.push_back(
            {CheckStatus::kFail, "GC-NVLINK-DEGRADED"_gc,
             fmt::format("{}: NVLink {} to {} trained at version {}, the others at {}", g.label,
                         link, remote_of(gpus, l), version, best_version),
             "reset the GPUs (nvidia-smi -r) or reboot; a link that keeps training low needs "
             "its bridge or board reseated or replaced"});
      if (auto speed = number_at(l, k::kSpeedMbps); speed && *speed < best_speed * 0.99)
        findings.push_back(
            {CheckStatus::kFail, "GC-NVLINK-DEGRADED"_gc,
             fmt::format("{}: NVLink {} to {} runs at {}, the others at {}", g.label, link,
                         remote_of(gpus, l), mbps_text(*speed), mbps_text(best_speed)),
             "reset the GPUs (nvidia-smi -r) or reboot; a link that stays slow needs its bridge "
             "or board reseated or replaced"});
    }
  }
  if (with_links == 0)
    return not_applicable("no GPU reports NVLink (NVML lists no link)", evidence);
  if (any_active == 0) {
    findings.clear();  // every link down alike: judged as a whole below
    std::vector<std::string> switches;
    try {
      for (const auto& d : nvidia_pci_devices(view))
        if (d.is_nvswitch()) switches.push_back(d.address);
    } catch (const NotObservable& e) {
      evidence.push_back(std::string("NVSwitches not looked for: ") + e.what());
    }
    if (!switches.empty())
      return fail("GC-NVLINK-FABRIC"_gc,
                  fmt::format("no NVLink is active on any of {} GPUs although NVSwitches are on "
                              "the bus ({})",
                              with_links, join(switches, ", ")),
                  "start Fabric Manager (sudo systemctl enable --now nvidia-fabricmanager) and "
                  "check nvidia-smi nvlink -s",
                  evidence);
    return info(fmt::format("no NVLink is active on any of {} GPUs: they talk over PCIe (no "
                            "NVLink bridge or NVSwitch fitted)",
                            with_links),
                evidence);
  }
  // Both ends of a GPU pair see the same number of links.
  const Json& nvml = cuda_section(view).value(k::kNvml, Json::object());
  std::map<std::pair<std::string, std::string>, unsigned> counts;
  for (const auto& p : array_at(nvml, k::kPairs))
    counts[{text(p, k::kGpu), text(p, k::kPeer)}] = p.value(std::string(k::kNvlinks), 0u);
  for (const auto& [pair, n] : counts) {
    auto back = counts.find({pair.second, pair.first});
    if (pair.first < pair.second && back != counts.end() && back->second != n)
      findings.push_back(
          {CheckStatus::kFail, "GC-NVLINK-ASYMMETRIC"_gc,
           fmt::format("{} reaches {} over {} NVLinks, but {} reaches it over {}",
                       name_of_pci(gpus, pair.first), name_of_pci(gpus, pair.second), n,
                       name_of_pci(gpus, pair.second), back->second),
           "nvidia-smi nvlink -s on both GPUs; a link up on one end only is a fault of the bridge "
           "or board"});
  }
  return combine(findings, evidence,
                 fmt::format("every NVLink of {} GPU{} is active, at version {}{}", with_links,
                             with_links == 1 ? "" : "s", best_version,
                             best_speed > 0 ? " and " + mbps_text(best_speed) + " each" : ""));
}

// ---- nvlink_errors ----

namespace {

// Seconds between the two readings: measured by doctor (counters_after_load.interval_s), else
// the load's own length (its devices ran at once, then the peer copies), else unknown.
std::optional<double> reading_interval(const Json& cuda, const Json& after) {
  if (auto s = number_at(after, k::kIntervalS); s && *s > 0) return s;
  double load = 0, p2p = 0;
  for (const auto& e : array_at(cuda, k::kUnderLoad))
    load = std::max(load, number_at(e, k::kSeconds).value_or(0));
  for (const auto& e : array_at(cuda, k::kP2pUnderLoad))
    p2p = std::max(p2p, number_at(e, k::kSeconds).value_or(0));
  if (load + p2p > 0) return load + p2p;
  return std::nullopt;
}

// The state nvlink_errors keeps for doctor's state file: this boot, the seconds since boot
// (/proc/uptime) and every active link's counters by "<pci bus id>/<link>".
struct NvlinkState {
  std::string boot;
  std::optional<double> uptime_s;
  Json counts = Json::object();
};

std::string first_line(const SystemView& view, std::string_view path) {
  std::string s = view.read_file(path).value_or("");
  s = s.substr(0, s.find('\n'));
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.pop_back();
  return s;
}

std::optional<double> uptime_s(const SystemView& view) {
  const std::string s = first_line(view, "/proc/uptime");
  double v = 0;
  if (std::sscanf(s.c_str(), "%lf", &v) != 1 || !(v > 0)) return std::nullopt;
  return v;
}

NvlinkLinkGrowth link_growth(const std::vector<NvmlGpu>& gpus, const Json& link, const Json& before,
                             const Json& now) {
  NvlinkLinkGrowth lg{link.value(std::string(k::kLink), 0u), remote_of(gpus, link), {}, {}};
  for (const char* name : kCounterNames) {
    if (!before.contains(name) || !now.contains(name) || !before[name].is_number_integer() ||
        !now[name].is_number_integer())
      continue;
    const auto a = before[name].get<unsigned long long>();
    const auto b = now[name].get<unsigned long long>();
    if (b < a)
      lg.went_back.push_back(fmt::format("{} counter went back from {} to {}", name, a, b));
    else
      lg.growth[name] = b - a;
  }
  return lg;
}

}  // namespace

CheckResult check_nvlink_errors(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  const Json& cuda = cuda_section(view);
  std::vector<std::string> evidence{nvml_origin(view)};
  std::size_t links = 0;
  for (const auto& g : gpus)
    for (const auto& l : links_of(g)) links += active(l) ? 1 : 0;
  if (links == 0) return not_applicable("no active NVLink (NVML lists none)", evidence);
  // What the state file keeps: the probe's reading (doctor --quick takes no second one).
  NvlinkState now{first_line(view, "/proc/sys/kernel/random/boot_id"), uptime_s(view), {}};
  for (const auto& g : gpus)
    for (const auto& l : links_of(g))
      if (active(l))
        now.counts[fmt::format("{}/{}", text(*g.fields, k::kPciBusId),
                               l.value(std::string(k::kLink), 0u))] =
            l.value(std::string(k::kErrorCounters), Json::object());
  auto with_state = [&](CheckResult r) {
    r.state = {{"boot_id", now.boot}, {"counts", now.counts}};
    if (now.uptime_s) r.state["uptime_s"] = *now.uptime_s;
    return r;
  };
  if (!cuda.contains(k::kCountersAfterLoad)) {
    // doctor --quick: growth since the last run of this boot, per second of uptime between them.
    const Json saved = view.saved_state.value("nvlink_errors", Json::object());
    const auto saved_uptime = number_at(saved, "uptime_s");
    if (now.boot.empty() || saved.value("boot_id", std::string()) != now.boot || !saved_uptime ||
        !now.uptime_s || *now.uptime_s <= *saved_uptime)
      return with_state(
          skip("the NVLink error counters were read once (doctor --no-load, --quick without an "
               "earlier run of this boot in the state file, or facts from a saved probe): growth "
               "needs a second reading",
               evidence));
    const double seconds = *now.uptime_s - *saved_uptime;
    const Json before = saved.value("counts", Json::object());
    std::vector<NvlinkGpuGrowth> growth;
    for (const auto& g : gpus) {
      NvlinkGpuGrowth gpu{cuda_id(g).empty() ? g.label : cuda_id(g), {}};
      for (const auto& l : links_of(g)) {
        const std::string key =
            fmt::format("{}/{}", text(*g.fields, k::kPciBusId), l.value(std::string(k::kLink), 0u));
        if (!active(l) || !before.contains(key)) continue;
        gpu.links.push_back(link_growth(gpus, l, before[key], now.counts[key]));
      }
      if (!gpu.links.empty()) growth.push_back(std::move(gpu));
    }
    if (growth.empty())
      return with_state(skip("no active NVLink of the state file's run is active now", evidence));
    evidence.push_back(fmt::format(
        "read by the probe and compared with the state file's reading {:.0f} s earlier", seconds));
    NvlinkJudgement j = judge_nvlink_growth(growth, seconds, "since the last run (state file)");
    evidence.insert(evidence.end(), j.links.begin(), j.links.end());
    CheckResult r = combine(j.findings, evidence, "");
    r.finding = fmt::format("since the last run (state file, {:.0f} s): {}", seconds, r.finding);
    return with_state(std::move(r));
  }
  const Json& after = cuda[std::string(k::kCountersAfterLoad)];
  if (!after.value(k::kLoaded, false))
    throw NotObservable("the second reading of the NVLink counters failed: " +
                        text(after, k::kError));
  const bool loaded = load_ran(view);
  const std::string during = loaded ? "during doctor's load" : "during doctor's run (no load ran)";
  const std::optional<double> seconds = reading_interval(cuda, after);
  evidence.push_back(fmt::format("read by the probe, then again {}{}",
                                 loaded ? "after the load run" : "(no CUDA load could run)",
                                 seconds
                                     ? fmt::format(", {:.1f} s later: rates per second", *seconds)
                                     : ", after an unknown time: no rates"));
  std::vector<Finding> lost;
  std::vector<NvlinkGpuGrowth> growth;
  for (const auto& g : gpus) {
    const Json* later = nullptr;
    for (const auto& d : array_at(after, k::kDevices))
      if ((!text(d, k::kPciBusId).empty() &&
           text(d, k::kPciBusId) == text(*g.fields, k::kPciBusId)) ||
          (!text(d, k::kDeviceUuid).empty() &&
           text(d, k::kDeviceUuid) == text(*g.fields, k::kDeviceUuid)))
        later = &d;
    if (later == nullptr) continue;
    NvlinkGpuGrowth gpu{cuda_id(g).empty() ? g.label : cuda_id(g), {}};
    for (const auto& l : links_of(g)) {
      if (!active(l)) continue;
      const unsigned link = l.value(std::string(k::kLink), 0u);
      const Json* later_link = nullptr;
      for (const auto& c : array_at(*later, k::kLinks))
        if (c.value(std::string(k::kLink), 0u) == link) later_link = &c;
      if (later_link == nullptr) {
        lost.push_back({CheckStatus::kWarn, "GC-NVLINK-LOST"_gc,
                        fmt::format("{}: NVLink {} was active at the probe but not after the load",
                                    g.label, link),
                        "nvidia-smi nvlink -s -i <index>; dmesg | grep -i xid (Xid 74)"});
        continue;
      }
      gpu.links.push_back(link_growth(
          gpus, l, l.value(std::string(k::kErrorCounters), Json::object()), *later_link));
      // The state file keeps the latest reading.
      Json& kept = now.counts[fmt::format("{}/{}", text(*g.fields, k::kPciBusId), link)];
      for (const char* name : kCounterNames)
        if (later_link->contains(name)) kept[name] = (*later_link)[name];
    }
    if (!gpu.links.empty()) growth.push_back(std::move(gpu));
  }
  if (growth.empty())
    throw NotObservable("no active NVLink could be matched between the two readings");
  NvlinkJudgement j = judge_nvlink_growth(growth, seconds, during);
  evidence.insert(evidence.end(), j.links.begin(), j.links.end());
  j.findings.insert(j.findings.end(), lost.begin(), lost.end());
  return with_state(combine(j.findings, evidence, ""));
}

// ---- p2p_access ----

CheckResult check_p2p_access(const SystemView& view) {
  const auto gpus = nvml_gpus(view);
  const Json& cuda = cuda_section(view);
  const Json& nvml = cuda.value(k::kNvml, Json::object());
  const Json& pairs = array_at(nvml, k::kPairs);
  std::vector<std::string> evidence{nvml_origin(view)};
  if (pairs.empty()) return not_applicable("fewer than two GPUs (NVML lists no pair)", evidence);
  const Json& matrix = array_at(cuda, k::kPeerAccess);
  const Json& measured = array_at(cuda, k::kP2pUnderLoad);
  auto gpu_at = [&](const std::string& pci) -> const NvmlGpu* {
    for (const auto& g : gpus)
      if (text(*g.fields, k::kPciBusId) == pci) return &g;
    return nullptr;
  };
  std::vector<Finding> findings;
  const std::string vm_fix =
      "on bare metal: let peer traffic bypass the IOMMU (kernel parameter iommu=pt) and disable "
      "ACS on the PCIe switches between the GPUs; in a VM: pass the GPUs through with P2P and "
      "NVLink enabled (the hypervisor's GPU P2P setting); nvidia-smi topo -p2p rw shows the "
      "driver's view";
  for (const auto& p : pairs) {
    const NvmlGpu* a = gpu_at(text(p, k::kGpu));
    const NvmlGpu* b = gpu_at(text(p, k::kPeer));
    if (a == nullptr || b == nullptr) continue;
    const std::string ia = cuda_id(*a), ib = cuda_id(*b);
    const unsigned links = p.value(std::string(k::kNvlinks), 0u);
    const Json caps = p.value(std::string(k::kP2p), Json::object());
    std::optional<bool> can;
    if (!ia.empty() && !ib.empty()) {
      const std::size_t i = std::stoul(ia.substr(4)), j = std::stoul(ib.substr(4));
      if (i < matrix.size() && j < matrix[i].size() && matrix[i][j].is_boolean())
        can = matrix[i][j].get<bool>();
    }
    const std::string who =
        fmt::format("{} -> {}", ia.empty() ? a->label : ia, ib.empty() ? b->label : ib);
    std::string seen = fmt::format(
        "{}: {}, NVML P2P read {} write {}{}", who,
        links > 0 ? fmt::format("NV{}", links) : text(p, k::kCommonAncestor), text(caps, "read"),
        text(caps, "write"), can ? fmt::format(", CUDA peer access {}", *can ? "yes" : "no") : "");
    // What a peer copy reached under load, against what the path allows.
    std::optional<double> line;
    if (links > 0) {
      double mbps = 0;
      for (const auto& l : links_of(*a))
        if (active(l) && (text(l, k::kRemotePciBusId) == text(p, k::kPeer) ||
                          text(l, k::kRemoteDeviceType) == "switch"))
          mbps += number_at(l, k::kSpeedMbps).value_or(0);
      if (mbps > 0) line = mbps / 1000.0;
    } else {
      auto gen = [](const NvmlGpu* g) { return g->fields->value("pcie_link_gen_max", 0u); };
      auto width = [](const NvmlGpu* g) { return g->fields->value("pcie_link_width_max", 0u); };
      line = pcie_gbps(std::min(gen(a), gen(b)), std::min(width(a), width(b)));
    }
    const Json* m = nullptr;
    for (const auto& e : measured)
      if (text(e, k::kSrc) == ia && text(e, k::kDst) == ib) m = &e;
    if (m != nullptr && text(*m, k::kStatus) == "ok") {
      const double gbps = m->value(std::string(k::kGbps), 0.0);
      seen += fmt::format(", measured {:.1f} GB/s", gbps);
      if (line)
        seen += fmt::format(" of {:.1f} GB/s line rate ({:.0f} %)", *line, 100 * gbps / *line);
      const std::string ancestor = text(p, k::kCommonAncestor);
      if (line && gbps < 0.5 * *line && (links > 0 || ancestor == "PIX" || ancestor == "PXB"))
        findings.push_back(
            {links > 0 ? CheckStatus::kFail : CheckStatus::kWarn, "GC-P2P-SLOW"_gc,
             fmt::format("{}: a peer copy reached {:.1f} GB/s under load, below half of the {:.1f} "
                         "GB/s {} allow{}",
                         who, gbps, *line,
                         links > 0 ? fmt::format("{} NVLinks", links) : "PCIe link",
                         links > 0 ? "" : "s"),
             links > 0
                 ? "nvidia-smi nvlink -s and -e on both GPUs (a slow or erroring link); " + vm_fix
                 : vm_fix});
    } else if (m != nullptr) {
      seen +=
          fmt::format(", peer copy under load {}: {}", text(*m, k::kStatus), text(*m, k::kReason));
      if (links > 0 && text(*m, k::kStatus) != "unsupported")
        findings.push_back({CheckStatus::kFail, "GC-P2P-COPY-FAILED"_gc,
                            fmt::format("{}: the peer copy under load {}: {}", who,
                                        text(*m, k::kStatus), text(*m, k::kReason)),
                            vm_fix});
    }
    evidence.push_back(seen);
    if (links > 0 && can && !*can)
      findings.push_back(
          {CheckStatus::kFail, "GC-P2P-DENIED"_gc,
           fmt::format("{}: joined by {} NVLinks, but CUDA refuses peer access between them", who,
                       links),
           vm_fix});
    else if (links > 0 && caps.contains("nvlink") && text(caps, "nvlink") != "ok")
      findings.push_back({CheckStatus::kFail, "GC-P2P-DENIED"_gc,
                          fmt::format("{}: joined by {} NVLinks, but NVML's NVLink P2P status is "
                                      "{}",
                                      who, links, text(caps, "nvlink")),
                          vm_fix});
    else if (links == 0 && text(caps, "read") == "disabled_by_regkey")
      findings.push_back({CheckStatus::kWarn, "GC-P2P-DENIED"_gc,
                          who + ": PCIe peer-to-peer is disabled by a driver registry key",
                          "remove the RmP2P/RMForceP2P... setting from the nvidia module options "
                          "(/etc/modprobe.d) and reload the driver"});
    else if (links == 0 && can && !*can && text(caps, "read") == "ok")
      findings.push_back({CheckStatus::kWarn, "GC-P2P-DENIED"_gc,
                          who + ": NVML reports PCIe P2P possible, but CUDA refuses peer access "
                                "(IOMMU, ACS or a virtual machine between them)",
                          vm_fix});
    else if (links == 0 && caps.contains("read") && text(caps, "read") != "ok")
      findings.push_back({CheckStatus::kInfo,
                          {},
                          fmt::format("{}: no peer access over PCIe ({}; common ancestor {}): "
                                      "copies between them are staged through host memory",
                                      who, text(caps, "read"), text(p, k::kCommonAncestor)),
                          ""});
  }
  if (measured.empty())
    evidence.push_back(load_ran(view) ? "no peer copy under load (fewer than two CUDA devices)"
                                      : "no peer copy under load (no load ran)");
  return combine(findings, evidence,
                 measured.empty()
                     ? "peer access matches the links between every pair of GPUs"
                     : "peer access matches the links, and every peer copy under load reached at "
                       "least half of what its link allows");
}

// ---- gpu_siblings ----

CheckResult check_gpu_siblings(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  const Json& load = array_at(cuda, k::kUnderLoad);
  if (load.empty())
    throw NotObservable("doctor's load run did not run (no CUDA device, or --no-load)");
  // GPUs by model, each with its load figures.
  std::map<std::string, std::vector<std::pair<const Json*, const Json*>>> by_model;
  for (const auto& e : load) {
    if (text(e, k::kStatus) != "ok" || !e.contains(k::kFigures)) continue;
    for (const auto& d : array_at(cuda, k::kDevices))
      if (text(d, k::kDevice) == text(e, k::kDevice))
        by_model[text(d, k::kDeviceName)].push_back({&d, &e});
  }
  std::vector<std::string> evidence;
  std::vector<Finding> findings;
  OutlierThresholds t;
  t.relative_warn = 0.05;
  t.relative_fail = 0.10;
  std::size_t judged = 0;
  for (const auto& [model, members] : by_model) {
    if (members.size() < 2) continue;
    std::set<std::string> names;
    for (const auto& f : array_at(*members.front().second, k::kFigures))
      names.insert(text(f, k::kName));
    for (const auto& name : names) {
      std::vector<double> values, noise;
      std::vector<std::string> who;
      std::string unit;
      for (const auto& [dev, entry] : members)
        for (const auto& f : array_at(*entry, k::kFigures))
          if (text(f, k::kName) == name && f.value(std::string(k::kValue), 0.0) > 0) {
            values.push_back(f[std::string(k::kValue)].get<double>());
            // A GPU's own repetitions' spread, at least 1 %, keeps noise from failing it.
            noise.push_back(std::max(0.01, f.value(std::string(k::kSpread), 0.0)));
            who.push_back(fmt::format("{} ({})", text(*dev, k::kDevice), text(*dev, k::kPciBusId)));
            unit = text(f, k::kUnit);
          }
      if (values.size() < 2) continue;
      ++judged;
      const OutlierResult r = judge_outliers(values, noise, t);
      std::vector<std::string> parts;
      for (std::size_t i = 0; i < values.size(); ++i)
        parts.push_back(fmt::format("{} {:.4g}", who[i], values[i]));
      evidence.push_back(fmt::format("{} x{}, {}: {} {}; median {:.4g}", model, values.size(), name,
                                     join(parts, ", "), unit, r.median));
      for (std::size_t i = 0; i < r.points.size(); ++i) {
        const OutlierPoint& p = r.points[i];
        if (p.level == OutlierLevel::kNone) continue;
        findings.push_back(
            {p.level == OutlierLevel::kFail ? CheckStatus::kFail : CheckStatus::kWarn,
             "GC-GPU-SLOW-SIBLING"_gc,
             fmt::format("{}: {} {:.4g} {} is {:.1f} % below the median {:.4g} of its {} {} "
                         "siblings (its own noise {:.1f} %)",
                         who[i], name, p.value, unit, -100 * p.relative_deviation, r.median,
                         values.size(), model, 100 * p.noise),
             "compare nvidia-smi -q -d CLOCK,POWER,TEMPERATURE,PERFORMANCE of this GPU with its "
             "siblings (power cap, clocks held down, cooling); gpucheck doctor --only "
             "clocks_under_load,pcie_link_under_load; a GPU that stays slow needs service"});
      }
    }
  }
  if (judged == 0)
    return not_applicable("no two GPUs of one model ran doctor's load: no sibling to compare",
                          evidence);
  return combine(findings, evidence,
                 "every GPU is within 5 % of the median of its siblings in doctor's load run");
}

}  // namespace gpucheck::doctor

// NVLink, fabric and GPU-pair facts from NVML; every call's failure other than NOT_SUPPORTED is
// kept by name, so a driver that refuses a query is visible, not silently absent.
#include "backends/cuda/nvml_links.h"

#include "backends/cuda/cuda_probe.h"
#include "core/concurrently.h"
#include "core/json_keys.h"
#include "core/sanitize.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpucheck::cuda {

namespace k = keys;

namespace {

std::string pci_of(const nvml::PciInfo& p) {
  return normalize_pci_bus_id(sanitize_c_buffer(p.bus_id, sizeof(p.bus_id))).value_or("");
}

std::string remote_type_name(int t) {
  switch (t) {
    case nvml::kNvLinkDeviceGpu:
      return "gpu";
    case nvml::kNvLinkDeviceIbmNpu:
      return "ibmnpu";
    case nvml::kNvLinkDeviceSwitch:
      return "switch";
    default:
      return "unknown";
  }
}

std::optional<double> field_number(const nvml::FieldValue& v) {
  if (v.nvml_return != nvml::kSuccess) return std::nullopt;
  switch (v.value_type) {
    case nvml::kValueTypeDouble:
      return v.value.d;
    case nvml::kValueTypeUnsignedInt:
      return static_cast<double>(v.value.ui);
    case nvml::kValueTypeUnsignedLong:
      return static_cast<double>(v.value.ul);
    case nvml::kValueTypeUnsignedLongLong:
      return static_cast<double>(v.value.ull);
    case nvml::kValueTypeSignedLongLong:
      return static_cast<double>(v.value.sll);
    case nvml::kValueTypeSignedInt:
      return static_cast<double>(v.value.si);
    case nvml::kValueTypeUnsignedShort:
      return static_cast<double>(v.value.us);
    default:
      return std::nullopt;
  }
}

void note(nlohmann::json& errors, const std::string& what, nvml::Return r) {
  if (r != nvml::kSuccess && r != nvml::kErrorNotSupported) errors[what] = nvml_error_name(r);
}

std::string json_text(const nlohmann::json& o, std::string_view key) {
  auto it = o.find(key);
  return it != o.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}  // namespace

NvLinkFns NvLinkFns::resolve(NvmlSession& s) {
  NvLinkFns f;
  f.state = s.get<nvml::DeviceLinkIntFn>("nvmlDeviceGetNvLinkState");
  f.version = s.get<nvml::DeviceLinkUintFn>("nvmlDeviceGetNvLinkVersion");
  f.remote_pci = s.get_any<nvml::DeviceLinkPciFn>({"nvmlDeviceGetNvLinkRemotePciInfo_v2"});
  f.remote_type = s.get<nvml::DeviceLinkIntFn>("nvmlDeviceGetNvLinkRemoteDeviceType");
  f.counter = s.get<nvml::DeviceLinkCounterFn>("nvmlDeviceGetNvLinkErrorCounter");
  f.fields = s.get<nvml::DeviceFieldValuesFn>("nvmlDeviceGetFieldValues");
  f.topology = s.get<nvml::DevicePairTopologyFn>("nvmlDeviceGetTopologyCommonAncestor");
  f.p2p = s.get<nvml::DevicePairP2pFn>("nvmlDeviceGetP2PStatus");
  f.fabric = s.get<nvml::DeviceFabricInfoFn>("nvmlDeviceGetGpuFabricInfoV");
  f.pci = s.get_any<nvml::DevicePciInfoFn>({"nvmlDeviceGetPciInfo_v3"});
  f.uuid = s.get<nvml::DeviceStringFn>("nvmlDeviceGetUUID");
  return f;
}

std::string topology_level_name(int level) {
  switch (level) {
    case nvml::kTopologyInternal:  // one board (K80): the GPUs share its PCIe switch
    case nvml::kTopologySingle:
      return "PIX";
    case nvml::kTopologyMultiple:
      return "PXB";
    case nvml::kTopologyHostBridge:
      return "PHB";
    case nvml::kTopologyNode:
      return "NODE";
    case nvml::kTopologySystem:
      return "SYS";
    default:
      return "unknown";
  }
}

std::string p2p_status_name(int status) {
  switch (status) {
    case nvml::kP2pStatusOk:
      return "ok";
    case nvml::kP2pStatusChipsetNotSupported:
      return "chipset_not_supported";
    case nvml::kP2pStatusGpuNotSupported:
      return "gpu_not_supported";
    case nvml::kP2pStatusIohTopologyNotSupported:
      return "ioh_topology_not_supported";
    case nvml::kP2pStatusDisabledByRegkey:
      return "disabled_by_regkey";
    case nvml::kP2pStatusNotSupported:
      return "not_supported";
    default:
      return "unknown";
  }
}

nlohmann::json read_link_counters(const NvLinkFns& f, nvml::Device d) {
  nlohmann::json out = nlohmann::json::array();
  if (f.state == nullptr || f.counter == nullptr) return out;
  for (unsigned int link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int active = 0;
    if (f.state(d, link, &active) != nvml::kSuccess || active == 0) continue;
    nlohmann::json c = {{k::kLink, link}};
    for (int i = 0; i < 5; ++i) {
      unsigned long long v = 0;
      if (f.counter(d, link, i, &v) == nvml::kSuccess) c[kNvLinkCounterNames[i]] = v;
    }
    out.push_back(c);
  }
  return out;
}

nlohmann::json read_nvlink(const NvLinkFns& f, nvml::Device d, nlohmann::json& errors) {
  nlohmann::json links = nlohmann::json::array();
  if (f.state == nullptr) return nlohmann::json::object();
  for (unsigned int link = 0; link < nvml::kNvLinkMaxLinks; ++link) {
    int active = 0;
    // A link the GPU does not have answers NOT_SUPPORTED or INVALID_ARGUMENT: not listed.
    if (f.state(d, link, &active) != nvml::kSuccess) continue;
    nlohmann::json l = {{k::kLink, link}, {k::kState, active != 0 ? "active" : "inactive"}};
    const std::string where = fmt::format("nvlink_{}", link);
    unsigned int version = 0;
    if (f.version) {
      nvml::Return r = f.version(d, link, &version);
      if (r == nvml::kSuccess) l[k::kVersion] = version;
      note(errors, where + "_version", r);
    }
    if (active != 0 && f.remote_pci) {
      nvml::PciInfo p{};
      nvml::Return r = f.remote_pci(d, link, &p);
      if (r == nvml::kSuccess && !pci_of(p).empty()) l[k::kRemotePciBusId] = pci_of(p);
      note(errors, where + "_remote_pci", r);
    }
    if (active != 0 && f.remote_type) {
      int t = 0;
      nvml::Return r = f.remote_type(d, link, &t);
      if (r == nvml::kSuccess) l[k::kRemoteDeviceType] = remote_type_name(t);
      note(errors, where + "_remote_type", r);
    }
    if (active != 0 && f.counter) {
      nlohmann::json c = nlohmann::json::object();
      for (int i = 0; i < 5; ++i) {
        unsigned long long v = 0;
        nvml::Return r = f.counter(d, link, i, &v);
        if (r == nvml::kSuccess) c[kNvLinkCounterNames[i]] = v;
        note(errors, fmt::format("{}_{}", where, kNvLinkCounterNames[i]), r);
      }
      if (!c.empty()) l[k::kErrorCounters] = c;
    }
    links.push_back(l);
  }
  if (links.empty()) return nlohmann::json::object();
  nlohmann::json out = {{k::kLinks, links}};
  if (f.fields == nullptr) return out;
  // One call: every listed link's speed (scope = link), the common speed and the link count.
  std::vector<nvml::FieldValue> v;
  for (const auto& l : links) {
    nvml::FieldValue fv{};
    fv.field_id = nvml::kFiNvLinkGetSpeed;
    fv.scope_id = l[k::kLink].get<unsigned int>();
    v.push_back(fv);
  }
  nvml::FieldValue common{}, count{};
  common.field_id = nvml::kFiNvLinkSpeedCommon;
  count.field_id = nvml::kFiNvLinkLinkCount;
  v.push_back(common);
  v.push_back(count);
  nvml::Return r = f.fields(d, static_cast<int>(v.size()), v.data());
  note(errors, "nvlink_field_values", r);
  if (r != nvml::kSuccess) return out;
  for (std::size_t i = 0; i < links.size(); ++i)
    if (auto mbps = field_number(v[i]); mbps && *mbps > 0)
      out[k::kLinks][i][k::kSpeedMbps] = std::llround(*mbps);  // whole MB/s
  if (auto mbps = field_number(v[links.size()]); mbps && *mbps > 0)
    out[k::kSpeedCommonMbps] = std::llround(*mbps);
  if (auto n = field_number(v[links.size() + 1])) out[k::kLinkCount] = static_cast<int>(*n);
  return out;
}

nlohmann::json read_fabric(const NvLinkFns& f, nvml::Device d, nlohmann::json& errors) {
  if (f.fabric == nullptr) return nlohmann::json::object();
  nvml::GpuFabricInfoV3 info{};
  info.version = nvml::kGpuFabricInfoV3Version;
  nvml::Return r = f.fabric(d, &info);
  note(errors, "fabric", r);
  if (r != nvml::kSuccess || info.state == nvml::kFabricStateNotSupported)
    return nlohmann::json::object();
  static constexpr const char* kStates[] = {"not_supported", "not_started", "in_progress",
                                            "completed"};
  nlohmann::json j = {{k::kState, info.state < 4 ? kStates[info.state] : "unknown"},
                      {"clique_id", info.clique_id},
                      {"health_mask", info.health_mask}};
  if (info.state == nvml::kFabricStateCompleted)
    j[k::kStatus] = info.status == nvml::kSuccess ? "success" : nvml_error_name(info.status);
  std::string uuid;
  for (unsigned char c : info.cluster_uuid) uuid += fmt::format("{:02x}", c);
  j["cluster_uuid"] = uuid;
  return j;
}

int nvlinks_between(const nlohmann::json& a, const std::string& b_pci, const nlohmann::json& b) {
  auto count = [](const nlohmann::json& nv, auto&& pred) {
    int n = 0;
    for (const auto& l : nv.value(std::string(k::kLinks), nlohmann::json::array()))
      if (json_text(l, k::kState) == "active" && pred(l)) ++n;
    return n;
  };
  int direct = count(a, [&](const nlohmann::json& l) {
    return !b_pci.empty() && json_text(l, k::kRemotePciBusId) == b_pci;
  });
  if (direct > 0) return direct;
  auto to_switch = [](const nlohmann::json& l) {
    return json_text(l, k::kRemoteDeviceType) == "switch";
  };
  return std::min(count(a, to_switch), count(b, to_switch));
}

nlohmann::json read_gpu_pairs(const NvLinkFns& f, const std::vector<PairGpu>& gpus) {
  nlohmann::json pairs = nlohmann::json::array();
  static constexpr std::pair<int, const char*> kCaps[] = {{nvml::kP2pCapsRead, "read"},
                                                          {nvml::kP2pCapsWrite, "write"},
                                                          {nvml::kP2pCapsNvlink, "nvlink"},
                                                          {nvml::kP2pCapsAtomics, "atomics"},
                                                          {nvml::kP2pCapsPci, "pci"}};
  // Each GPU's row of pairs on its own thread, as the probe reads the GPUs themselves.
  auto row = [&](std::size_t i) {
    nlohmann::json out = nlohmann::json::array();
    for (std::size_t j = 0; j < gpus.size(); ++j) {
      if (i == j) continue;
      const PairGpu& a = gpus[i];
      const PairGpu& b = gpus[j];
      nlohmann::json p = {{k::kGpu, a.pci_bus_id}, {k::kPeer, b.pci_bus_id}};
      if (!a.uuid.empty()) p[k::kGpuUuid] = a.uuid;
      if (!b.uuid.empty()) p[k::kPeerUuid] = b.uuid;
      nlohmann::json errors = nlohmann::json::object();
      std::string ancestor;
      if (f.topology) {
        int level = 0;
        nvml::Return r = f.topology(a.handle, b.handle, &level);
        if (r == nvml::kSuccess) ancestor = topology_level_name(level);
        note(errors, "topology_common_ancestor", r);
      }
      if (!ancestor.empty()) p[k::kCommonAncestor] = ancestor;
      const int links = nvlinks_between(a.nvlink, b.pci_bus_id, b.nvlink);
      p[k::kNvlinks] = links;
      if (links > 0)
        p[k::kTopology] = fmt::format("NV{}", links);
      else if (!ancestor.empty())
        p[k::kTopology] = ancestor;
      nlohmann::json caps = nlohmann::json::object();
      for (const auto& [index, name] : kCaps) {
        if (f.p2p == nullptr) break;
        int status = 0;
        nvml::Return r = f.p2p(a.handle, b.handle, index, &status);
        if (r == nvml::kSuccess) caps[name] = p2p_status_name(status);
        note(errors, std::string("p2p_") + name, r);
      }
      if (!caps.empty()) p[k::kP2p] = caps;
      if (!errors.empty()) p[k::kErrors] = errors;
      out.push_back(p);
    }
    return out;
  };
  std::vector<std::future<nlohmann::json>> rows;
  for (std::size_t i = 0; i < gpus.size(); ++i) rows.push_back(std::async(kConcurrently, row, i));
  for (auto& r : rows)
    for (auto& p : r.get()) pairs.push_back(std::move(p));
  return pairs;
}

nlohmann::json probe_nvlink_counters(const EnvMap& env) {
  nlohmann::json j = {{k::kLoaded, false}};
  std::string error;
  auto session = NvmlSession::open(env, &error);
  if (!session) {
    j[k::kError] = error;
    return j;
  }
  j[k::kLoaded] = true;
  const NvLinkFns f = NvLinkFns::resolve(*session);
  std::vector<std::string> errors;
  nlohmann::json devices = nlohmann::json::array();
  // Every GPU at once: this reading ends doctor's load step, which waits for it.
  auto read = [&f](nvml::Device d) {
    char buf[nvml::kUuidBufferSize] = {};
    nlohmann::json o = nlohmann::json::object();
    nvml::PciInfo p{};
    if (f.pci && f.pci(d, &p) == nvml::kSuccess) o[k::kPciBusId] = pci_of(p);
    if (f.uuid && f.uuid(d, buf, sizeof(buf)) == nvml::kSuccess)
      o[k::kDeviceUuid] = sanitize_c_buffer(buf, sizeof(buf));
    o[k::kLinks] = read_link_counters(f, d);
    return o;
  };
  std::vector<std::future<nlohmann::json>> reads;
  for (nvml::Device d : session->devices(&errors))
    reads.push_back(std::async(kConcurrently, read, d));
  for (auto& r : reads) devices.push_back(r.get());
  j[k::kDevices] = devices;
  if (!errors.empty()) j[k::kErrors] = errors;
  return j;
}

}  // namespace gpucheck::cuda

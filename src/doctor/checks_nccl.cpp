// NCCL's known traps, judged from the environment, NCCL's configuration files and the topology
// without running NCCL: transports switched off for good, NVLink SHARP forced on a fabric that
// has no NVSwitch, interface and adapter lists that match nothing here, and PCIe settings that
// send peer traffic through the CPU's root complex (ACS redirection, a translating IOMMU).
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/framework_gpus.h"

#include "core/json_keys.h"
#include "core/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// NCCL's settings as NCCL reads them: NCCL_CONF_FILE (else ~/.nccl.conf), then /etc/nccl.conf,
// with the environment winning over both. Each with where it came from.
struct Setting {
  std::string value, source;
};
std::map<std::string, Setting> nccl_settings(const SystemView& view) {
  std::map<std::string, Setting> out;
  auto read_conf = [&](const std::string& path) {
    auto text = view.read_file(path, 64u << 10);
    if (!text) return;
    std::istringstream lines(*text);
    for (std::string line; std::getline(lines, line);) {
      line = line.substr(0, line.find('#'));
      const auto eq = line.find('=');
      if (eq == std::string::npos) continue;
      const std::string key(trim_space(std::string_view(line).substr(0, eq)));
      const std::string value(trim_space(std::string_view(line).substr(eq + 1)));
      if (key.starts_with("NCCL_") && key != "NCCL_VERSION" && !out.contains(key))
        out[key] = {value, path};
    }
  };
  // NCCL_VERSION is what NVIDIA's container images say they hold, not a setting NCCL reads.
  std::map<std::string, Setting> env;
  for (const auto& [name, value] : view.env)
    if (name.starts_with("NCCL_") && name != "NCCL_VERSION") env[name] = {value, "the environment"};
  for (const auto& [name, s] : env) out[name] = s;
  if (auto conf = view.env_value("NCCL_CONF_FILE"))
    read_conf(*conf);
  else if (auto home = view.env_value("HOME"))
    read_conf(*home + "/.nccl.conf");
  read_conf("/etc/nccl.conf");
  return out;
}

bool truthy(const std::string& v) {
  return !v.empty() && v != "0";
}

// The names NCCL_SOCKET_IFNAME or NCCL_IB_HCA select among `present` ("^" excludes, "=" asks
// for exact names, else prefixes; ":port" is dropped): what is left after the list.
std::vector<std::string> selected(const std::string& list,
                                  const std::vector<std::string>& present) {
  std::string l = list;
  bool exclude = false, exact = false;
  if (l.starts_with('^')) {
    exclude = true;
    l.erase(0, 1);
  }
  if (l.starts_with('=')) {
    exact = true;
    l.erase(0, 1);
  }
  std::vector<std::string> names;
  std::stringstream in(l);
  for (std::string n; std::getline(in, n, ',');)
    if (!n.empty()) names.push_back(n.substr(0, n.find(':')));
  std::vector<std::string> out;
  for (const auto& p : present) {
    const bool match = std::any_of(names.begin(), names.end(), [&](const std::string& n) {
      return exact ? p == n : p.starts_with(n);
    });
    if (match != exclude) out.push_back(p);
  }
  return out;
}

// The NVIDIA GPUs' upstream PCIe bridges from each GPU's sysfs path (its device link).
std::vector<std::string> upstream_bridges(const SystemView& view, const std::string& gpu) {
  std::vector<std::string> out;
  auto link = view.read_link("/sys/bus/pci/devices/" + gpu);
  if (!link) return out;
  std::stringstream in(*link);
  for (std::string part; std::getline(in, part, '/');)
    if (part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.' && part != gpu)
      out.push_back(part);
  return out;
}

// A bridge's ACS Control bits that redirect peer traffic (Source Validation, P2P Request
// Redirect, P2P Completion Redirect), from its extended configuration space (root only: other
// users read 64 bytes); nullopt when unreadable or without an ACS capability.
std::optional<unsigned> acs_control(const SystemView& view, const std::string& bridge) {
  auto cfg = view.read_file("/sys/bus/pci/devices/" + bridge + "/config", 4096);
  if (!cfg || cfg->size() < 0x104) return std::nullopt;
  auto u32 = [&](std::size_t off) -> unsigned {
    return static_cast<unsigned char>((*cfg)[off]) |
           static_cast<unsigned char>((*cfg)[off + 1]) << 8 |
           static_cast<unsigned char>((*cfg)[off + 2]) << 16 |
           static_cast<unsigned>(static_cast<unsigned char>((*cfg)[off + 3])) << 24;
  };
  std::size_t off = 0x100;
  for (int hops = 0; off >= 0x100 && off + 8 <= cfg->size() && hops < 64; ++hops) {
    const unsigned header = u32(off);
    if ((header & 0xffff) == 0x000d) return (u32(off + 4) >> 16) & 0x7fu;
    off = header >> 20;
    if (off == 0) break;
  }
  return std::nullopt;
}

std::string acs_bits(unsigned control) {
  std::vector<std::string> on;
  if (control & 0x1u) on.emplace_back("SrcValid+");
  if (control & 0x4u) on.emplace_back("ReqRedir+");
  if (control & 0x8u) on.emplace_back("CmpltRedir+");
  return join(on, " ");
}

// An interface worth naming in a fix: the first that is not loopback or a bridge of
// containers or VMs.
std::string example_of(const std::vector<std::string>& present) {
  for (const auto& p : present)
    if (!p.starts_with("lo") && !p.starts_with("docker") && !p.starts_with("veth") &&
        !p.starts_with("virbr") && !p.starts_with("br-"))
      return p;
  return present.empty() ? "eth0" : present.front();
}

bool nvswitch_fabric(const SystemView& view) {
  try {
    for (const auto& d : nvidia_pci_devices(view))
      if (d.is_nvswitch()) return true;
  } catch (const NotObservable&) {
  }
  if (const Json* cuda = view.backend("cuda"))
    for (const auto& d : array_at(*cuda, "devices")) {
      const Json nvml = d.value("properties", Json::object()).value("nvml", Json::object());
      for (const auto& l : array_at(nvml.value(k::kNvlink, Json::object()), k::kLinks))
        if (text(l, k::kRemoteDeviceType) == "switch") return true;
    }
  return false;
}

}  // namespace

// ---- nccl_environment ----

CheckResult check_nccl_environment(const SystemView& view) {
  const auto settings = nccl_settings(view);
  std::vector<NvidiaPciDevice> gpus;
  try {
    gpus = nvidia_pci_gpus(view);
  } catch (const NotObservable&) {
  }
  const bool nccl_installed = linker_search(view).find(view, "libnccl.so.2").has_value() ||
                              !view.glob("/usr/lib/python3*/*-packages/nvidia/nccl/lib").empty();
  if (settings.empty() && gpus.size() < 2 && !nccl_installed)
    return not_applicable(
        "no NCCL setting, no NCCL library on the linker's path and fewer than "
        "two NVIDIA GPUs");
  std::vector<std::string> evidence;
  for (const auto& [name, s] : settings)
    evidence.push_back(fmt::format("{}={} ({})", name, s.value, s.source));
  evidence.push_back(
      fmt::format("{} NVIDIA GPU{} on the PCI bus", gpus.size(), gpus.size() == 1 ? "" : "s"));
  std::vector<Finding> findings;
  auto value_of = [&](const std::string& name) -> const Setting* {
    auto it = settings.find(name);
    return it == settings.end() ? nullptr : &it->second;
  };
  auto unset_fix = [&](const std::string& name, const Setting& s) {
    return s.source == "the environment"
               ? fmt::format("unset {} (set it only for the run that needs the workaround)", name)
               : fmt::format("remove {} from {}", name, s.source);
  };
  // Transports switched off: debugging switches, in NCCL's words not to be "retained in scripts".
  for (const auto& [name, what] : std::vector<std::pair<std::string, std::string>>{
           {"NCCL_P2P_DISABLE",
            "NVLink and PCIe peer copies between this node's GPUs: all-reduce goes through host "
            "memory (measured on 2 H200s over NVLink: 28 GB/s instead of 329, "
            "docs/PERFORMANCE.md)"},
           {"NCCL_SHM_DISABLE",
            "shared host memory between processes: GPUs without peer access exchange over the "
            "network (sockets or InfiniBand), even inside one node (with P2P off as well, 2 H200s "
            "measured 2.8 GB/s instead of 329)"}}) {
    const Setting* s = value_of(name);
    if (s != nullptr && truthy(s->value))
      findings.push_back({CheckStatus::kWarn, "GC-NCCL-TRANSPORT-DISABLED"_gc,
                          fmt::format("{}={} ({}) turns off {}", name, s->value, s->source, what),
                          unset_fix(name, *s)});
  }
  const bool switches = nvswitch_fabric(view);
  evidence.push_back(switches ? "NVSwitch fabric: yes" : "NVSwitch fabric: none seen");
  if (const Setting* s = value_of("NCCL_NVLS_ENABLE"); s != nullptr && s->value == "1" && !switches)
    findings.push_back(
        {CheckStatus::kWarn, "GC-NCCL-NVLS-UNSUPPORTED"_gc,
         fmt::format("NCCL_NVLS_ENABLE=1 ({}) forces NVLink SHARP, but no NVSwitch is here "
                     "(sysfs, the GPUs' NVLinks): NCCL fails to bind multicast memory "
                     "(\"Failed to bind NVLink SHARP (NVLS) Multicast memory\")",
                     s->source),
         unset_fix("NCCL_NVLS_ENABLE", *s) + " (NCCL then detects support itself)"});
  // Interface and adapter lists that select nothing here: NCCL's bootstrap finds no socket
  // interface ("Bootstrap : no socket interface found"), or no IB device.
  for (const auto& [name, dir] : std::vector<std::pair<std::string, std::string>>{
           {"NCCL_SOCKET_IFNAME", "/sys/class/net"}, {"NCCL_IB_HCA", "/sys/class/infiniband"}}) {
    const Setting* s = value_of(name);
    if (s == nullptr || s->value.empty()) continue;
    const auto present = view.list_dir(dir);
    if (name == "NCCL_IB_HCA" && present.empty()) continue;  // no IB adapter: NCCL uses sockets
    const auto chosen = selected(s->value, present);
    evidence.push_back(fmt::format("{}: {} (selected: {})", dir, join(present, " "),
                                   chosen.empty() ? "none" : join(chosen, " ")));
    if (chosen.empty())
      findings.push_back(
          {CheckStatus::kWarn, "GC-NCCL-IFNAME-NO-MATCH"_gc,
           fmt::format("{}={} ({}) selects none of {}'s {}: NCCL finds no {} and fails to "
                       "start",
                       name, s->value, s->source, dir, join(present, ", "),
                       name == "NCCL_SOCKET_IFNAME" ? "socket interface" : "InfiniBand device"),
           fmt::format("name an interface that exists ({}=={} for one exactly, a prefix for "
                       "several, ^name to exclude), or {}",
                       name, example_of(present), unset_fix(name, *s))});
  }
  // Peer traffic through the root complex: only where GPUs talk over PCIe (two or more).
  if (gpus.size() >= 2) {
    std::vector<std::string> redirecting;
    std::map<std::string, bool> seen;
    for (const auto& g : gpus)
      for (const auto& b : upstream_bridges(view, g.address)) {
        if (seen[b]) continue;
        seen[b] = true;
        if (auto c = acs_control(view, b); c && *c != 0) {
          redirecting.push_back(fmt::format("{} ({})", b, acs_bits(*c)));
          evidence.push_back(fmt::format("ACS control of {} above the GPUs: {}", b, acs_bits(*c)));
        }
      }
    if (!redirecting.empty())
      findings.push_back(
          {CheckStatus::kWarn, "GC-PCI-ACS-REDIRECT"_gc,
           fmt::format("PCIe Access Control Services redirect peer traffic on the bridges above "
                       "the GPUs ({}): GPU-to-GPU copies over PCIe go up to the root complex, "
                       "slower or hanging (NCCL's troubleshooting, \"PCI Access Control "
                       "Services\")",
                       join(redirecting, ", ")),
           "turn off IO virtualization / VT-d / ACS in the firmware; on PLX switches it can be "
           "cleared until the next boot: sudo setpci -s <bridge> ECAP_ACS+0x6.w=0000"});
    std::vector<std::string> translated;
    for (const auto& g : gpus) {
      auto group = view.read_link("/sys/bus/pci/devices/" + g.address + "/iommu_group");
      if (!group) continue;
      const std::string id = group->substr(group->rfind('/') + 1);
      auto type = view.read_file("/sys/kernel/iommu_groups/" + id + "/type", 64);
      if (!type) continue;
      std::string t = *type;
      while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
      evidence.push_back(fmt::format("{}: IOMMU group {} type {}", g.address, id, t));
      if (t == "DMA" || t == "DMA-FQ") translated.push_back(fmt::format("{} ({})", g.address, t));
    }
    if (!translated.empty())
      findings.push_back(
          {CheckStatus::kWarn, "GC-IOMMU-TRANSLATED"_gc,
           fmt::format("the IOMMU translates the GPUs' DMA ({}): peer traffic is redirected to "
                       "the root complex, \"causing a significant performance reduction or even "
                       "a hang\" (NCCL's troubleshooting)",
                       join(translated, ", ")),
           "disable IO virtualization (VT-d, AMD-Vi) in the firmware, or keep the IOMMU in "
           "pass-through mode: add iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX in "
           "/etc/default/grub, then sudo update-grub and reboot)"});
  }
  return combine(findings, evidence,
                 fmt::format("no NCCL setting or PCIe path that slows or stops collectives{}",
                             settings.empty() ? ""
                                              : " (" + std::to_string(settings.size()) +
                                                    " NCCL setting(s) read)"));
}

}  // namespace gpucheck::doctor

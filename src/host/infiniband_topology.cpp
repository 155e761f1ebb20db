// Which RDMA adapter is closest to each GPU: both PCI functions' places in the sys/devices tree
// (host bridge, root port, switch ports) and their NUMA nodes, judged as nvidia-smi topo does.
#include "host/infiniband.h"

#include <algorithm>
#include <charconv>
#include <system_error>

#include "core/files.h"
#include "host/pci_tree.h"

namespace gpucheck::host {

namespace fs = std::filesystem;

namespace {

std::optional<std::string> attr(const fs::path& p) {
  auto text = read_text_file(p, 4096);
  if (!text) return std::nullopt;
  std::string s = *text;
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
  return s;
}

// A display controller (class 0x03xxxx) of NVIDIA or AMD.
std::optional<std::string> gpu_vendor(const fs::path& function) {
  auto cls = attr(function / "class");
  auto vendor = attr(function / "vendor");
  if (!cls || !vendor || cls->rfind("0x03", 0) != 0) return std::nullopt;
  if (*vendor == "0x10de") return "nvidia";
  if (*vendor == "0x1002") return "amd";
  return std::nullopt;
}

int numa_node_count(const fs::path& root) {
  int n = 0;
  std::error_code ec;
  for (fs::directory_iterator it(under_root(root, "sys/devices/system/node"), ec), end;
       !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() > 4 && name.rfind("node", 0) == 0 &&
        name.find_first_not_of("0123456789", 4) == std::string::npos)
      ++n;
  }
  return n;
}

}  // namespace

std::optional<int> numa_node_of(const fs::path& function) {
  auto s = attr(function / "numa_node");
  int v = -1;
  if (!s || std::from_chars(s->data(), s->data() + s->size(), v).ec != std::errc{} || v < 0)
    return std::nullopt;
  return v;
}

std::vector<std::string> pci_chain(const fs::path& root, const fs::path& link) {
  std::error_code ec;
  const fs::path function = fs::canonical(link, ec);
  if (ec) return {};
  const fs::path devices = fs::weakly_canonical(under_root(root, "sys/devices"), ec);
  if (ec) return {};
  const fs::path rel = function.lexically_relative(devices);
  std::vector<std::string> out;
  for (const auto& part : rel) out.push_back(part.string());
  if (out.empty() || out.front().rfind("pci", 0) != 0) return {};
  return out;
}

std::string_view to_string(PciDistance d) {
  switch (d) {
    case PciDistance::kPcieSwitch:
      return "pcie_switch";
    case PciDistance::kHostBridge:
      return "host_bridge";
    case PciDistance::kNumaNode:
      return "numa_node";
    case PciDistance::kCpuInterconnect:
      return "cpu_interconnect";
    case PciDistance::kUnknown:
      break;
  }
  return "unknown";
}

PciDistance pci_distance(const std::vector<std::string>& a, std::optional<int> a_node,
                         const std::vector<std::string>& b, std::optional<int> b_node,
                         bool single_node) {
  if (a.empty() || b.empty()) return PciDistance::kUnknown;
  // The ancestors both share; neither function itself counts.
  std::size_t common = 0;
  while (common + 1 < a.size() && common + 1 < b.size() && a[common] == b[common]) ++common;
  // Below one root port both must sit behind a switch (or be functions of one device).
  if (common >= 2) return PciDistance::kPcieSwitch;
  if (common == 1) return PciDistance::kHostBridge;
  if (a_node && b_node)
    return *a_node == *b_node ? PciDistance::kNumaNode : PciDistance::kCpuInterconnect;
  return single_node ? PciDistance::kNumaNode : PciDistance::kUnknown;
}

std::vector<GpuAffinity> read_gpu_affinity(const fs::path& root,
                                           const std::vector<IbDevice>& devices) {
  std::vector<const IbDevice*> hcas;
  for (const auto& d : devices)
    if (!d.pci_chain.empty()) hcas.push_back(&d);
  std::vector<GpuAffinity> out;
  if (hcas.empty()) return out;
  const bool single_node = numa_node_count(root) <= 1;
  const fs::path bus = under_root(root, "sys/bus/pci/devices");
  std::vector<std::string> names;
  std::error_code ec;
  for (fs::directory_iterator it(bus, ec), end; !ec && it != end; it.increment(ec))
    names.push_back(it->path().filename().string());
  std::sort(names.begin(), names.end());
  for (const auto& name : names) {
    auto vendor = gpu_vendor(bus / name);
    if (!vendor) continue;
    GpuAffinity g;
    g.pci_bus_id = name;
    g.vendor = *vendor;
    g.numa_node = numa_node_of(bus / name);
    const auto chain = pci_chain(root, bus / name);
    for (const auto* h : hcas)
      g.hcas.push_back(
          {h->name, pci_distance(chain, g.numa_node, h->pci_chain, h->numa_node, single_node)});
    std::stable_sort(g.hcas.begin(), g.hcas.end(), [](const auto& x, const auto& y) {
      return static_cast<int>(x.distance) < static_cast<int>(y.distance);
    });
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace gpucheck::host

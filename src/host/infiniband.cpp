// Reads /sys/class/infiniband/<dev> and its ports/<n> files (the layout of the kernel's
// drivers/infiniband/core/sysfs.c) under a root prefix, and writes the "infiniband" object.
#include "host/infiniband.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <system_error>

#include "core/files.h"
#include "core/json_keys_infiniband.h"
#include "core/sanitize.h"
#include "host/pci_tree.h"

namespace gpucheck::host {

namespace fs = std::filesystem;
namespace k = keys;

namespace {

// sysfs attributes are one line; a counters/ file is a number.
constexpr std::size_t kMaxAttrBytes = 4096;
// The PKey table has 128 entries on mlx5; a wrong tree must not make the probe read thousands.
constexpr int kMaxPkeys = 256;
constexpr int kMaxPorts = 64;

std::string_view trim(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

std::vector<std::string> list_dir(const fs::path& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    out.push_back(it->path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::uint64_t> to_u64(std::string_view s) {
  s = trim(s);
  std::uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc{} || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

// Reads the attributes of one directory, noting each that cannot be read under `label`.
class AttrReader {
 public:
  AttrReader(fs::path dir, std::string label, std::vector<std::string>& unreadable)
      : dir_(std::move(dir)), label_(std::move(label)), unreadable_(unreadable) {}

  // The attribute's line, trimmed; a missing file is said when `required`.
  std::optional<std::string> line(std::string_view name, bool required = true) const {
    std::string why;
    auto text = read_text_file(dir_ / name, kMaxAttrBytes, &why);
    if (!text) {
      if (required) unreadable_.push_back(label_ + std::string(name) + ": " + why);
      return std::nullopt;
    }
    std::string_view v = trim(*text);
    if (auto nl = v.find('\n'); nl != std::string_view::npos) v = trim(v.substr(0, nl));
    return sanitize(v);
  }

 private:
  fs::path dir_;
  std::string label_;
  std::vector<std::string>& unreadable_;
};

// "4: ACTIVE" -> "ACTIVE"; text without a number stays as it is.
std::string after_code(const std::string& s) {
  const auto colon = s.find(':');
  if (colon == std::string::npos) return s;
  return std::string(trim(std::string_view(s).substr(colon + 1)));
}

std::map<std::string, std::uint64_t> read_counters(const fs::path& dir, const std::string& label,
                                                   std::vector<std::string>* unreadable) {
  std::map<std::string, std::uint64_t> out;
  for (const auto& name : list_dir(dir)) {
    std::string why;
    auto text = read_text_file(dir / name, kMaxAttrBytes, &why);
    auto v = text ? to_u64(*text) : std::nullopt;
    if (v)
      out[name] = *v;
    else if (unreadable)
      unreadable->push_back(label + name + ": " + (text ? "not a number" : why));
  }
  return out;
}

// The netdev a port sits on: RoCE ports name it in their GID table (gid_attrs/ndevs/N; unset
// entries cannot be read), an IPoIB or Ethernet function in its device's net/ folder.
std::optional<std::string> port_netdev(const fs::path& port_dir, const fs::path& dev_dir, int port,
                                       int port_count) {
  const fs::path ndevs = port_dir / "gid_attrs" / "ndevs";
  auto entries = list_dir(ndevs);
  std::sort(entries.begin(), entries.end(), [](const std::string& a, const std::string& b) {
    return to_u64(a).value_or(~0ull) < to_u64(b).value_or(~0ull);
  });
  for (const auto& e : entries) {
    auto text = read_text_file(ndevs / e, kMaxAttrBytes);
    if (text && !trim(*text).empty()) return sanitize(trim(*text));
  }
  auto nets = list_dir(dev_dir / "device" / "net");
  // A function with several netdevs (one per port of an IB adapter) lists them in port order.
  if (nets.size() == 1) return nets[0];
  if (static_cast<int>(nets.size()) == port_count && port >= 1 && port <= port_count)
    return nets[static_cast<std::size_t>(port - 1)];
  return std::nullopt;
}

IbPort read_port(const fs::path& dev_dir, int number, int port_count,
                 std::vector<std::string>& unreadable) {
  IbPort p;
  p.number = number;
  const fs::path dir = dev_dir / "ports" / std::to_string(number);
  const std::string label = "ports/" + std::to_string(number) + "/";
  AttrReader attr(dir, label, unreadable);
  p.link_layer = attr.line("link_layer");
  if (auto s = attr.line("state")) p.state = after_code(*s);
  if (auto s = attr.line("phys_state")) p.phys_state = after_code(*s);
  p.rate = attr.line("rate");
  if (p.rate) {
    const ParsedRate r = parse_rate(*p.rate);
    p.rate_gbps = r.gbps;
    p.width = r.width;
    p.speed = r.speed;
  }
  // LIDs mean something on InfiniBand only; RoCE ports show 0.
  if (p.link_layer.value_or("InfiniBand") == "InfiniBand") {
    p.lid = attr.line("lid", false);
    p.sm_lid = attr.line("sm_lid", false);
  }
  auto pkeys = list_dir(dir / "pkeys");
  std::vector<std::pair<std::uint64_t, std::string>> indexed;
  for (const auto& e : pkeys)
    if (auto i = to_u64(e); i && *i < kMaxPkeys) indexed.emplace_back(*i, e);
  std::sort(indexed.begin(), indexed.end());
  for (const auto& [i, e] : indexed) {
    auto v = read_text_file(dir / "pkeys" / e, kMaxAttrBytes);
    if (!v) continue;
    const std::string key = sanitize(trim(*v));
    if (!key.empty() && key != "0x0000") p.pkeys.push_back(key);
  }
  p.netdev = port_netdev(dir, dev_dir, number, port_count);
  std::error_code ec;
  if (fs::path c = dir / "counters"; fs::is_directory(c, ec))
    p.counters = read_counters(c, label + "counters/", &unreadable);
  else
    unreadable.push_back(label + "counters: No such directory");
  return p;
}

IbDevice read_device(const fs::path& root, const fs::path& dir, const std::string& name) {
  IbDevice d;
  d.name = name;
  AttrReader attr(dir, "", d.unreadable);
  d.node_type = attr.line("node_type");
  d.node_guid = attr.line("node_guid");
  d.sys_image_guid = attr.line("sys_image_guid", false);
  d.fw_ver = attr.line("fw_ver");
  d.hca_type = attr.line("hca_type");
  d.board_id = attr.line("board_id", false);
  // Software devices (rdma_rxe, siw) have no PCI function behind them.
  std::error_code ec;
  if (fs::exists(dir / "device", ec)) {
    d.pci_chain = pci_chain(root, dir / "device");
    if (!d.pci_chain.empty()) {
      d.pci_bus_id = d.pci_chain.back();
      const fs::path function = fs::canonical(dir / "device", ec);
      if (auto drv = fs::read_symlink(function / "driver", ec); !ec)
        d.driver = drv.filename().string();
      d.numa_node = numa_node_of(function);
    }
  }
  std::vector<int> numbers;
  for (const auto& e : list_dir(dir / "ports"))
    if (auto n = to_u64(e); n && *n >= 1 && *n <= kMaxPorts)
      numbers.push_back(static_cast<int>(*n));
  std::sort(numbers.begin(), numbers.end());
  if (numbers.empty()) d.unreadable.push_back("ports: no port directory");
  for (int n : numbers)
    d.ports.push_back(read_port(dir, n, static_cast<int>(numbers.size()), d.unreadable));
  return d;
}

template <typename T>
void put(nlohmann::json& j, std::string_view key, const std::optional<T>& v) {
  if (v) j[std::string(key)] = *v;
}

nlohmann::json port_json(const IbPort& p) {
  nlohmann::json j{{k::kPort, p.number}};
  put(j, k::kLinkLayer, p.link_layer);
  put(j, k::kState, p.state);
  put(j, k::kPhysState, p.phys_state);
  put(j, k::kRate, p.rate);
  put(j, k::kRateGbps, p.rate_gbps);
  put(j, k::kLinkWidth, p.width);
  put(j, k::kLinkSpeed, p.speed);
  put(j, k::kLid, p.lid);
  put(j, k::kSmLid, p.sm_lid);
  j[k::kPkeys] = p.pkeys;
  put(j, k::kNetdev, p.netdev);
  j[k::kCounters] = p.counters;
  return j;
}

}  // namespace

ParsedRate parse_rate(std::string_view text) {
  ParsedRate r;
  text = trim(text);
  double v = 0;
  auto [p, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec == std::errc{} && p != text.data() && v >= 0 && v <= kMaxPortRateGbps) r.gbps = v;
  const auto open = text.find('('), close = text.rfind(')');
  if (open != std::string_view::npos && close != std::string_view::npos && close > open) {
    const std::string_view inner = trim(text.substr(open + 1, close - open - 1));
    const auto space = inner.find(' ');
    if (space != std::string_view::npos) {
      r.width = std::string(trim(inner.substr(0, space)));
      r.speed = std::string(trim(inner.substr(space + 1)));
    } else if (!inner.empty()) {
      r.width = std::string(inner);
    }
  }
  return r;
}

std::optional<double> port_rate_gbps(const nlohmann::json& port) {
  const auto it = port.find(k::kRateGbps);
  if (it == port.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  if (!(v >= 0 && v <= kMaxPortRateGbps)) return std::nullopt;
  return v;
}

InfinibandFacts read_infiniband_facts(const fs::path& root) {
  InfinibandFacts f;
  const fs::path cls = under_root(root, "sys/class/infiniband");
  std::error_code ec;
  f.sysfs_class = fs::is_directory(cls, ec);
  for (const auto& name : list_dir(cls)) f.devices.push_back(read_device(root, cls / name, name));
  for (std::string_view m : {"nvidia_peermem", "nv_peer_mem"})
    if (fs::is_directory(under_root(root, "sys/module") / m, ec))
      f.peer_memory_modules.emplace_back(m);
  f.gpus = read_gpu_affinity(root, f.devices);
  return f;
}

nlohmann::json to_json(const InfinibandFacts& f) {
  nlohmann::json devices = nlohmann::json::array();
  for (const auto& d : f.devices) {
    nlohmann::json j{{k::kName, d.name}};
    put(j, k::kHcaType, d.hca_type);
    put(j, k::kNodeType, d.node_type);
    put(j, k::kFwVer, d.fw_ver);
    put(j, k::kNodeGuid, d.node_guid);
    put(j, k::kSysImageGuid, d.sys_image_guid);
    put(j, k::kBoardId, d.board_id);
    put(j, k::kPciBusId, d.pci_bus_id);
    put(j, k::kDriver, d.driver);
    put(j, k::kNumaNode, d.numa_node);
    nlohmann::json ports = nlohmann::json::array();
    for (const auto& p : d.ports) ports.push_back(port_json(p));
    j[k::kPorts] = std::move(ports);
    if (!d.unreadable.empty()) j[k::kUnreadable] = d.unreadable;
    devices.push_back(std::move(j));
  }
  nlohmann::json gpus = nlohmann::json::array();
  for (const auto& g : f.gpus) {
    nlohmann::json j{{k::kPciBusId, g.pci_bus_id}, {k::kVendor, g.vendor}};
    put(j, k::kNumaNode, g.numa_node);
    nlohmann::json hcas = nlohmann::json::array(), closest = nlohmann::json::array();
    for (const auto& h : g.hcas) {
      hcas.push_back({{k::kName, h.hca}, {k::kDistance, to_string(h.distance)}});
      if (h.distance == g.hcas.front().distance) closest.push_back(h.hca);
    }
    j[k::kClosestHcas] = std::move(closest);
    if (!g.hcas.empty()) j[k::kDistance] = to_string(g.hcas.front().distance);
    j[k::kHcas] = std::move(hcas);
    gpus.push_back(std::move(j));
  }
  nlohmann::json j{{k::kDevices, std::move(devices)},
                   {k::kGpus, std::move(gpus)},
                   {k::kPeerMemoryModules, f.peer_memory_modules}};
  if (!f.sysfs_class)
    j[k::kReason] = "no /sys/class/infiniband: no RDMA driver (ib_core) is loaded";
  return j;
}

nlohmann::json read_infiniband_counters(const fs::path& root) {
  nlohmann::json out = nlohmann::json::object();
  const fs::path cls = under_root(root, "sys/class/infiniband");
  std::error_code ec;
  for (const auto& dev : list_dir(cls))
    for (const auto& port : list_dir(cls / dev / "ports"))
      if (fs::path c = cls / dev / "ports" / port / "counters"; fs::is_directory(c, ec))
        out[dev + "/" + port] = read_counters(c, "", nullptr);
  return out;
}

}  // namespace gpucheck::host

// Matrices and size tables of multi-GPU records, and the topology matrix of a probe.
#include "report/multigpu_tables.h"
#include "core/json_access.h"

#include "core/json_keys.h"
#include "report/units.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <tuple>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// A record's value for a cell: the figure when ok, else its status in capitals (a mismatch must
// stand out in a matrix of numbers). share: the share of the limit beside the figure, where a
// matrix has no room for a column of its own.
std::string cell_text(const Json& r, bool latency, bool share = true) {
  const std::string status = string_member(r, k::kStatus);
  if (status != "ok") {
    std::string s = status;
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::toupper(c); });
    return s;
  }
  if (latency) {
    auto t = r.find(k::kTimeS);
    if (t != r.end() && t->contains(k::kMedian))
      return fmt::format("{:.2f}", (*t)[std::string(k::kMedian)].get<double>() * 1e6);
    return "";
  }
  auto tp = r.find(k::kThroughput);
  if (tp == r.end() || !tp->contains(k::kValue)) return "";
  const std::string of_limit = share ? limit_share(r) : "";
  return fmt::format("{:.1f}", (*tp)[std::string(k::kValue)].get<double>()) +
         (of_limit.empty() ? "" : " (" + of_limit + ")");
}

// Devices in their numeric order (cuda2 before cuda10).
std::vector<std::string> sorted_devices(std::set<std::string> names) {
  std::vector<std::string> v(names.begin(), names.end());
  std::sort(v.begin(), v.end(), [](const std::string& a, const std::string& b) {
    return std::make_tuple(a.size(), a) < std::make_tuple(b.size(), b);
  });
  return v;
}

TableSection matrix(const std::string& title,
                    const std::map<std::pair<std::string, std::string>, std::string>& cells,
                    bool symmetric) {
  std::set<std::string> names;
  for (const auto& [key, v] : cells) names.insert(key.first), names.insert(key.second);
  const auto devices = sorted_devices(names);
  TableSection t{title, {"src \\ dst"}, {}};
  for (const auto& d : devices) t.columns.push_back(d);
  for (const auto& s : devices) {
    std::vector<std::string> row{s};
    for (const auto& d : devices) {
      if (s == d) {
        row.push_back("-");
        continue;
      }
      auto it = cells.find({s, d});
      if (it == cells.end() && symmetric) it = cells.find({d, s});
      row.push_back(it == cells.end() ? "" : it->second);
    }
    t.rows.push_back(std::move(row));
  }
  return t;
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:g} MiB", static_cast<double>(bytes) / (1 << 20));
}

}  // namespace

std::vector<TableSection> multigpu_tables(const Json& results) {
  // One matrix per kind of copy: (bytes, bidirectional, engine, peer access).
  using Kind = std::tuple<std::uint64_t, bool, std::string, bool>;
  std::map<Kind, std::map<std::pair<std::string, std::string>, std::string>> copies;
  std::map<bool, std::map<std::pair<std::string, std::string>, std::string>> latency;
  TableSection fans{
      "p2p with every link loaded at once (nvbandwidth's all_to_one, one_to_all, all_to_all; "
      "GB/s summed over the copies)",
      {"test", "device", "bytes", "copies", "GB/s", "of limit", "slowest_copy_GB/s", "status"},
      {}};
  TableSection allreduce{
      "all-reduce (f32 sum, NCCL; busbw = algbw x 2(n-1)/n)",
      {"bytes", "devices", "time_us", "algbw_GB/s", "busbw_GB/s", "of limit", "status", "note"},
      {}};
  // Between hosts, one row per direction: which end is slow shows as its rows.
  TableSection net{
      "host network (TCP between ranks, every byte compared at the far end)",
      {"from", "to", "bytes", "GB/s", "spread", "rtt_us", "rtt_p99_us", "status", "note"},
      {}};
  auto end_name = [](const Json& r, std::string_view key) {
    const Json e = r.value(std::string(key), Json::object());
    return fmt::format("{} (rank {})", e.value("host", "?"), e.value("rank", -1));
  };
  for (const auto& r : results) {
    const Json shape = r.value(std::string(k::kShape), Json::object());
    const std::string op = string_member(r, k::kOp);
    const std::string direction = string_member(shape, k::kDirection);
    if (op == "net") {
      const Json lat = r.value("latency_us", Json::object());
      auto number = [](const Json& j, const char* key, const char* form) {
        const auto it = j.find(key);
        return it != j.end() && it->is_number() ? fmt::format(fmt::runtime(form), it->get<double>())
                                                : std::string();
      };
      const std::string status = string_member(r, k::kStatus);
      net.rows.push_back(
          {end_name(r, k::kSrc), end_name(r, k::kDst),
           fmt::format("{}", shape.value(std::string(k::kBytes), std::uint64_t{0})),
           status == "ok"
               ? number(r.value(std::string(k::kThroughput), Json::object()), "value", "{:.3g}")
               : "",
           number(r, "spread", "{:.2f}"), number(lat, "median", "{:.1f}"),
           number(lat, "p99", "{:.1f}"), status, string_member(r, k::kReason)});
      continue;
    }
    if (op == "p2p" && !direction.empty() && direction != "p2p") {
      std::string slowest;
      const Json ctx = r.value(std::string(k::kContext), Json::object());
      if (auto g = ctx.find(k::kDirectionGbps); g != ctx.end() && g->is_array() && !g->empty()) {
        double low = std::numeric_limits<double>::infinity();
        for (const auto& x : *g)
          if (x.is_number()) low = std::min(low, x.get<double>());
        if (std::isfinite(low)) slowest = fmt::format("{:.1f}", low);
      }
      fans.rows.push_back(
          {direction, string_member(r, k::kDevice),
           fmt::format("{}", shape.value(std::string(k::kBytes), std::uint64_t{0})),
           fmt::format("{}", shape.value(std::string(k::kCopies), std::uint64_t{0})),
           cell_text(r, false, false), limit_share(r), slowest, string_member(r, k::kStatus)});
    } else if (op == "p2p") {
      Kind kind{shape.value(std::string(k::kBytes), std::uint64_t{0}),
                shape.value(std::string(k::kBidirectional), false),
                string_member(shape, k::kEngine), shape.value(std::string(k::kPeerAccess), true)};
      copies[kind][{string_member(shape, k::kSrc), string_member(shape, k::kDst)}] =
          cell_text(r, false);
    } else if (op == "latency" && string_member(shape, k::kMode) == "p2p") {
      latency[shape.value(std::string(k::kPeerAccess), true)]
             [{string_member(shape, k::kSrc), string_member(shape, k::kDst)}] = cell_text(r, true);
    } else if (op == "allreduce") {
      std::string devices;
      for (const auto& d : shape.value(std::string(k::kDevices), Json::array()))
        devices += (devices.empty() ? "" : ",") + d.get<std::string>();
      std::string time_us, algbw, busbw;
      if (auto t = r.find(k::kTimeS); t != r.end() && t->contains(k::kMedian))
        time_us = fmt::format("{:.1f}", (*t)[std::string(k::kMedian)].get<double>() * 1e6);
      if (auto a = r.find(k::kAlgbw); a != r.end() && a->is_number())
        algbw = fmt::format("{:.1f}", a->get<double>());
      if (auto b = r.find(k::kBusbw); b != r.end() && b->is_number())
        busbw = fmt::format("{:.1f}", b->get<double>());
      std::string status = string_member(r, k::kStatus);
      allreduce.rows.push_back(
          {fmt::format("{}", shape.value(std::string(k::kBytes), std::uint64_t{0})), devices,
           time_us, algbw, busbw, limit_share(r), status == "ok" ? "ok" : status,
           string_member(r, k::kReason)});
    }
  }
  std::vector<TableSection> out;
  for (const auto& [kind, cells] : copies) {
    const auto& [bytes, bidirectional, engine, peer] = kind;
    out.push_back(matrix(
        fmt::format("p2p GB/s, {} {}, {} engine, {}", mib(bytes),
                    bidirectional ? "bidirectional (both directions summed)" : "unidirectional",
                    engine == "sm" ? "SM copy kernel" : "copy",
                    peer ? "peer access on"
                         : "peer access off (staged "
                           "through the host)"),
        cells, bidirectional));
  }
  for (const auto& [peer, cells] : latency)
    out.push_back(matrix(fmt::format("p2p latency us per copy, {}",
                                     peer ? "peer access on" : "peer access off (staged)"),
                         cells, false));
  if (!fans.rows.empty()) out.push_back(std::move(fans));
  if (!allreduce.rows.empty()) out.push_back(std::move(allreduce));
  if (!net.rows.empty()) out.push_back(std::move(net));
  return out;
}

std::vector<TableSection> topology_tables(const Json& backends) {
  std::vector<TableSection> out;
  for (const auto& b : backends) {
    if (string_member(b, k::kName) != "cuda") continue;
    const Json nvml = b.value(std::string(k::kNvml), Json::object());
    const Json pairs = nvml.value(std::string(k::kPairs), Json::array());
    if (pairs.empty()) continue;
    // GPUs by PCI bus id, named as CUDA names them where CUDA sees them.
    std::map<std::string, std::string> name_of;
    std::map<std::string, Json> fields_of;
    for (const auto& d : b.value(std::string(k::kDevices), Json::array()))
      if (d.contains(k::kPciBusId)) {
        name_of[string_member(d, k::kPciBusId)] = string_member(d, k::kDevice);
        fields_of[string_member(d, k::kPciBusId)] =
            d.value(std::string(k::kProperties), Json::object())
                .value(std::string(k::kNvml), Json::object());
      }
    // GPUs CUDA does not see (no driver, hidden): NVML's own fields.
    for (auto list : {k::kDevices, k::kUnmatched})
      for (const auto& f : nvml.value(std::string(list), Json::array()))
        if (f.contains(k::kPciBusId) && !fields_of.count(string_member(f, k::kPciBusId)))
          fields_of[string_member(f, k::kPciBusId)] = f;
    std::set<std::string> pcis;
    std::map<std::pair<std::string, std::string>, std::string> label;
    for (const auto& p : pairs) {
      pcis.insert(string_member(p, k::kGpu));
      pcis.insert(string_member(p, k::kPeer));
      label[{string_member(p, k::kGpu), string_member(p, k::kPeer)}] =
          string_member(p, k::kTopology);
    }
    auto display = [&](const std::string& pci) {
      auto it = name_of.find(pci);
      return it == name_of.end() ? pci : it->second;
    };
    TableSection t{"topology (nvidia-smi topo -m)", {"gpu"}, {}};
    for (const auto& p : pcis) t.columns.push_back(display(p));
    t.columns.push_back("cpu_affinity");
    t.columns.push_back("numa_node");
    for (const auto& a : pcis) {
      std::vector<std::string> row{display(a)};
      for (const auto& c : pcis) {
        auto it = label.find({a, c});
        row.push_back(a == c ? "X" : it == label.end() ? "" : it->second);
      }
      const Json f = fields_of.count(a) ? fields_of[a] : Json::object();
      row.push_back(string_member(f, "cpu_affinity"));
      row.push_back(f.contains("numa_node") ? fmt::format("{}", f["numa_node"].dump()) : "");
      t.rows.push_back(std::move(row));
    }
    out.push_back(std::move(t));
  }
  return out;
}

}  // namespace gpucheck::report

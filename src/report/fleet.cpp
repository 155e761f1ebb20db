// Grouping records across many machines' documents and judging each group with core/outliers.
#include "report/fleet.h"

#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/outliers.h"
#include "core/shape_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

struct Member {
  std::string node;  // the hostname, or with the document's path where the hostname repeats
  std::string host, path, device, uuid, pci;
  double value = 0;   // as recorded: TFLOP/s, GB/s, or seconds
  double judged = 0;  // higher is better: the value, or 1/value for a time
  double deviation = 0;
  std::optional<double> z;
  bool outlier = false;
  bool worst = false;
};

struct Group {
  Json key;  // model, backend, impl, op, dtype, shape, transfers
  std::string unit;
  bool higher_is_better = true;
  std::vector<Member> members;
  std::set<std::string> seen;  // node + GPU: one figure each (the first record's)
  double median = 0, mad = 0;
  std::size_t nodes = 0;
};

// The GPU a record names: its UUID, else its PCI bus id, else its index and name.
std::string gpu_identity(const Json& r) {
  if (auto u = string_member(r, k::kDeviceUuid); !u.empty()) return u;
  if (auto p = string_member(r, k::kPciBusId); !p.empty()) return p;
  return string_member(r, k::kDevice) + " " + string_member(r, k::kDeviceName);
}

std::string host_of(const FleetDocument& d) {
  const Json host = d.doc.value(k::kHost, Json::object());
  if (auto h = string_member(host, k::kHostname); !h.empty()) return h;
  return d.path;  // a document without a host section: its file stands for the node
}

// What a group is called in tables and chart titles.
std::string group_label(const Json& key) {
  return fmt::format("{} {} {} {} ({})", string_member(key, k::kModel), string_member(key, k::kOp),
                     string_member(key, k::kDtype).empty() ? "-" : string_member(key, k::kDtype),
                     shape_text(key.value(k::kShape, Json::object())),
                     string_member(key, k::kTransfers));
}

Json member_json(const Member& m) {
  Json j{{k::kHostname, m.host},       {k::kPath, m.path},
         {k::kDevice, m.device},       {k::kValue, m.value},
         {k::kDeviation, m.deviation}, {k::kZScore, m.z ? Json(*m.z) : Json(nullptr)},
         {k::kOutlier, m.outlier},     {k::kWorst, m.worst}};
  if (!m.uuid.empty()) j[k::kDeviceUuid] = m.uuid;
  if (!m.pci.empty()) j[k::kPciBusId] = m.pci;
  return j;
}

}  // namespace

Json fleet_section(const std::vector<FleetDocument>& documents, const FleetRules& rules) {
  std::vector<Group> groups;
  std::map<std::string, std::size_t> index;  // the group key's text -> groups
  Json docs = Json::array();
  // A hostname in two documents (a rerun, a copied file, a reinstalled node): each document is
  // judged as a node of its own, named with its path, and the section lists them. Keeping one
  // would hide the other, however slow it is.
  std::map<std::string, std::vector<std::string>> paths_of_host;
  for (const auto& d : documents) paths_of_host[host_of(d)].push_back(d.path);
  std::set<std::string> node_names;
  for (const auto& d : documents) {
    const std::string host = host_of(d);
    const std::string node =
        paths_of_host[host].size() > 1 ? fmt::format("{} ({})", host, d.path) : host;
    node_names.insert(node);
    Json described{{k::kPath, d.path}, {k::kHostname, host}};
    if (d.doc.contains(k::kCommand)) described[k::kCommand] = d.doc[k::kCommand];
    if (auto p = d.doc.find(k::kProvenance); p != d.doc.end() && p->contains(k::kTime))
      described[k::kTime] = (*p)[k::kTime];
    docs.push_back(std::move(described));
    for (const auto& r : d.doc.value(k::kResults, Json::array())) {
      if (!r.is_object() || string_member(r, k::kStatus) != "ok") continue;
      double value = 0;
      std::string unit;
      bool higher = true;
      if (auto t = r.find(k::kThroughput);
          t != r.end() && t->is_object() && t->value(k::kValue, Json()).is_number()) {
        value = (*t)[k::kValue].get<double>();
        unit = string_member(*t, k::kUnit);
      } else if (auto ts = r.find(k::kTimeS);
                 ts != r.end() && ts->is_object() && ts->value(k::kMedian, Json()).is_number()) {
        value = (*ts)[k::kMedian].get<double>();
        unit = "s";
        higher = false;
      } else {
        continue;
      }
      if (!(value > 0) || !std::isfinite(value)) continue;
      Json key{{k::kModel, string_member(r, k::kDeviceName)},
               {k::kBackend, string_member(r, k::kBackend)},
               {k::kImpl, string_member(r, k::kImpl)},
               {k::kOp, string_member(r, k::kOp)},
               {k::kDtype, string_member(r, k::kDtype)},
               {k::kShape, r.value(k::kShape, Json::object())},
               {k::kTransfers, string_member(r, k::kTransfers)}};
      const std::string key_text = key.dump() + unit;
      auto [it, added] = index.emplace(key_text, groups.size());
      if (added) groups.push_back(Group{key, unit, higher, {}, {}, 0, 0, 0});
      Group& g = groups[it->second];
      if (!g.seen.insert(node + "\n" + gpu_identity(r)).second) continue;
      Member m;
      m.node = node;
      m.host = host;
      m.path = d.path;
      m.device = string_member(r, k::kDevice);
      m.uuid = string_member(r, k::kDeviceUuid);
      m.pci = string_member(r, k::kPciBusId);
      m.value = value;
      m.judged = higher ? value : 1.0 / value;
      g.members.push_back(std::move(m));
    }
  }

  Json groups_json = Json::array(), outliers = Json::array();
  struct NodeSummary {
    std::string host, path;
    std::size_t groups = 0, outlier_groups = 0;
    double worst = 0;  // the lowest deviation of any of its GPUs
    std::string worst_device, worst_group;
  };
  std::map<std::string, NodeSummary> nodes;
  for (auto& g : groups) {
    std::set<std::string> group_nodes;
    for (const auto& m : g.members) group_nodes.insert(m.node);
    g.nodes = group_nodes.size();
    OutlierThresholds t;
    t.z_fail = rules.z_threshold;
    if (g.nodes < rules.small_fleet_nodes) t.relative_fail = rules.small_fleet_drop;
    t.relative_fail_without_mad = rules.small_fleet_drop;
    t.low_side_only = true;
    std::vector<double> judged;
    for (const auto& m : g.members) judged.push_back(m.judged);
    const OutlierResult res = judge_outliers(judged, {}, t);
    std::vector<double> values;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      auto& m = g.members[i];
      m.deviation = res.points[i].relative_deviation;
      m.z = res.points[i].modified_z;
      values.push_back(m.value);
    }
    g.median = median_of(values);
    g.mad = res.mad / res.median;
    // Per node its worst GPU: the one flagged, where it is an outlier.
    std::map<std::string, std::size_t> worst;
    for (std::size_t i = 0; i < g.members.size(); ++i) {
      auto [it, added] = worst.emplace(g.members[i].node, i);
      if (!added && g.members[i].deviation < g.members[it->second].deviation) it->second = i;
    }
    const std::string label = group_label(g.key);
    for (const auto& [node, i] : worst) {
      Member& m = g.members[i];
      m.worst = true;
      m.outlier = res.points[i].level != OutlierLevel::kNone;
      NodeSummary& n = nodes[node];
      n.host = m.host;
      n.path = m.path;
      ++n.groups;
      if (m.outlier) ++n.outlier_groups;
      if (n.groups == 1 || m.deviation < n.worst) {
        n.worst = m.deviation;
        n.worst_device = m.device + (m.pci.empty() ? "" : " " + m.pci);
        n.worst_group = label;
      }
      if (!m.outlier) continue;
      Json o = member_json(m);
      o.erase(std::string(k::kOutlier));
      o.erase(std::string(k::kWorst));
      o.update(g.key);
      o[k::kMedian] = g.median;
      o[k::kUnit] = g.unit;
      o[k::kDescription] = label;
      outliers.push_back(std::move(o));
    }
    Json members = Json::array();
    for (const auto& m : g.members) members.push_back(member_json(m));
    Json gj = g.key;
    gj[k::kDescription] = label;
    gj[k::kUnit] = g.unit;
    gj[k::kHigherIsBetter] = g.higher_is_better;
    gj[k::kNodes] = g.nodes;
    gj[k::kMedian] = g.median;
    gj[k::kMad] = g.mad;
    gj[k::kMembers] = std::move(members);
    groups_json.push_back(std::move(gj));
  }
  std::stable_sort(outliers.begin(), outliers.end(), [](const Json& a, const Json& b) {
    return std::pair(string_member(a, k::kHostname), string_member(a, k::kPath)) <
           std::pair(string_member(b, k::kHostname), string_member(b, k::kPath));
  });
  // Nodes from the worst figure up: the slow node first.
  std::vector<std::pair<std::string, NodeSummary>> ordered(nodes.begin(), nodes.end());
  std::stable_sort(ordered.begin(), ordered.end(),
                   [](const auto& a, const auto& b) { return a.second.worst < b.second.worst; });
  Json nodes_json = Json::array();
  for (const auto& [node, n] : ordered)
    nodes_json.push_back({{k::kHostname, n.host},
                          {k::kPath, n.path},
                          {k::kGroups, n.groups},
                          {k::kOutliers, n.outlier_groups},
                          {k::kDeviation, n.worst},
                          {k::kDevice, n.worst_device},
                          {k::kDescription, n.worst_group}});
  std::size_t flagged = 0;
  for (const auto& [node, n] : nodes) flagged += n.outlier_groups > 0 ? 1 : 0;
  Json duplicates = Json::array();
  for (const auto& [host, paths] : paths_of_host)
    if (paths.size() > 1) duplicates.push_back({{k::kHostname, host}, {kPaths, paths}});
  return {{k::kDocuments, std::move(docs)},
          {kDuplicateHosts, std::move(duplicates)},
          {k::kRules,
           {{k::kZThreshold, -rules.z_threshold},
            {k::kSmallFleetNodes, rules.small_fleet_nodes},
            {k::kSmallFleetDrop, rules.small_fleet_drop}}},
          {k::kSummary,
           {{k::kDocuments, documents.size()},
            {k::kNodes, node_names.size()},
            {k::kGroups, groups.size()},
            {k::kOutliers, flagged}}},
          {k::kNodes, std::move(nodes_json)},
          {k::kOutliers, std::move(outliers)},
          {k::kGroups, std::move(groups_json)}};
}

}  // namespace gpucheck::report

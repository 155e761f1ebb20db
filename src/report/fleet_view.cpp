// report fleet's views: the outliers, nodes and groups as tables, one strip chart per group, and
// the text view (outliers first, the groups only with --details, a closing summary line).
#include "core/json_access.h"
#include "core/json_keys.h"
#include "report/fleet.h"
#include "report/svg_charts.h"
#include "report/units.h"
#include "report/views.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <set>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string pct(const Json& j, std::string_view key) {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? fmt::format("{:+.1f}%", it->get<double>() * 100)
                                          : std::string();
}

std::string number(const Json& j, std::string_view key, const char* spec = "{:.4g}") {
  auto it = j.find(key);
  return it != j.end() && it->is_number() ? fmt::format(fmt::runtime(spec), it->get<double>())
                                          : std::string();
}

// Hostnames that more than one document names: their nodes are shown with the path.
std::set<std::string> duplicate_hosts(const Json& fleet) {
  std::set<std::string> out;
  for (const auto& d : fleet.value(std::string(kDuplicateHosts), Json::array()))
    out.insert(string_member(d, k::kHostname));
  return out;
}

// The node an entry (outlier, node, group member) belongs to, as the tables name it.
std::string node_label(const Json& entry, const std::set<std::string>& duplicates) {
  const std::string host = string_member(entry, k::kHostname);
  return duplicates.count(host) ? fmt::format("{} ({})", host, string_member(entry, k::kPath))
                                : host;
}

}  // namespace

std::vector<TableSection> fleet_tables(const Json& fleet, FleetNumbers numbers) {
  const Json none = Json::array();
  const auto duplicates = duplicate_hosts(fleet);
  const bool exact = numbers == FleetNumbers::kExact;
  // For people each value carries its own unit (report/units.h); the CSV keeps the recorded
  // value, at full precision, beside its unit.
  const auto value = [&](const Json& j, std::string_view key, const std::string& unit) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::string();
    return exact ? fmt::format("{}", it->get<double>()) : format_measure(it->get<double>(), unit);
  };
  std::vector<std::string> columns{"host",  "device", "pci_bus_id", "group",
                                   "value", "median", "deviation",  "z"};
  if (exact) columns.insert(columns.begin() + 6, "unit");
  TableSection outliers{"fleet outliers", columns, {}};
  for (const auto& o : fleet.value(std::string(k::kOutliers), none)) {
    const std::string unit = string_member(o, k::kUnit);
    std::vector<std::string> row{node_label(o, duplicates),      string_member(o, k::kDevice),
                                 string_member(o, k::kPciBusId), string_member(o, k::kDescription),
                                 value(o, k::kValue, unit),      value(o, k::kMedian, unit),
                                 pct(o, k::kDeviation),          number(o, k::kZScore, "{:.1f}")};
    if (exact) row.insert(row.begin() + 6, unit);
    outliers.rows.push_back(std::move(row));
  }
  TableSection nodes{
      "fleet nodes",
      {"host", "groups", "outlier groups", "worst deviation", "worst device", "in group"},
      {}};
  for (const auto& n : fleet.value(std::string(k::kNodes), none))
    nodes.rows.push_back({node_label(n, duplicates), number(n, k::kGroups, "{:.0f}"),
                          number(n, k::kOutliers, "{:.0f}"), pct(n, k::kDeviation),
                          string_member(n, k::kDevice), string_member(n, k::kDescription)});
  TableSection groups{"fleet groups", {"group", "nodes", "GPUs", "median", "MAD"}, {}};
  for (const auto& g : fleet.value(std::string(k::kGroups), none))
    groups.rows.push_back({string_member(g, k::kDescription), number(g, k::kNodes, "{:.0f}"),
                           fmt::format("{}", g.value(std::string(k::kMembers), none).size()),
                           value(g, k::kMedian, string_member(g, k::kUnit)),
                           fmt::format("{:.2f}%", g.value(std::string(k::kMad), 0.0) * 100)});
  return {outliers, nodes, groups};
}

std::string fleet_charts(const Json& fleet) {
  std::string out;
  const auto duplicates = duplicate_hosts(fleet);
  for (const auto& g : fleet.value(std::string(k::kGroups), Json::array())) {
    StripChart c;
    c.title = fmt::format("{}: {} nodes", string_member(g, k::kDescription),
                          number(g, k::kNodes, "{:.0f}"));
    c.unit = string_member(g, k::kUnit) + (g.value(std::string(k::kHigherIsBetter), true)
                                               ? " (higher is better)"
                                               : " (lower is better)");
    c.value_unit = string_member(g, k::kUnit);
    c.kind = "fleet";
    if (g.contains(k::kMedian)) c.median = g[k::kMedian].get<double>();
    for (const auto& m : g.value(std::string(k::kMembers), Json::array()))
      c.points.push_back(
          {m.value(std::string(k::kValue), 0.0), m.value(std::string(k::kOutlier), false),
           fmt::format(
               "{} {} {}: {} ({})", node_label(m, duplicates), string_member(m, k::kDevice),
               string_member(m, k::kPciBusId),
               format_measure(m.value(std::string(k::kValue), 0.0), string_member(g, k::kUnit)),
               pct(m, k::kDeviation)),
           fmt::format("{} {}", node_label(m, duplicates), string_member(m, k::kDevice))});
    out += svg_strip_chart(c);
  }
  return out;
}

void fleet_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json& fleet = doc[std::string(k::kFleet)];
  view.text("gpucheck report fleet", 0, 2, Tone::kBold);
  view.blank();
  auto tables = fleet_tables(fleet);  // outliers, nodes, groups
  for (std::size_t i = 0; i < tables.size(); ++i) {
    if (i == 2 && !o.details) break;  // every group: --details
    if (tables[i].rows.empty()) continue;
    section_table_view(view, tables[i]);
    view.blank();
  }
  for (const auto& d : fleet.value(std::string(kDuplicateHosts), Json::array())) {
    std::vector<std::string> paths;
    for (const auto& p : d.value(std::string(kPaths), Json::array()))
      if (p.is_string()) paths.push_back(p.get<std::string>());
    view.text(fmt::format("{}: {} documents name this host ({}); each is judged as a node of its "
                          "own",
                          string_member(d, k::kHostname), paths.size(), fmt::join(paths, ", ")),
              0, 2, Tone::kWarn);
  }
  if (!o.details) view.text("Every group's median and spread: --details.", 0, 0, Tone::kMuted);
  const Json summary = fleet.value(std::string(k::kSummary), Json::object());
  const auto count = [&](std::string_view key) {
    return summary.value(std::string(key), std::size_t{0});
  };
  const auto counted = [&](std::string_view key, std::string_view noun) {
    const std::size_t n = count(key);
    return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s");
  };
  const std::size_t outliers = count(k::kOutliers);
  view.text(fmt::format("fleet: {}, {}, {}, {}", counted(k::kOutliers, "outlier"),
                        counted(k::kNodes, "node"), counted(k::kGroups, "group"),
                        counted(k::kDocuments, "document")),
            0, 7, outliers == 0 ? Tone::kGood : Tone::kBad);
}

}  // namespace gpucheck::report

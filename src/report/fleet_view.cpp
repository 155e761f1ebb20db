// report fleet's views: the outliers, nodes and groups as tables, and one strip chart per group.
#include "core/json_keys.h"
#include "report/fleet.h"
#include "report/svg_charts.h"

#include <fmt/format.h>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string str(const Json& j, std::string_view key) {
  auto it = j.find(key);
  return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

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

}  // namespace

std::vector<TableSection> fleet_tables(const Json& fleet) {
  const Json none = Json::array();
  TableSection outliers{
      "fleet outliers",
      {"host", "device", "pci_bus_id", "group", "value", "median", "unit", "deviation", "z"},
      {}};
  for (const auto& o : fleet.value(std::string(k::kOutliers), none))
    outliers.rows.push_back({str(o, k::kHostname), str(o, k::kDevice), str(o, k::kPciBusId),
                             str(o, k::kDescription), number(o, k::kValue), number(o, k::kMedian),
                             str(o, k::kUnit), pct(o, k::kDeviation),
                             number(o, k::kZScore, "{:.1f}")});
  TableSection nodes{
      "fleet nodes",
      {"host", "groups", "outlier groups", "worst deviation", "worst device", "in group"},
      {}};
  for (const auto& n : fleet.value(std::string(k::kNodes), none))
    nodes.rows.push_back({str(n, k::kHostname), number(n, k::kGroups, "{:.0f}"),
                          number(n, k::kOutliers, "{:.0f}"), pct(n, k::kDeviation),
                          str(n, k::kDevice), str(n, k::kDescription)});
  TableSection groups{"fleet groups", {"group", "nodes", "GPUs", "median", "unit", "MAD"}, {}};
  for (const auto& g : fleet.value(std::string(k::kGroups), none))
    groups.rows.push_back({str(g, k::kDescription), number(g, k::kNodes, "{:.0f}"),
                           fmt::format("{}", g.value(std::string(k::kMembers), none).size()),
                           number(g, k::kMedian), str(g, k::kUnit),
                           fmt::format("{:.2f}%", g.value(std::string(k::kMad), 0.0) * 100)});
  return {outliers, nodes, groups};
}

std::string fleet_charts(const Json& fleet) {
  std::string out;
  for (const auto& g : fleet.value(std::string(k::kGroups), Json::array())) {
    StripChart c;
    c.title = fmt::format("{}: {} nodes", str(g, k::kDescription), number(g, k::kNodes, "{:.0f}"));
    c.unit =
        str(g, k::kUnit) + (g.value(std::string(k::kHigherIsBetter), true) ? " (higher is better)"
                                                                           : " (lower is better)");
    c.kind = "fleet";
    if (g.contains(k::kMedian)) c.median = g[k::kMedian].get<double>();
    for (const auto& m : g.value(std::string(k::kMembers), Json::array()))
      c.points.push_back(
          {m.value(std::string(k::kValue), 0.0), m.value(std::string(k::kOutlier), false),
           fmt::format("{} {} {}: {} {} ({})", str(m, k::kHostname), str(m, k::kDevice),
                       str(m, k::kPciBusId), number(m, k::kValue), str(g, k::kUnit),
                       pct(m, k::kDeviation))});
    out += svg_strip_chart(c);
  }
  return out;
}

}  // namespace gpucheck::report

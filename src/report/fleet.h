// `gpucheck report fleet`: many machines' bench or qualify documents, their records grouped by
// GPU model, op, dtype, shape and transfers, and the slow node among them: per node the worst
// GPU of each group, an outlier when its modified z-score is below -3.5 or, in a fleet of fewer
// than 10 nodes or a group whose MAD is 0 (the z-score undefined), when it is more than 7 % below
// the group's median (core/outliers.h judges both). A hostname that more than one document names
// is not merged: each such document is a node of its own, named with its path.
#pragma once

#include "report/view_model.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::report {

// The fleet section's keys for hostnames that more than one document names. (Kept here, beside
// their only writer and reader, rather than in core/json_keys.h, which every file includes.)
inline constexpr std::string_view kDuplicateHosts = "duplicate_hosts";
inline constexpr std::string_view kPaths = "paths";

struct FleetRules {
  double z_threshold = 3.5;            // |modified z| below the median
  std::size_t small_fleet_nodes = 10;  // fewer nodes than this: the relative rule applies too
  double small_fleet_drop = 0.07;      // relative drop below the median (also: any MAD of 0)
};

struct FleetDocument {
  std::string path;
  nlohmann::json doc;  // a gpucheck/1 document with results
};

// The document's `fleet` section: documents, duplicate_hosts (hostnames several documents
// name, with their paths), rules, groups (with every GPU's figure, its deviation and z-score),
// nodes (each node's worst figure) and outliers (one per node and group: the node's worst GPU,
// where it is an outlier). Pure: no I/O.
nlohmann::json fleet_section(const std::vector<FleetDocument>& documents, const FleetRules& rules);

// The section's tables: outliers (first: the CSV view writes it), nodes (worst first), groups.
// How a table's numbers are written: for people (each value in its own unit, as the terminal's
// tables do) or exact (the recorded value at full precision, its unit in a column: the CSV).
enum class FleetNumbers { kForPeople, kExact };
std::vector<TableSection> fleet_tables(const nlohmann::json& fleet,
                                       FleetNumbers numbers = FleetNumbers::kForPeople);

// One strip chart per group (every GPU a dot, outliers red, the median a line), for HTML.
std::string fleet_charts(const nlohmann::json& fleet);

}  // namespace gpucheck::report

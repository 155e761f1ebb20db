// `gpucheck report fleet`: many machines' bench or qualify documents, their records grouped by
// GPU model, op, dtype, shape and transfers, and the slow node among them: per node the worst
// GPU of each group, an outlier when its modified z-score is below -3.5 or, in a fleet of fewer
// than 10 nodes, when it is more than 7 % below the group's median (core/outliers.h judges both).
#pragma once

#include "report/view_model.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <string>
#include <vector>

namespace gpucheck::report {

struct FleetRules {
  double z_threshold = 3.5;            // |modified z| below the median
  std::size_t small_fleet_nodes = 10;  // fewer nodes than this: the relative rule applies too
  double small_fleet_drop = 0.07;      // relative drop below the median
};

struct FleetDocument {
  std::string path;
  nlohmann::json doc;  // a gpucheck/1 document with results
};

// The document's `fleet` section: documents, rules, groups (with every GPU's figure, its
// deviation and z-score), nodes (each node's worst figure) and outliers (one per node and
// group: the node's worst GPU, where it is an outlier). Pure: no I/O.
nlohmann::json fleet_section(const std::vector<FleetDocument>& documents, const FleetRules& rules);

// The section's tables: outliers (first: the CSV view writes it), nodes (worst first), groups.
std::vector<TableSection> fleet_tables(const nlohmann::json& fleet);

// One strip chart per group (every GPU a dot, outliers red, the median a line), for HTML.
std::string fleet_charts(const nlohmann::json& fleet);

}  // namespace gpucheck::report

// A document seen as sections of rows: what every human-readable writer presents.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <utility>
#include <vector>

namespace gpucheck::report {

struct KeyValueSection {
  std::string title;
  std::vector<std::pair<std::string, std::string>> rows;
};

struct TableSection {
  std::string title;
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

struct ViewModel {
  std::vector<KeyValueSection> facts;  // provenance, host, cpu, memory, backends and devices
  std::vector<TableSection> tables;    // bench results (one table), later checks and verdicts
};

ViewModel make_view_model(const nlohmann::json& doc);

// A JSON scalar as text: strings verbatim, numbers locale-independently with up to 6
// significant digits, arrays of scalars joined with ", ".
std::string scalar_text(const nlohmann::json& v);

// The result record's shape in a compact form: "n=1048576", "2048x2048x2048",
// "32,64,56,56,64,3,3,1,1 nchw", "64 MiB h2d pinned".
std::string shape_text(const nlohmann::json& shape);

}  // namespace gpucheck::report

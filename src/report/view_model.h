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

}  // namespace gpucheck::report

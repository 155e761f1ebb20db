// The Prometheus view: node_exporter's textfile-collector format (text exposition 0.0.4).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace gpucheck::report {

using PromLabels = std::vector<std::pair<std::string, std::string>>;

// A label value as the text format quotes it: backslash, double quote and newline escaped.
std::string prometheus_label_value(std::string_view s);

// HELP text: backslash and newline escaped.
std::string prometheus_help(std::string_view s);

// Metric families in the order first defined; each series (name and labels) keeps its first
// sample, so the output never holds two samples of one series.
class PromMetrics {
 public:
  // Declares a family (gauge) once; later calls with the same name are ignored.
  void family(const std::string& name, const std::string& help);
  // One sample; empty label values are left out (Prometheus reads them as absent anyway).
  void sample(const std::string& name, const PromLabels& labels, double value);
  std::string text() const;
  // Labels every later sample carries after its own (doctor --inject's injected="true").
  void label_every(PromLabels labels) { every_ = std::move(labels); }

 private:
  struct Family {
    std::string name, help;
    std::vector<std::string> series;  // the rendered "name{labels} value" lines
    std::vector<std::string> keys;    // "name{labels}" of each line, for duplicates
  };
  std::vector<Family> families_;
  PromLabels every_;
  Family* find(const std::string& name);
};

}  // namespace gpucheck::report

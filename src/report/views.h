// The per-command builders of the text view (report/text_view.h), and what they share.
#pragma once

#include "report/text_view.h"
#include "report/view_model.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace gpucheck::report {

// obj[key] as text ("" when absent or null); numbers as scalar_text writes them.
std::string text_at(const nlohmann::json& obj, std::string_view key);
// s in capitals (ASCII): verdicts and statuses as the views print them.
std::string upper_case(std::string s);
// obj[key] as a number, when it is one.
std::optional<double> number_at(const nlohmann::json& obj, std::string_view key);
// A JSON value for people: units from the key's suffix (_bytes, _mhz, _mw, _c, ...), bitfields
// as their flags, yes/no for booleans, arrays as lists.
std::string human_value(std::string_view key, const nlohmann::json& v);

void probe_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);
void doctor_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);
void bench_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);
void qualify_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);

// Writes the reason of a backend that is not available once: where a later text repeats it (each
// requirement on that backend fails for it), the repeat becomes "(as above)". For qualify's
// verdict notes and its error lines alike.
class BackendReasonsOnce {
 public:
  explicit BackendReasonsOnce(const nlohmann::json& backends);
  std::string operator()(std::string text);

 private:
  std::vector<std::string> reasons_;
  std::vector<bool> shown_;
};
void compare_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);
void fleet_view(TextView& view, const nlohmann::json& doc, const ViewOptions& o);

// A table of the view model (report/view_model.h: the multi-GPU matrices, the topology, the
// fleet's tables) under its title, fitted to the width like every other; numbers right-aligned.
void section_table_view(TextView& view, const TableSection& section);

// doctor's checks grouped by area (problems_only: WARN and FAIL alone), and the closing count
// "42 checks: 31 passed, 7 info, 2 warnings, 0 failed, 2 skipped" with its tone.
void checks_view(TextView& view, const nlohmann::json& checks, bool details, bool problems_only);
std::pair<std::string, Tone> checks_summary(const nlohmann::json& checks);
// doctor --inject's warning ("INJECTED: doctor --inject xid:79: ..."), empty for a document
// nothing was injected into; the text view and the HTML page both show it.
std::string injected_line(const nlohmann::json& doc);

// bench's records as one table per op (device time and end to end side by side), the small
// sizes marked (sizes_per_device: the small sizes bench kept beside each device's own, for the
// transfer lesson), and the GPU versus CPU lines; the closing count of the records.
void results_view(TextView& view, const nlohmann::json& results, const ViewOptions& o,
                  bool sizes_per_device = false);
std::pair<std::string, Tone> results_summary(const nlohmann::json& results);

// Every field of value under a heading, nested objects indented under their key, arrays of
// objects as one block per element: probe --full and the system facts of --details.
void tree_view(TextView& view, const std::string& title, const nlohmann::json& value);

// Host, CPU, memory and provenance, readable: what --details adds after a result.
void system_facts_view(TextView& view, const nlohmann::json& doc);

// A GPU's record: a GPU backend's, or a device of a backend that reaches GPUs and CPUs alike
// (DeviceKinds::kEither) whose name says a GPU maker and no CPU (pocl's and lavapipe's CPU
// devices are accelerators to the bench but no GPU).
bool is_gpu_record(const nlohmann::json& record);

// The machine, its GPUs and the driver: host, OS, "2× NVIDIA H100 80GB HBM3", "driver 580.159.04".
std::vector<std::string> machine_items(const nlohmann::json& doc);
// The view's first line: "gpucheck probe: vm, Ubuntu 24.04, 2× NVIDIA H100 80GB HBM3, driver
// 580.159.04", items kept whole when it wraps; `first` goes before the machine's items.
void title_view(TextView& view, const std::string& what, std::vector<std::string> first,
                const nlohmann::json& doc);

}  // namespace gpucheck::report

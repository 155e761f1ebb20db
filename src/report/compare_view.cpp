// report compare's text view: the two documents, the regressions and library changes by name,
// one row per matched cell (regressions first), one explanation for every NOISY row, and the
// closing count of every verdict.
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <map>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// The verdicts in the order rows are listed and counted; NOISY comes from the rank test over
// kept samples, CHANGED from another library choice (engine, algorithm) than the base's.
constexpr std::array<std::string_view, 7> kVerdicts{"regression", "changed", "improvement", "same",
                                                    "noisy",      "missing", "new"};

std::string value_text(const Json& row, std::string_view key) {
  auto v = number_at(row, key);
  if (!v) return {};
  return format_measure(*v, text_at(row, k::kUnit));
}

std::string percent(const Json& row, std::string_view key, bool sign) {
  auto v = number_at(row, key);
  if (!v) return {};
  return sign ? fmt::format("{:+.1f}%", *v * 100) : fmt::format("{:.1f}%", *v * 100);
}

// The new record's share of the hardware's limit (its limit.fraction), where it has one.
std::string share_text(const Json& row) {
  auto v = number_at(row, k::kNewFractionOfLimit);
  return v ? format_share(*v) : std::string();
}

std::string describe(const Json& d) {
  std::vector<std::string> p{text_at(d, k::kPath)};
  if (auto t = text_at(d, k::kTime); !t.empty()) p.push_back(t);
  if (auto c = text_at(d, k::kGitCommit); !c.empty()) p.push_back("commit " + c);
  std::string out = p.front();
  if (p.size() > 1) {
    out += " (";
    for (std::size_t i = 1; i < p.size(); ++i) out += (i > 1 ? ", " : "") + p[i];
    out += ")";
  }
  return out;
}

std::string cell_label(const Json& r) {
  std::string label = text_at(r, k::kOp);
  if (auto dtype = text_at(r, k::kDtype); !dtype.empty()) label += " " + dtype;
  if (auto size = shape_label(r.value(std::string(k::kShape), Json::object())); !size.empty())
    label += " " + size;
  if (text_at(r, k::kTransfers) == "included") label += " incl. transfers";
  return label;
}

// The reason every NOISY row would repeat: said once under the tables, not under each row.
bool only_the_spread(const Json& r) {
  return text_at(r, k::kReason).starts_with("the new run's own spread");
}

}  // namespace

void compare_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json c = doc.value(std::string(k::kComparison), Json::object());
  view.heading("gpucheck report compare");
  view.flow("base", {describe(c.value(std::string(k::kBase), Json::object()))}, 0, 6);
  view.flow("new", {describe(c.value(std::string(k::kNew), Json::object()))}, 0, 6);
  view.blank();
  const Json rows = c.value(std::string(k::kRows), Json::array());
  // The answer before the tables: each regression and each change of library choice by name,
  // so a long comparison shows them on its first screen.
  bool answered = false;
  for (std::string_view verdict : {"regression", "changed"}) {
    std::vector<std::string> items;
    for (const auto& r : rows)
      if (text_at(r, k::kVerdict) == verdict)
        items.push_back(fmt::format("{} on {} {}", cell_label(r), text_at(r, k::kDevice),
                                    percent(r, k::kChange, true)));
    if (items.empty()) continue;
    view.flow(upper_case(std::string(verdict)) + ":", items, 0, 0,
              verdict == "regression" ? Tone::kBad : Tone::kWarn);
    answered = true;
  }
  if (answered) view.blank();
  // One table per device (matched by UUID, bus id or name), regressions first in each.
  std::vector<std::string> devices;
  for (const auto& r : rows)
    if (std::find(devices.begin(), devices.end(), text_at(r, k::kDevice)) == devices.end())
      devices.push_back(text_at(r, k::kDevice));
  const bool all_same = !o.details && rows.size() > 40;
  for (const auto& device : devices) {
    TextTable t;
    t.indent = 2;
    t.columns = {{"verdict", false, false, false, true, 4},
                 {"op", false, false, false, false, 4},
                 {"dtype", false, false, false, false, 4},
                 {"size", false, true, true, false, 6},
                 {"transfers", false, false, false, false, 4},
                 {"base", true},
                 {"new", true},
                 {"of limit", true},
                 {"change", true},
                 {"limit", true, false, false, false, 4},
                 {"spread", true, false, false, false, 4}};
    std::string heading;
    for (auto verdict : kVerdicts)
      for (const auto& r : rows) {
        if (text_at(r, k::kDevice) != device || text_at(r, k::kVerdict) != verdict) continue;
        if (heading.empty()) {
          const std::string name = text_at(r, k::kDeviceName);
          heading = name.empty() || name == device ? device : name + " (" + device + ")";
          if (auto b = text_at(r, k::kBackend); !b.empty()) heading += ", " + b;
        }
        if (verdict == "same" && all_same) continue;
        std::vector<std::string> notes;
        const bool noisy = verdict == "noisy";
        if (auto reason = text_at(r, k::kReason); !reason.empty() && !(noisy && only_the_spread(r)))
          notes.push_back(reason);
        if (auto choice = text_at(r, k::kChoice); !choice.empty() && o.details)
          notes.push_back("choice: " + choice);
        t.add({upper_case(std::string(verdict)), text_at(r, k::kOp), text_at(r, k::kDtype),
               shape_label(r.value(std::string(k::kShape), Json::object())),
               text_at(r, k::kTransfers) == "included" ? "incl." : "", value_text(r, k::kBase),
               value_text(r, k::kNew), share_text(r), percent(r, k::kChange, true),
               percent(r, k::kThreshold, false), noisy ? percent(r, k::kSpread, false) : ""},
              std::move(notes));
      }
    view.text(heading, 0, 2, Tone::kBold);
    if (!t.rows.empty()) view.table(std::move(t));
  }
  const Json s = c.value(std::string(k::kSummary), Json::object());
  if (auto n = number_at(s, "noisy"); n && *n > 0)
    view.text(fmt::format("NOISY: the new run's own spread (the spread column) exceeds the "
                          "tolerance, so {} cannot tell a change from noise; more --reps or "
                          "--min-time, or a quieter machine, decides {}",
                          *n == 1 ? "this row" : "these rows", *n == 1 ? "it" : "them"),
              0, 7, Tone::kWarn);
  if (all_same)
    view.text(fmt::format("({} SAME rows left out: --details lists them)", text_at(s, "same")), 0,
              0, Tone::kMuted);
  view.blank();
  std::string line = "compare: ";
  auto count = [&](std::string_view v) {
    auto n = number_at(s, v);
    return n ? static_cast<long>(*n) : 0L;
  };
  // CHANGED only where there is one: the line keeps to 80 columns on a plain comparison.
  const std::string changed =
      count("changed") > 0 ? fmt::format("{} changed, ", count("changed")) : std::string();
  line += fmt::format("{} regression{}, {} improvement{}, {} same, {} noisy, {}{} missing, {} new",
                      count("regression"), count("regression") == 1 ? "" : "s",
                      count("improvement"), count("improvement") == 1 ? "" : "s", count("same"),
                      count("noisy"), changed, count("missing"), count("new"));
  const std::string verdict = text_at(c, k::kVerdict);
  view.text(line, 0, 9, verdict == "ok" ? Tone::kGood : Tone::kBad);
}

}  // namespace gpucheck::report

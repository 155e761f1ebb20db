// stress's rows: per device and test the sustained throughput, its lowest window, what the
// checks found, and the telemetry a person looks at first.
#include "report/stress_view.h"

#include "core/json_keys.h"
#include "core/json_keys_stress.h"
#include "report/units.h"
#include "report/views.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdint>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string number(const Json& j, std::string_view key, const char* format = "{:.4g}") {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number()) return {};
  return fmt::format(fmt::runtime(format), it->get<double>());
}

std::string findings(const Json& r) {
  if (auto c = r.find(k::kChecking); c != r.end()) {
    if (c->value(std::string(k::kNoCheck), false)) return "not checked";
    return fmt::format("{} results checked, {} full, {} differed",
                       c->value(std::string(k::kResultsChecksummed), std::uint64_t{0}),
                       c->value(std::string(k::kFullChecks), std::uint64_t{0}),
                       c->value(std::string(k::kMismatchedResults), std::uint64_t{0}));
  }
  if (auto m = r.find(k::kMemory); m != r.end())
    return fmt::format("{:.1f} % of free memory, {} passes, {} bad words",
                       100 * m->value(std::string(k::kFractionOfFree), 0.0),
                       m->value(std::string(k::kPasses), std::uint64_t{0}),
                       m->value(std::string(k::kMismatches), std::uint64_t{0}));
  if (auto c = r.find(k::kCopy); c != r.end()) {
    std::string s = fmt::format("{} transfers verified, {} differed",
                                c->value(std::string(k::kTransfersVerified), std::uint64_t{0}),
                                c->value(std::string(k::kMismatches), std::uint64_t{0}));
    // Each direction's rate with both at once (the sustained figure is their sum).
    if (c->contains(k::kH2dGbps) && c->contains(k::kD2hGbps))
      s += fmt::format("; h2d {} GB/s, d2h {} GB/s", number(*c, k::kH2dGbps, "{:.1f}"),
                       number(*c, k::kD2hGbps, "{:.1f}"));
    if (auto p = c->find(k::kPeer); p != c->end() && p->is_object())
      s += fmt::format(
          "; to {}: {} verified, {} differed, {} GB/s", p->value(std::string(k::kDevice), "?"),
          p->value(std::string(k::kTransfersVerified), std::uint64_t{0}),
          p->value(std::string(k::kMismatches), std::uint64_t{0}), number(*p, k::kGbps, "{:.0f}"));
    return s;
  }
  return r.value(std::string(k::kReason), "");
}

}  // namespace

TableSection stress_table(const Json& stress) {
  // For people (the terminal and HTML): rates in report/units.h's units, each with its own;
  // stress_csv writes the exact values and their unit.
  TableSection t{"stress",
                 {"device", "verdict", "test", "dtype", "status", "sustained", "min window",
                  "of limit", "burst", "sustained/burst", "checked", "SM MHz", "max C", "mean W"},
                 {}};
  const auto rate = [](const Json& thr, std::string_view key) {
    auto it = thr.find(key);
    return it != thr.end() && it->is_number()
               ? format_measure(it->get<double>(), thr.value(std::string(k::kUnit), ""))
               : std::string();
  };
  // Sustained over the first half second's rate: well below 1, the card slowed under the load.
  const auto ratio = [](const Json& thr) {
    auto it = thr.find(k::kSustainedOverBurst);
    return it != thr.end() && it->is_number() ? fmt::format("{:.2f}", it->get<double>())
                                              : std::string();
  };
  for (const auto& d : stress.value(std::string(k::kDevices), Json::array())) {
    const std::string device = d.value(std::string(k::kDevice), "?");
    std::string verdict = d.value(std::string(k::kVerdict), "?");
    for (auto& c : verdict) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const Json tele = d.value(std::string(k::kTelemetry), Json::object());
    const std::string sm =
        number(tele.value(std::string(k::kSmClockMhz), Json::object()), k::kMean, "{:.0f}");
    const std::string temp =
        number(tele.value(std::string(k::kTemperatureC), Json::object()), k::kMax, "{:.0f}");
    const std::string power =
        number(tele.value(std::string(k::kPowerW), Json::object()), k::kMean, "{:.0f}");
    const Json records = d.value(std::string(k::kRecords), Json::array());
    if (records.empty())
      t.rows.push_back({device, verdict, "", "", "", "", "", "", "", "", "", sm, temp, power});
    for (const auto& r : records) {
      const Json thr = r.value(std::string(k::kThroughput), Json::object());
      t.rows.push_back({device, verdict, r.value(std::string(k::kTest), ""),
                        r.value(std::string(k::kDtype), ""), r.value(std::string(k::kStatus), ""),
                        rate(thr, k::kValue), rate(thr, k::kMinWindow), limit_share(r),
                        rate(thr, k::kBurst), ratio(thr), findings(r), sm, temp, power});
    }
  }
  return t;
}

void stress_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json s = doc.value(std::string(k::kStress), Json::object());
  const Json devices = s.value(std::string(k::kDevices), Json::array());
  // The devices it ran on (the document has no probe of the machine's GPUs): "2× NVIDIA H100".
  std::vector<std::pair<std::string, int>> names;
  for (const auto& d : devices) {
    const std::string name =
        d.value(std::string(k::kDeviceName), d.value(std::string(k::kDevice), "?"));
    auto it =
        std::find_if(names.begin(), names.end(), [&](const auto& n) { return n.first == name; });
    if (it == names.end())
      names.emplace_back(name, 1);
    else
      ++it->second;
  }
  std::vector<std::string> items{number(s, k::kDurationS, "{:g} s")};
  for (const auto& [name, n] : names)
    items.push_back(n > 1 ? fmt::format("{}× {}", n, name) : name);
  view.flow("gpucheck stress:", items, 0, 17, Tone::kBold);
  view.blank();
  // stress_table's rows (the CSV and HTML views'), the verdict first; under a device's first
  // row its telemetry, its reasons and (failed, or --details) its notes.
  enum Cell : std::size_t {
    kDevice,
    kVerdict,
    kTest,
    kDtype,
    kStatus,
    kSustained,
    kMinWindow,
    kOfLimit,
    kBurst,
    kRatio,
    kChecked,
    kSm,
    kTemp,
    kPower
  };
  // "checked" gives way first (down to 10, wrapped): the figures beside it stay whole at 80.
  TextTable t;
  t.columns = {
      {"verdict", false, false, false, true, 4},    {"device", false, false, false, false, 5},
      {"test", false, false, false, false, 4},      {"dtype", false, false, false, false, 4},
      {"sustained", true, false, false, false, 6},  {"of limit", true, false, false, false, 4},
      {"min window", true, false, false, false, 6}, {"checked", false, true, true, false, 10}};
  std::string last;
  std::vector<std::string> failed;
  for (const auto& r : stress_table(s).rows) {
    const bool first = r[kDevice] != last;
    std::vector<std::string> notes;
    if (first) {
      if (!r[kSm].empty() || !r[kTemp].empty())
        notes.push_back(
            fmt::format("telemetry: SM {} MHz, max {} C, {} W", r[kSm], r[kTemp], r[kPower]));
      for (const auto& d : devices) {
        if (d.value(std::string(k::kDevice), "") != r[kDevice]) continue;
        for (const auto& why : d.value(std::string(k::kReasons), Json::array()))
          if (why.is_string()) notes.push_back(why.get<std::string>());
        if (o.details || r[kVerdict] != "PASS")
          for (const auto& n : d.value(std::string(k::kNotes), Json::array()))
            if (n.is_string()) notes.push_back("note: " + n.get<std::string>());
      }
      if (r[kVerdict] != "PASS") failed.push_back(r[kDevice]);
    }
    // The burst under its row: two more figures in columns would not fit 80 columns.
    if (!r[kBurst].empty())
      notes.push_back(fmt::format("{}: burst {} (first 0.5 s), sustained/burst {}", r[kTest],
                                  r[kBurst], r[kRatio]));
    const std::string checked = r[kStatus] == "ok" ? r[kChecked] : r[kStatus] + ": " + r[kChecked];
    t.add({first ? r[kVerdict] : "", first ? r[kDevice] : "", r[kTest], r[kDtype], r[kSustained],
           r[kOfLimit], r[kMinWindow], checked},
          std::move(notes), r[kVerdict] == "PASS" ? Tone::kMuted : Tone::kBad);
    last = r[kDevice];
  }
  view.table(std::move(t));
  if (o.details) {
    view.blank();
    system_facts_view(view, doc);
  }
  view.blank();
  const std::string verdict = s.value(std::string(k::kVerdict), "?");
  view.text(failed.empty() ? fmt::format("stress: {}, {} device{}", verdict, devices.size(),
                                         devices.size() == 1 ? "" : "s")
                           : fmt::format("stress: {}: {}", verdict, fmt::join(failed, ", ")),
            0, 8, failed.empty() ? Tone::kGood : Tone::kBad);
}

TableSection stress_reasons_table(const Json& stress) {
  TableSection t{"stress verdicts", {"device", "check", "status", "detail"}, {}};
  for (const auto& d : stress.value(std::string(k::kDevices), Json::array()))
    for (const auto& c : d.value(std::string(k::kChecks), Json::array())) {
      std::string status = c.value(std::string(k::kStatus), "");
      for (auto& ch : status) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
      t.rows.push_back({d.value(std::string(k::kDevice), "?"), c.value(std::string(k::kId), ""),
                        status, c.value(std::string(k::kDetail), "")});
    }
  return t;
}

}  // namespace gpucheck::report

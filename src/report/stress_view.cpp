// stress's rows: per device and test the sustained throughput, its lowest window, what the
// checks found, and the telemetry a person looks at first.
#include "report/stress_view.h"

#include "core/json_keys.h"

#include <fmt/format.h>

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
                       c->value(std::string(k::kResultsChecksummed), 0),
                       c->value(std::string(k::kFullChecks), 0),
                       c->value(std::string(k::kMismatchedResults), 0));
  }
  if (auto m = r.find(k::kMemory); m != r.end())
    return fmt::format("{:.1f} % of free memory, {} passes, {} bad words",
                       100 * m->value(std::string(k::kFractionOfFree), 0.0),
                       m->value(std::string(k::kPasses), 0),
                       m->value(std::string(k::kMismatches), 0));
  if (auto c = r.find(k::kCopy); c != r.end())
    return fmt::format("{} transfers verified, {} differed",
                       c->value(std::string(k::kTransfersVerified), 0),
                       c->value(std::string(k::kMismatches), 0));
  return r.value(std::string(k::kReason), "");
}

}  // namespace

TableSection stress_table(const Json& stress) {
  TableSection t{"stress",
                 {"device", "verdict", "test", "dtype", "status", "sustained", "min window", "unit",
                  "checked", "SM MHz", "max C", "mean W"},
                 {}};
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
      t.rows.push_back({device, verdict, "", "", "", "", "", "", "", sm, temp, power});
    for (const auto& r : records) {
      const Json thr = r.value(std::string(k::kThroughput), Json::object());
      t.rows.push_back({device, verdict, r.value(std::string(k::kTest), ""),
                        r.value(std::string(k::kDtype), ""), r.value(std::string(k::kStatus), ""),
                        number(thr, k::kValue), number(thr, k::kMinWindow),
                        thr.value(std::string(k::kUnit), ""), findings(r), sm, temp, power});
    }
  }
  return t;
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

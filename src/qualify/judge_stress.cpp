// Judging a stress requirement on the stress section qualify's run wrote.
#include "qualify/judge_stress.h"

#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "qualify/toml_reader.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::qualify {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// The checks a profile cannot waive: a device that did not run, logged a fleet Xid, lost ECC
// data or needs a row remap is not qualified, whatever its limits say.
constexpr const char* kHardChecks[] = {"started", "xid", "ecc", "row_remap"};

// A list inside j by reference (value() would copy, and pointers into the copy dangle).
const Json& list_of(const Json& j, std::string_view key) {
  static const Json kNone = Json::array();
  auto it = j.find(key);
  return it != j.end() && it->is_array() ? *it : kNone;
}

const Json* device_entry(const Json& stress, const std::string& device) {
  for (const auto& d : list_of(stress, k::kDevices))
    if (d.value(std::string(k::kDevice), "") == device) return &d;
  return nullptr;
}

// Wrong results the run counted: GEMM results, memory words, copies.
std::uint64_t errors_of(const Json& entry, std::vector<std::string>& failures) {
  std::uint64_t errors = 0;
  for (const auto& r : list_of(entry, k::kRecords)) {
    const std::string status = r.value(std::string(k::kStatus), "");
    const std::string test = r.value(std::string(k::kTest), "?");
    if (status == "failed" || status == "unsupported")
      failures.push_back(
          fmt::format("{} {}: {}", test, status, r.value(std::string(k::kReason), "")));
    if (auto c = r.find(k::kChecking); c != r.end()) {
      errors += c->value(std::string(k::kMismatchedResults), std::uint64_t{0});
      if (c->value(std::string(k::kNoCheck), false))
        failures.emplace_back("gemm: results not checked");
      const Json ref = c->value(std::string(k::kReference), Json::object());
      if (auto e = ref.find(k::kMaxRelError);
          e != ref.end() &&
          (!e->is_number() || e->get<double>() > ref.value(std::string(k::kTolerance), 0.0)))
        failures.push_back("gemm: the first result is wrong against float64");
    }
    if (auto m = r.find(k::kMemory); m != r.end())
      errors += m->value(std::string(k::kMismatches), std::uint64_t{0});
    if (auto c = r.find(k::kCopy); c != r.end())
      errors += c->value(std::string(k::kMismatches), std::uint64_t{0});
  }
  return errors;
}

}  // namespace

std::vector<Verdict> judge_stress(const Requirement& r, const Observations& obs) {
  std::vector<Verdict> out;
  for (const auto& d : select_devices(r, list_devices(obs.backends))) {
    Verdict v;
    v.id = r.id;
    v.kind = r.kind;
    v.line = r.line;
    v.device = d.device;
    v.device_name = d.name;
    v.requirement = fmt::format("stress {:g} s ({}) on {}: at most {} wrong results", r.duration_s,
                                join(r.tests), d.device, r.max_errors);
    v.threshold = r.max_errors;
    v.unit = "errors";
    const Json* entry = device_entry(obs.stress, d.device);
    if (entry == nullptr) {
      v.outcome = Outcome::kUnmet;
      v.reason = "the stress run has no result for this device";
      out.push_back(v);
      continue;
    }
    std::vector<std::string> failures, skips;
    for (const auto& c : list_of(*entry, k::kChecks)) {
      const std::string id = c.value(std::string(k::kId), "");
      if (std::find(std::begin(kHardChecks), std::end(kHardChecks), id) != std::end(kHardChecks) &&
          c.value(std::string(k::kStatus), "") == "fail")
        failures.push_back(id + ": " + c.value(std::string(k::kDetail), ""));
    }
    const std::uint64_t errors = errors_of(*entry, failures);
    v.measured = errors;
    if (errors > static_cast<std::uint64_t>(r.max_errors))
      failures.push_back(fmt::format("{} wrong results, {} allowed", errors, r.max_errors));
    const Json tele = entry->value(std::string(k::kTelemetry), Json::object());
    if (r.max_temperature_c) {
      const Json t = tele.value(std::string(k::kTemperatureC), Json::object());
      if (!t.contains(k::kMax))
        skips.emplace_back("no temperature from the device");
      else if (t[k::kMax].get<double>() > *r.max_temperature_c)
        failures.push_back(fmt::format("temperature reached {:g} C, {:g} C allowed",
                                       t[k::kMax].get<double>(), *r.max_temperature_c));
    }
    if (auto reasons = tele.find(k::kClocksEventReasons); reasons != tele.end()) {
      for (const auto& [name, seconds] : reasons->items())
        if (seconds.get<double>() > 0 &&
            std::find(r.allowed_clock_events.begin(), r.allowed_clock_events.end(), name) ==
                r.allowed_clock_events.end())
          failures.push_back(fmt::format("clocks-event reason {} for {:g} s (allowed: {})", name,
                                         seconds.get<double>(), join(r.allowed_clock_events)));
    } else if (backend_has_telemetry(d.backend)) {
      skips.emplace_back("no clocks-event reasons from the device");
    }
    if (r.min_sustained_fraction) {
      const Json* gemm = nullptr;
      for (const auto& rec : list_of(*entry, k::kRecords))
        if (rec.value(std::string(k::kTest), "") == "gemm" &&
            rec.value(std::string(k::kStatus), "") == "ok")
          gemm = &rec;
      const std::optional<std::string> pci = d.pci_bus_id.empty() || !obs.pci_device_id
                                                 ? std::nullopt
                                                 : obs.pci_device_id(d.pci_bus_id);
      const Sku* sku = obs.skus ? find_sku(*obs.skus, pci, d.name) : nullptr;
      const Reference* ref = sku && gemm ? find_reference(*sku, "measured", "gemm",
                                                          (*gemm)[k::kDtype].get<std::string>(),
                                                          (*gemm)[k::kShape], "excluded")
                                         : nullptr;
      if (gemm == nullptr) {
        failures.emplace_back("no GEMM ran to measure the sustained throughput");
      } else if (ref == nullptr) {
        skips.push_back(fmt::format(
            "no measured GEMM reference for {} {} {}", d.name.empty() ? d.device : d.name,
            (*gemm)[k::kDtype].get<std::string>(), (*gemm)[k::kShape].dump()));
      } else {
        const double sustained = (*gemm)[k::kThroughput][k::kValue].get<double>();
        const double fraction = sustained / ref->value;
        if (fraction < *r.min_sustained_fraction)
          failures.push_back(fmt::format(
              "sustained GEMM {:.4g} {} is {:.3f} of the reference {:g} ({}), {:g} required",
              sustained, ref->unit, fraction, ref->value, ref->provenance,
              *r.min_sustained_fraction));
      }
    }
    if (!failures.empty()) {
      v.outcome = Outcome::kUnmet;
      v.reason = join(failures);
    } else if (!skips.empty()) {
      v.outcome = Outcome::kSkip;
      v.reason = "not observable here: " + join(skips);
    } else {
      v.outcome = Outcome::kMet;
    }
    out.push_back(v);
  }
  if (out.empty()) {
    Verdict v;
    v.id = r.id;
    v.kind = r.kind;
    v.line = r.line;
    v.requirement = "stress on " + r.device;
    v.outcome = Outcome::kUnmet;
    v.reason = why_no_device(r, obs.backends);
    out.push_back(v);
  }
  if (r.selector == Selector::kAny && out.size() > 1) return {pick_any(out)};
  return out;
}

}  // namespace gpucheck::qualify

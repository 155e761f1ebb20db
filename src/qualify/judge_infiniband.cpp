// One verdict per port ("mlx5_0/1": ACTIVE at rate_gbps_min or more) and one for the count of
// such ports (ports_min); ports an administrator disabled are skipped, not failed.
#include "qualify/judge_infiniband.h"
#include "qualify/judge.h"

#include "core/json_keys_infiniband.h"
#include "host/infiniband.h"

#include <fmt/format.h>

namespace gpucheck::qualify {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string text(const Json& obj, std::string_view key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

Verdict start_ib(const Requirement& r, std::string words, std::string device, std::string unit) {
  Verdict v = verdict_for(r, std::move(words), std::move(device));
  v.unit = std::move(unit);
  return v;
}

}  // namespace

std::vector<Verdict> judge_infiniband(const Requirement& r, const Observations& obs) {
  const std::string layer = r.link_layer.empty() ? "RDMA" : r.link_layer;
  const std::string rate_words =
      r.value > 0 ? fmt::format(" at ≥ {:g} Gb/sec", r.value) : std::string();
  std::vector<Verdict> out;
  std::int64_t good = 0;
  const Json devices = obs.infiniband.is_object()
                           ? obs.infiniband.value(std::string(k::kDevices), Json::array())
                           : Json::array();
  for (const auto& d : devices) {
    for (const auto& p : d.value(std::string(k::kPorts), Json::array())) {
      if (!r.link_layer.empty() && text(p, k::kLinkLayer) != r.link_layer) continue;
      const std::string port = fmt::format("{}/{}", text(d, k::kName), p.value(k::kPort, 0));
      Verdict v = start_ib(r, fmt::format("{} port ACTIVE{}", layer, rate_words), port, "Gb/sec");
      v.device_name = text(d, k::kHcaType);
      v.threshold = r.value;
      const std::string state = text(p, k::kState);
      const std::string phys = text(p, k::kPhysState);
      const std::optional<double> rate = host::port_rate_gbps(p);
      v.measured = rate ? Json(*rate) : Json();
      if (phys == "Disabled") {
        v.outcome = Outcome::kSkip;
        v.reason = "disabled by an administrator (phys_state Disabled)";
      } else if (state != "ACTIVE") {
        v.outcome = Outcome::kUnmet;
        v.reason =
            fmt::format("the port is {} ({})", state.empty() ? "in an unreadable state" : state,
                        phys.empty() ? "phys_state unreadable" : phys);
      } else if (r.value > 0 && !rate) {
        v.outcome = Outcome::kUnmet;
        v.reason = "its rate cannot be read (ports/N/rate)";
      } else if (rate.value_or(0.0) < r.value) {
        v.outcome = Outcome::kUnmet;
        v.reason = fmt::format("it runs at {}", text(p, k::kRate));
      } else {
        v.outcome = Outcome::kMet;
        ++good;
      }
      out.push_back(std::move(v));
    }
  }
  const std::int64_t want = r.devices_min.value_or(1);
  Verdict count =
      start_ib(r, fmt::format("≥ {} {} port(s) ACTIVE{}", want, layer, rate_words), "", "ports");
  count.threshold = want;
  count.measured = good;
  count.outcome = good >= want ? Outcome::kMet : Outcome::kUnmet;
  if (count.outcome == Outcome::kUnmet)
    count.reason = devices.empty()
                       ? "no RDMA adapter in /sys/class/infiniband"
                       : fmt::format("{} of the {} port(s) judged meet it", good, out.size());
  out.insert(out.begin(), std::move(count));
  return out;
}

}  // namespace gpucheck::qualify

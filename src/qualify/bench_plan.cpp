// Building the bench plans of a profile through the bench plan's own JSON reader, so a cell
// here is exactly what `gpucheck bench` would run for the same op, dtype and shape.
#include "qualify/bench_plan.h"

#include "core/json_keys.h"

#include <algorithm>

namespace gpucheck::qualify {

namespace k = keys;

std::vector<bench::BenchPlan> plan_benches(const Profile& profile,
                                           const std::vector<DeviceFacts>& devices) {
  struct Pending {
    std::string device, backend;
    nlohmann::json cells = nlohmann::json::array();
  };
  std::vector<Pending> pending{{"cpu", "cpu", nlohmann::json::array()}};
  auto add = [&](const std::string& device, const std::string& backend,
                 const nlohmann::json& cell) {
    auto it = std::find_if(pending.begin(), pending.end(),
                           [&](const auto& p) { return p.device == device; });
    if (it == pending.end())
      it = pending.insert(pending.end(), Pending{device, backend, nlohmann::json::array()});
    if (std::find(it->cells.begin(), it->cells.end(), cell) == it->cells.end())
      it->cells.push_back(cell);
  };
  for (const auto& r : profile.requirements) {
    if (r.kind != Kind::kBench) continue;
    // Copy and latency records carry no dtype; the plan still names one.
    nlohmann::json cell = {{k::kOp, r.op},
                           {k::kDtype, r.op == "copy" || r.op == "latency" ? "f32" : r.dtype},
                           {k::kShape, r.shape},
                           {"explicit", true},
                           {"explicit_size", true}};
    for (const auto& d : select_devices(r, devices)) {
      if (r.criterion == Criterion::kSpeedupMin && d.backend != "cpu") add("cpu", "cpu", cell);
      add(d.device, d.backend, cell);
    }
  }
  const auto& s = profile.bench;
  nlohmann::json policy = {
      {"warmup", s.warmup}, {"min_time_s", s.min_time_s}, {"max_time_s", s.max_time_s}};
  if (s.reps) policy["reps"] = *s.reps;
  std::vector<bench::BenchPlan> plans;
  for (const auto& p : pending) {
    if (p.cells.empty()) continue;
    nlohmann::json j = {{k::kDevice, p.device}, {k::kBackend, p.backend}, {"cells", p.cells},
                        {"policy", policy},     {"seed", s.seed},         {"threads", s.threads}};
    plans.push_back(bench::plan_from_json(j));
  }
  return plans;
}

}  // namespace gpucheck::qualify

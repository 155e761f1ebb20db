// Building the bench plans of a profile through the bench plan's own JSON reader, so a cell
// here is exactly what `gpucheck bench` would run for the same op, dtype and shape.
#include "qualify/bench_plan.h"

#include "bench/ops/op_unit.h"
#include "bench/reps.h"
#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "qualify/judge_multigpu.h"

#include <algorithm>

namespace gpucheck::qualify {

namespace k = keys;

bool needs_bench(const Profile& profile) {
  return std::any_of(profile.requirements.begin(), profile.requirements.end(),
                     [](const Requirement& r) {
                       if (r.kind == Kind::kBench) return true;
                       const auto op = op_from_string(r.op);
                       return op && runs_between_devices(*op);
                     });
}

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
    if (r.kind != Kind::kBench) continue;  // a group op's: plan_group_bench
    // An op whose records carry no dtype (copy, latency) still names one in the plan.
    nlohmann::json cell = {{k::kOp, r.op},
                           {k::kDtype, bench::records_have_dtype(r.op) ? r.dtype : "f32"},
                           {k::kShape, r.shape},
                           {"explicit", true},
                           {"explicit_size", true}};
    for (const auto& d : select_devices(r, devices)) {
      if (r.criterion == Criterion::kSpeedupMin && !backend_is_host_cpu(d.backend))
        add("cpu", "cpu", cell);
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

std::optional<bench::BenchPlan> plan_group_bench(const Profile& profile,
                                                 const std::vector<DeviceFacts>& devices,
                                                 bool network_only) {
  std::vector<DeviceFacts> members;
  for (const auto& d : devices)
    if (d.backend == group_ops_backend()) members.push_back(d);
  if (members.size() < 2) return std::nullopt;
  nlohmann::json cells = nlohmann::json::array();
  auto add = [&](const nlohmann::json& cell) {
    if (std::find(cells.begin(), cells.end(), cell) == cells.end()) cells.push_back(cell);
  };
  nlohmann::json group = nlohmann::json::array();
  for (const auto& d : members) group.push_back(d.device);
  for (const auto& r : profile.requirements) {
    const auto op = op_from_string(r.op);
    if (!op || !runs_between_devices(*op)) continue;
    if (bench::unit_of(*op).group->collective) {
      // A collective spans every device of the group.
      if (r.network_only == network_only)
        add({{k::kOp, r.op},
             {k::kDtype, "f32"},
             {k::kShape, {{k::kBytes, r.bytes}, {k::kDevices, group}}},
             {"explicit", true},
             {"explicit_size", true}});
    } else if (!network_only) {
      for (const auto& [src, dst] : p2p_pairs(r, members)) {
        // A pair naming a device that is not here is judged unmet; it is not planned.
        if (std::find(group.begin(), group.end(), src) == group.end() ||
            std::find(group.begin(), group.end(), dst) == group.end())
          continue;
        add({{k::kOp, r.op},
             {k::kDtype, "f32"},
             {k::kShape,
              {{k::kBytes, r.bytes},
               {k::kDirection, "p2p"},
               {k::kBidirectional, r.bidirectional},
               {k::kSrc, src},
               {k::kDst, dst},
               {k::kPeerAccess, r.peer_access},
               {k::kEngine, r.engine}}},
             {"explicit", true},
             {"explicit_size", true}});
      }
    }
  }
  if (cells.empty()) return std::nullopt;
  const auto& s = profile.bench;
  nlohmann::json policy = {
      {"warmup", s.warmup}, {"min_time_s", s.min_time_s}, {"max_time_s", s.max_time_s}};
  if (s.reps) policy["reps"] = *s.reps;
  policy["stable_within"] = bench::kSteadyWithin;  // copies and all-reduces settle fast
  std::string name;
  for (const auto& d : members) name += (name.empty() ? "" : ",") + d.device;
  nlohmann::json j = {{k::kDevice, name}, {k::kBackend, group_ops_backend()},
                      {"cells", cells},   {"policy", policy},
                      {"seed", s.seed},   {"threads", s.threads},
                      {"group", group}};
  bench::BenchPlan plan = bench::plan_from_json(j);
  plan.collective.network_only = network_only;
  return plan;
}

}  // namespace gpucheck::qualify

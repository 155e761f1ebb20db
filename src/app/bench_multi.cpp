// Concurrency waves of bench children and the plan of the CUDA group child.
#include "app/bench_multi.h"

#include "bench/ops/op_unit.h"

#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "core/same_gpu_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpucheck::app {

namespace k = keys;
using bench::Cell;

namespace {

// A pointer into `backends` itself: value() would copy, and a pointer into the copy dangles.
const nlohmann::json* find_section_device(const nlohmann::json& backends, const BenchTarget& t) {
  for (const auto& b : backends) {
    if (b.value(std::string(k::kName), "") != t.backend) continue;
    auto devices = b.find(k::kDevices);
    if (devices == b.end() || !devices->is_array()) continue;
    for (const auto& d : *devices)
      if (d.value(std::string(k::kDevice), "") == t.device) return &d;
  }
  return nullptr;
}

}  // namespace

std::vector<std::string> physical_keys(const BenchTarget& t, const nlohmann::json& backends) {
  if (backend_is_host_cpu(t.backend)) return {"cpu"};
  const nlohmann::json* d = find_section_device(backends, t);
  if (d == nullptr) return {};
  // pocl, lavapipe: the host's cores, which a concurrent GPU child's host side needs.
  if (device_on_host_cpu(t.backend,
                         d->value(std::string(k::kProperties), nlohmann::json::object())))
    return {"cpu"};
  const std::string uuid = d->value(std::string(k::kDeviceUuid), "");
  // A MIG slice shares its GPU: never concurrent.
  if (ascii_lower(uuid).rfind("mig-", 0) == 0) return {};
  return same_gpu_keys(d->value(std::string(k::kPciBusId), ""), uuid);
}

std::vector<std::vector<std::size_t>> concurrency_waves(const std::vector<BenchTarget>& targets,
                                                        const nlohmann::json& backends,
                                                        bool serial) {
  std::vector<std::vector<std::size_t>> waves;
  std::vector<std::set<std::string>> keys;  // physical devices of each shared wave
  std::vector<std::size_t> alone_first, alone_last;
  for (std::size_t i = 0; i < targets.size(); ++i) {
    const auto mine = serial ? std::vector<std::string>() : physical_keys(targets[i], backends);
    if (mine.empty() || mine.front() == "cpu") {
      // The CPU baseline runs before the accelerators, as it always has; the rest after them.
      (backend_is_host_cpu(targets[i].backend) ? alone_first : alone_last).push_back(i);
      continue;
    }
    auto shares = [&](const std::set<std::string>& wave) {
      return std::any_of(mine.begin(), mine.end(), [&](const auto& k) { return wave.contains(k); });
    };
    std::size_t w = 0;
    while (w < keys.size() && shares(keys[w])) ++w;
    if (w == keys.size()) {
      keys.emplace_back();
      waves.emplace_back();
    }
    keys[w].insert(mine.begin(), mine.end());
    waves[w].push_back(i);
  }
  std::vector<std::vector<std::size_t>> out;
  for (auto i : alone_first) out.push_back({i});
  for (auto& w : waves) out.push_back(std::move(w));
  for (auto i : alone_last) out.push_back({i});
  if (serial) {
    // --serial keeps the order the devices were named in.
    out.clear();
    for (std::size_t i = 0; i < targets.size(); ++i) out.push_back({i});
  }
  return out;
}

namespace {

// "n" where "a{}" before the word is "an": before a vowel.
const char* indefinite_article_n(std::string_view word) {
  return !word.empty() && std::string_view("aeiou").find(word.front()) != std::string_view::npos
             ? "n"
             : "";
}

bench::BenchPlan group_plan(const std::vector<std::string>& members, const bench::RepPolicy& policy,
                            std::uint64_t seed) {
  bench::BenchPlan plan;
  plan.backend = group_ops_backend();
  plan.group = members;
  for (const auto& d : members) plan.device += (plan.device.empty() ? "" : ",") + d;
  plan.policy = policy;
  plan.policy.stable_within = bench::kSteadyWithin;  // copies and all-reduces settle fast
  plan.seed = seed;
  return plan;
}

// Each op's unit plans its cells over the plan's group (OpUnit::group_plan):
// explicit requests (--ops named them: a cell that cannot run says why), and explicit sizes where
// the command line gave them or `every_size_given` (a rank's sizes are never scaled down).
void add_group_cells(bench::BenchPlan& plan, const GroupRequest& req, bool every_size_given) {
  for (Op op : req.ops)
    for (Cell c : bench::unit_of(op).group_plan({plan.group, req.sizes.of(op)})) {
      c.explicit_request = true;
      c.explicit_size = c.explicit_size || every_size_given || req.sizes.given.contains(op);
      plan.cells.push_back(std::move(c));
    }
}

}  // namespace

bench::BenchPlan plan_rank(const GroupRequest& req, const std::vector<std::string>& devices,
                           const bench::RepPolicy& policy, std::uint64_t seed) {
  bench::BenchPlan plan = group_plan(devices, policy, seed);
  add_group_cells(plan, req, true);
  return plan;
}

GroupPlanning plan_group(const GroupRequest& req, const std::vector<BenchTarget>& targets,
                         const bench::RepPolicy& policy, std::uint64_t seed) {
  GroupPlanning out;
  if (req.ops.empty()) return out;
  const std::string group_backend = group_ops_backend();
  std::vector<std::string> members, others;
  for (const auto& t : targets) (t.backend == group_backend ? members : others).push_back(t.device);
  auto refuse = [&](const std::string& device, const std::string& backend, Op op,
                    const std::string& why) {
    out.refused.push_back(bench::group_refusal(op, req.sizes.of(op), device, backend, why));
  };
  for (const auto& t : targets)
    if (req.refuse_other_backends && t.backend != group_backend && !backend_is_host_cpu(t.backend))
      for (Op op : req.ops)
        refuse(t.device, t.backend, op,
               fmt::format("{} runs between CUDA devices (peer access, NCCL); {} is a{} {} device",
                           bench::unit_of(op).group->what, t.device,
                           indefinite_article_n(t.backend), t.backend));
  if (members.size() < 2) {
    const std::string selected = members.empty() ? "none" : members.front();
    for (Op op : req.ops)
      refuse(members.empty() ? targets.front().device : members.front(),
             members.empty() ? targets.front().backend : group_backend, op,
             fmt::format("{} needs at least two CUDA devices; the selection has {} ({}): name "
                         "them with --device cuda0,cuda1 or --device all",
                         bench::unit_of(op).group->what, members.size(), selected));
    return out;
  }
  bench::BenchPlan plan = group_plan(members, policy, seed);
  add_group_cells(plan, req, false);
  out.plan = std::move(plan);
  return out;
}

}  // namespace gpucheck::app

// Spawns the bench children of the load run and folds their records into one entry a device.
#include "doctor/under_load.h"

#include "bench/ops/op_unit.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/pair_schedule.h"
#include "core/shape_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// PCIe traffic trains the link up to its best generation; tensor-core work loads the clocks.
bench::BenchPlan load_plan(const std::string& device, double seconds) {
  const bench::Cell copy =
      bench::planned_cell(DType::kF32, CopyShape{256u << 20, Direction::kH2d, HostMemory::kPinned});
  const bench::Cell gemm = bench::planned_cell(DType::kF16, GemmShape{4096, 4096, 4096});
  bench::RepPolicy policy;
  policy.warmup = 1;
  policy.min_time_s = seconds / 2;
  policy.max_time_s = seconds;
  bench::BenchPlan plan;  // tuning stays off: the load never tunes
  plan.device = device;
  plan.backend = "cuda";
  plan.cells = {copy, gemm};
  plan.policy = policy;
  return plan;
}

// The least timed work a peer copy aims at: a few repetitions of 16 copies at NVLink speed
// (about 11 ms each at 400 GB/s); bench's three-repetition minimum still applies.
constexpr double kMinPairSeconds = 0.05;

std::vector<std::string> device_names(const Json& cuda) {
  std::vector<std::string> out;
  for (const auto& d : cuda.value(std::string(k::kDevices), Json::array()))
    out.push_back(d.value(std::string(k::kDevice), ""));
  return out;
}

void widen(Json& range, const Json& stat) {
  if (!stat.is_object() || !stat.contains("min") || !stat.contains("max")) return;
  const double lo = stat["min"].get<double>(), hi = stat["max"].get<double>();
  if (range.is_null()) {
    range = {{"min", lo}, {"max", hi}};
    return;
  }
  range["min"] = std::min(range["min"].get<double>(), lo);
  range["max"] = std::max(range["max"].get<double>(), hi);
}

}  // namespace

LoadSteps load_steps(const std::vector<std::string_view>& check_ids, bool quick, bool no_load) {
  auto any_of = [&](std::initializer_list<std::string_view> ids) {
    return std::any_of(check_ids.begin(), check_ids.end(), [&](std::string_view id) {
      return std::find(ids.begin(), ids.end(), id) != ids.end();
    });
  };
  LoadSteps steps;
  if (quick || no_load) return steps;
  steps.peer_copies = any_of({"nvlink_errors", "p2p_access"});
  steps.devices =
      steps.peer_copies || any_of({"pcie_link_under_load", "clocks_under_load", "gpu_siblings"});
  return steps;
}

Json summarise_load_records(const Json& records) {
  Json out = Json::object();
  std::set<std::string> reasons;
  bool have_reasons = false;
  std::size_t samples = 0;
  Json gen, width;
  std::vector<std::string> problems;
  Json figures = Json::array();
  for (const auto& r : records) {
    const std::string status = r.value(std::string(k::kStatus), "");
    if (status != "ok")
      problems.push_back(fmt::format("{} {}: {}", r.value(std::string(k::kOp), ""), status,
                                     r.value(std::string(k::kReason), "")));
    const Json ctx = r.value(std::string(k::kContext), Json::object());
    samples += ctx.value(std::string(k::kNvmlSamples), std::size_t{0});
    if (ctx.contains(k::kClocksEventReasons)) {
      have_reasons = true;
      for (const auto& n : ctx[std::string(k::kClocksEventReasons)])
        reasons.insert(n.get<std::string>());
    }
    if (ctx.contains(k::kPcieLinkGen)) widen(gen, ctx[std::string(k::kPcieLinkGen)]);
    if (ctx.contains(k::kPcieLinkWidth)) widen(width, ctx[std::string(k::kPcieLinkWidth)]);
    // The figure gpu_siblings compares across GPUs of one model, and its own noise.
    const Json tp = r.value(std::string(k::kThroughput), Json::object());
    const Json ts = r.value(std::string(k::kTimeS), Json::object());
    if (status == "ok" && tp.contains(k::kValue) && ts.contains(k::kMedian) &&
        r.value(std::string(k::kTransfers), "") == "excluded") {
      const double median = ts[std::string(k::kMedian)].get<double>();
      const double stddev = ts.value(std::string(k::kStddev), 0.0);
      std::string name = r.value(std::string(k::kOp), "");
      if (r.contains(k::kDtype)) name += " " + r[std::string(k::kDtype)].get<std::string>();
      if (r.contains(k::kShape)) name += " " + shape_text(r[std::string(k::kShape)]);
      figures.push_back({{k::kName, name},
                         {k::kValue, tp[std::string(k::kValue)]},
                         {k::kUnit, tp.value(std::string(k::kUnit), "")},
                         {k::kSpread, median > 0 ? stddev / median : 0.0}});
    }
  }
  if (!figures.empty()) out[k::kFigures] = figures;
  out[k::kNvmlSamples] = samples;
  if (have_reasons) out[k::kClocksEventReasons] = reasons;
  if (!gen.is_null()) out[k::kPcieLinkGen] = gen;
  if (!width.is_null()) out[k::kPcieLinkWidth] = width;
  if (!problems.empty()) out[k::kErrors] = problems;
  return out;
}

Json run_cuda_load(const Json& cuda, double seconds, const LoadObserver& observer) {
  Json out = Json::array();
  if (cuda.value(std::string(k::kStatus), "") != "available") return out;
  const std::vector<std::string> devices = device_names(cuda);
  if (devices.empty()) return out;
  // Every child is spawned before any is waited for (run_children): the GPUs load at once.
  std::vector<ChildSpec> specs;
  for (const auto& d : cuda[std::string(k::kDevices)]) {
    ChildSpec::Env env = load_child_env(d);
    // The child sees its one GPU as cuda0.
    const std::string name = env.empty() ? d.value(std::string(k::kDevice), "") : "cuda0";
    specs.push_back(
        {{"__child", "bench", "--plan", bench::to_json(load_plan(name, seconds)).dump()}, env});
  }
  ChildLimits limits;
  // Inputs, cuBLAS set-up and verification come on top of the timed work.
  limits.timeout = std::chrono::duration<double>(4 * seconds + 60);
  limits.max_output = 16u << 20;
  // The children stream their events, read here once: each "cell" line is one step of the load's
  // progress, when each line came is the child's timeline (where its seconds beyond the load
  // go), and the "record" lines are what the load measured.
  std::vector<std::string> pending(devices.size());
  std::vector<Json> records(devices.size(), Json::array());
  std::vector<Json> timelines(devices.size(),
                              Json{{k::kReadyS, nullptr}, {k::kCells, Json::array()}});
  std::size_t started = 0;
  const std::size_t total = 2 * devices.size();
  const auto spawned = std::chrono::steady_clock::now();
  auto watch = [&](std::size_t child, std::string_view chunk) {
    const double at =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - spawned).count();
    pending[child].append(chunk);
    for (auto nl = pending[child].find('\n'); nl != std::string::npos;
         nl = pending[child].find('\n')) {
      auto ev = parse_json_or_discarded(std::string_view(pending[child]).substr(0, nl));
      pending[child].erase(0, nl + 1);
      if (!ev.is_object()) continue;
      const std::string event = ev.value("event", "");
      if (event == "record") records[child].push_back(std::move(ev["record"]));
      if (event == "plan") timelines[child][k::kReadyS] = at;
      if (event != "cell") continue;
      timelines[child][k::kCells].push_back({{k::kLabel, ev.value("label", "")}, {k::kStartS, at}});
      if (observer) observer(devices[child], ev.value("label", ""), ++started, total);
    }
  };
  const auto results = run_children(specs, limits, watch);
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const ChildResult& r = results[i];
    Json entry = summarise_load_records(records[i]);
    entry[k::kDevice] = devices[i];
    entry[k::kWorkload] = fmt::format(
        "pinned host-to-device copies of 256 MiB, then f16 GEMM 4096x4096x4096, about {} s each",
        seconds / 2);
    entry[k::kSeconds] = r.seconds;
    entry[k::kTimeline] = std::move(timelines[i]);
    if (r.exited_ok() && !records[i].empty()) {
      entry[k::kStatus] = "ok";
    } else {
      entry[k::kStatus] = "failed";
      entry[k::kReason] =
          fmt::format("the load child {}", r.describe(limits.timeout, limits.max_output));
    }
    out.push_back(std::move(entry));
  }
  return out;
}

ChildSpec::Env load_child_env(const Json& device) {
  const std::string uuid = device.value(std::string(k::kDeviceUuid), "");
  const Json nvml = device.value(std::string(k::kProperties), Json::object())
                        .value(std::string(k::kNvml), Json::object());
  if (uuid.rfind("GPU-", 0) != 0 || nvml.value(std::string(k::kDeviceUuid), "") != uuid ||
      nvml.value("mig_mode_current", false))
    return {};
  return {{"CUDA_VISIBLE_DEVICES", uuid}};
}

bench::BenchPlan cuda_p2p_load_plan(const std::vector<std::string>& devices, double seconds) {
  bench::BenchPlan plan;
  plan.backend = "cuda";
  plan.group = devices;
  for (const auto& d : devices) plan.device += (plan.device.empty() ? "" : ",") + d;
  const auto rounds = directed_pair_rounds(devices.size());
  plan.policy.warmup = 1;
  plan.policy.min_time_s = std::max(
      kMinPairSeconds, seconds / 2 / static_cast<double>(std::max<std::size_t>(rounds.size(), 1)));
  // A PCIe pair's repetition takes about 0.2 s: room for the warm-up and three timed ones.
  plan.policy.max_time_s = std::max(seconds / 2, 4 * plan.policy.min_time_s);
  for (const auto& round : rounds)
    for (const auto& [s, d] : round) {
      bench::Cell c = bench::planned_cell(
          DType::kF32,
          bench::P2pShape{256u << 20, false, devices[s], devices[d], true, bench::CopyEngine::kCe});
      c.explicit_request = true;
      plan.cells.push_back(c);
    }
  return plan;
}

Json run_cuda_p2p_load(const Json& cuda, double seconds) {
  Json out = Json::array();
  if (cuda.value(std::string(k::kStatus), "") != "available") return out;
  const std::vector<std::string> devices = device_names(cuda);
  if (devices.size() < 2) return out;
  const bench::BenchPlan plan = cuda_p2p_load_plan(devices, seconds);
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(plan.cells.size() * (seconds + 30) + 60);
  limits.max_output = 16u << 20;
  const auto results =
      run_children({{{"__child", "bench", "--plan", bench::to_json(plan).dump()}, {}}}, limits);
  const ChildResult& r = results.front();
  std::istringstream lines(r.out);
  const std::string workload = fmt::format(
      "copy-engine copies of 256 MiB with peer access, pairs that share no GPU at "
      "once, up to about {:.2g} s a pair",
      plan.policy.min_time_s);
  for (std::string line; std::getline(lines, line);) {
    auto ev = parse_json_or_discarded(line);
    if (!ev.is_object() || ev.value("event", "") != "record") continue;
    const Json rec = ev["record"];
    const Json shape = rec.value(std::string(k::kShape), Json::object());
    Json e = {{k::kSrc, shape.value(std::string(k::kSrc), "")},
              {k::kDst, shape.value(std::string(k::kDst), "")},
              {k::kStatus, rec.value(std::string(k::kStatus), "")},
              {k::kWorkload, workload}};
    if (rec.contains(k::kReason)) e[k::kReason] = rec[std::string(k::kReason)];
    if (rec.contains(k::kThroughput))
      e[k::kGbps] = rec[std::string(k::kThroughput)].value(std::string(k::kValue), 0.0);
    out.push_back(e);
  }
  if (!r.exited_ok() && out.size() < plan.cells.size())
    out.push_back({{k::kStatus, "failed"},
                   {k::kReason, fmt::format("the peer-copy load child {}",
                                            r.describe(limits.timeout, limits.max_output))},
                   {k::kWorkload, workload}});
  return out;
}

Json read_counters_after(const std::string& backend) {
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(60);
  limits.max_output = 4u << 20;
  const auto results = run_children({{{"__child", "counters", "--backend", backend}, {}}}, limits);
  const ChildResult& r = results.front();
  if (r.exited_ok()) {
    auto j = parse_json_or_discarded(r.out);
    if (j.is_object()) return j;
  }
  return {{k::kLoaded, false},
          {k::kError,
           fmt::format("the counters child {}", r.describe(limits.timeout, limits.max_output))}};
}

}  // namespace gpucheck::doctor

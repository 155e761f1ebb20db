// Running one device's bench plan in its own child, reading its stream of JSON event lines.
// (Moved out of bench_command.cpp so qualify runs benches through the same path.)
#include "app/bench_run.h"

#include "core/child_process.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <optional>
#include <set>

namespace gpucheck::app {

namespace k = keys;
using bench::Cell;

void Progress::show(const std::string& device, std::size_t index, std::size_t total,
                    const std::string& what) {
  if (!enabled_) return;
  std::string line = fmt::format("[{} {}/{}] {}", device, index + 1, total, what);
  if (line.size() > 78) line.resize(78);
  std::fprintf(stderr, "\r\x1b[K%s", line.c_str());
  std::fflush(stderr);
}

void Progress::clear() {
  if (enabled_) std::fprintf(stderr, "\r\x1b[K");
}

namespace {

// One child's stream of JSON event lines, parsed as it arrives.
struct ChildStream {
  const BenchTarget* target = nullptr;
  const bench::BenchPlan* plan = nullptr;
  std::string pending;
  std::vector<nlohmann::json> records;
  std::optional<std::size_t> current;
  bool current_recorded = false;  // the cell in progress already wrote a record

  void line(const std::string& text, Progress& progress) {
    if (text.empty()) return;
    auto ev = nlohmann::json::parse(text, nullptr, false);
    if (!ev.is_object()) return;  // not one of our event lines
    if (ev.value("event", "") == "cell") {
      current = ev.value("index", std::size_t{0});
      current_recorded = false;
      progress.show(target->device, *current, plan->cells.size(), ev.value("label", ""));
    } else if (ev.value("event", "") == "record") {
      records.push_back(ev["record"]);
      current_recorded = true;
    } else if (ev.value("event", "") == "tune") {
      progress.show(target->device, current.value_or(0), plan->cells.size(), ev.value("label", ""));
    } else if (ev.value("event", "") == "log") {
      progress.clear();  // a log line must not land inside the progress line
      const std::string message = target->device + ": " + ev.value("message", "");
      if (ev.value("level", "") == "warn")
        spdlog::warn("{}", message);
      else
        spdlog::info("{}", message);
    }
  }
};

// A child that did not end well: the cell in progress and every later one are failed with its
// fate, so no cell silently disappears.
DeviceRun finish(ChildStream& c, const ChildResult& r, const ChildLimits& limits) {
  DeviceRun out;
  if (!r.exited_ok()) {
    std::string why = fmt::format("bench child {}", r.describe(limits.timeout, limits.max_output));
    std::size_t nl = r.err.find_last_not_of("\n ");
    if (nl != std::string::npos) {
      std::size_t start = r.err.rfind('\n', nl);
      why += ": " + r.err.substr(start == std::string::npos ? 0 : start + 1,
                                 nl - (start == std::string::npos ? 0 : start + 1) + 1);
    }
    if (c.records.empty()) out.child_died_silently = true;
    spdlog::error("{}: {}", c.target->device, why);
    std::size_t from = c.current ? *c.current + (c.current_recorded ? 1 : 0) : 0;
    for (std::size_t i = from; i < c.plan->cells.size(); ++i) {
      const Cell& cell = c.plan->cells[i];
      nlohmann::json rec = {
          {k::kDevice, c.target->device},
          {k::kBackend, c.target->backend},
          {k::kOp, gpucheck::to_string(cell.op)},
          {k::kImpl, "unknown"},
          {k::kShape, bench::shape_to_json(cell.shape)},
          {k::kTransfers, "excluded"},
          {k::kStatus, "failed"},
          {k::kReason, i == from && !c.current_recorded ? why : "not run: " + why}};
      if (cell.op != Op::kCopy && cell.op != Op::kLatency && cell.op != Op::kP2p)
        rec[k::kDtype] = gpucheck::to_string(cell.dtype);
      c.records.push_back(rec);
    }
  }
  out.records = std::move(c.records);
  return out;
}

}  // namespace

std::vector<DeviceRun> run_devices(const std::vector<BenchTarget>& targets,
                                   const std::vector<bench::BenchPlan>& plans, Progress& progress,
                                   const ChildEnvChanges& env) {
  ChildLimits limits;
  // A cell may use its --max-time budget once per record (device time, end to end) plus time to
  // make inputs and verify; a child gets the sum (children running at once: the largest sum).
  double budget = 60;
  for (const auto& plan : plans) {
    double b = 60;
    for (std::size_t i = 0; i < plan.cells.size(); ++i) b += 2 * plan.policy.max_time_s + 60;
    // Tuning (issue 20) may come before each dtype's first GEMM or conv: its budget, the defaults
    // it times first (a CLBlast build takes half a minute on pocl) and one candidate beyond.
    if (plan.tuning.mode != TuningMode::kOff) {
      std::set<DType> dtypes;
      for (const auto& c : plan.cells)
        if (c.op == Op::kGemm || c.op == Op::kConv) dtypes.insert(c.dtype);
      b += static_cast<double>(dtypes.size()) * (plan.tuning.budget_s.value_or(60) * 1.5 + 120);
    }
    budget = std::max(budget, b);
  }
  limits.timeout = std::chrono::duration<double>(budget);
  limits.max_output = 256u << 20;
  std::vector<ChildStream> streams(plans.size());
  std::vector<ChildSpec> specs;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    streams[i].target = &targets[i];
    streams[i].plan = &plans[i];
    specs.push_back({{"__child", "bench", "--plan", bench::to_json(plans[i]).dump()}, env});
  }
  auto results = run_children(specs, limits, [&](std::size_t child, std::string_view chunk) {
    ChildStream& c = streams[child];
    c.pending.append(chunk);
    for (auto nl = c.pending.find('\n'); nl != std::string::npos; nl = c.pending.find('\n')) {
      c.line(c.pending.substr(0, nl), progress);
      c.pending.erase(0, nl + 1);
    }
  });
  std::vector<DeviceRun> out;
  for (std::size_t i = 0; i < plans.size(); ++i) {
    streams[i].line(streams[i].pending, progress);
    out.push_back(finish(streams[i], results[i], limits));
  }
  return out;
}

DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan, Progress& progress,
                     const ChildEnvChanges& env) {
  return run_devices({target}, {plan}, progress, env).front();
}

}  // namespace gpucheck::app

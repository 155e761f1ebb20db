// Running one device's bench plan in its own child, reading its stream of JSON event lines.
// (Moved out of bench_command.cpp so qualify runs benches through the same path.)
#include "app/bench_run.h"

#include "bench/ops/op_unit.h"
#include "core/child_process.h"
#include "core/json_input.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <set>

namespace gpucheck::app {

namespace k = keys;
using bench::Cell;

BenchProgress::BenchProgress(Progress& progress, const std::vector<bench::BenchPlan>& plans)
    : progress_(progress) {
  std::vector<RunEstimate::Device> devices;
  for (const auto& p : plans) {
    RunEstimate::Device d{p.device, p.cells.size(), bench::effective_rounds(p.policy), {}};
    for (const auto& c : p.cells) {
      const bool searches = p.tuning.mode != TuningMode::kOff && bench::unit_of(c.op).tunes_gemm;
      d.search_keys.push_back(searches ? std::string(gpucheck::to_string(c.dtype)) : "");
    }
    totals_[p.device] += p.cells.size() * static_cast<std::size_t>(std::max(d.rounds, 1));
    devices.push_back(std::move(d));
  }
  estimate_ = std::make_shared<RunEstimate>(devices);
  if (const char* t = std::getenv("GPUCHECK_PROGRESS_TRACE"); t != nullptr && *t != '\0') {
    trace_path_ = t;
    // The cells' labels too, for a person reading the trace.
    nlohmann::json plan = nlohmann::json::array();
    for (std::size_t i = 0; i < plans.size(); ++i) {
      nlohmann::json labels = nlohmann::json::array();
      for (const auto& c : plans[i].cells) labels.push_back(bench::describe(c));
      plan.push_back({{"device", devices[i].name},
                      {"rounds", devices[i].rounds},
                      {"cells", labels},
                      {"search_keys", devices[i].search_keys}});
    }
    trace({{"event", "plan"}, {"devices", plan}});
  }
}

BenchProgress::~BenchProgress() {
  trace({{"event", "done"}});
}

BenchProgress& BenchProgress::silent() {
  static Progress off("", Progress::Mode::kOff, 10, {});
  static BenchProgress none(off, {});
  return none;
}

double BenchProgress::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void BenchProgress::trace(nlohmann::json event) {
  if (trace_path_.empty()) return;
  event["t"] = now();
  std::ofstream(trace_path_, std::ios::app) << event.dump() << "\n";
}

void BenchProgress::device_planned(const std::string& device, std::size_t units,
                                   const std::vector<bool>& runs) {
  totals_[device] = units;
  {
    std::lock_guard lock(*mu_);
    estimate_->planned(device, units, runs);
  }
  trace({{"event", "planned"}, {"device", device}, {"units", units}, {"runs", runs}});
}

void BenchProgress::cell_started(const std::string& device, std::size_t index, std::size_t ordinal,
                                 const std::string& label) {
  ordinal_[device] = ordinal;
  {
    std::lock_guard lock(*mu_);
    estimate_->started(device, index, now());
  }
  trace({{"event", "start"}, {"device", device}, {"cell", index}});
  show(device, label);
}

void BenchProgress::device_ended(const std::string& device) {
  {
    std::lock_guard lock(*mu_);
    estimate_->ended(device, now());
  }
  trace({{"event", "end"}, {"device", device}});
}

void BenchProgress::working(const std::string& device, const std::string& what, double budget_s) {
  // A child's number is not trusted blindly: a negative or non-finite budget counts as none.
  const double budget = std::isfinite(budget_s) && budget_s > 0 ? budget_s : 0;
  {
    std::lock_guard lock(*mu_);
    estimate_->once(device, budget);
  }
  trace({{"event", "once"}, {"device", device}, {"budget_s", budget}});
  show(device, what);
}

void BenchProgress::show(const std::string& device, const std::string& what) {
  const auto here = totals_.find(device);
  const auto ordinal = ordinal_.find(device);
  ProgressState s{fmt::format("{} {}/{}", device, ordinal == ordinal_.end() ? 0 : ordinal->second,
                              here == totals_.end() ? 0 : here->second),
                  what,
                  0,
                  0,
                  {}};
  // The ticker may call this after the run: it shares the estimate, not this object.
  const auto start = start_;
  s.left = [mu = mu_, estimate = estimate_, start]() -> std::optional<double> {
    std::lock_guard lock(*mu);
    return estimate->remaining(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  progress_.update(std::move(s));
}

namespace {

// One child's stream of JSON event lines, parsed as it arrives.
struct ChildStream {
  const BenchTarget* target = nullptr;
  const bench::BenchPlan* plan = nullptr;
  std::string pending;
  // Per cell of the plan: a cell's records come after its last round (bench --rounds), so a
  // child that dies leaves cells with and without records in any order.
  std::vector<std::vector<nlohmann::json>> by_cell;
  std::optional<std::size_t> current;

  void line(const std::string& text, BenchProgress& progress) {
    if (text.empty()) return;
    auto ev = parse_json_or_discarded(text);
    if (!ev.is_object()) return;  // not one of our event lines
    const std::size_t index = ev.value("index", std::size_t{0});
    if (ev.value("event", "") == "plan") {
      std::vector<bool> runs(plan->cells.size(), !ev.contains("runs"));
      for (const auto& i : ev.value("runs", nlohmann::json::array()))
        if (i.is_number_unsigned() && i.get<std::size_t>() < runs.size())
          runs[i.get<std::size_t>()] = true;
      progress.device_planned(target->device, ev.value("cells", plan->cells.size()), runs);
    } else if (ev.value("event", "") == "cell" && index < by_cell.size()) {
      current = index;
      std::string label = ev.value("label", "");
      if (int of = ev.value("rounds", 1); of > 1)
        label += fmt::format(" (round {}/{})", ev.value("round", 0) + 1, of);
      progress.cell_started(target->device, index, ev.value("ordinal", index + 1), label);
    } else if (ev.value("event", "") == "record" && index < by_cell.size()) {
      by_cell[index].push_back(ev["record"]);
    } else if (ev.value("event", "") == "tune") {
      progress.working(target->device, ev.value("label", ""), ev.value("budget_s", 0.0));
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

// The records in plan order. A child that did not end well: every cell without a record is
// failed, the one in progress with the child's fate and the others "not run" (their rounds, if
// any, died with the child), so no cell silently disappears.
DeviceRun finish(ChildStream& c, const ChildResult& r, const ChildLimits& limits) {
  DeviceRun out;
  bool any_record = false;
  for (const auto& cell_records : c.by_cell) any_record = any_record || !cell_records.empty();
  if (!r.exited_ok()) {
    std::string why = fmt::format("bench child {}", r.describe(limits.timeout, limits.max_output));
    std::size_t nl = r.err.find_last_not_of("\n ");
    if (nl != std::string::npos) {
      std::size_t start = r.err.rfind('\n', nl);
      why += ": " + r.err.substr(start == std::string::npos ? 0 : start + 1,
                                 nl - (start == std::string::npos ? 0 : start + 1) + 1);
    }
    if (!any_record) out.child_died_silently = true;
    spdlog::error("{}: {}", c.target->device, why);
    for (std::size_t i = 0; i < c.plan->cells.size(); ++i) {
      if (!c.by_cell[i].empty()) continue;
      const Cell& cell = c.plan->cells[i];
      nlohmann::json rec = {{k::kDevice, c.target->device},
                            {k::kBackend, c.target->backend},
                            {k::kOp, gpucheck::to_string(cell.op)},
                            {k::kImpl, "unknown"},
                            {k::kShape, bench::shape_to_json(cell.shape)},
                            {k::kTransfers, "excluded"},
                            {k::kStatus, "failed"},
                            {k::kReason, c.current && i == *c.current ? why : "not run: " + why}};
      if (bench::unit_of(cell.op).has_dtype) rec[k::kDtype] = gpucheck::to_string(cell.dtype);
      c.by_cell[i].push_back(std::move(rec));
    }
  }
  for (auto& cell_records : c.by_cell)
    for (auto& rec : cell_records) out.records.push_back(std::move(rec));
  return out;
}

}  // namespace

std::vector<DeviceRun> run_devices(const std::vector<BenchTarget>& targets,
                                   const std::vector<bench::BenchPlan>& plans,
                                   BenchProgress& progress, const ChildEnvChanges& env) {
  ChildLimits limits;
  // A cell may use its --max-time budget once per record (device time, end to end) plus time to
  // make inputs and verify in every round; a child gets the sum (children running at once: the
  // largest sum).
  double budget = 60;
  for (const auto& plan : plans) {
    double b = 60;
    const int rounds = bench::effective_rounds(plan.policy);
    for (std::size_t i = 0; i < plan.cells.size(); ++i)
      b += 2 * plan.policy.max_time_s + 60.0 * rounds;
    // Tuning may come before each dtype's first GEMM or conv: its budget, the defaults
    // it times first (a CLBlast build takes half a minute on pocl) and one candidate beyond.
    if (plan.tuning.mode != TuningMode::kOff) {
      std::set<DType> dtypes;
      for (const auto& c : plan.cells)
        if (bench::unit_of(c.op).tunes_gemm) dtypes.insert(c.dtype);
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
    streams[i].by_cell.resize(plans[i].cells.size());
    // The plan goes through stdin: 2,000 sizes are more than argv may hold.
    specs.push_back({{"__child", "bench", "--plan", "-"}, env, bench::to_json(plans[i]).dump()});
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
    progress.device_ended(targets[i].device);
    out.push_back(finish(streams[i], results[i], limits));
  }
  return out;
}

DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan,
                     BenchProgress& progress, const ChildEnvChanges& env) {
  return run_devices({target}, {plan}, progress, env).front();
}

}  // namespace gpucheck::app

// Running one device's bench plan in its own child, reading its stream of JSON event lines.
// (Moved out of bench_command.cpp so qualify runs benches through the same path.)
#include "app/bench_run.h"

#include "core/child_process.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <optional>

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

DeviceRun run_device(const BenchTarget& target, const bench::BenchPlan& plan, Progress& progress,
                     const std::map<std::string, std::optional<std::string>>& env) {
  ChildLimits limits;
  // A cell may use its --max-time budget once per record (device time, end to end) plus time to
  // make inputs and verify; the whole child gets the sum.
  double budget = 60;
  for (std::size_t i = 0; i < plan.cells.size(); ++i) budget += 2 * plan.policy.max_time_s + 60;
  limits.timeout = std::chrono::duration<double>(budget);
  limits.max_output = 256u << 20;

  std::string pending;
  std::vector<nlohmann::json> records;
  std::optional<std::size_t> current;
  bool current_recorded = false;  // the cell in progress already wrote a record
  auto handle_line = [&](const std::string& line) {
    if (line.empty()) return;
    auto ev = nlohmann::json::parse(line, nullptr, false);
    if (!ev.is_object()) return;  // not one of our event lines
    if (ev.value("event", "") == "cell") {
      current = ev.value("index", std::size_t{0});
      current_recorded = false;
      progress.show(target.device, *current, plan.cells.size(), ev.value("label", ""));
    } else if (ev.value("event", "") == "record") {
      records.push_back(ev["record"]);
      current_recorded = true;
    }
  };
  ChildSpec spec{{"__child", "bench", "--plan", bench::to_json(plan).dump()}, env};
  auto results = run_children({spec}, limits, [&](std::size_t, std::string_view chunk) {
    pending.append(chunk);
    for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
      handle_line(pending.substr(0, nl));
      pending.erase(0, nl + 1);
    }
  });
  handle_line(pending);
  const ChildResult& r = results.front();
  DeviceRun out;
  if (!r.exited_ok()) {
    std::string why = fmt::format("bench child {}", r.describe(limits.timeout, limits.max_output));
    std::size_t nl = r.err.find_last_not_of("\n ");
    if (nl != std::string::npos) {
      std::size_t start = r.err.rfind('\n', nl);
      why += ": " + r.err.substr(start == std::string::npos ? 0 : start + 1,
                                 nl - (start == std::string::npos ? 0 : start + 1) + 1);
    }
    if (records.empty()) out.child_died_silently = true;
    spdlog::error("{}: {}", target.device, why);
    // The cell in progress and every later one are failed with the child's fate.
    std::size_t from = current ? *current + (current_recorded ? 1 : 0) : 0;
    for (std::size_t i = from; i < plan.cells.size(); ++i) {
      const Cell& c = plan.cells[i];
      nlohmann::json rec = {{k::kDevice, target.device},
                            {k::kBackend, target.backend},
                            {k::kOp, gpucheck::to_string(c.op)},
                            {k::kImpl, "unknown"},
                            {k::kShape, bench::shape_to_json(c.shape)},
                            {k::kTransfers, "excluded"},
                            {k::kStatus, "failed"},
                            {k::kReason, i == from && !current_recorded ? why : "not run: " + why}};
      if (c.op != Op::kCopy && c.op != Op::kLatency) rec[k::kDtype] = gpucheck::to_string(c.dtype);
      records.push_back(rec);
    }
  }
  out.records = std::move(records);
  return out;
}

}  // namespace gpucheck::app

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
  // make inputs and verify in every round; the whole child gets the sum.
  double budget = 60;
  const int rounds = bench::effective_rounds(plan.policy);
  for (std::size_t i = 0; i < plan.cells.size(); ++i)
    budget += 2 * plan.policy.max_time_s + 60.0 * rounds;
  limits.timeout = std::chrono::duration<double>(budget);
  limits.max_output = 256u << 20;

  std::string pending;
  std::vector<std::vector<nlohmann::json>> by_cell(plan.cells.size());
  std::optional<std::size_t> current;
  auto handle_line = [&](const std::string& line) {
    if (line.empty()) return;
    auto ev = nlohmann::json::parse(line, nullptr, false);
    if (!ev.is_object()) return;  // not one of our event lines
    const std::size_t index = ev.value("index", std::size_t{0});
    if (index >= by_cell.size()) return;
    if (ev.value("event", "") == "cell") {
      current = index;
      std::string label = ev.value("label", "");
      if (int of = ev.value("rounds", 1); of > 1)
        label += fmt::format(" (round {}/{})", ev.value("round", 0) + 1, of);
      progress.show(target.device, index, plan.cells.size(), label);
    } else if (ev.value("event", "") == "record") {
      by_cell[index].push_back(ev["record"]);
    }
  };
  // The plan goes through stdin: 2,000 sizes are more than argv may hold.
  ChildSpec spec{{"__child", "bench", "--plan", "-"}, env, bench::to_json(plan).dump()};
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
  std::vector<nlohmann::json> records;
  bool any_record = false;
  for (const auto& cell_records : by_cell) any_record = any_record || !cell_records.empty();
  if (r.exited_ok()) {
    for (auto& cell_records : by_cell)
      for (auto& rec : cell_records) records.push_back(std::move(rec));
  } else {
    std::string why = fmt::format("bench child {}", r.describe(limits.timeout, limits.max_output));
    std::size_t nl = r.err.find_last_not_of("\n ");
    if (nl != std::string::npos) {
      std::size_t start = r.err.rfind('\n', nl);
      why += ": " + r.err.substr(start == std::string::npos ? 0 : start + 1,
                                 nl - (start == std::string::npos ? 0 : start + 1) + 1);
    }
    if (!any_record) out.child_died_silently = true;
    spdlog::error("{}: {}", target.device, why);
    // Every cell without a record is failed: the one in progress with the child's fate, the
    // others "not run" (their rounds, if any, died with the child).
    for (std::size_t i = 0; i < plan.cells.size(); ++i) {
      if (!by_cell[i].empty()) {
        for (auto& rec : by_cell[i]) records.push_back(std::move(rec));
        continue;
      }
      const Cell& c = plan.cells[i];
      nlohmann::json rec = {{k::kDevice, target.device},
                            {k::kBackend, target.backend},
                            {k::kOp, gpucheck::to_string(c.op)},
                            {k::kImpl, "unknown"},
                            {k::kShape, bench::shape_to_json(c.shape)},
                            {k::kTransfers, "excluded"},
                            {k::kStatus, "failed"},
                            {k::kReason, current && i == *current ? why : "not run: " + why}};
      if (c.op != Op::kCopy && c.op != Op::kLatency) rec[k::kDtype] = gpucheck::to_string(c.dtype);
      records.push_back(rec);
    }
  }
  out.records = std::move(records);
  return out;
}

}  // namespace gpucheck::app

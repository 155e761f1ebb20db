// Cells and plans to and from JSON: the parent sends a plan to the bench child as JSON.
#include "bench/cell.h"

#include "bench/ops/op_unit.h"
#include "core/json_keys.h"
#include "core/shape_text.h"

#include <fmt/format.h>

#include <stdexcept>

namespace gpucheck::bench {

namespace k = keys;

std::string_view to_string(CopyEngine e) {
  return e == CopyEngine::kSm ? "sm" : "ce";
}

namespace {

Shape shape_from_json(Op op, const nlohmann::json& j) {
  return unit_of(op).shape_from_json(j);
}

}  // namespace

nlohmann::json shape_to_json(const Shape& shape) {
  return unit_of(op_of(shape)).shape_to_json(shape);
}

nlohmann::json to_json(const Cell& cell) {
  nlohmann::json j = {{k::kOp, to_string(cell.op)},
                      {k::kDtype, to_string(cell.dtype)},
                      {k::kShape, shape_to_json(cell.shape)},
                      {"explicit", cell.explicit_request},
                      {"explicit_size", cell.explicit_size}};
  if (cell.scaled_from) j[k::kScaledFrom] = *cell.scaled_from;
  return j;
}

nlohmann::json to_json(const BenchPlan& plan) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : plan.cells) cells.push_back(to_json(c));
  nlohmann::json policy = {{"warmup", plan.policy.warmup},
                           {"min_time_s", plan.policy.min_time_s},
                           {"max_time_s", plan.policy.max_time_s},
                           {"rounds", plan.policy.rounds}};
  if (plan.policy.reps) policy["reps"] = *plan.policy.reps;
  if (plan.policy.stable_within > 0) policy["stable_within"] = plan.policy.stable_within;
  nlohmann::json tuning = {{"mode", to_string(plan.tuning.mode)}};
  if (plan.tuning.budget_s) tuning["budget_s"] = *plan.tuning.budget_s;
  nlohmann::json j = {
      {k::kDevice, plan.device}, {k::kBackend, plan.backend}, {"cells", cells},  {"policy", policy},
      {"seed", plan.seed},       {"threads", plan.threads},   {"tuning", tuning}};
  if (!plan.group.empty()) j["group"] = plan.group;
  if (!plan.host_lock.empty()) j["host_lock"] = plan.host_lock;
  if (plan.collective.network_only) j["network_only"] = true;
  if (plan.serial) j["serial"] = true;
  if (const auto& s = plan.collective.span) {
    std::string hex;
    for (unsigned char c : s->id) hex += fmt::format("{:02x}", c);
    j["span"] = {{"id", hex}, {"ranks", s->ranks}, {"first_rank", s->first_rank}};
  }
  return j;
}

std::string_view to_string(TuningMode mode) {
  switch (mode) {
    case TuningMode::kAuto:
      return "auto";
    case TuningMode::kRetune:
      return "retune";
    default:
      return "off";
  }
}

std::optional<TuningMode> tuning_mode_from_string(std::string_view text) {
  for (TuningMode m : {TuningMode::kOff, TuningMode::kAuto, TuningMode::kRetune})
    if (to_string(m) == text) return m;
  return std::nullopt;
}

BenchPlan plan_from_json(const nlohmann::json& j) {
  BenchPlan plan;
  plan.device = j.at(std::string(k::kDevice)).get<std::string>();
  plan.backend = j.at(std::string(k::kBackend)).get<std::string>();
  plan.seed = j.at("seed").get<std::uint64_t>();
  plan.threads = j.at("threads").get<int>();
  const auto& p = j.at("policy");
  plan.policy.warmup = p.at("warmup").get<int>();
  plan.policy.min_time_s = p.at("min_time_s").get<double>();
  plan.policy.max_time_s = p.at("max_time_s").get<double>();
  if (p.contains("reps")) plan.policy.reps = p.at("reps").get<int>();
  plan.policy.rounds = p.value("rounds", 1);
  plan.policy.stable_within = p.value("stable_within", 0.0);
  if (j.contains("group")) plan.group = j.at("group").get<std::vector<std::string>>();
  plan.host_lock = j.value("host_lock", std::string());
  plan.collective.network_only = j.value("network_only", false);
  plan.serial = j.value("serial", false);
  if (auto s = j.find("span"); s != j.end()) {
    CollectiveSpan span;
    const std::string hex = s->at("id").get<std::string>();
    if (hex.size() % 2 != 0) throw std::invalid_argument("plan: the span's id is not whole bytes");
    for (std::size_t i = 0; i < hex.size(); i += 2)
      span.id.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
    span.ranks = s->at("ranks").get<int>();
    span.first_rank = s->at("first_rank").get<int>();
    plan.collective.span = span;
  }
  if (auto t = j.find("tuning"); t != j.end()) {
    plan.tuning.mode = plan_enum<TuningMode>(t->at("mode"), tuning_mode_from_string, "tuning mode");
    if (t->contains("budget_s")) plan.tuning.budget_s = t->at("budget_s").get<double>();
  }
  for (const auto& c : j.at("cells")) {
    Cell cell;
    cell.op = plan_enum<Op>(c.at(std::string(k::kOp)), op_from_string, "op");
    cell.dtype = plan_enum<DType>(c.at(std::string(k::kDtype)), dtype_from_string, "dtype");
    cell.shape = shape_from_json(cell.op, c.at(std::string(k::kShape)));
    cell.explicit_request = c.value("explicit", false);
    cell.explicit_size = c.value("explicit_size", false);
    if (c.contains(k::kScaledFrom)) cell.scaled_from = c.at(std::string(k::kScaledFrom));
    plan.cells.push_back(std::move(cell));
  }
  return plan;
}

std::string describe(const Cell& cell) {
  return fmt::format("{} {} {}", to_string(cell.op), to_string(cell.dtype),
                     shape_text(shape_to_json(cell.shape)));
}

}  // namespace gpucheck::bench

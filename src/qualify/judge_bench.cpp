// Bench requirements: the record of the requirement's cell on each device, judged by its
// criterion. The record was verified in the bench child; a mismatch is unmet, loudly.
#include "qualify/judge_bench.h"

#include "bench/ops/op_unit.h"
#include "core/backend_descriptors.h"
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/shape_text.h"
#include "qualify/toml_reader.h"

#include <fmt/format.h>

namespace gpucheck::qualify {

namespace k = keys;

namespace {

std::string criterion_text(const Requirement& r) {
  switch (r.criterion) {
    case Criterion::kMin:
      return fmt::format("≥ {} {}", r.value, r.unit);
    case Criterion::kMax:
      return fmt::format("≤ {} {}", r.value, r.unit);
    case Criterion::kSpeedupMin:
      return fmt::format("speedup over the CPU ≥ {}×", r.value);
    case Criterion::kFractionOfReference:
      return fmt::format("≥ {} of the {} reference", r.value, r.reference);
    case Criterion::kFractionOfLineRate:
      return fmt::format("≥ {} of the links' line rate", r.value);
    case Criterion::kFractionOfLimit:
      return fmt::format("≥ {} of the hardware's limit", r.value);
  }
  return "";
}

std::string unit_of(const Requirement& r) {
  switch (r.criterion) {
    case Criterion::kMin:
    case Criterion::kMax:
      return r.unit;
    case Criterion::kSpeedupMin:
      return "x";
    case Criterion::kFractionOfReference:
    case Criterion::kFractionOfLineRate:
    case Criterion::kFractionOfLimit:
      return "fraction";
  }
  return "";
}

}  // namespace

// The record's status when it is not ok: failed and mismatch are unmet, unsupported is unmet
// (the profile asks for what the device cannot do), skipped (too large here) is a skip.
bool judge_status(const nlohmann::json& rec, Verdict& v) {
  std::string status = rec.value(std::string(k::kStatus), "");
  if (status == "ok") return true;
  std::string why = rec.value(std::string(k::kReason), "");
  v.outcome = status == "skipped" ? Outcome::kSkip : Outcome::kUnmet;
  if (status == "mismatch")
    v.reason = "VERIFICATION FAILED (mismatch): " + why;
  else
    v.reason = fmt::format("record {}: {}", status, why);
  return false;
}

namespace {

std::optional<std::string> pci_device_id(const DeviceFacts& d, const Observations& obs) {
  if (d.pci_bus_id.empty() || !obs.pci_device_id) return std::nullopt;
  return obs.pci_device_id(d.pci_bus_id);
}

void judge_fraction(const Requirement& r, const DeviceFacts& d, const Observations& obs,
                    double throughput, Verdict& v) {
  const Sku* sku = obs.skus ? find_sku(*obs.skus, pci_device_id(d, obs), d.name) : nullptr;
  if (!sku) {
    v.outcome = Outcome::kSkip;
    v.reason = fmt::format("no reference for {}", d.name.empty() ? d.device : d.name);
    return;
  }
  const Reference* ref = find_reference(*sku, r.reference, r.op, r.dtype, r.shape, r.transfers);
  if (!ref) {
    v.outcome = Outcome::kSkip;
    v.reason =
        fmt::format("no {} reference for {} on {}", r.reference, describe_cell(r), sku->model);
    return;
  }
  double fraction = throughput / ref->value;
  v.measured = fraction;
  v.outcome = fraction >= r.value ? Outcome::kMet : Outcome::kUnmet;
  v.reason = fmt::format("{:.4g} {} of {} {} ({}, {})", throughput, ref->unit, ref->value,
                         ref->unit, sku->model, ref->provenance);
}

Verdict judge_on_device(const Requirement& r, const DeviceFacts& d, const Observations& obs) {
  Verdict v;
  v.id = r.id;
  v.kind = r.kind;
  v.line = r.line;
  v.device = d.device;
  v.device_name = d.name;
  v.requirement =
      fmt::format("{} on {}: {}", describe_cell(r),
                  r.selector == Selector::kNamed ? r.device : d.device, criterion_text(r));
  v.threshold = r.value;
  v.unit = unit_of(r);
  const nlohmann::json* rec = find_record(r, d.device, obs.results);
  if (!rec) {
    v.outcome = backend_is_host_cpu(d.backend) && r.transfers == "included" ? Outcome::kSkip
                                                                            : Outcome::kUnmet;
    v.reason = backend_is_host_cpu(d.backend) && r.transfers == "included"
                   ? "the CPU has no host transfers (its records are transfers excluded)"
                   : "the bench wrote no record of this cell";
    return v;
  }
  if (!judge_status(*rec, v)) return v;
  const auto& tp = rec->value(std::string(k::kThroughput), nlohmann::json::object());
  double throughput = tp.value(std::string(k::kValue), 0.0);
  double median = rec->value(std::string(k::kTimeS), nlohmann::json::object())
                      .value(std::string(k::kMedian), 0.0);
  switch (r.criterion) {
    case Criterion::kMin: {
      double measured = throughput / unit_factor(r.unit);
      v.measured = measured;
      v.outcome = measured >= r.value ? Outcome::kMet : Outcome::kUnmet;
      break;
    }
    case Criterion::kMax: {
      double measured = median / unit_factor(r.unit);
      v.measured = measured;
      v.outcome = measured <= r.value ? Outcome::kMet : Outcome::kUnmet;
      break;
    }
    case Criterion::kSpeedupMin: {
      if (backend_is_host_cpu(d.backend)) {
        v.outcome = Outcome::kSkip;
        v.reason = "the CPU is the baseline of speedups";
        return v;
      }
      auto sp = rec->find(k::kSpeedupVsCpu);
      if (sp == rec->end() || !sp->is_number()) {
        v.outcome = Outcome::kSkip;
        v.reason = "no speedup: the CPU baseline record of this cell is missing or not ok";
        return v;
      }
      v.measured = sp->get<double>();
      v.outcome = sp->get<double>() >= r.value ? Outcome::kMet : Outcome::kUnmet;
      break;
    }
    case Criterion::kFractionOfReference:
      judge_fraction(r, d, obs, throughput, v);
      return v;
    case Criterion::kFractionOfLimit:
      judge_limit_fraction(r, *rec, v);
      if (v.outcome == Outcome::kSkip) return v;
      break;
    case Criterion::kFractionOfLineRate:  // p2p requirements only (judge_multigpu.cpp)
      v.outcome = Outcome::kSkip;
      v.reason = "a line rate belongs to a link between two GPUs";
      return v;
  }
  if (v.outcome == Outcome::kUnmet)
    v.reason = fmt::format("measured {:.4g} {}, required {}", v.measured.get<double>(), v.unit,
                           criterion_text(r));
  return v;
}

}  // namespace

void judge_limit_fraction(const Requirement& r, const nlohmann::json& rec, Verdict& v) {
  const nlohmann::json& limit = member_or_empty(rec, k::kLimit);
  auto f = limit.is_object() ? limit.find(k::kLimitFraction) : limit.end();
  if (f == limit.end() || !f->is_number()) {
    const std::string why = string_member(limit, k::kReason);
    v.outcome = Outcome::kSkip;
    v.reason = "the record has no limit: " + (why.empty() ? "none was computed" : why);
    return;
  }
  v.measured = f->get<double>();
  v.outcome = f->get<double>() >= r.value ? Outcome::kMet : Outcome::kUnmet;
}

std::string describe_cell(const Requirement& r) {
  const bool typed = bench::records_have_dtype(r.op);
  return fmt::format("{}{}{} {} (transfers {})", r.op, typed ? " " : "", typed ? r.dtype : "",
                     shape_text(r.shape), r.transfers);
}

const nlohmann::json* find_record(const Requirement& r, const std::string& device,
                                  const nlohmann::json& results) {
  const bool typed = bench::records_have_dtype(r.op);
  for (const auto& rec : results) {
    if (rec.value(std::string(k::kDevice), "") != device ||
        rec.value(std::string(k::kOp), "") != r.op ||
        rec.value(std::string(k::kTransfers), "") != r.transfers)
      continue;
    if (typed && rec.value(std::string(k::kDtype), "") != r.dtype) continue;
    if (rec.value(std::string(k::kShape), nlohmann::json()) != r.shape) continue;
    return &rec;
  }
  return nullptr;
}

std::vector<Verdict> judge_bench(const Requirement& r, const Observations& obs) {
  auto devices = select_devices(r, list_devices(obs.backends));
  if (devices.empty()) {
    Verdict v;
    v.id = r.id;
    v.kind = r.kind;
    v.line = r.line;
    v.requirement = fmt::format("{} on {}: {}", describe_cell(r), r.device, criterion_text(r));
    v.threshold = r.value;
    v.unit = unit_of(r);
    v.outcome = Outcome::kUnmet;
    v.reason = why_no_device(r, obs.backends);
    return {v};
  }
  std::vector<Verdict> out;
  for (const auto& d : devices) out.push_back(judge_on_device(r, d, obs));
  if (r.selector == Selector::kAny) return {pick_any(out)};
  return out;
}

}  // namespace gpucheck::qualify

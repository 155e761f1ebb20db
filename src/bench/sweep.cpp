// Sweep ranges and the break-even analysis over the records a sweep produced.
#include "bench/sweep.h"

#include "bench/ops/op_unit.h"
#include "bench/size_text.h"
#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_access.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::bench {

namespace k = keys;

namespace {

// The op's sweep (its unit's range); UsageError naming the ops that have one.
const SweepRange& range_of(std::string_view name) {
  auto op = op_from_string(name);
  if (!op || !unit_of(*op).sweep)
    throw UsageError(fmt::format("--sweep: unknown op '{}' (valid: {})", name, sweepable_ops()));
  return *unit_of(*op).sweep;
}

// The swept size of a record: exp's element count, GEMM's side, conv's batch.
std::optional<std::uint64_t> record_size(const nlohmann::json& r) {
  auto s = r.find(k::kShape);
  if (s == r.end() || !s->is_object()) return std::nullopt;
  auto key = r.value(std::string(k::kOp), "") == "gemm" ? k::kM : k::kN;
  auto v = s->find(key);
  if (v == s->end() || !v->is_number_unsigned()) return std::nullopt;
  return v->get<std::uint64_t>();
}

// The CPU's ok record at a size and dtype (layout too, for conv).
const nlohmann::json* cpu_record(const nlohmann::json& results, std::uint64_t size,
                                 const std::string& dtype, const std::string& layout) {
  for (const auto& c : results) {
    if (!backend_is_host_cpu(string_member(c, k::kBackend)) || string_member(c, k::kStatus) != "ok")
      continue;
    if (string_member(c, k::kDtype) != dtype || record_size(c) != size) continue;
    if (string_member(c.value(std::string(k::kShape), nlohmann::json::object()), k::kLayout) !=
        layout)
      continue;
    return &c;
  }
  return nullptr;
}

}  // namespace

namespace {

// "a, b, c" over the units that can be swept, each as `item` writes it.
template <typename Item>
std::string over_sweepable_units(Item item) {
  std::string out;
  for (const auto& unit : op_units())
    if (unit.sweep) out += fmt::format("{}{}", out.empty() ? "" : ", ", item(unit));
  return out;
}

}  // namespace

std::string sweepable_ops() {
  return over_sweepable_units([](const OpUnit& u) { return std::string(to_string(u.op)); });
}

std::string sweep_size_meanings() {
  return over_sweepable_units(
      [](const OpUnit& u) { return fmt::format("{} {}", to_string(u.op), u.sweep->parameter); });
}

SweepSpec make_sweep(std::string_view op, std::string_view max_text) {
  const SweepRange& range = range_of(op);
  std::uint64_t last = range.last;
  if (!max_text.empty()) {
    if (max_text.find(',') != std::string_view::npos)
      throw UsageError(fmt::format("--sweep-max: one size, not '{}'", max_text));
    const std::uint64_t max = positive_count(max_text, "--sweep-max", "size");
    if (max < range.first)
      throw UsageError(fmt::format("--sweep-max: {} is below the {} sweep's first size {}", max, op,
                                   range.first));
    last = std::min(last, max);
  }
  SweepSpec spec{*op_from_string(op), {}};
  for (std::uint64_t s = range.first; s <= last; s *= 2) spec.sizes.push_back(s);
  return spec;
}

std::string sweep_size_flag(const SweepSpec& spec) {
  const SweepRange& range = *unit_of(spec.op).sweep;
  if (range.size_flag) return range.size_flag(spec.sizes);
  std::string out;
  for (auto s : spec.sizes) out += fmt::format("{}{}", out.empty() ? "" : ",", s);
  return out;
}

bool beats_cpu(const SweepPoint& p) {
  return p.median < p.cpu_median && p.max < p.cpu_min;
}

std::optional<std::uint64_t> break_even(const std::vector<SweepPoint>& points) {
  std::optional<std::uint64_t> found;
  for (auto it = points.rbegin(); it != points.rend() && beats_cpu(*it); ++it) found = it->size;
  return found;
}

nlohmann::json analyze_sweep(const SweepSpec& spec, const nlohmann::json& results) {
  // One series per device, dtype, layout and transfers, in the order the records came.
  std::vector<nlohmann::json> series;
  auto series_for = [&](const nlohmann::json& r) -> nlohmann::json& {
    nlohmann::json key = {{k::kDevice, string_member(r, k::kDevice)},
                          {k::kDtype, string_member(r, k::kDtype)},
                          {k::kTransfers, string_member(r, k::kTransfers)}};
    std::string layout =
        string_member(r.value(std::string(k::kShape), nlohmann::json::object()), k::kLayout);
    if (!layout.empty()) key[k::kLayout] = layout;
    for (auto& s : series) {
      bool same = true;
      for (const auto& [name, v] : key.items()) same = same && s.value(name, nlohmann::json()) == v;
      if (same && s.contains(k::kLayout) == key.contains(k::kLayout)) return s;
    }
    key[k::kBackend] = string_member(r, k::kBackend);
    if (auto name = string_member(r, k::kDeviceName); !name.empty()) key[k::kDeviceName] = name;
    if (auto uuid = string_member(r, k::kDeviceUuid); !uuid.empty()) key[k::kDeviceUuid] = uuid;
    key[k::kPoints] = nlohmann::json::array();
    series.push_back(std::move(key));
    return series.back();
  };

  for (const auto& r : results) {
    if (backend_is_host_cpu(string_member(r, k::kBackend)) ||
        string_member(r, k::kOp) != to_string(spec.op))
      continue;
    auto size = record_size(r);
    if (!size) continue;
    nlohmann::json& s = series_for(r);
    nlohmann::json p = {{k::kSize, *size}, {k::kStatus, string_member(r, k::kStatus)}};
    if (auto reason = string_member(r, k::kReason); !reason.empty()) p[k::kReason] = reason;
    if (p[k::kStatus] == "ok") {
      const auto& t = r[k::kTimeS];
      p[k::kMedian] = t[k::kMedian];
      p[k::kMin] = t[k::kMin];
      p[k::kMax] = t[k::kMax];
    }
    // The same dtype on the CPU, else f32, as the speedups match them (report/speedup.cpp).
    std::string layout = string_member(s, k::kLayout), dtype = string_member(s, k::kDtype);
    const nlohmann::json* cpu = cpu_record(results, *size, dtype, layout);
    if (!cpu && dtype != "f32") cpu = cpu_record(results, *size, "f32", layout);
    if (cpu) {
      const auto& t = (*cpu)[k::kTimeS];
      p[k::kCpu] = {{k::kDtype, string_member(*cpu, k::kDtype)},
                    {k::kMedian, t[k::kMedian]},
                    {k::kMin, t[k::kMin]},
                    {k::kMax, t[k::kMax]}};
    }
    s[k::kPoints].push_back(std::move(p));
  }

  for (auto& s : series) {
    auto& pts = s[k::kPoints];
    std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) {
      return a[k::kSize].template get<std::uint64_t>() < b[k::kSize].template get<std::uint64_t>();
    });
    std::vector<SweepPoint> measured;
    for (auto& p : pts) {
      if (p[k::kStatus] != "ok" || !p.contains(k::kCpu)) continue;
      SweepPoint m{p[k::kSize],        p[k::kMedian],          p[k::kMin],
                   p[k::kMax],         p[k::kCpu][k::kMedian], p[k::kCpu][k::kMin],
                   p[k::kCpu][k::kMax]};
      if (m.median > 0) p[k::kSpeedupVsCpu] = m.cpu_median / m.median;
      p[k::kBeatsCpu] = beats_cpu(m);
      measured.push_back(m);
    }
    auto be = break_even(measured);
    s[k::kBreakEven] = be ? nlohmann::json(*be) : nlohmann::json(nullptr);
  }
  return {{k::kOp, to_string(spec.op)},
          {k::kParameter, unit_of(spec.op).sweep->parameter},
          {k::kSizes, spec.sizes},
          {k::kSeries, series}};
}

}  // namespace gpucheck::bench

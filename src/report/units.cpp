// Human units for the text, markdown and HTML views.
#include "report/units.h"

#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/shape_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <utility>

namespace gpucheck::report {

namespace k = keys;

std::string significant(double v) {
  const double a = std::fabs(v);
  if (a >= 100 || a == 0) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

namespace {

// The unit a value of `magnitude` (in the record's `unit`) is shown in: what to divide the
// value by, and the unit's text. Seconds in ns, µs, ms or s; GB/s and FLOP rates back to base
// units with the largest SI prefix that leaves at least 1 (but bandwidth in GB/s up to 10000
// GB/s, as nvbandwidth and the datasheets write it: a D2D copy at "4136 GB/s"); anything else
// as it is.
struct MeasureScale {
  // value × to_base / prefix is the number shown (kept as two factors, so each figure is
  // computed as the views always computed it, to the last rounding).
  double to_base = 1;
  double prefix = 1;
  std::string unit;
  double shown(double value) const { return value * to_base / prefix; }
};

MeasureScale measure_scale(double magnitude, std::string_view unit) {
  const double a = std::fabs(magnitude);
  if (unit == "s") {
    if (a >= 1 || a == 0) return {1, 1, "s"};
    if (a >= 1e-3) return {1e3, 1, "ms"};
    if (a >= 1e-6) return {1e6, 1, "\xC2\xB5s"};
    return {1e9, 1, "ns"};
  }
  const bool flops = unit.find("FLOP") != std::string_view::npos;
  if (!flops && unit != "GB/s") return {1, 1, std::string(unit)};
  // Records carry GB/s (1e9 bytes) or TFLOP/s (1e12 FLOP).
  const double to_base = flops ? 1e12 : 1e9;
  const double base = a * to_base;
  constexpr std::array<std::pair<double, const char*>, 6> kPrefixes{
      {{1e15, "P"}, {1e12, "T"}, {1e9, "G"}, {1e6, "M"}, {1e3, "k"}, {1, ""}}};
  std::size_t i = 0;
  while (i + 1 < kPrefixes.size() && base < kPrefixes[i].first) ++i;
  if (!flops && kPrefixes[i].first > 1e9 && base < 1e13) i = 2;  // GB/s below 10 TB/s
  return {to_base, kPrefixes[i].first,
          std::string(kPrefixes[i].second) + (flops ? "FLOP/s" : "B/s")};
}

std::string scaled(double value, const MeasureScale& s) {
  return significant(s.shown(value)) + (s.unit.empty() ? "" : " " + s.unit);
}

}  // namespace

std::string format_seconds(double s) {
  return format_measure(s, "s");
}

std::string format_rate(double value, std::string_view unit) {
  return format_measure(value, unit);
}

std::string format_measure(double value, std::string_view unit) {
  return scaled(value, measure_scale(value, unit));
}

std::vector<std::string> format_ticks(const std::vector<double>& ticks, std::string_view unit) {
  double top = 0;
  for (double t : ticks) top = std::max(top, std::fabs(t));
  const MeasureScale s = measure_scale(top, unit);
  // The fewest decimals that write the step exactly (2.5 needs one), so neighbours differ.
  const double step = ticks.size() > 1 ? std::fabs(s.shown(ticks[1]) - s.shown(ticks[0])) : 1;
  int decimals = 0;
  while (decimals < 9 &&
         std::fabs(step * std::pow(10, decimals) - std::round(step * std::pow(10, decimals))) >
             1e-6 * std::pow(10, decimals))
    ++decimals;
  std::vector<std::string> out;
  for (double t : ticks) {
    double v = s.shown(t);
    if (std::fabs(v) < step * 1e-9) v = 0;  // no "-0" from a sum that nearly cancels
    out.push_back(fmt::format("{:.{}f}", v, decimals) + (s.unit.empty() ? "" : " " + s.unit));
  }
  return out;
}

std::string format_size(std::uint64_t bytes) {
  constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  std::size_t u = 0;
  double v = static_cast<double>(bytes);
  while (u + 1 < kUnits.size() && v >= 1024) {
    v /= 1024;
    ++u;
  }
  if (v == std::floor(v)) return fmt::format("{:.0f} {}", v, kUnits[u]);
  return fmt::format("{:.1f} {}", v, kUnits[u]);
}

std::string format_memory(std::uint64_t bytes) {
  const double gib = static_cast<double>(bytes) / (1ull << 30);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1ull << 20));
}

std::string format_speedup(double x) {
  // Below 1 two digits say enough: "0.31×", "0.04×".
  if (std::fabs(x) < 1 && x != 0) return fmt::format("{:.2g}\xC3\x97", x);
  return significant(x) + "\xC3\x97";
}

std::string format_share(double fraction) {
  const double pct = fraction * 100;
  if (pct >= 9.95) return fmt::format("{:.0f}%", pct);
  return pct >= 0.1 ? fmt::format("{:.1f}%", pct) : std::string("<0.1%");
}

std::string limit_share(const nlohmann::json& record) {
  if (!record.is_object() || record.value(std::string(k::kStatus), "") != "ok") return {};
  auto limit = record.find(k::kLimit);
  if (limit == record.end() || !limit->is_object()) return {};
  auto f = limit->find(k::kLimitFraction);
  return f != limit->end() && f->is_number() ? format_share(f->get<double>()) : std::string();
}

std::string format_count(std::uint64_t n) {
  if (n >= 1024 && std::has_single_bit(n)) return fmt::format("2^{}", std::countr_zero(n));
  return fmt::format("{}", n);
}

std::string shape_label(const nlohmann::json& shape) {
  if (!shape.is_object()) return {};
  auto u = [&](std::string_view key) { return shape.value(key, std::uint64_t{0}); };
  if (shape.contains(k::kBytes)) {
    std::string out = format_size(u(k::kBytes)) + " " + shape.value(k::kDirection, "");
    if (auto mem = shape.value(k::kHostMemory, ""); !mem.empty()) out += " " + mem;
    return out;
  }
  if (shape.contains(k::kM)) {
    if (u(k::kM) == u(k::kN) && u(k::kN) == u(k::kKk)) return fmt::format("{}\xC2\xB3", u(k::kM));
    return shape_text(shape);
  }
  if (shape.contains(k::kN) && shape.size() == 1) return format_count(u(k::kN));
  return shape_text(shape);
}

}  // namespace gpucheck::report

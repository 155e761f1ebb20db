// The duration grammar and its limits.
#include "core/duration.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cmath>

namespace gpucheck {

std::string describe_max(double max_s) {
  if (max_s == 24 * 3600.0) return "86400 seconds (a day)";
  if (std::fmod(max_s, 24 * 3600.0) == 0)
    return fmt::format("{:g} seconds ({:g} days)", max_s, max_s / (24 * 3600.0));
  return fmt::format("{:g} seconds", max_s);
}

std::string elapsed_text(double seconds) {
  // Clamped to 1e9 s (31 years): a clock gone wrong never prints a 309-digit number.
  const double s = std::isfinite(seconds) ? std::clamp(seconds, 1.0, 1e9) : 1.0;
  if (const auto whole = std::llround(s); whole < 3600) {
    if (whole < 60) return fmt::format("{} s", whole);
    return fmt::format("{} min {} s", whole / 60, whole % 60);
  }
  const auto minutes = std::llround(s / 60);
  return fmt::format("{} h {} min", minutes / 60, minutes % 60);
}

namespace {

std::string bounds(DurationLimits limits) {
  return fmt::format("must be {} and at most {}", limits.allow_zero ? "0 or more" : "more than 0",
                     describe_max(limits.max_s));
}

bool in_bounds(double seconds, DurationLimits limits) {
  const bool low_ok = limits.allow_zero ? seconds >= 0 : seconds > 0;
  return std::isfinite(seconds) && low_ok && seconds <= limits.max_s;
}

}  // namespace

std::optional<std::string> duration_refusal(double seconds, DurationLimits limits) {
  if (in_bounds(seconds, limits)) return std::nullopt;
  return fmt::format("{}, not {}", bounds(limits), seconds);
}

std::optional<double> parse_duration_s(std::string_view text, std::string* why,
                                       DurationLimits limits) {
  const std::string given(text);
  double scale = 1;
  if (!text.empty()) {
    switch (text.back()) {
      case 's':
        text.remove_suffix(1);
        break;
      case 'm':
        scale = 60, text.remove_suffix(1);
        break;
      case 'h':
        scale = 3600, text.remove_suffix(1);
        break;
      default:
        break;
    }
  }
  double v = 0;
  // from_chars takes "inf" and "nan" too: the range check below refuses them.
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (text.empty() || (ec != std::errc() && ec != std::errc::result_out_of_range) ||
      end != text.data() + text.size()) {
    *why = fmt::format(
        "'{}' is not a duration (a number of seconds, or with s, m or h: 90, 90s, 5m, 1h)", given);
    return std::nullopt;
  }
  if (ec == std::errc::result_out_of_range) v = HUGE_VAL;  // 1e999: beyond double's range
  const double seconds = v * scale;
  if (!in_bounds(seconds, limits)) {
    *why = fmt::format("{}, not {}", bounds(limits), given);
    return std::nullopt;
  }
  return seconds;
}

}  // namespace gpucheck

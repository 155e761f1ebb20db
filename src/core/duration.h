// One reader for every duration gpucheck takes (flags and profile keys): a number of seconds,
// or one with an s, m or h suffix, finite, above 0 (or 0 where allowed) and at most a maximum.
// Unbounded values overflowed the clocks' integer nanoseconds (1e10 s is 317 years), so a run
// "timed out" at once; nan and inf compared false against every limit.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// The longest run, timeout or time budget gpucheck accepts: 7 days.
inline constexpr double kMaxDurationS = 7 * 24 * 3600.0;
// The longest a backend's probe may be given: a day.
inline constexpr double kMaxProbeTimeoutS = 24 * 3600.0;

struct DurationLimits {
  double max_s = kMaxDurationS;
  bool allow_zero = false;
};

// "90", "90s", "1.5m", "1h", "1e3": seconds; nullopt with *why (a sentence fragment such as
// "must be more than 0 and at most 604800 seconds (7 days), not '1e10'") otherwise.
std::optional<double> parse_duration_s(std::string_view text, std::string* why,
                                       DurationLimits limits = {});

// The same check for a number already read (a profile's max_time_s = 1e300): the reason it is
// refused, or nullopt.
std::optional<std::string> duration_refusal(double seconds, DurationLimits limits = {});

// "7 days", "a day", "3600 seconds": a maximum as --help and messages say it.
std::string describe_max(double max_s);

// A time a progress line shows: "45 s", "2 min 0 s", "1 h 5 min" (at least "1 s"). Rounded
// once, before it is split, so 119.6 s reads "2 min 0 s", never "1 min 60 s".
std::string elapsed_text(double seconds);

}  // namespace gpucheck

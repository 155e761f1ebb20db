// Small text helpers shared by the readers of files, environment values and tool output.
#pragma once

#include <string_view>

namespace gpucheck {

// s without leading and trailing white space (blank, tab, CR, LF, VT, FF).
inline std::string_view trim_space(std::string_view s) {
  constexpr std::string_view kSpace = " \t\r\n\v\f";
  const auto b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  return s.substr(b, s.find_last_not_of(kSpace) - b + 1);
}

}  // namespace gpucheck

// Helpers of the backends that open devices by a flat id and a dlopened loader.
#pragma once

#include <fmt/format.h>

#include <charconv>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace gpucheck {

// N of a flat device id "<prefix>N" ("opencl3" with prefix "opencl"); nullopt for another form.
inline std::optional<std::size_t> flat_device_index(std::string_view device_id,
                                                    std::string_view prefix) {
  if (!device_id.starts_with(prefix) || device_id.size() == prefix.size()) return std::nullopt;
  std::size_t index = 0;
  const char* first = device_id.data() + prefix.size();
  const char* last = device_id.data() + device_id.size();
  const auto parsed = std::from_chars(first, last, index);
  if (parsed.ec != std::errc() || parsed.ptr != last) return std::nullopt;
  return index;
}

// A loader's dlopen error as "<soname>: <error>" (dlerror() often names the file already).
inline std::string loader_error(const std::string& soname, const std::string& error) {
  return error.starts_with(soname + ":") ? error : fmt::format("{}: {}", soname, error);
}

}  // namespace gpucheck

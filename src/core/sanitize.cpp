// UTF-8 validation and control-character escaping for strings from outside.
#include "core/sanitize.h"

#include <fmt/format.h>

#include <cstdint>
#include <cstring>

namespace gpucheck {

namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD

// Length of the valid UTF-8 sequence starting at s[i], or 0 when it is not valid.
std::size_t utf8_sequence_length(std::string_view s, std::size_t i) {
  auto b = [&](std::size_t k) { return static_cast<unsigned char>(s[i + k]); };
  auto cont = [&](std::size_t k) { return i + k < s.size() && (b(k) & 0xC0) == 0x80; };
  unsigned char c = b(0);
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF) return cont(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    if (!cont(1) || !cont(2)) return 0;
    if (c == 0xE0 && b(1) < 0xA0) return 0;   // overlong
    if (c == 0xED && b(1) >= 0xA0) return 0;  // UTF-16 surrogates
    return 3;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    if (!cont(1) || !cont(2) || !cont(3)) return 0;
    if (c == 0xF0 && b(1) < 0x90) return 0;   // overlong
    if (c == 0xF4 && b(1) >= 0x90) return 0;  // above U+10FFFF
    return 4;
  }
  return 0;
}

}  // namespace

std::string sanitize(std::string_view raw) {
  return sanitize_keeping(raw, {});
}

std::string sanitize_keeping(std::string_view raw, std::string_view keep) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size();) {
    std::size_t len = utf8_sequence_length(raw, i);
    if (len == 0) {
      out += kReplacement;
      ++i;
      continue;
    }
    auto c = static_cast<unsigned char>(raw[i]);
    if (len == 1 && (c < 0x20 || c == 0x7F) && keep.find(raw[i]) == std::string_view::npos) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out.append(raw.substr(i, len));
    }
    i += len;
  }
  return out;
}

std::string sanitize_c_buffer(const char* data, std::size_t capacity) {
  if (data == nullptr) return {};
  const void* nul = std::memchr(data, '\0', capacity);
  std::size_t len = nul ? static_cast<std::size_t>(static_cast<const char*>(nul) - data) : capacity;
  return sanitize(std::string_view(data, len));
}

}  // namespace gpucheck

// Checking, defaulting and parsing the GEMM shader's parameters.
#include "backends/vulkan/gemm_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <sstream>

namespace gpucheck::vulkan {

nlohmann::json GemmConfig::to_json() const {
  return {{"wx", wx}, {"wy", wy}, {"tm", tm}, {"tn", tn}, {"bk", bk}, {"vec4", vec4}};
}

std::string GemmConfig::describe() const {
  return fmt::format("wx={},wy={},tm={},tn={},bk={},vec4={}", wx, wy, tm, tn, bk, vec4);
}

std::optional<std::string> gemm_config_misfit(const GemmConfig& p, const GemmLimits& limits) {
  for (std::uint32_t v : {p.wx, p.wy, p.tm, p.tn, p.bk})
    if (v == 0 || v > 64) return fmt::format("every parameter must be 1 to 64, not {}", v);
  if (p.vec4 > 1) return fmt::format("vec4 is 0 or 1, not {}", p.vec4);
  if (p.vec4 == 1 && (p.tm % 4 != 0 || p.tn % 4 != 0 || p.bk % 4 != 0))
    return fmt::format("vec4=1 needs tm, tn and bk multiples of 4, not {}, {} and {}", p.tm, p.tn,
                       p.bk);
  if (p.wx > limits.max_group_x || p.wy > limits.max_group_x ||
      p.wx * p.wy > limits.max_invocations)
    return fmt::format("a {}x{} work group exceeds the device's (at most {} a side, {} in all)",
                       p.wx, p.wy, limits.max_group_x, limits.max_invocations);
  if (p.shared_bytes() > limits.max_shared_bytes)
    return fmt::format("the tiles need {} bytes of shared memory; the device has {}",
                       p.shared_bytes(), limits.max_shared_bytes);
  return std::nullopt;
}

GemmConfig default_gemm_config(const GemmLimits& limits) {
  GemmConfig p;
  while (gemm_config_misfit(p, limits) && p.wx > 1) {
    p.wx /= 2;
    p.wy /= 2;
  }
  while (gemm_config_misfit(p, limits) && p.bk > 1) {
    p.bk /= 2;
    if (p.bk % 4 != 0) p.vec4 = 0;
  }
  return p;
}

GemmConfig fitted_to(GemmConfig p, std::uint64_t m, std::uint64_t n) {
  constexpr std::uint32_t kMinInvocations = 64;
  while (p.wx > 1 && p.wx * p.wy / 2 >= kMinInvocations && p.block_n() >= 2 * n) p.wx /= 2;
  while (p.wy > 1 && p.wx * p.wy / 2 >= kMinInvocations && p.block_m() >= 2 * m) p.wy /= 2;
  return p;
}

std::optional<GemmConfig> parse_gemm_config(const std::string& text, const GemmLimits& limits,
                                            std::string* why) {
  GemmConfig p;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    const auto eq = item.find('=');
    std::uint32_t v = 0;
    const char* end = item.data() + item.size();
    if (eq == std::string::npos || std::from_chars(item.data() + eq + 1, end, v).ptr != end) {
      *why = fmt::format("'{}' is not key=number", item);
      return std::nullopt;
    }
    const std::string key = item.substr(0, eq);
    std::uint32_t* field = key == "wx"     ? &p.wx
                           : key == "wy"   ? &p.wy
                           : key == "tm"   ? &p.tm
                           : key == "tn"   ? &p.tn
                           : key == "bk"   ? &p.bk
                           : key == "vec4" ? &p.vec4
                                           : nullptr;
    if (field == nullptr) {
      *why = fmt::format("unknown parameter '{}' (wx, wy, tm, tn, bk, vec4)", key);
      return std::nullopt;
    }
    *field = v;
  }
  if (auto misfit = gemm_config_misfit(p, limits)) {
    *why = *misfit;
    return std::nullopt;
  }
  return p;
}

std::optional<GemmConfig> gemm_config_from_json(const nlohmann::json& j, const GemmLimits& limits,
                                                std::string* why) {
  if (!j.is_object()) {
    *why = "not an object";
    return std::nullopt;
  }
  GemmConfig p;
  for (auto [key, field] :
       {std::pair{"wx", &p.wx}, std::pair{"wy", &p.wy}, std::pair{"tm", &p.tm},
        std::pair{"tn", &p.tn}, std::pair{"bk", &p.bk}, std::pair{"vec4", &p.vec4}}) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_number_unsigned()) {
      *why = fmt::format("'{}' is missing or not a positive integer", key);
      return std::nullopt;
    }
    *field = it->get<std::uint32_t>();
  }
  if (auto misfit = gemm_config_misfit(p, limits)) {
    *why = *misfit;
    return std::nullopt;
  }
  return p;
}

std::vector<GemmConfig> gemm_config_candidates(const GemmLimits& limits) {
  // 16-byte loads first: a GPU's fastest tiles (128×128 of 8×8 sums, as in CUDA SGEMMs) are
  // among them; the general shader's shapes follow for devices where the vectors do not pay.
  const GemmConfig space[] = {
      default_gemm_config(limits), {16, 16, 8, 8, 16, 1}, {16, 16, 8, 8, 8, 1},
      {16, 16, 4, 8, 16, 1},       {16, 16, 4, 8, 8, 1},  {16, 16, 8, 4, 8, 1},
      {16, 8, 8, 8, 16, 1},        {16, 8, 8, 8, 8, 1},   {8, 16, 8, 8, 8, 1},
      {8, 8, 8, 8, 16, 1},         {16, 16, 4, 4, 16, 0}, {16, 16, 8, 8, 8, 0},
      {16, 16, 4, 8, 16, 0},       {16, 16, 2, 2, 16, 0}, {8, 8, 4, 4, 16, 0},
      {32, 8, 4, 4, 16, 0},
  };
  std::vector<GemmConfig> out;
  for (const GemmConfig& p : space)
    if (!gemm_config_misfit(p, limits) && std::find(out.begin(), out.end(), p) == out.end())
      out.push_back(p);
  return out;
}

}  // namespace gpucheck::vulkan

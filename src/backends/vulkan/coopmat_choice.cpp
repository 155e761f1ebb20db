#include "backends/vulkan/coopmat_choice.h"

#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace gpucheck::vulkan {

namespace {

namespace k = keys;
using Json = nlohmann::json;

// The shader's fixed arrangement: 8 subgroups of 32, 2 high and 4 wide; f16 in 16-byte words.
constexpr std::uint32_t kSubgroupSize = 32;
constexpr std::uint32_t kThreads = 8 * kSubgroupSize;
constexpr std::uint32_t kHigh = 2, kWide = 4, kPerWord = 8;

bool contains(const Json& list, const std::string& s) {
  return list.is_array() && std::find(list.begin(), list.end(), s) != list.end();
}

}  // namespace

std::string CoopmatShape::describe() const {
  return fmt::format("{}x{}x{}", m, n, k);
}

std::string CoopmatTile::describe() const {
  return fmt::format("{}x{}x{}", tile_m, tile_n, tile_k);
}

std::optional<std::string> coopmat_tile_misfit(const CoopmatTile& t, const CoopmatShape& s) {
  if (s.m == 0 || s.n == 0 || s.k == 0) return std::string("an empty multiply shape");
  if (t.tile_m % (kHigh * s.m) != 0 || t.tile_n % (kWide * s.n) != 0 || t.tile_k % s.k != 0)
    return fmt::format("tile {} is not whole {} multiplies for 2 × 4 subgroups", t.describe(),
                       s.describe());
  if (s.k % kPerWord != 0 || s.n % kPerWord != 0)
    return fmt::format("shape {}: K and N must be multiples of 8 (16-byte rows)", s.describe());
  const std::uint32_t a_row = t.tile_k / kPerWord, b_row = t.tile_n / kPerWord;
  if (t.tile_k % kPerWord != 0 || t.tile_n % kPerWord != 0 || kThreads % a_row != 0 ||
      kThreads % b_row != 0 || t.tile_m % (kThreads / a_row) != 0 ||
      t.tile_k % (kThreads / b_row) != 0)
    return fmt::format("tile {} is not a whole number of 16-byte loads for 256 invocations",
                       t.describe());
  return std::nullopt;
}

std::optional<CoopmatShape> choose_coopmat_nv(const Json& properties, const CoopmatTile& tile,
                                              std::string* why) {
  const Json nv = properties.value(std::string(k::kCooperativeMatrixNv), Json::object());
  if (!nv.value(std::string(k::kSupported), false)) {
    *why = "VK_NV_cooperative_matrix is not offered with its cooperativeMatrix feature";
    return std::nullopt;
  }
  if (!contains(nv.value(std::string(k::kSupportedStages), Json::array()),
                "VK_SHADER_STAGE_COMPUTE_BIT")) {
    *why = "VK_NV_cooperative_matrix is not offered to compute shaders";
    return std::nullopt;
  }
  const Json sub = properties.value(std::string(k::kSubgroup), Json::object());
  const auto size = sub.value(std::string(k::kSize), 0u);
  if (size != kSubgroupSize) {
    *why = fmt::format("the shader is written for subgroups of 32; this device's are {}", size);
    return std::nullopt;
  }
  std::optional<CoopmatShape> best;
  for (const auto& e : nv.value(std::string(k::kProperties), Json::array())) {
    if (e.value("a", "") != "float16" || e.value("b", "") != "float16" ||
        e.value("c", "") != "float32" || e.value("d", "") != "float32" ||
        e.value("scope", "") != "subgroup")
      continue;
    CoopmatShape s{e.value("m", 0u), e.value("n", 0u), e.value("k", 0u)};
    if (coopmat_tile_misfit(tile, s)) continue;
    if (!best || s.m * s.n * s.k > best->m * best->n * best->k) best = s;
  }
  if (!best)
    *why = fmt::format(
        "no f16 × f16 + f32 shape at subgroup scope among VK_NV_cooperative_matrix's that "
        "the {} tile divides",
        tile.describe());
  return best;
}

std::optional<CoopmatTile> parse_coopmat_tile(const std::string& text, const CoopmatShape& shape,
                                              std::string* why) {
  std::uint32_t v[3] = {0, 0, 0};
  const char* p = text.data();
  const char* end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    auto [q, ec] = std::from_chars(p, end, v[i]);
    if (ec != std::errc() || v[i] == 0 || v[i] > 1024 || (i < 2 && (q == end || *q != 'x')) ||
        (i == 2 && q != end)) {
      *why = fmt::format("'{}' is not a tile MxNxK of numbers from 1 to 1024", text);
      return std::nullopt;
    }
    p = q + 1;
  }
  CoopmatTile t{v[0], v[1], v[2]};
  if (auto misfit = coopmat_tile_misfit(t, shape)) {
    *why = *misfit;
    return std::nullopt;
  }
  return t;
}

}  // namespace gpucheck::vulkan

// Whether the f16 GEMM can run on cooperative matrices (shaders/gemm_coopmat_nv.comp), and with
// which of the device's (M, N, K) shapes: read from the probe's description of the device, so
// that a test can give it any device's.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

namespace gpucheck::vulkan {

struct CoopmatShape {
  std::uint32_t m = 0, n = 0, k = 0;  // one multiply's shape, as the device lists it
  std::string describe() const;       // "16x16x16"
};

// The shader's tile: a work group of 8 subgroups of 32 (2 high, 4 wide) computes tile_m × tile_n
// of C, stepping along k by tile_k. 128 × 256 × 32 ran f16 GEMM 4096³ / 8192³ at 185 / 197
// TFLOP/s on an H200, 128 × 128 × 32 at 175 / 181 (docs/PERFORMANCE.md).
struct CoopmatTile {
  std::uint32_t tile_m = 128, tile_n = 256, tile_k = 32;
  std::string describe() const;  // "128x128x32"
};

// The largest shape VK_NV_cooperative_matrix offers for f16 × f16 + f32 → f32 at subgroup scope
// that the tile divides, where the feature is on, compute shaders have it and subgroups are of
// 32; else nullopt and *why says which of these is missing. `properties` is describe_device's
// "properties" object.
std::optional<CoopmatShape> choose_coopmat_nv(const nlohmann::json& properties,
                                              const CoopmatTile& tile, std::string* why);

// "256x128x32": a tile the shader can run with `shape` (each subgroup a whole number of
// multiplies, the loads a whole number of 16-byte words per invocation); nullopt and *why else.
std::optional<CoopmatTile> parse_coopmat_tile(const std::string& text, const CoopmatShape& shape,
                                              std::string* why);

// Why `tile` cannot run with `shape`; nullopt when it can.
std::optional<std::string> coopmat_tile_misfit(const CoopmatTile& tile, const CoopmatShape& shape);

}  // namespace gpucheck::vulkan

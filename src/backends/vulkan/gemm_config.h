// The parameters of the tiled GEMM shaders (shaders/gemm.comp, gemm_vec4.comp), their
// specialization constants: a work group of wx × wy invocations, each summing tm × tn elements of
// C, stepping by bk along k. vec4 = 1 runs gemm_vec4.comp (16-byte loads; tm, tn and bk multiples
// of 4) where a GEMM's shape and layout allow it, gemm.comp elsewhere.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::vulkan {

// What a parameter set must fit on the device.
struct GemmLimits {
  std::uint32_t max_group_x = 1;       // maxComputeWorkGroupSize[0] (and [1], checked alike)
  std::uint32_t max_invocations = 1;   // maxComputeWorkGroupInvocations
  std::uint32_t max_shared_bytes = 0;  // maxComputeSharedMemorySize
};

struct GemmConfig {
  std::uint32_t wx = 16, wy = 16, tm = 4, tn = 4, bk = 16, vec4 = 1;

  std::uint32_t block_m() const { return wy * tm; }
  std::uint32_t block_n() const { return wx * tn; }
  // gemm_vec4.comp keeps two of each tile (the next one stored while the current is summed).
  std::size_t shared_bytes() const {
    return std::size_t{bk} * (block_m() + block_n()) * sizeof(float) * (vec4 == 1 ? 2 : 1);
  }
  // In the shader's constant_id order; the last says whether B is stored transposed (n×k).
  std::vector<std::uint32_t> constants(bool b_transposed = false) const {
    return {wx, wy, tm, tn, bk, b_transposed ? 1u : 0u};
  }
  nlohmann::json to_json() const;
  // "wx=16,wy=16,tm=4,tn=4,bk=16,vec4=1", the form parse_gemm_config reads.
  std::string describe() const;
  bool operator==(const GemmConfig&) const = default;
};

// Why p does not fit the device; nullopt when it does.
std::optional<std::string> gemm_config_misfit(const GemmConfig& p, const GemmLimits& limits);

// 16×16 invocations of 4×4 sums (64×64 tiles, bk 16, 16-byte loads), or the largest smaller
// square work group the device allows.
GemmConfig default_gemm_config(const GemmLimits& limits);

// p for a GEMM of m × n: each work-group side halved (the sums an invocation keeps) while the
// tile spans at least twice the GEMM's rows or columns, down to 64 invocations. Conv's GEMMs
// have as few columns or rows as output channels: NHWC's with 64 ran 1.45–1.49× faster on an
// H200 with 64-wide tiles than on the tuned 128-wide ones, half of whose sums were of nothing.
GemmConfig fitted_to(GemmConfig p, std::uint64_t m, std::uint64_t n);

// "wx=8,wy=8,tm=4,tn=4,bk=8,vec4=0" (missing keys keep their defaults); nullopt and *why on text
// that does not parse or parameters that do not fit.
std::optional<GemmConfig> parse_gemm_config(const std::string& text, const GemmLimits& limits,
                                            std::string* why);

// The cache's form of a parameter set (to_json's object, every key present); nullopt and *why
// for anything else or parameters that do not fit.
std::optional<GemmConfig> gemm_config_from_json(const nlohmann::json& j, const GemmLimits& limits,
                                                std::string* why);

// The tuner's space: a few tile shapes around the default (wider and narrower tiles, more and
// less work per invocation, smaller work groups), those that fit the device, the default first.
std::vector<GemmConfig> gemm_config_candidates(const GemmLimits& limits);

}  // namespace gpucheck::vulkan

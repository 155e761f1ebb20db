// The compute shaders (shaders/*.comp), compiled to SPIR-V by glslc at build time and embedded
// as 32-bit words, so the binary needs no shader files and no compiler at run time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace gpucheck::vulkan {

struct SpirV {
  const std::uint32_t* words;
  std::size_t count;
};

enum class Shader {
  kEmpty,
  kExpF32,
  kExpF16,
  kGemmF32,
  kGemmF16,
  kGemmVec4F32,
  kGemmVec4F16,
  kGemmCoopmatNvF16,
  kIm2colF32,
  kIm2colF16,
  kConvImplicitF32,
  kConvImplicitF16,
  kCopy,
  kStress
};

SpirV spirv(Shader shader);
const char* shader_name(Shader shader);
// The first 16 hex digits of the SHA-256 of the GEMM shaders' SPIR-V (the tiled ones, f32 and
// f16): what the tuner's cached choice was timed on.
std::string gemm_shaders_digest();

}  // namespace gpucheck::vulkan

// glslc -mfmt=num writes each module as comma-separated words: included here as initialisers.
#include "backends/vulkan/vulkan_shaders.h"

#include "core/sha256.h"

#include <iterator>
#include <stdexcept>

namespace gpucheck::vulkan {

namespace {

constexpr std::uint32_t kEmpty[] = {
#include "empty.spv.inc"
};
constexpr std::uint32_t kExpF32[] = {
#include "exp_f32.spv.inc"
};
constexpr std::uint32_t kExpF16[] = {
#include "exp_f16.spv.inc"
};
constexpr std::uint32_t kGemmF32[] = {
#include "gemm_f32.spv.inc"
};
constexpr std::uint32_t kGemmF16[] = {
#include "gemm_f16.spv.inc"
};
constexpr std::uint32_t kGemmVec4F32[] = {
#include "gemm_vec4_f32.spv.inc"
};
constexpr std::uint32_t kGemmVec4F16[] = {
#include "gemm_vec4_f16.spv.inc"
};
constexpr std::uint32_t kGemmCoopmatNv[] = {
#include "gemm_coopmat_nv.spv.inc"
};
constexpr std::uint32_t kCopy[] = {
#include "copy.spv.inc"
};
constexpr std::uint32_t kIm2colF32[] = {
#include "im2col_f32.spv.inc"
};
constexpr std::uint32_t kIm2colF16[] = {
#include "im2col_f16.spv.inc"
};
constexpr std::uint32_t kConvImplicitF32[] = {
#include "conv_implicit_f32.spv.inc"
};
constexpr std::uint32_t kConvImplicitF16[] = {
#include "conv_implicit_f16.spv.inc"
};
constexpr std::uint32_t kStress[] = {
#include "stress.spv.inc"
};

struct Entry {
  Shader shader;
  SpirV code;
  const char* name;
};

constexpr Entry kShaders[] = {
    {Shader::kEmpty, {kEmpty, std::size(kEmpty)}, "shaders/empty.comp"},
    {Shader::kExpF32, {kExpF32, std::size(kExpF32)}, "shaders/exp.comp"},
    {Shader::kExpF16, {kExpF16, std::size(kExpF16)}, "shaders/exp.comp -DGC_F16"},
    {Shader::kGemmF32, {kGemmF32, std::size(kGemmF32)}, "shaders/gemm.comp"},
    {Shader::kGemmF16, {kGemmF16, std::size(kGemmF16)}, "shaders/gemm.comp -DGC_F16"},
    {Shader::kGemmVec4F32, {kGemmVec4F32, std::size(kGemmVec4F32)}, "shaders/gemm_vec4.comp"},
    {Shader::kGemmVec4F16,
     {kGemmVec4F16, std::size(kGemmVec4F16)},
     "shaders/gemm_vec4.comp -DGC_F16"},
    {Shader::kGemmCoopmatNvF16,
     {kGemmCoopmatNv, std::size(kGemmCoopmatNv)},
     "shaders/gemm_coopmat_nv.comp"},
    {Shader::kCopy, {kCopy, std::size(kCopy)}, "shaders/copy.comp"},
    {Shader::kIm2colF32, {kIm2colF32, std::size(kIm2colF32)}, "shaders/im2col.comp"},
    {Shader::kIm2colF16, {kIm2colF16, std::size(kIm2colF16)}, "shaders/im2col.comp -DGC_F16"},
    {Shader::kConvImplicitF32,
     {kConvImplicitF32, std::size(kConvImplicitF32)},
     "shaders/conv_implicit.comp"},
    {Shader::kConvImplicitF16,
     {kConvImplicitF16, std::size(kConvImplicitF16)},
     "shaders/conv_implicit.comp -DGC_F16"},
    {Shader::kStress, {kStress, std::size(kStress)}, "shaders/stress.comp"},
};

const Entry& entry(Shader shader) {
  for (const auto& e : kShaders)
    if (e.shader == shader) return e;
  throw std::logic_error("a shader without an embedded module");
}

}  // namespace

SpirV spirv(Shader shader) {
  return entry(shader).code;
}

const char* shader_name(Shader shader) {
  return entry(shader).name;
}

std::string gemm_shaders_digest() {
  std::string bytes;
  for (Shader s :
       {Shader::kGemmF32, Shader::kGemmF16, Shader::kGemmVec4F32, Shader::kGemmVec4F16}) {
    const SpirV code = spirv(s);
    bytes.append(reinterpret_cast<const char*>(code.words), code.count * sizeof(std::uint32_t));
  }
  return digest_hex(sha256(bytes)).substr(0, 16);
}

}  // namespace gpucheck::vulkan

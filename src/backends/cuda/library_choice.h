// How a record names the engine or algorithm a CUDA library ran (its `choice` field): cuDNN's
// backend engine (global index, knob choices, numerical notes), cuDNN's legacy algorithm, or
// cuBLASLt's algorithm (id, tile, stages, split-k and the rest of its configuration). The `id`
// is what report compare and the choice cache compare; the other members spell it out.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace gpucheck::cuda {

struct CudnnEngineChoice {
  std::int64_t engine = -1;                         // CUDNN_ATTR_ENGINE_GLOBAL_INDEX
  std::vector<std::pair<int, std::int64_t>> knobs;  // knob type, value; sorted by type
  std::vector<int> notes;                           // cudnnBackendNumericalNote_t
};

struct LtAlgoChoice {
  std::int32_t algo = -1;           // CUBLASLT_ALGO_CONFIG_ID
  std::uint32_t tile = 0;           // cublasLtMatmulTile_t
  std::uint32_t stages = 0;         // cublasLtMatmulStages_t
  std::int32_t split_k = 1;         // CUBLASLT_ALGO_CONFIG_SPLITK_NUM
  std::uint32_t reduction = 0;      // cublasLtReductionScheme_t
  std::uint32_t swizzle = 0;        // CTA swizzling
  std::uint32_t custom = 0;         // custom option
  std::uint16_t inner_shape = 0;    // cublasLtMatmulInnerShape_t
  std::uint16_t cluster_shape = 0;  // cublasLtClusterShape_t
};

// "TILE_SIZE" for CUDNN_KNOB_TYPE_TILE_SIZE; "KNOB_<n>" for a type this build does not name.
std::string cudnn_knob_name(int type);
// "tensor_core" for CUDNN_NUMERICAL_NOTE_TENSOR_CORE; "note_<n>" when not named here.
std::string cudnn_note_name(int note);

nlohmann::json choice_json(const CudnnEngineChoice& c, const std::string& version);
nlohmann::json cudnn_legacy_choice_json(int algo, int math_type, const std::string& version);
nlohmann::json choice_json(const LtAlgoChoice& c, const std::string& version);
// cublasGemmEx's own choice, where cuBLASLt's heuristic offered nothing.
nlohmann::json gemm_ex_choice_json(const std::string& version);

}  // namespace gpucheck::cuda

// Names from cudnn_graph.h's enumerations (cuDNN 9), so a record reads "TILE_SIZE=2", not "2=2".
#include "backends/cuda/library_choice.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace gpucheck::cuda {

namespace k = keys;

namespace {

constexpr std::array<std::string_view, 45> kKnobs{"SPLIT_K",
                                                  "SWIZZLE",
                                                  "TILE_SIZE",
                                                  "USE_TEX",
                                                  "EDGE",
                                                  "KBLOCK",
                                                  "LDGA",
                                                  "LDGB",
                                                  "CHUNK_K",
                                                  "SPLIT_H",
                                                  "WINO_TILE",
                                                  "MULTIPLY",
                                                  "SPLIT_K_BUF",
                                                  "TILEK",
                                                  "STAGES",
                                                  "REDUCTION_MODE",
                                                  "CTA_SPLIT_K_MODE",
                                                  "SPLIT_K_SLC",
                                                  "IDX_MODE",
                                                  "SLICED",
                                                  "SPLIT_RS",
                                                  "SINGLEBUFFER",
                                                  "LDGC",
                                                  "SPECFILT",
                                                  "KERNEL_CFG",
                                                  "WORKSPACE",
                                                  "TILE_CGA",
                                                  "TILE_CGA_M",
                                                  "TILE_CGA_N",
                                                  "BLOCK_SIZE",
                                                  "OCCUPANCY",
                                                  "ARRAY_SIZE_PER_THREAD",
                                                  "NUM_C_PER_BLOCK",
                                                  "SPLIT_COLS",
                                                  "TILE_ROWS",
                                                  "TILE_COLS",
                                                  "LOAD_SIZE",
                                                  "CTA_COUNT",
                                                  "STREAM_K",
                                                  "SPLIT_P_SLC",
                                                  "TILE_M",
                                                  "TILE_N",
                                                  "WARP_SPEC_CFG",
                                                  "SWAP_AB",
                                                  "COUNTS"};

constexpr std::array<std::string_view, 10> kNotes{"tensor_core",
                                                  "down_convert_inputs",
                                                  "reduced_precision_reduction",
                                                  "fft",
                                                  "nondeterministic",
                                                  "winograd",
                                                  "winograd_tile_4x4",
                                                  "winograd_tile_6x6",
                                                  "winograd_tile_13x13",
                                                  "strict_nan_prop"};

}  // namespace

std::string cudnn_knob_name(int type) {
  if (type >= 0 && static_cast<std::size_t>(type) < kKnobs.size())
    return std::string(kKnobs[static_cast<std::size_t>(type)]);
  return fmt::format("KNOB_{}", type);
}

std::string cudnn_note_name(int note) {
  if (note >= 0 && static_cast<std::size_t>(note) < kNotes.size())
    return std::string(kNotes[static_cast<std::size_t>(note)]);
  return fmt::format("note_{}", note);
}

nlohmann::json choice_json(const CudnnEngineChoice& c, const std::string& version) {
  std::string id = fmt::format("engine {}", c.engine);
  nlohmann::json knobs = nlohmann::json::object();
  for (std::size_t i = 0; i < c.knobs.size(); ++i) {
    const std::string name = cudnn_knob_name(c.knobs[i].first);
    id += fmt::format("{}{}={}", i == 0 ? " knobs " : ",", name, c.knobs[i].second);
    knobs[name] = c.knobs[i].second;
  }
  nlohmann::json notes = nlohmann::json::array();
  for (int n : c.notes) notes.push_back(cudnn_note_name(n));
  return {{k::kLibrary, "cudnn"}, {k::kVersion, version}, {k::kId, id},
          {k::kEngine, c.engine}, {k::kKnobs, knobs},     {k::kNotes, notes}};
}

nlohmann::json cudnn_legacy_choice_json(int algo, int math_type, const std::string& version) {
  return {{k::kLibrary, "cudnn"},
          {k::kVersion, version},
          {k::kId, fmt::format("legacy algo {} math {}", algo, math_type)},
          {k::kAlgo, algo}};
}

nlohmann::json choice_json(const LtAlgoChoice& c, const std::string& version) {
  return {{k::kLibrary, "cublaslt"},
          {k::kVersion, version},
          {k::kId, fmt::format("algo {} tile {} stages {} split_k {} reduction {} swizzle {} "
                               "custom {} inner {} cluster {}",
                               c.algo, c.tile, c.stages, c.split_k, c.reduction, c.swizzle,
                               c.custom, c.inner_shape, c.cluster_shape)},
          {k::kAlgo, c.algo},
          {k::kTile, c.tile},
          {k::kStages, c.stages},
          {k::kSplitK, c.split_k}};
}

nlohmann::json gemm_ex_choice_json(const std::string& version) {
  return {{k::kLibrary, "cublas"}, {k::kVersion, version}, {k::kId, "gemm_ex default"}};
}

}  // namespace gpucheck::cuda

// A forward convolution through cuDNN's backend (graph) API: the engine configurations its
// heuristics offer (mode A, then the fallback list), each finalised and timed on the real
// buffers, the fastest kept. That is what PyTorch does with cudnn.benchmark; the legacy API's
// search reaches only the eight legacy algorithms, which ran at 0.4–0.65× torch for f16, bf16
// and tf32 on an H200 (docs/PERFORMANCE.md).
#pragma once

#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/library_choice.h"

#include <cuda_runtime_api.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace gpucheck::cuda {

struct GraphConvSpec {
  cudnnDataType_t data = CUDNN_DATA_FLOAT;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  bool allow_tensor_cores = true;  // false: f32 arithmetic (no TF32), engines without that note
  bool nhwc = false;               // x, y NHWC and w KRSC; else NCHW and KCRS
  std::int64_t n = 0, c = 0, h = 0, w = 0, k = 0, r = 0, s = 0, p = 0, q = 0;
  std::int64_t stride = 1, pad = 0;
};

class GraphConv {
 public:
  // Builds the graph, tries up to `max_candidates` engine configurations whose workspace fits
  // `max_workspace` bytes of `workspace` (device memory), and keeps the fastest; of those within
  // `noise` (relative) of the fastest, the one the heuristics list first. With `wanted` (a kept
  // choice's id, library_choice.h) it times nothing and builds the configuration of that id.
  // nullptr, with *why set, when none runs (or `wanted` is not offered): the caller then uses
  // the legacy API, or searches.
  static std::unique_ptr<GraphConv> build(const CudnnLibrary& lib, cudnnHandle_t handle,
                                          cudaStream_t stream, const GraphConvSpec& spec, void* x,
                                          void* w, void* y, void* workspace,
                                          std::size_t max_workspace, double noise,
                                          const std::string* wanted, std::string* why);
  ~GraphConv();
  GraphConv(const GraphConv&) = delete;
  GraphConv& operator=(const GraphConv&) = delete;

  std::size_t workspace_bytes() const { return workspace_; }
  int candidates_timed() const { return timed_; }
  float best_ms() const { return best_ms_; }
  const CudnnEngineChoice& choice() const { return choice_; }
  // Enqueues y = conv(x, w) on the handle's stream.
  cudnnStatus_t execute(void* x, void* w, void* y, void* workspace);

 private:
  GraphConv() = default;
  const CudnnLibrary* lib_ = nullptr;
  cudnnHandle_t handle_ = nullptr;
  cudnnBackendDescriptor_t plan_ = nullptr;  // one of keep_
  std::vector<cudnnBackendDescriptor_t> keep_;
  cudnnBackendDescriptor_t pack_ = nullptr;
  void* pack_ptrs_[4] = {nullptr, nullptr, nullptr, nullptr};  // x, w, y, workspace of pack_
  std::size_t workspace_ = 0;
  int timed_ = 0;
  float best_ms_ = 0;
  CudnnEngineChoice choice_;
};

}  // namespace gpucheck::cuda

// cuDNN plans of a CUDA device's convolutions: per shape, layout and dtype its descriptors, the
// legacy algorithm search and the backend API's engines timed against each other (or the choice
// kept from an earlier run), and the run through the faster.
#pragma once

#include "backends/cuda/cudnn_graph_conv.h"
#include "backends/cuda/cudnn_library.h"
#include "backends/device.h"

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace gpucheck {
class LibraryChoiceCache;
}

namespace gpucheck::cuda {

class CudaBuffer;

struct ConvTypes {
  cudnnDataType_t data;
  cudnnDataType_t compute;
  cudnnMathType_t math;
  const char* name;
};

ConvTypes conv_types(DType d);

// cuDNN descriptors of one convolution, with the algorithm the search chose.
struct ConvPlan {
  const CudnnLibrary* lib = nullptr;
  cudnnTensorDescriptor_t x = nullptr, y = nullptr;
  cudnnFilterDescriptor_t w = nullptr;
  cudnnConvolutionDescriptor_t conv = nullptr;
  cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
  std::size_t workspace = 0;
  bool searched = false;
  std::unique_ptr<GraphConv> graph;  // set when the backend API's engine beat the legacy search
  std::string how;                   // which search chose, for the record's context
  nlohmann::json choice;             // the record's `choice`
  ConvPlan() = default;
  ConvPlan(const ConvPlan&) = delete;
  ConvPlan& operator=(const ConvPlan&) = delete;
  ~ConvPlan() {
    if (x) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyTensorDescriptor(x));
    if (y) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyTensorDescriptor(y));
    if (w) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyFilterDescriptor(w));
    if (conv) GC_CUDNN_CHECK_NOTHROW(lib->cudnnDestroyConvolutionDescriptor(conv));
  }
};

class ConvPlans {
 public:
  // The handle and stream are the device's, and outlive these plans; so does `choices`.
  ConvPlans(const CudnnLibrary& lib, cudnnHandle_t dnn, cudaStream_t stream,
            LibraryChoiceCache& choices);
  ~ConvPlans();
  ConvPlans(const ConvPlans&) = delete;
  ConvPlans& operator=(const ConvPlans&) = delete;

  // Enqueues y = conv(x, w) on the stream; the shape's plan is made on its first run.
  void run(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
           DeviceBuffer& y);
  // The record's `choice` of the last run's plan, and which search chose it (the record's
  // context); empty before any.
  nlohmann::json last_choice() const;
  std::string last_how() const;

 private:
  using Key =
      std::tuple<int, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t,
                 std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t, int>;
  ConvPlan& plan(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
                 DeviceBuffer& y);
  void use_kept(ConvPlan& plan, DType dtype, const std::string& key, const nlohmann::json& kept,
                const GraphConvSpec& gs, const DeviceBuffer& x, const DeviceBuffer& w,
                DeviceBuffer& y, std::size_t search_bytes);
  void search(ConvPlan& plan, DType dtype, const std::string& key, const GraphConvSpec& gs,
              const DeviceBuffer& x, const DeviceBuffer& w, DeviceBuffer& y,
              std::size_t search_bytes);

  const CudnnLibrary& lib_;
  cudnnHandle_t dnn_;
  cudaStream_t stream_;
  LibraryChoiceCache& choices_;
  std::unique_ptr<CudaBuffer> workspace_;
  std::map<Key, std::unique_ptr<ConvPlan>> plans_;
  const ConvPlan* last_ = nullptr;
};

}  // namespace gpucheck::cuda

// cuDNN opened at run time through a typed function table: the legacy convolution API (present,
// deprecated, in cuDNN 9), which runs on every cuDNN 9 the GPU machines carry.
#pragma once

#include "backends/cuda/library_loader.h"
#include "core/environment.h"

#include <cudnn.h>

#include <memory>
#include <string>

namespace gpucheck::cuda {

class CudnnLibrary {
 public:
  static std::unique_ptr<CudnnLibrary> open(const EnvMap& env, std::string* error);

  const LoadedLibrary& library() const { return lib_; }
  // "9.14.0" from cudnnGetVersion (major·10000 + minor·100 + patch in cuDNN 9).
  std::string version() const;
  std::size_t version_number() const { return cudnnGetVersion(); }

  decltype(&::cudnnGetVersion) cudnnGetVersion = nullptr;
  decltype(&::cudnnCreate) cudnnCreate = nullptr;
  decltype(&::cudnnDestroy) cudnnDestroy = nullptr;
  decltype(&::cudnnSetStream) cudnnSetStream = nullptr;
  decltype(&::cudnnCreateTensorDescriptor) cudnnCreateTensorDescriptor = nullptr;
  decltype(&::cudnnSetTensor4dDescriptor) cudnnSetTensor4dDescriptor = nullptr;
  decltype(&::cudnnDestroyTensorDescriptor) cudnnDestroyTensorDescriptor = nullptr;
  decltype(&::cudnnCreateFilterDescriptor) cudnnCreateFilterDescriptor = nullptr;
  decltype(&::cudnnSetFilter4dDescriptor) cudnnSetFilter4dDescriptor = nullptr;
  decltype(&::cudnnDestroyFilterDescriptor) cudnnDestroyFilterDescriptor = nullptr;
  decltype(&::cudnnCreateConvolutionDescriptor) cudnnCreateConvolutionDescriptor = nullptr;
  decltype(&::cudnnSetConvolution2dDescriptor) cudnnSetConvolution2dDescriptor = nullptr;
  decltype(&::cudnnSetConvolutionMathType) cudnnSetConvolutionMathType = nullptr;
  decltype(&::cudnnDestroyConvolutionDescriptor) cudnnDestroyConvolutionDescriptor = nullptr;
  decltype(&::cudnnGetConvolutionForwardAlgorithmMaxCount)
      cudnnGetConvolutionForwardAlgorithmMaxCount = nullptr;
  decltype(&::cudnnFindConvolutionForwardAlgorithmEx) cudnnFindConvolutionForwardAlgorithmEx =
      nullptr;
  decltype(&::cudnnGetConvolutionForwardWorkspaceSize) cudnnGetConvolutionForwardWorkspaceSize =
      nullptr;
  decltype(&::cudnnConvolutionForward) cudnnConvolutionForward = nullptr;

  // The backend (graph) API, optional: without it conv uses the legacy search alone.
  bool has_backend_api() const { return backend_api_; }
  decltype(&::cudnnBackendCreateDescriptor) cudnnBackendCreateDescriptor = nullptr;
  decltype(&::cudnnBackendDestroyDescriptor) cudnnBackendDestroyDescriptor = nullptr;
  decltype(&::cudnnBackendSetAttribute) cudnnBackendSetAttribute = nullptr;
  decltype(&::cudnnBackendGetAttribute) cudnnBackendGetAttribute = nullptr;
  decltype(&::cudnnBackendFinalize) cudnnBackendFinalize = nullptr;
  decltype(&::cudnnBackendExecute) cudnnBackendExecute = nullptr;

 private:
  CudnnLibrary() = default;
  LoadedLibrary lib_;
  bool backend_api_ = false;
};

}  // namespace gpucheck::cuda

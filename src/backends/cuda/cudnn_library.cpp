// Loading cuDNN and resolving the legacy convolution entry points.
#include "backends/cuda/cudnn_library.h"

#include <fmt/format.h>

namespace gpucheck::cuda {

std::unique_ptr<CudnnLibrary> CudnnLibrary::open(const EnvMap& env, std::string* error) {
  std::unique_ptr<CudnnLibrary> lib(new CudnnLibrary());
  auto spec = cudnn_spec();
  lib->lib_ = load_library(spec, search_roots(spec, env));
  if (!lib->lib_.ok()) {
    *error = fmt::format("cuDNN not loadable: {}", lib->lib_.error);
    return nullptr;
  }
  void* h = lib->lib_.handle;
  std::string missing;
  bool ok = true;
#define GC_CUDNN_RESOLVE(name) ok = resolve_symbol(h, #name, &lib->name, &missing) && ok
  GC_CUDNN_RESOLVE(cudnnGetVersion);
  GC_CUDNN_RESOLVE(cudnnCreate);
  GC_CUDNN_RESOLVE(cudnnDestroy);
  GC_CUDNN_RESOLVE(cudnnSetStream);
  GC_CUDNN_RESOLVE(cudnnCreateTensorDescriptor);
  GC_CUDNN_RESOLVE(cudnnSetTensor4dDescriptor);
  GC_CUDNN_RESOLVE(cudnnDestroyTensorDescriptor);
  GC_CUDNN_RESOLVE(cudnnCreateFilterDescriptor);
  GC_CUDNN_RESOLVE(cudnnSetFilter4dDescriptor);
  GC_CUDNN_RESOLVE(cudnnDestroyFilterDescriptor);
  GC_CUDNN_RESOLVE(cudnnCreateConvolutionDescriptor);
  GC_CUDNN_RESOLVE(cudnnSetConvolution2dDescriptor);
  GC_CUDNN_RESOLVE(cudnnSetConvolutionMathType);
  GC_CUDNN_RESOLVE(cudnnDestroyConvolutionDescriptor);
  GC_CUDNN_RESOLVE(cudnnGetConvolutionForwardAlgorithmMaxCount);
  GC_CUDNN_RESOLVE(cudnnFindConvolutionForwardAlgorithmEx);
  GC_CUDNN_RESOLVE(cudnnGetConvolutionForwardWorkspaceSize);
  GC_CUDNN_RESOLVE(cudnnConvolutionForward);
  if (!ok) {
    *error = fmt::format("cuDNN at {} lacks {}", lib->lib_.real_path, missing);
    return nullptr;
  }
  std::string missing_backend;
  bool& b = lib->backend_api_;
  b = resolve_symbol(h, "cudnnBackendCreateDescriptor", &lib->cudnnBackendCreateDescriptor,
                     &missing_backend);
  b = resolve_symbol(h, "cudnnBackendDestroyDescriptor", &lib->cudnnBackendDestroyDescriptor,
                     &missing_backend) &&
      b;
  b = resolve_symbol(h, "cudnnBackendSetAttribute", &lib->cudnnBackendSetAttribute,
                     &missing_backend) &&
      b;
  b = resolve_symbol(h, "cudnnBackendGetAttribute", &lib->cudnnBackendGetAttribute,
                     &missing_backend) &&
      b;
  b = resolve_symbol(h, "cudnnBackendFinalize", &lib->cudnnBackendFinalize, &missing_backend) && b;
  b = resolve_symbol(h, "cudnnBackendExecute", &lib->cudnnBackendExecute, &missing_backend) && b;
#undef GC_CUDNN_RESOLVE
  return lib;
}

std::string CudnnLibrary::version() const {
  std::size_t v = cudnnGetVersion();
  return fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
}

}  // namespace gpucheck::cuda

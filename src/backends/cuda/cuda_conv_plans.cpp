#include "backends/cuda/cuda_conv_plans.h"

#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/library_choice.h"
#include "backends/library_choice_cache.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <vector>

namespace gpucheck::cuda {

namespace {

namespace k = keys;

constexpr std::size_t kSearchWorkspaceBytes = std::size_t{512} << 20;  // cap for the search

}  // namespace

ConvTypes conv_types(DType d) {
  switch (d) {
    case DType::kF32:
      return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_FMA_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_FMA_MATH"};
    case DType::kTf32:
      return {CUDNN_DATA_FLOAT, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kF16:
      return {CUDNN_DATA_HALF, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kBf16:
      return {CUDNN_DATA_BFLOAT16, CUDNN_DATA_FLOAT, CUDNN_TENSOR_OP_MATH,
              "CUDNN_DATA_FLOAT+CUDNN_TENSOR_OP_MATH"};
    case DType::kF64:
      return {CUDNN_DATA_DOUBLE, CUDNN_DATA_DOUBLE, CUDNN_DEFAULT_MATH,
              "CUDNN_DATA_DOUBLE+CUDNN_DEFAULT_MATH"};
    case DType::kFp8:
      break;  // unsupported_reason refuses conv in fp8
  }
  throw std::logic_error("no cuDNN types for this dtype");
}

ConvPlans::ConvPlans(const CudnnLibrary& lib, cudnnHandle_t dnn, cudaStream_t stream,
                     LibraryChoiceCache& choices)
    : lib_(lib), dnn_(dnn), stream_(stream), choices_(choices) {}

ConvPlans::~ConvPlans() {
  plans_.clear();
  workspace_.reset();
}

void ConvPlans::run(DType dtype, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
                    DeviceBuffer& y) {
  ConvPlan& plan = this->plan(dtype, s, x, w, y);
  const UnitScale scale(dtype);
  void* ws = plan.workspace > 0 ? workspace_->get() : nullptr;
  last_ = &plan;
  if (plan.graph) {
    GC_CUDNN_CHECK(plan.graph->execute(dptr(x), dptr(w), dptr(y), ws));
    return;
  }
  GC_CUDNN_CHECK(lib_.cudnnConvolutionForward(dnn_, scale.alpha(), plan.x, dptr(x), plan.w, dptr(w),
                                              plan.conv, plan.algo, ws, plan.workspace,
                                              scale.beta(), plan.y, dptr(y)));
}

nlohmann::json ConvPlans::last_choice() const {
  return last_ != nullptr ? last_->choice : nlohmann::json::object();
}

std::string ConvPlans::last_how() const {
  return last_ != nullptr ? last_->how : std::string();
}

// The kept choice of a convolution, set up without a search: the legacy algorithm with its
// math, or the backend engine of that id. One that no longer runs is forgotten (the caller
// then searches).
void ConvPlans::use_kept(ConvPlan& plan, DType dtype, const std::string& key,
                         const nlohmann::json& kept, const GraphConvSpec& gs, const DeviceBuffer& x,
                         const DeviceBuffer& w, DeviceBuffer& y, std::size_t search_bytes) {
  const auto& L = lib_;
  const std::string id = kept[k::kId].get<std::string>();
  int algo = -1, math = -1;
  if (id.rfind("legacy ", 0) == 0) {
    char rest = 0;
    if (std::sscanf(id.c_str(), "legacy algo %d math %d%c", &algo, &math, &rest) != 2 || algo < 0 ||
        algo >= CUDNN_CONVOLUTION_FWD_ALGO_COUNT || math < 0 || math > CUDNN_FMA_MATH) {
      choices_.forget(key, "its legacy algorithm cannot be read");
      return;
    }
    plan.algo = static_cast<cudnnConvolutionFwdAlgo_t>(algo);
    if (dtype != DType::kF32)
      GC_CUDNN_CHECK(L.cudnnSetConvolutionMathType(plan.conv, static_cast<cudnnMathType_t>(math)));
    std::size_t ws = 0;
    if (auto st = L.cudnnGetConvolutionForwardWorkspaceSize(dnn_, plan.x, plan.w, plan.conv, plan.y,
                                                            plan.algo, &ws);
        st != CUDNN_STATUS_SUCCESS) {
      choices_.forget(key, fmt::format("cudnnGetConvolutionForwardWorkspaceSize for it failed: "
                                       "status {}",
                                       static_cast<int>(st)));
      return;
    }
    plan.workspace = ws;
    plan.how = fmt::format("legacy algorithm {}, kept", algo);
  } else {
    CudaBuffer search(search_bytes);
    std::string why;
    plan.graph = GraphConv::build(L, dnn_, stream_, gs, dptr(x), dptr(w), dptr(y), search.get(),
                                  search.bytes(), kChoiceTieNoise, &id, &why);
    if (!plan.graph) {
      choices_.forget(key, why);
      return;
    }
    plan.workspace = plan.graph->workspace_bytes();
    plan.how = "backend API engine, kept";
  }
  plan.choice = kept;
  plan.choice[k::kVersion] = L.version();
  plan.choice[k::kSource] = "cached";
}

// The legacy search and the backend API's engines, each timed; the faster is kept (the legacy
// algorithm when it is as fast) and remembered under `key`.
void ConvPlans::search(ConvPlan& plan, DType dtype, const std::string& key, const GraphConvSpec& gs,
                       const DeviceBuffer& x, const DeviceBuffer& w, DeviceBuffer& y,
                       std::size_t search_bytes) {
  const auto& L = lib_;
  const ConvTypes t = conv_types(dtype);
  int max_algos = 0;
  GC_CUDNN_CHECK(L.cudnnGetConvolutionForwardAlgorithmMaxCount(dnn_, &max_algos));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> perf(static_cast<std::size_t>(std::max(max_algos, 1)));
  int returned = 0;
  std::string graph_why;
  {
    CudaBuffer search(search_bytes);
    GC_CUDNN_CHECK(L.cudnnFindConvolutionForwardAlgorithmEx(
        dnn_, plan.x, dptr(x), plan.w, dptr(w), plan.conv, plan.y, dptr(y), max_algos, &returned,
        perf.data(), search.get(), search.bytes()));
    // The backend API's engines too (PyTorch's cudnn.benchmark path); the faster one is kept.
    plan.graph = GraphConv::build(L, dnn_, stream_, gs, dptr(x), dptr(w), dptr(y), search.get(),
                                  search.bytes(), kChoiceTieNoise, nullptr, &graph_why);
  }
  auto best = std::find_if(perf.begin(), perf.begin() + returned,
                           [](const auto& p) { return p.status == CUDNN_STATUS_SUCCESS; });
  const bool legacy_ok = best != perf.begin() + returned;
  if (!legacy_ok && !plan.graph)
    throw ApiError(
        "cuDNN", CUDNN_STATUS_NOT_SUPPORTED, "CUDNN_STATUS_NOT_SUPPORTED",
        fmt::format("cudnnFindConvolutionForwardAlgorithmEx: no algorithm for {} "
                    "conv in {} ({})",
                    gpucheck::to_string(dtype),
                    gpucheck::to_string(gs.nhwc ? Layout::kNhwc : Layout::kNchw), graph_why),
        __FILE__, __LINE__);
  if (plan.graph && legacy_ok && best->time <= plan.graph->best_ms())
    plan.graph.reset();  // the legacy algorithm was as fast
  if (plan.graph) {
    plan.workspace = plan.graph->workspace_bytes();
    plan.how = legacy_ok ? fmt::format(
                               "backend API engine, fastest of {} timed ({:.3f} ms; "
                               "legacy algorithm {} {:.3f} ms)",
                               plan.graph->candidates_timed(), plan.graph->best_ms(),
                               static_cast<int>(best->algo), best->time)
                         : fmt::format("backend API engine, fastest of {} timed ({:.3f} ms)",
                                       plan.graph->candidates_timed(), plan.graph->best_ms());
    plan.choice = choice_json(plan.graph->choice(), L.version());
  } else {
    plan.algo = best->algo;
    plan.workspace = best->memory;
    plan.how = fmt::format("legacy algorithm {} ({:.3f} ms){}", static_cast<int>(best->algo),
                           best->time, graph_why.empty() ? "" : "; backend API: " + graph_why);
    // f32 stays on FMA math; the reduced-precision types run with the math the search used.
    const cudnnMathType_t math = dtype == DType::kF32 ? t.math : best->mathType;
    if (dtype != DType::kF32) GC_CUDNN_CHECK(L.cudnnSetConvolutionMathType(plan.conv, math));
    plan.choice =
        cudnn_legacy_choice_json(static_cast<int>(best->algo), static_cast<int>(math), L.version());
  }
  choices_.keep(key, plan.choice);
  plan.choice[k::kSource] = "searched";
  plan.choice[k::kCandidates] = (plan.graph ? plan.graph->candidates_timed() : 0) + returned;
}

ConvPlan& ConvPlans::plan(DType dtype, const ConvShape& s, const DeviceBuffer& x,
                          const DeviceBuffer& w, DeviceBuffer& y) {
  Key key{static_cast<int>(dtype),   s.n, s.c, s.h, s.w, s.k, s.r, s.s, s.stride, s.pad,
          static_cast<int>(s.layout)};
  if (auto it = plans_.find(key); it != plans_.end()) return *it->second;
  const ConvTypes t = conv_types(dtype);
  const auto& L = lib_;
  auto plan = std::make_unique<ConvPlan>();
  plan->lib = &lib_;
  const cudnnTensorFormat_t fmt_ =
      s.layout == Layout::kNhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW;
  const int n = to_library_int(s.n, "n"), c = to_library_int(s.c, "c"),
            h = to_library_int(s.h, "h"), wd = to_library_int(s.w, "w"),
            kk = to_library_int(s.k, "k"), r = to_library_int(s.r, "r"),
            ss = to_library_int(s.s, "s"), pad = to_library_int(s.pad, "pad"),
            stride = to_library_int(s.stride, "stride");
  GC_CUDNN_CHECK(L.cudnnCreateTensorDescriptor(&plan->x));
  GC_CUDNN_CHECK(L.cudnnSetTensor4dDescriptor(plan->x, fmt_, t.data, n, c, h, wd));
  // The filter's format sets its memory order: KCRS for NCHW, KRSC for NHWC (the engine's).
  GC_CUDNN_CHECK(L.cudnnCreateFilterDescriptor(&plan->w));
  GC_CUDNN_CHECK(L.cudnnSetFilter4dDescriptor(plan->w, t.data, fmt_, kk, c, r, ss));
  GC_CUDNN_CHECK(L.cudnnCreateConvolutionDescriptor(&plan->conv));
  GC_CUDNN_CHECK(L.cudnnSetConvolution2dDescriptor(plan->conv, pad, pad, stride, stride, 1, 1,
                                                   CUDNN_CROSS_CORRELATION, t.compute));
  GC_CUDNN_CHECK(L.cudnnSetConvolutionMathType(plan->conv, t.math));
  GC_CUDNN_CHECK(L.cudnnCreateTensorDescriptor(&plan->y));
  GC_CUDNN_CHECK(L.cudnnSetTensor4dDescriptor(
      plan->y, fmt_, t.data, n, kk, to_library_int(s.p(), "p"), to_library_int(s.q(), "q")));
  GraphConvSpec gs;
  gs.data = t.data;
  gs.compute = t.compute;
  gs.allow_tensor_cores = dtype != DType::kF32;
  gs.nhwc = s.layout == Layout::kNhwc;
  gs.n = n, gs.c = c, gs.h = h, gs.w = wd, gs.k = kk, gs.r = r, gs.s = ss;
  gs.p = to_library_int(s.p(), "p"), gs.q = to_library_int(s.q(), "q"), gs.stride = stride,
  gs.pad = pad;
  std::size_t free = 0, total = 0;
  GC_CUDA_CHECK(cudaMemGetInfo(&free, &total));
  const std::size_t search_bytes = std::min(kSearchWorkspaceBytes, free / 4);
  const std::string kept_key = choice_key("cudnn", L.version(), "conv", gpucheck::to_string(dtype),
                                          fmt::format("n{} c{} h{} w{} k{} r{} s{} stride{} pad{}",
                                                      n, c, h, wd, kk, r, ss, stride, pad),
                                          gpucheck::to_string(s.layout));
  if (auto kept = choices_.find(kept_key))
    use_kept(*plan, dtype, kept_key, *kept, gs, x, w, y, search_bytes);
  if (!plan->choice.is_object()) search(*plan, dtype, kept_key, gs, x, w, y, search_bytes);
  if (plan->workspace > 0 && (!workspace_ || workspace_->bytes() < plan->workspace)) {
    GC_CUDA_CHECK(cudaStreamSynchronize(stream_));
    workspace_.reset();
    workspace_ = std::make_unique<CudaBuffer>(plan->workspace);
  }
  auto& ref = *plan;
  plans_.emplace(key, std::move(plan));
  return ref;
}

}  // namespace gpucheck::cuda

// cuDNN's backend API for one forward convolution: descriptors, heuristics, a timed choice.
#include "backends/cuda/cudnn_graph_conv.h"

#include "backends/cuda/cuda_memory.h"
#include "backends/library_choice_cache.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <utility>
#include <vector>

namespace gpucheck::cuda {

namespace {

constexpr int kMaxCandidates = 12;  // PyTorch's cudnn benchmark limit is 10 by default
constexpr int kTimedRuns = 3;
constexpr std::int64_t kMaxHeuristicResults = 64;
// The handle attributes are deprecated enumerators in cuDNN 9.19's headers (a warning), yet the
// cuDNN 9 builds the GPU machines load still read them: set by value.
constexpr auto kOperationGraphHandle = static_cast<cudnnBackendAttributeName_t>(800);
constexpr auto kExecutionPlanHandle = static_cast<cudnnBackendAttributeName_t>(400);
constexpr std::int64_t kUidX = 'x', kUidW = 'w', kUidY = 'y';

// Owns every descriptor made, destroyed together.
class Descriptors {
 public:
  explicit Descriptors(const CudnnLibrary& lib) : lib_(lib) {}
  ~Descriptors() {
    for (auto it = all_.rbegin(); it != all_.rend(); ++it) lib_.cudnnBackendDestroyDescriptor(*it);
  }
  Descriptors(const Descriptors&) = delete;
  Descriptors& operator=(const Descriptors&) = delete;
  cudnnBackendDescriptor_t make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t d = nullptr;
    if (lib_.cudnnBackendCreateDescriptor(type, &d) != CUDNN_STATUS_SUCCESS) return nullptr;
    all_.push_back(d);
    return d;
  }
  // Hands every descriptor over to the caller (a plan may refer to its configuration).
  std::vector<cudnnBackendDescriptor_t> release_all() { return std::exchange(all_, {}); }

 private:
  const CudnnLibrary& lib_;
  std::vector<cudnnBackendDescriptor_t> all_;
};

struct Failure {
  std::string what;
};

constexpr int kMaxKnobs = 32;

// The engine, knobs and numerical notes of a configuration, read through
// cudnnBackendGetAttribute; nullopt when cuDNN does not say.
std::optional<CudnnEngineChoice> describe(const CudnnLibrary& L, cudnnBackendDescriptor_t cfg) {
  Descriptors ds(L);
  auto engine = ds.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (engine == nullptr) return std::nullopt;
  std::int64_t n = 0;
  if (L.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &n, &engine) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  CudnnEngineChoice c;
  if (L.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_GLOBAL_INDEX, CUDNN_TYPE_INT64, 1, &n,
                                 &c.engine) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  std::array<cudnnBackendNumericalNote_t, 32> notes{};
  if (L.cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE, static_cast<std::int64_t>(notes.size()),
                                 &n, notes.data()) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 32); ++i)
    c.notes.push_back(static_cast<int>(notes[static_cast<std::size_t>(i)]));
  std::vector<cudnnBackendDescriptor_t> knobs;
  for (int i = 0; i < kMaxKnobs; ++i)
    if (auto d = ds.make(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)) knobs.push_back(d);
  std::int64_t count = 0;
  if (L.cudnnBackendGetAttribute(
          cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
          static_cast<std::int64_t>(knobs.size()), &count, knobs.data()) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(count, kMaxKnobs); ++i) {
    cudnnBackendKnobType_t type{};
    std::int64_t value = 0;
    if (L.cudnnBackendGetAttribute(knobs[static_cast<std::size_t>(i)],
                                   CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1, &n,
                                   &type) != CUDNN_STATUS_SUCCESS ||
        L.cudnnBackendGetAttribute(knobs[static_cast<std::size_t>(i)],
                                   CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &n,
                                   &value) != CUDNN_STATUS_SUCCESS)
      return std::nullopt;
    c.knobs.emplace_back(static_cast<int>(type), value);
  }
  std::sort(c.knobs.begin(), c.knobs.end());
  return c;
}

}  // namespace

std::unique_ptr<GraphConv> GraphConv::build(const CudnnLibrary& L, cudnnHandle_t handle,
                                            cudaStream_t stream, const GraphConvSpec& sp, void* x,
                                            void* w, void* y, void* workspace,
                                            std::size_t max_workspace, double noise,
                                            const std::string* wanted, std::string* why) {
  if (!L.has_backend_api()) {
    *why = "cuDNN's backend API entry points are missing";
    return nullptr;
  }
  Descriptors ds(L);
  auto set = [&](cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                 cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
    auto st = L.cudnnBackendSetAttribute(d, name, type, count, values);
    if (st != CUDNN_STATUS_SUCCESS)
      throw Failure{fmt::format("cudnnBackendSetAttribute({}) failed: status {}",
                                static_cast<int>(name), static_cast<int>(st))};
  };
  auto finalize = [&](cudnnBackendDescriptor_t d, const char* what) {
    if (d == nullptr)
      throw Failure{fmt::format("cudnnBackendCreateDescriptor for {} failed", what)};
    auto st = L.cudnnBackendFinalize(d);
    if (st != CUDNN_STATUS_SUCCESS)
      throw Failure{
          fmt::format("cudnnBackendFinalize({}) failed: status {}", what, static_cast<int>(st))};
  };
  auto tensor = [&](std::int64_t uid, std::array<std::int64_t, 4> dims, bool channels_last) {
    // dims are N,C,H,W (K,C,R,S for the filter) whatever the memory order.
    const auto [n, c, h, wd] = dims;
    std::array<std::int64_t, 4> strides =
        channels_last ? std::array<std::int64_t, 4>{h * wd * c, 1, wd * c, c}
                      : std::array<std::int64_t, 4>{c * h * wd, h * wd, wd, 1};
    (void)n;
    auto d = ds.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    if (d == nullptr) throw Failure{"cudnnBackendCreateDescriptor(tensor) failed"};
    const std::int64_t align = 16;
    set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &sp.data);
    set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
    set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
    set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
    set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    finalize(d, "tensor");
    return d;
  };
  std::unique_ptr<GraphConv> out(new GraphConv());
  out->lib_ = &L;
  out->handle_ = handle;
  cudaEvent_t start = nullptr, stop = nullptr;
  try {
    auto dx = tensor(kUidX, {sp.n, sp.c, sp.h, sp.w}, sp.nhwc);
    auto dw = tensor(kUidW, {sp.k, sp.c, sp.r, sp.s}, sp.nhwc);
    auto dy = tensor(kUidY, {sp.n, sp.k, sp.p, sp.q}, sp.nhwc);
    auto conv = ds.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
    if (conv == nullptr) throw Failure{"cudnnBackendCreateDescriptor(convolution) failed"};
    const std::int64_t dims = 2;
    const std::array<std::int64_t, 2> ones{1, 1}, strides{sp.stride, sp.stride},
        pads{sp.pad, sp.pad};
    const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
    set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &sp.compute);
    set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
    set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
    set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
    set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
    finalize(conv, "convolution");

    auto op = ds.make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
    if (op == nullptr) throw Failure{"cudnnBackendCreateDescriptor(operation) failed"};
    const UnitScale scale(sp.compute == CUDNN_DATA_DOUBLE);
    const auto scale_type = scale.f64() ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dw);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
        &conv);
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scale_type, 1, scale.alpha());
    set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scale_type, 1, scale.beta());
    finalize(op, "convolution forward");

    auto graph = ds.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    if (graph == nullptr) throw Failure{"cudnnBackendCreateDescriptor(operation graph) failed"};
    set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
    set(graph, kOperationGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle);
    finalize(graph, "operation graph");

    // Candidates: heuristics mode A first, then the fallback list; up to kMaxCandidates acceptable
    // ones are timed.
    std::vector<cudnnBackendDescriptor_t> cfgs;
    for (cudnnBackendHeurMode_t hm : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
      auto heur = ds.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      if (heur == nullptr) continue;
      if (L.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                     &graph) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                     &hm) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS)
        continue;
      std::int64_t count = 0;
      if (L.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                     nullptr) != CUDNN_STATUS_SUCCESS ||
          count <= 0)
        continue;
      // All of them: for f32 most of the first are tensor-core engines, filtered out below.
      count = std::min<std::int64_t>(count, kMaxHeuristicResults);
      std::vector<cudnnBackendDescriptor_t> got;
      for (std::int64_t i = 0; i < count; ++i)
        if (auto c = ds.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) got.push_back(c);
      std::int64_t returned = 0;
      if (L.cudnnBackendGetAttribute(
              heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
              static_cast<std::int64_t>(got.size()), &returned, got.data()) != CUDNN_STATUS_SUCCESS)
        continue;
      got.resize(static_cast<std::size_t>(std::max<std::int64_t>(returned, 0)));
      for (auto c : got) cfgs.push_back(c);
    }
    if (cfgs.empty()) throw Failure{"cuDNN's heuristics offered no engine configuration"};

    // f32 means FMA arithmetic: engines that use tensor cores (TF32) are passed over; inputs
    // down-converted to a narrower type are passed over for every dtype (as PyTorch does).
    auto acceptable = [&](cudnnBackendDescriptor_t cfg) {
      auto engine = ds.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
      if (engine == nullptr) return false;
      std::int64_t n = 0;
      if (L.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &n,
                                     &engine) != CUDNN_STATUS_SUCCESS)
        return false;
      std::array<cudnnBackendNumericalNote_t, 32> notes{};
      n = 0;
      if (L.cudnnBackendGetAttribute(
              engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
              static_cast<std::int64_t>(notes.size()), &n, notes.data()) != CUDNN_STATUS_SUCCESS)
        return false;
      for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 32); ++i) {
        if (notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
          return false;
        if (!sp.allow_tensor_cores &&
            notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
          return false;
      }
      return true;
    };

    if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess)
      throw Failure{"cudaEventCreate failed"};
    // Every candidate that ran, in the heuristics' order, with its median time.
    struct Ran {
      cudnnBackendDescriptor_t plan;
      std::size_t ws;
      CudnnEngineChoice choice;
    };
    std::vector<Ran> ran;
    std::vector<double> ran_ms;
    int tried = 0;
    for (auto cfg : cfgs) {
      if (tried >= kMaxCandidates) break;
      if (!acceptable(cfg)) continue;
      auto described = describe(L, cfg);
      if (!described) continue;
      if (wanted && choice_json(*described, "").at("id").get<std::string>() != *wanted) continue;
      auto plan = ds.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
      if (plan == nullptr) continue;
      if (L.cudnnBackendSetAttribute(plan, kExecutionPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle) !=
              CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                     &cfg) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS)
        continue;
      std::int64_t ws = 0, n = 0;
      if (L.cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                     CUDNN_TYPE_INT64, 1, &n, &ws) != CUDNN_STATUS_SUCCESS ||
          ws < 0 || static_cast<std::size_t>(ws) > max_workspace)
        continue;
      auto pack = ds.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
      if (pack == nullptr) continue;
      void* ptrs[3] = {x, w, y};
      const std::int64_t uids[3] = {kUidX, kUidW, kUidY};
      void* wsp = ws > 0 ? workspace : nullptr;
      if (L.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                     CUDNN_TYPE_VOID_PTR, 3, ptrs) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
                                     uids) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR,
                                     1, &wsp) != CUDNN_STATUS_SUCCESS ||
          L.cudnnBackendFinalize(pack) != CUDNN_STATUS_SUCCESS)
        continue;
      ++tried;
      if (L.cudnnBackendExecute(handle, plan, pack) != CUDNN_STATUS_SUCCESS) continue;
      if (wanted) {  // the kept choice: nothing to time
        ran.push_back({plan, static_cast<std::size_t>(ws), *described});
        ran_ms.push_back(0);
        break;
      }
      std::vector<float> ms;
      for (int r = 0; r < kTimedRuns; ++r) {
        cudaEventRecord(start, stream);
        if (L.cudnnBackendExecute(handle, plan, pack) != CUDNN_STATUS_SUCCESS) break;
        cudaEventRecord(stop, stream);
        if (cudaEventSynchronize(stop) != cudaSuccess) break;
        float t = 0;
        cudaEventElapsedTime(&t, start, stop);
        ms.push_back(t);
      }
      if (ms.size() != static_cast<std::size_t>(kTimedRuns)) continue;
      std::sort(ms.begin(), ms.end());
      ran.push_back({plan, static_cast<std::size_t>(ws), *described});
      ran_ms.push_back(ms[kTimedRuns / 2]);
    }
    const auto pick = pick_within_noise(ran_ms, noise);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    start = stop = nullptr;
    // A failed launch inside a candidate must not linger as the next call's error.
    if (cudaError_t e = cudaStreamSynchronize(stream); e != cudaSuccess)
      throw Failure{fmt::format("stream error after the engine search: {}", cudaGetErrorName(e))};
    (void)cudaGetLastError();
    if (!pick)
      throw Failure{wanted ? fmt::format("the kept engine configuration '{}' is not offered or "
                                         "did not run",
                                         *wanted)
                           : fmt::format("none of {} engine configurations ran", cfgs.size())};
    // The plan, its configuration, graph and tensors live as long as this object.
    out->keep_ = ds.release_all();
    out->plan_ = ran[*pick].plan;
    out->workspace_ = ran[*pick].ws;
    out->timed_ = wanted ? 0 : tried;
    out->best_ms_ = static_cast<float>(ran_ms[*pick]);
    out->choice_ = ran[*pick].choice;
  } catch (const Failure& f) {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaStreamSynchronize(stream);
    (void)cudaGetLastError();
    *why = f.what;
    return nullptr;
  }
  return out;
}

GraphConv::~GraphConv() {
  if (pack_) lib_->cudnnBackendDestroyDescriptor(pack_);
  for (auto it = keep_.rbegin(); it != keep_.rend(); ++it) lib_->cudnnBackendDestroyDescriptor(*it);
}

cudnnStatus_t GraphConv::execute(void* x, void* w, void* y, void* workspace) {
  void* want[4] = {x, w, y, workspace_ > 0 ? workspace : nullptr};
  if (pack_ == nullptr || !std::equal(want, want + 4, pack_ptrs_)) {
    if (pack_) lib_->cudnnBackendDestroyDescriptor(pack_);
    pack_ = nullptr;
    cudnnBackendDescriptor_t pack = nullptr;
    if (auto st = lib_->cudnnBackendCreateDescriptor(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
        st != CUDNN_STATUS_SUCCESS)
      return st;
    const std::int64_t uids[3] = {kUidX, kUidW, kUidY};
    cudnnStatus_t st = lib_->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                                      CUDNN_TYPE_VOID_PTR, 3, want);
    if (st == CUDNN_STATUS_SUCCESS)
      st = lib_->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS,
                                          CUDNN_TYPE_INT64, 3, uids);
    if (st == CUDNN_STATUS_SUCCESS)
      st = lib_->cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE,
                                          CUDNN_TYPE_VOID_PTR, 1, &want[3]);
    if (st == CUDNN_STATUS_SUCCESS) st = lib_->cudnnBackendFinalize(pack);
    if (st != CUDNN_STATUS_SUCCESS) {
      lib_->cudnnBackendDestroyDescriptor(pack);
      return st;
    }
    pack_ = pack;
    std::copy(want, want + 4, pack_ptrs_);
  }
  return lib_->cudnnBackendExecute(handle_, plan_, pack_);
}

}  // namespace gpucheck::cuda

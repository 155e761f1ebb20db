// cuDNN's backend API for one forward convolution: descriptors, heuristics, a timed choice.
#include "backends/cuda/cudnn_graph_conv.h"

#include "backends/cuda/cuda_errors.h"
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

// Every candidate that ran, in the heuristics' order, with its median time.
struct Ran {
  cudnnBackendDescriptor_t plan;
  std::size_t ws;
  CudnnEngineChoice choice;
};

struct SearchResult {
  std::vector<Ran> ran;
  std::vector<double> ran_ms;  // ran's times; 0 for the untimed kept choice
  int tried = 0;
};

// The candidates run on the caller's buffers, so the timings are those of its convolution.
struct Buffers {
  void* x;
  void* w;
  void* y;
  void* workspace;
  std::size_t max_workspace;
};

// A candidate ready to execute.
struct Prepared {
  cudnnBackendDescriptor_t plan;
  std::int64_t ws;
  cudnnBackendDescriptor_t pack;
};

// Destroyed when the search returns or throws, so always before build synchronises the stream.
struct TimingEvents {
  TimingEvents() = default;
  ~TimingEvents() {
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
  }
  TimingEvents(const TimingEvents&) = delete;
  TimingEvents& operator=(const TimingEvents&) = delete;
  cudaEvent_t start = nullptr, stop = nullptr;
};

// The steps of GraphConv::build. The descriptors they make go into build's `ds` rather than
// their own: a plan refers to its configuration, graph and tensors, so all of them outlive the
// search (and, on failure, the stream synchronisation in build's catch).
class GraphSteps {
 public:
  GraphSteps(const CudnnLibrary& L, Descriptors& ds, const GraphConvSpec& sp, cudnnHandle_t handle)
      : L_(L), ds_(ds), sp_(sp), handle_(handle) {}

  cudnnBackendDescriptor_t convolution_forward();
  cudnnBackendDescriptor_t operation_graph(cudnnBackendDescriptor_t op);
  std::vector<cudnnBackendDescriptor_t> engine_configs(cudnnBackendDescriptor_t graph);
  SearchResult search(const std::vector<cudnnBackendDescriptor_t>& cfgs, const Buffers& io,
                      cudaStream_t stream, const std::string* wanted);

 private:
  void set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
           cudnnBackendAttributeType_t type, std::int64_t count, const void* values);
  void finalize(cudnnBackendDescriptor_t d, const char* what);
  cudnnBackendDescriptor_t tensor(std::int64_t uid, std::array<std::int64_t, 4> dims);
  cudnnBackendDescriptor_t convolution();
  void append_heuristic_results(cudnnBackendDescriptor_t graph, cudnnBackendHeurMode_t mode,
                                std::vector<cudnnBackendDescriptor_t>& cfgs);
  bool acceptable(cudnnBackendDescriptor_t cfg);
  std::optional<CudnnEngineChoice> eligible(cudnnBackendDescriptor_t cfg,
                                            const std::string* wanted);
  std::optional<Prepared> prepare(cudnnBackendDescriptor_t cfg, const Buffers& io);
  cudnnBackendDescriptor_t variant_pack(const Buffers& io, void* wsp);
  std::optional<float> median_ms(const Prepared& p, cudaStream_t stream, const TimingEvents& ev);

  const CudnnLibrary& L_;
  Descriptors& ds_;
  const GraphConvSpec& sp_;
  cudnnHandle_t handle_;
};

// Building the graph has no fallback: any refusal ends build.
void GraphSteps::set(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
                     cudnnBackendAttributeType_t type, std::int64_t count, const void* values) {
  auto st = L_.cudnnBackendSetAttribute(d, name, type, count, values);
  if (st != CUDNN_STATUS_SUCCESS)
    throw Failure{fmt::format("cudnnBackendSetAttribute(attribute {}) failed: {} ({})",
                              static_cast<int>(name), cudnn_status_name(static_cast<int>(st)),
                              static_cast<int>(st))};
}

void GraphSteps::finalize(cudnnBackendDescriptor_t d, const char* what) {
  if (d == nullptr) throw Failure{fmt::format("cudnnBackendCreateDescriptor for {} failed", what)};
  auto st = L_.cudnnBackendFinalize(d);
  if (st != CUDNN_STATUS_SUCCESS)
    throw Failure{fmt::format("cudnnBackendFinalize({}) failed: {} ({})", what,
                              cudnn_status_name(static_cast<int>(st)), static_cast<int>(st))};
}

// dims are N,C,H,W (K,C,R,S for the filter) whatever the memory order.
cudnnBackendDescriptor_t GraphSteps::tensor(std::int64_t uid, std::array<std::int64_t, 4> dims) {
  const auto [n, c, h, wd] = dims;
  std::array<std::int64_t, 4> strides =
      sp_.nhwc ? std::array<std::int64_t, 4>{h * wd * c, 1, wd * c, c}
               : std::array<std::int64_t, 4>{c * h * wd, h * wd, wd, 1};
  (void)n;
  auto d = ds_.make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (d == nullptr) throw Failure{"cudnnBackendCreateDescriptor(tensor) failed"};
  const std::int64_t align = 16;
  set(d, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &sp_.data);
  set(d, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims.data());
  set(d, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides.data());
  set(d, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &uid);
  set(d, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
  finalize(d, "tensor");
  return d;
}

cudnnBackendDescriptor_t GraphSteps::convolution() {
  auto conv = ds_.make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (conv == nullptr) throw Failure{"cudnnBackendCreateDescriptor(convolution) failed"};
  const std::int64_t dims = 2;
  const std::array<std::int64_t, 2> ones{1, 1}, strides{sp_.stride, sp_.stride},
      pads{sp_.pad, sp_.pad};
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  set(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &sp_.compute);
  set(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE, CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode);
  set(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &dims);
  set(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS, CUDNN_TYPE_INT64, 2, ones.data());
  set(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64, 2, strides.data());
  set(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
  set(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64, 2, pads.data());
  finalize(conv, "convolution");
  return conv;
}

// y = conv(x, w); the tensors and the convolution are made here, in that order.
cudnnBackendDescriptor_t GraphSteps::convolution_forward() {
  auto dx = tensor(kUidX, {sp_.n, sp_.c, sp_.h, sp_.w});
  auto dw = tensor(kUidW, {sp_.k, sp_.c, sp_.r, sp_.s});
  auto dy = tensor(kUidY, {sp_.n, sp_.k, sp_.p, sp_.q});
  auto conv = convolution();
  auto op = ds_.make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  if (op == nullptr) throw Failure{"cudnnBackendCreateDescriptor(operation) failed"};
  const UnitScale scale(sp_.compute == CUDNN_DATA_DOUBLE);
  const auto scale_type = scale.f64() ? CUDNN_TYPE_DOUBLE : CUDNN_TYPE_FLOAT;
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dx);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dw);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &dy);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
      &conv);
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, scale_type, 1, scale.alpha());
  set(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, scale_type, 1, scale.beta());
  finalize(op, "convolution forward");
  return op;
}

cudnnBackendDescriptor_t GraphSteps::operation_graph(cudnnBackendDescriptor_t op) {
  auto graph = ds_.make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (graph == nullptr) throw Failure{"cudnnBackendCreateDescriptor(operation graph) failed"};
  set(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op);
  set(graph, kOperationGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle_);
  finalize(graph, "operation graph");
  return graph;
}

// Candidates: heuristics mode A first, then the fallback list; up to kMaxCandidates acceptable
// ones are timed. A mode that fails offers none, and the other may still.
std::vector<cudnnBackendDescriptor_t> GraphSteps::engine_configs(cudnnBackendDescriptor_t graph) {
  std::vector<cudnnBackendDescriptor_t> cfgs;
  for (cudnnBackendHeurMode_t hm : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK})
    append_heuristic_results(graph, hm, cfgs);
  if (cfgs.empty()) throw Failure{"cuDNN's heuristics offered no engine configuration"};
  return cfgs;
}

void GraphSteps::append_heuristic_results(cudnnBackendDescriptor_t graph,
                                          cudnnBackendHeurMode_t mode,
                                          std::vector<cudnnBackendDescriptor_t>& cfgs) {
  auto heur = ds_.make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (heur == nullptr) return;
  if (L_.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                  &graph) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendSetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1,
                                  &mode) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendFinalize(heur) != CUDNN_STATUS_SUCCESS)
    return;
  std::int64_t count = 0;
  if (L_.cudnnBackendGetAttribute(heur, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count,
                                  nullptr) != CUDNN_STATUS_SUCCESS ||
      count <= 0)
    return;
  // All of them: for f32 most of the first are tensor-core engines, filtered out below.
  count = std::min<std::int64_t>(count, kMaxHeuristicResults);
  std::vector<cudnnBackendDescriptor_t> got;
  for (std::int64_t i = 0; i < count; ++i)
    if (auto c = ds_.make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)) got.push_back(c);
  std::int64_t returned = 0;
  if (L_.cudnnBackendGetAttribute(
          heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
          static_cast<std::int64_t>(got.size()), &returned, got.data()) != CUDNN_STATUS_SUCCESS)
    return;
  got.resize(static_cast<std::size_t>(std::max<std::int64_t>(returned, 0)));
  for (auto c : got) cfgs.push_back(c);
}

// f32 means FMA arithmetic: engines that use tensor cores (TF32) are passed over; inputs
// down-converted to a narrower type are passed over for every dtype (as PyTorch does).
bool GraphSteps::acceptable(cudnnBackendDescriptor_t cfg) {
  auto engine = ds_.make(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (engine == nullptr) return false;
  std::int64_t n = 0;
  if (L_.cudnnBackendGetAttribute(cfg, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                  1, &n, &engine) != CUDNN_STATUS_SUCCESS)
    return false;
  std::array<cudnnBackendNumericalNote_t, 32> notes{};
  n = 0;
  if (L_.cudnnBackendGetAttribute(
          engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
          static_cast<std::int64_t>(notes.size()), &n, notes.data()) != CUDNN_STATUS_SUCCESS)
    return false;
  for (std::int64_t i = 0; i < std::min<std::int64_t>(n, 32); ++i) {
    if (notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS)
      return false;
    if (!sp_.allow_tensor_cores &&
        notes[static_cast<std::size_t>(i)] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE)
      return false;
  }
  return true;
}

// The engine of `cfg` when it may run: acceptable numerics, described, and with `wanted` that id.
std::optional<CudnnEngineChoice> GraphSteps::eligible(cudnnBackendDescriptor_t cfg,
                                                      const std::string* wanted) {
  if (!acceptable(cfg)) return std::nullopt;
  auto described = describe(L_, cfg);
  if (!described) return std::nullopt;
  if (wanted && choice_json(*described, "").at("id").get<std::string>() != *wanted)
    return std::nullopt;
  return described;
}

// nullopt when cuDNN refuses the plan or the pack, or the plan needs more workspace than given:
// the candidate is passed over, not an error.
std::optional<Prepared> GraphSteps::prepare(cudnnBackendDescriptor_t cfg, const Buffers& io) {
  auto plan = ds_.make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
  if (plan == nullptr) return std::nullopt;
  if (L_.cudnnBackendSetAttribute(plan, kExecutionPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle_) !=
          CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendSetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                  CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &cfg) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendFinalize(plan) != CUDNN_STATUS_SUCCESS)
    return std::nullopt;
  std::int64_t ws = 0, n = 0;
  if (L_.cudnnBackendGetAttribute(plan, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE, CUDNN_TYPE_INT64,
                                  1, &n, &ws) != CUDNN_STATUS_SUCCESS ||
      ws < 0 || static_cast<std::size_t>(ws) > io.max_workspace)
    return std::nullopt;
  auto pack = variant_pack(io, ws > 0 ? io.workspace : nullptr);
  if (pack == nullptr) return std::nullopt;
  return Prepared{plan, ws, pack};
}

cudnnBackendDescriptor_t GraphSteps::variant_pack(const Buffers& io, void* wsp) {
  auto pack = ds_.make(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  if (pack == nullptr) return nullptr;
  void* ptrs[3] = {io.x, io.w, io.y};
  const std::int64_t uids[3] = {kUidX, kUidW, kUidY};
  if (L_.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
                                  3, ptrs) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
                                  uids) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendSetAttribute(pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
                                  &wsp) != CUDNN_STATUS_SUCCESS ||
      L_.cudnnBackendFinalize(pack) != CUDNN_STATUS_SUCCESS)
    return nullptr;
  return pack;
}

// The median of kTimedRuns runs, after the caller's untimed one; nullopt when any run fails.
std::optional<float> GraphSteps::median_ms(const Prepared& p, cudaStream_t stream,
                                           const TimingEvents& ev) {
  std::vector<float> ms;
  for (int r = 0; r < kTimedRuns; ++r) {
    cudaEventRecord(ev.start, stream);
    if (L_.cudnnBackendExecute(handle_, p.plan, p.pack) != CUDNN_STATUS_SUCCESS) break;
    cudaEventRecord(ev.stop, stream);
    if (cudaEventSynchronize(ev.stop) != cudaSuccess) break;
    float t = 0;
    cudaEventElapsedTime(&t, ev.start, ev.stop);
    ms.push_back(t);
  }
  if (ms.size() != static_cast<std::size_t>(kTimedRuns)) return std::nullopt;
  std::sort(ms.begin(), ms.end());
  return ms[kTimedRuns / 2];
}

// A candidate counts as tried once it is ready to execute, whether or not it then runs. With
// `wanted` the first that runs is the kept choice, and nothing is timed.
SearchResult GraphSteps::search(const std::vector<cudnnBackendDescriptor_t>& cfgs,
                                const Buffers& io, cudaStream_t stream, const std::string* wanted) {
  TimingEvents ev;
  if (cudaEventCreate(&ev.start) != cudaSuccess || cudaEventCreate(&ev.stop) != cudaSuccess)
    throw Failure{"cudaEventCreate failed"};
  SearchResult r;
  for (auto cfg : cfgs) {
    if (r.tried >= kMaxCandidates) break;
    auto described = eligible(cfg, wanted);
    if (!described) continue;
    auto ready = prepare(cfg, io);
    if (!ready) continue;
    ++r.tried;
    if (L_.cudnnBackendExecute(handle_, ready->plan, ready->pack) != CUDNN_STATUS_SUCCESS) continue;
    if (wanted) {
      r.ran.push_back({ready->plan, static_cast<std::size_t>(ready->ws), *described});
      r.ran_ms.push_back(0);
      break;
    }
    auto ms = median_ms(*ready, stream, ev);
    if (!ms) continue;
    r.ran.push_back({ready->plan, static_cast<std::size_t>(ready->ws), *described});
    r.ran_ms.push_back(*ms);
  }
  return r;
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
  // Outside the try: on failure the descriptors go only after the catch has waited for the
  // stream, never under work still queued on it.
  Descriptors ds(L);
  std::unique_ptr<GraphConv> out(new GraphConv());
  out->lib_ = &L;
  out->handle_ = handle;
  try {
    GraphSteps steps(L, ds, sp, handle);
    const auto graph = steps.operation_graph(steps.convolution_forward());
    const auto cfgs = steps.engine_configs(graph);
    const auto found = steps.search(cfgs, {x, w, y, workspace, max_workspace}, stream, wanted);
    const auto pick = pick_within_noise(found.ran_ms, noise);
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
    const Ran& best = found.ran[*pick];
    out->plan_ = best.plan;
    out->workspace_ = best.ws;
    out->timed_ = wanted ? 0 : found.tried;
    out->best_ms_ = static_cast<float>(found.ran_ms[*pick]);
    out->choice_ = best.choice;
  } catch (const Failure& f) {
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

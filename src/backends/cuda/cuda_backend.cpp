// The CUDA backend's probe (driver first, then the runtime) and its open_device.
#include "backends/cuda/cuda_backend.h"

#include "backends/cuda/cublas_library.h"
#include "backends/cuda/cuda_device.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_peer_group.h"
#include "backends/cuda/cuda_probe.h"
#include "backends/cuda/cudnn_library.h"
#include "backends/cuda/nvml_links.h"
#include "backends/cuda/nvml_probe.h"
#include "backends/probe_steps.h"
#include "core/concurrently.h"
#include "core/json_keys.h"
#include "core/stopwatch.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <utility>
#include <vector>

namespace gpucheck {

namespace {

namespace k = keys;
using namespace gpucheck::cuda;

nlohmann::json driver_json(const DriverObservation& o) {
  nlohmann::json d = {{k::kLoaded, o.loaded}};
  if (!o.loaded) d[k::kError] = o.dlerror;
  if (!o.path.empty()) d[k::kPath] = o.path;
  if (!o.real_path.empty()) d[k::kRealPath] = o.real_path;
  if (o.init_result) d[k::kInitResult] = *o.init_result;
  if (o.driver_version) d[k::kCudaVersion] = cuda_version_string(*o.driver_version);
  d[k::kDevNodes] = o.dev_nodes;
  return d;
}

// cuBLAS (with cuBLASLt) and cuDNN as this process would load them, with every copy found.
nlohmann::json libraries_json(const EnvMap& env) {
  nlohmann::json libs = nlohmann::json::object();
  std::string error;
  if (auto cublas = CublasLibrary::open(env, &error)) {
    libs["cublas"] = library_json(cublas->cublas(), cublas->version());
    libs["cublaslt"] = library_json(cublas->cublaslt(), cublas->lt_version());
  } else {
    auto spec = cublas_spec();
    LoadedLibrary none;
    none.copies = find_copies(spec, search_roots(spec, env));
    none.error = error;
    libs["cublas"] = library_json(none, "");
  }
  nlohmann::json cublas_headers = nlohmann::json::array();
  for (const auto& h : find_cublas_headers(search_roots(cublas_spec(), env)))
    cublas_headers.push_back({{k::kPath, h.path}, {k::kVersion, h.version}});
  libs["cublas"][k::kHeaders] = cublas_headers;
  auto cudnn_roots = search_roots(cudnn_spec(), env);
  nlohmann::json cudnn;
  if (auto lib = CudnnLibrary::open(env, &error)) {
    cudnn = library_json(lib->library(), lib->version());
  } else {
    LoadedLibrary none;
    none.copies = find_copies(cudnn_spec(), cudnn_roots);
    none.error = error;
    cudnn = library_json(none, "");
  }
  nlohmann::json headers = nlohmann::json::array();
  for (const auto& h : find_cudnn_headers(cudnn_roots))
    headers.push_back({{k::kPath, h.path}, {k::kVersion, h.version}});
  cudnn[k::kHeaders] = headers;
  libs["cudnn"] = cudnn;
  return libs;
}

class CudaBackend final : public Backend {
 public:
  std::string_view name() const override { return "cuda"; }

  nlohmann::json probe() override {
    EnvMap env = current_environment();
    Stopwatch total;
    // NVML and the library search need nothing of CUDA: they run beside the driver's
    // initialisation instead of after it.
    auto timed = [](auto&& read) {
      Stopwatch t;
      nlohmann::json j = read();
      return std::pair{std::move(j), t.seconds()};
    };
    auto nvml_read =
        std::async(kConcurrently, [&] { return timed([&] { return probe_nvml(env); }); });
    auto libraries_read =
        std::async(kConcurrently, [&] { return timed([&] { return libraries_json(env); }); });
    nlohmann::json out = {{k::kName, "cuda"}};
    nlohmann::json steps = nlohmann::json::object();
    // The driver is opened before anything in cudart runs, so its absence is named as such.
    Stopwatch step;
    DriverObservation obs = DriverLibrary::observe();
    steps["driver"] = step.lap();
    DriverVerdict verdict = judge_driver(obs);
    out[k::kDriver] = driver_json(obs);
    out[k::kFinding] = verdict.kind;
    nlohmann::json devices = nlohmann::json::array();
    // Both readings are joined on every way out: std::async's future waits in its destructor.
    auto join = [&] {
      auto [libs, libs_s] = libraries_read.get();
      auto [nvml, nvml_s] = nvml_read.get();
      out[k::kLibraries] = std::move(libs);
      steps["libraries"] = libs_s;
      steps["nvml"] = nvml_s;
      return std::move(nvml);
    };
    auto unavailable = [&](const std::string& reason) {
      out[k::kStatus] = "unavailable";
      out[k::kReason] = reason;
      out[k::kNvml] = join();
      out[k::kDevices] = devices;
      steps["total"] = total.seconds();
      out[kProbeStepsKey] = steps;
      return out;
    };
    if (!verdict.usable) return unavailable(verdict.reason);
    int runtime = 0;
    GC_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    out[k::kRuntime] = {{k::kVersion, cuda_version_string(runtime)}};
    int count = 0;
    if (cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
      return unavailable(fmt::format("cudaGetDeviceCount failed: {}", cuda_error_text(e)));
    steps["runtime"] = step.lap();
    // Each device's properties on its own thread, as NVML reads each GPU.
    std::vector<std::future<nlohmann::json>> reads;
    for (int i = 0; i < count; ++i) reads.push_back(std::async(kConcurrently, probe_device, i));
    for (auto& r : reads) devices.push_back(r.get());
    out[k::kPeerAccess] = peer_access_matrix(count);
    steps["devices"] = step.lap();
    nlohmann::json nvml = join();
    auto unmatched = join_nvml(devices, nvml);
    nvml.erase(std::string(k::kDevices));
    if (!unmatched.empty()) nvml[k::kUnmatched] = unmatched;
    out[k::kNvml] = nvml;
    out[k::kStatus] = "available";
    out[k::kDevices] = devices;
    steps["total"] = total.seconds();
    out[kProbeStepsKey] = steps;
    return out;
  }

  std::unique_ptr<Device> open_device(const std::string& device_id,
                                      const DeviceOptions& options) override {
    return make_cuda_device(device_id, options);
  }

  nlohmann::json read_counters() override { return probe_nvlink_counters(current_environment()); }

  std::unique_ptr<PeerGroup> open_group(const std::vector<std::string>& device_ids) override {
    return make_cuda_peer_group(device_ids);
  }

  std::string start_collective(std::string* error) override { return start_nccl_root(error); }
};

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
  return std::make_unique<CudaBackend>();
}

}  // namespace gpucheck

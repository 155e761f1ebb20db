// Moved out of doctor_command.cpp so qualify's doctor step reads the GPUs under load the same way.
#include "app/doctor_facts.h"

#include "app/bench_run.h"
#include "app/progress.h"
#include "backends/cpu/blas_kernel.h"
#include "bench/ops/op_unit.h"
#include "core/json_keys.h"
#include "core/json_keys_infiniband.h"
#include "core/pair_schedule.h"
#include "core/stopwatch.h"
#include "doctor/under_load.h"
#include "host/infiniband.h"

#include <fmt/format.h>

#include <spdlog/spdlog.h>

#include <chrono>
#include <optional>

namespace gpucheck::app {

namespace {

// Whether NVML listed a GPU with NVLink links (joined onto a CUDA device or not).
bool has_nvlink(const nlohmann::json& cuda) {
  auto with_links = [](const nlohmann::json& fields) {
    return fields.contains(keys::kNvlink) &&
           !fields[std::string(keys::kNvlink)]
                .value(std::string(keys::kLinks), nlohmann::json::array())
                .empty();
  };
  for (const auto& d : cuda.value(std::string(keys::kDevices), nlohmann::json::array()))
    if (with_links(d.value(std::string(keys::kProperties), nlohmann::json::object())
                       .value(std::string(keys::kNvml), nlohmann::json::object())))
      return true;
  const nlohmann::json nvml = cuda.value(std::string(keys::kNvml), nlohmann::json::object());
  for (auto list : {keys::kDevices, keys::kUnmatched})
    for (const auto& d : nvml.value(list, nlohmann::json::array()))
      if (with_links(d)) return true;
  return false;
}

// "cuda0 4.12 s (ready 1.05, cells at 1.06 2.71), cuda1 …": each load child's wall time and when
// it had its device open and started each cell, for the -v timing line.
std::string child_seconds(const nlohmann::json& entries) {
  std::string out;
  for (const auto& e : entries) {
    out += fmt::format("{}{} {:.2f} s", out.empty() ? "" : ", ",
                       e.value(std::string(keys::kDevice), "?"),
                       e.value(std::string(keys::kSeconds), 0.0));
    const auto tl = e.value(std::string(keys::kTimeline), nlohmann::json::object());
    const auto ready = tl.find(keys::kReadyS);
    if (ready == tl.end() || !ready->is_number()) continue;
    std::string cells;
    for (const auto& c : tl.value(std::string(keys::kCells), nlohmann::json::array()))
      cells += fmt::format(" {:.2f}", c.value(std::string(keys::kStartS), 0.0));
    out += fmt::format(" (ready {:.2f}, cells at{})", ready->get<double>(), cells);
  }
  return out;
}

}  // namespace

void add_cuda_load_readings(nlohmann::json& backends, double seconds, bool quiet,
                            bool peer_copies) {
  // The probe read the NVLink counters just before: nvlink_errors divides their growth by the
  // time from here to the second reading.
  const auto first_reading = std::chrono::steady_clock::now();
  // PCIe link and clocks-event reasons are read while every CUDA device works (idle GPUs drop
  // their link and report idle reasons); the readings join the CUDA section they belong to.
  for (auto& b : backends) {
    if (b.value(std::string(keys::kName), "") != "cuda") continue;
    if (b.value(std::string(keys::kStatus), "") == "available") {
      const std::size_t gpus = b.value(std::string(keys::kDevices), nlohmann::json::array()).size();
      spdlog::info("doctor: loading each CUDA device for {} s", seconds);
      Progress progress = Progress::for_stderr("doctor", quiet);
      std::size_t done = 0;
      Stopwatch step;
      b[keys::kUnderLoad] =
          doctor::run_cuda_load(b, seconds,
                                [&](const std::string& device, const std::string& what,
                                    std::size_t started, std::size_t total) {
                                  // Children run at once: a cell started means the one before it
                                  // finished, roughly.
                                  done = started > 1 ? started - 1 : 0;
                                  progress.update({fmt::format("load {}/{}", started, total),
                                                   fmt::format("{}: {}", device, what),
                                                   done,
                                                   total,
                                                   {}});
                                });
      spdlog::info("doctor: {} load child{} started together, all done in {:.2f} s ({})", gpus,
                   gpus == 1 ? "" : "ren", step.lap(), child_seconds(b[keys::kUnderLoad]));
      // Then the copies between GPUs (p2p_access judges them), all GPUs in one child. Never beside
      // the load: without NVLink they cross PCIe as its host copies do, and each would slow the
      // other's figure.
      if (peer_copies && gpus > 1) {
        progress.update({"p2p", "copies between the GPUs", 0, 0, {}});  // one child: no count
        auto p2p = doctor::run_cuda_p2p_load(b, seconds);
        spdlog::info(
            "doctor: peer copies of {} ordered pairs ({} rounds of pairs sharing no GPU) in one "
            "child: {:.2f} s",
            gpus * (gpus - 1), directed_pair_rounds(gpus).size(), step.lap());
        if (!p2p.empty()) b[keys::kP2pUnderLoad] = std::move(p2p);
      }
      progress.clear();
    }
    // NVLink error counters again, after the load: nvlink_errors judges what grew since the probe.
    if (has_nvlink(b)) {
      Stopwatch step;
      b[keys::kCountersAfterLoad] = doctor::read_counters_after("cuda");
      spdlog::info("doctor: NVLink counters read again in a child: {:.2f} s", step.seconds());
      if (b[keys::kCountersAfterLoad].value(std::string(keys::kLoaded), false))
        b[keys::kCountersAfterLoad][keys::kIntervalS] =
            std::chrono::duration<double>(std::chrono::steady_clock::now() - first_reading).count();
    }
  }
}

void add_infiniband_counters_after(nlohmann::json& facts, const std::filesystem::path& root,
                                   std::chrono::steady_clock::time_point first) {
  auto ib = facts.find(keys::kInfiniband);
  if (ib == facts.end() || !ib->is_object() ||
      ib->value(std::string(keys::kDevices), nlohmann::json::array()).empty())
    return;
  (*ib)[keys::kCountersAfterLoad] = {
      {keys::kIntervalS,
       std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count()},
      {keys::kPorts, host::read_infiniband_counters(root)}};
}

namespace {

// GEMM f32 1024 on the CPU in a bench child with `env` changes; its TFLOP/s when verified ok.
std::optional<double> cpu_gemm_tflops(
    const std::map<std::string, std::optional<std::string>>& env) {
  bench::Cell cell = bench::planned_cell(DType::kF32, GemmShape{1024, 1024, 1024});
  cell.explicit_request = cell.explicit_size = true;
  bench::BenchPlan plan{"cpu", "cpu", {cell}, {1, 5, 0.0, 10.0}, 20240601, 0, {}, {}, {}, {}};
  const DeviceRun run = run_device({"cpu", "cpu"}, plan, BenchProgress::silent(), env);
  if (run.records.empty() || run.records[0].value(keys::kStatus, "") != "ok") return std::nullopt;
  return run.records[0][keys::kThroughput].value(keys::kValue, 0.0);
}

}  // namespace

void add_cpu_blas_cost(nlohmann::json& backends) {
  for (auto& b : backends) {
    if (b.value(std::string(keys::kName), "") != "cpu") continue;
    auto devices = b.find(keys::kDevices);
    if (devices == b.end() || !devices->is_array() || devices->empty()) return;
    auto& blas = (*devices)[0][keys::kProperties][keys::kBlas];
    if (!blas.is_object() || blas.value(keys::kBlasKernelSource, "") != "environment" ||
        !blas.value(keys::kBlasKernelBelowIsa, false))
      return;
    const std::string recommended = blas.value(keys::kBlasKernelRecommended, "");
    spdlog::info("doctor: measuring what OPENBLAS_CORETYPE costs (GEMM f32 1024, two children)");
    Stopwatch step;
    const auto kept = cpu_gemm_tflops({});
    const auto better = cpu_gemm_tflops(
        {{cpu::kOpenblasCoretypeEnv, recommended}, {cpu::kBlasSelectEnv, "library"}});
    spdlog::info("doctor: OPENBLAS_CORETYPE's cost measured in {:.2f} s", step.seconds());
    if (!kept || !better || *kept <= 0) return;
    blas[keys::kBlasKernelCost] = {{keys::kBlasKernel, blas.value(keys::kBlasKernel, "")},
                                   {keys::kBlasKeptTflops, *kept},
                                   {keys::kBlasKernelRecommended, recommended},
                                   {keys::kBlasRecommendedTflops, *better},
                                   {keys::kBlasSlowdown, *better / *kept}};
  }
}

}  // namespace gpucheck::app

// Learning the BLAS's own kernel from a probe child, and measuring a cell again with it.
#include "app/cpu_blas_selection.h"

#include "app/bench_run.h"
#include "backends/cpu/blas_kernel.h"
#include "core/child_process.h"
#include "core/json_input.h"
#include "core/json_keys.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>

namespace gpucheck::app {

namespace k = keys;
using Json = nlohmann::json;

namespace {

bool env_has(const EnvMap& env, const char* name, const char* value = nullptr) {
  auto it = env.find(name);
  if (it == env.end() || it->second.empty()) return false;
  return value == nullptr || it->second == value;
}

const Json* blas_context(const Json& record) {
  auto ctx = record.find(std::string(k::kContext));
  if (ctx == record.end() || !ctx->is_object()) return nullptr;
  auto blas = ctx->find(std::string(k::kBlas));
  return blas != ctx->end() && blas->is_object() ? &*blas : nullptr;
}

}  // namespace

void learn_library_blas_kernel(const EnvMap& env, DeviceOptions& options) {
  if (env_has(env, cpu::kOpenblasCoretypeEnv) || env_has(env, cpu::kBlasSelectEnv, "library"))
    return;
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(60.0);
  // The probe child never selects: it reports the library's own choice.
  const auto results = run_children({{{"__child", "probe", "--backend", "cpu"}, {}}}, limits);
  const ChildResult& r = results.front();
  if (!r.exited_ok()) {
    spdlog::warn("cpu: learning the BLAS's own kernel failed ({}); keeping its choice",
                 r.describe(limits.timeout, limits.max_output));
    return;
  }
  const Json section = parse_json_or_discarded(r.out);
  const Json devices = section.is_object() ? section.value(k::kDevices, Json::array()) : Json();
  if (!devices.is_array() || devices.empty() || !devices[0].is_object()) return;
  const Json blas =
      devices[0].value(k::kProperties, Json::object()).value(k::kBlas, Json::object());
  if (blas.value(k::kLibrary, "") != "openblas") return;
  options.blas_library_kernel = blas.value(k::kBlasKernel, "");
  options.blas_dynamic_arch =
      blas.value(k::kBlasConfig, "").find("DYNAMIC_ARCH") != std::string::npos;
}

bool selected_blas_kernel_failed(const Json& record) {
  if (record.value(k::kStatus, "") != "mismatch") return false;
  const std::string op = record.value(k::kOp, "");
  if (op != "gemm" && op != "conv") return false;
  const Json* blas = blas_context(record);
  return blas != nullptr && blas->value(k::kBlasKernelSource, "") == "gpucheck";
}

Json rerun_with_library_kernel(const bench::BenchPlan& plan, std::size_t cell, const Json& failed) {
  const Json* failed_blas = blas_context(failed);
  const std::string selected = failed_blas ? failed_blas->value(k::kBlasKernel, "") : "";
  bench::BenchPlan one = plan;
  one.cells = {plan.cells.at(cell)};
  DeviceRun run = run_device({plan.device, plan.backend}, one, BenchProgress::silent(),
                             {{cpu::kBlasSelectEnv, "library"}, {cpu::kOpenblasCoretypeEnv, {}}});
  if (run.records.empty()) return failed;
  Json record = run.records.front();
  Json& blas = record[k::kContext][k::kBlas];
  if (!blas.is_object()) blas = Json::object();
  const std::string own = blas.value(k::kBlasKernel, "its own");
  blas[k::kBlasSelectionFailed] = {{k::kBlasKernel, selected},
                                   {k::kStatus, failed.value(k::kStatus, "")},
                                   {k::kReason, failed.value(k::kReason, "")}};
  blas[k::kBlasKernelReason] = fmt::format(
      "gpucheck's selection {} failed verification ({}); measured again with the "
      "library's own choice {}",
      selected, failed.value(k::kReason, "mismatch"), own);
  spdlog::warn(
      "cpu: {} with gpucheck's BLAS kernel {} failed verification; rerun with the "
      "library's own choice {}: {}",
      bench::describe(plan.cells.at(cell)), selected, own, record.value(k::kStatus, "unknown"));
  return record;
}

}  // namespace gpucheck::app

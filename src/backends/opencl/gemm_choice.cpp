// The cache decides first (unless --retune); a search runs only when it has nothing usable, and
// its winner is written back with the entries of the other dtypes kept.
#include "backends/opencl/gemm_choice.h"

#include "core/document.h"
#include "core/json_input.h"

#include <fmt/format.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>

namespace gpucheck::opencl {

namespace {

void say(const GemmTuningRequest& r, TuningLog level, const std::string& text) {
  if (r.log) r.log(level, text);
}

std::string name_of(const GemmCandidate& c) {
  return c ? "gpucheck's kernel (" + describe(*c) + ")" : std::string("CLBlast's defaults");
}

// A cached winner the device can still run: the library's defaults only while they are the
// untuned choice (the library is there and runs the dtype), parameters only within its limits.
bool runnable(const GemmCandidate& c, const GemmTuningTarget& t, DType dtype, std::string* why) {
  if (!c) {
    if (t.untuned) *why = "it names CLBlast's defaults, which cannot run this dtype here";
    return !t.untuned;
  }
  if (auto bad = invalid_reason(*c, t.limits, dtype)) {
    *why = "its parameters do not fit this device: " + *bad;
    return false;
  }
  return true;
}

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

}  // namespace

GemmChoice choose_gemm(DType dtype, const GemmTuningTarget& target,
                       const GemmTuningRequest& request, const GemmTrialFn& trial) {
  const std::string dt(to_string(dtype));
  if (!request.forced_parameters.empty()) {
    // The test hook that runs the kernel with given parameters, so tests reach every part of it.
    std::string why;
    nlohmann::json j = parse_json_or_discarded(request.forced_parameters);
    auto p = params_from_json(j, &why);
    if (p) {
      if (auto bad = invalid_reason(*p, target.limits, dtype)) why = *bad, p.reset();
    }
    if (!p) throw std::invalid_argument("GPUCHECK_TEST_GEMM_PARAMS: " + why);
    target.use(*p);
    return {*p, "tuned", {}};
  }
  if (request.mode == TuningMode::kOff) {
    target.use(target.untuned);
    return {target.untuned, "default", {}};
  }

  std::optional<std::filesystem::path> path;
  if (!request.cache_dir.empty()) path = tuning_cache_path(request.cache_dir, target.identity);
  nlohmann::json doc = new_tuning_cache(target.identity);
  if (path) {
    std::string warning, note;
    doc = open_kept_cache(*path, tuning_cache_layout(target.identity), "the tuning cache", &warning,
                          &note);
    if (!warning.empty()) say(request, TuningLog::kWarn, warning);
    if (!note.empty()) say(request, TuningLog::kInfo, "re-tuning: " + note);
    if (request.mode != TuningMode::kRetune) {
      std::string why;
      if (auto c = cached_candidate(doc, dtype, &why)) {
        if (runnable(*c, target, dtype, &why)) {
          say(request, TuningLog::kInfo,
              fmt::format("gemm {}: {} from {}", dt, name_of(*c), path->string()));
          target.use(*c);
          return {*c, "cached", {}};
        }
      }
      if (!why.empty()) {
        say(request, TuningLog::kWarn,
            fmt::format("ignoring the gemm {} entry of {}: {}; it will be rewritten", dt,
                        path->string(), why));
        doc["dtypes"].erase(dt);
      }
    }
  }

  TunerSetup setup;
  setup.dtype = dtype;
  setup.limits = target.limits;
  setup.shape = target.shape;
  setup.budget_s = request.budget_s.value_or(target.default_budget_s);
  setup.reference = target.untuned;
  setup.plant_bad_candidate = request.plant_bad_candidate;
  if (request.progress)
    request.progress(fmt::format("tuning gemm {} (up to {:.0f} s)", dt, setup.budget_s),
                     setup.budget_s);
  TunerHooks hooks;
  hooks.clock = seconds_now;
  hooks.trial = [&](const GemmCandidate& c, const GemmShape& shape, int reps, bool corrupt) {
    target.use(c);
    return trial(shape, reps, corrupt);
  };
  const TunerResult result = tune_gemm_parameters(setup, hooks);
  if (!result.found) {
    std::string first = result.rejected.empty() ? "" : ": " + result.rejected.front().why;
    say(request, TuningLog::kWarn,
        fmt::format("tuning gemm {}: no candidate ran and verified ({} rejected){}; the defaults "
                    "run",
                    dt, result.rejected.size(), first));
    target.use(target.untuned);
    return {target.untuned, "default", {}};
  }
  target.use(result.best);
  say(request, TuningLog::kInfo,
      fmt::format("tuned gemm {} in {:.1f} s on {}x{}x{}: {} timed, {} rejected; {} at {:.3g} "
                  "TFLOP/s{}",
                  dt, result.search_s, result.shape.m, result.shape.n, result.shape.k, result.timed,
                  result.rejected.size(), name_of(result.best),
                  2.0 * result.shape.m * result.shape.n * result.shape.k / result.best_s / 1e12,
                  result.reference_s
                      ? fmt::format(", {:.2f}x the defaults", *result.reference_s / result.best_s)
                      : std::string()));
  if (auto warning = keep_kept_entry(
          path, doc, "dtypes", dt,
          tuning_cache_entry(result, target.untuned, setup.budget_s, utc_timestamp()),
          "the tuned gemm " + dt);
      !warning.empty())
    say(request, TuningLog::kWarn, warning);
  return {result.best, "tuned", {}};
}

}  // namespace gpucheck::opencl

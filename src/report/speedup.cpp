// Matching accelerator records to CPU baselines.
#include "report/speedup.h"

#include "core/backend_descriptors.h"
#include "core/json_keys.h"

namespace gpucheck::report {

namespace k = keys;

namespace {

// The part of a shape that names the workload; the seed loop's d2h flag is the device's way of
// running it, not a different workload, so the CPU's loop is the baseline of both forms.
nlohmann::json workload_shape(const nlohmann::json& r) {
  nlohmann::json s = r.value(std::string(k::kShape), nlohmann::json::object());
  if (r.value(std::string(k::kOp), "") == "seedloop") s.erase(std::string(k::kD2hEachCall));
  return s;
}

const nlohmann::json* find_baseline(const nlohmann::json& results, const nlohmann::json& r,
                                    const std::string& dtype) {
  for (const auto& c : results) {
    if (!backend_is_host_cpu(c.value(std::string(k::kBackend), "")) ||
        c.value(std::string(k::kStatus), "") != "ok")
      continue;
    if (c.contains("framework")) continue;  // a framework on the CPU is no baseline
    if (c.value(std::string(k::kOp), "") != r.value(std::string(k::kOp), "")) continue;
    if (c.value(std::string(k::kDtype), "") != dtype) continue;
    if (workload_shape(c) != workload_shape(r)) continue;
    return &c;
  }
  return nullptr;
}

}  // namespace

void add_speedups(nlohmann::json& results) {
  for (auto& r : results) {
    if (backend_is_host_cpu(r.value(std::string(k::kBackend), "")) ||
        r.value(std::string(k::kStatus), "") != "ok")
      continue;
    if (!r.contains(k::kDtype) || !r.contains(k::kTimeS)) continue;
    std::string dtype = r[k::kDtype];
    const nlohmann::json* base = find_baseline(results, r, dtype);
    if (!base && dtype != "f32") {
      dtype = "f32";
      base = find_baseline(results, r, dtype);
    }
    if (!base) continue;
    double cpu_t = (*base)[k::kTimeS][k::kMedian].get<double>();
    double dev_t = r[k::kTimeS][k::kMedian].get<double>();
    if (cpu_t <= 0 || dev_t <= 0) continue;
    r[k::kSpeedupVsCpu] = cpu_t / dev_t;
    r[k::kBaselineDtype] = dtype;
  }
}

}  // namespace gpucheck::report

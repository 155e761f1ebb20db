// One warm-up (which builds a new candidate's kernel), `reps` runs on the device's clock, the
// result brought back and verified.
#include "bench/gemm_trial.h"

#include "bench/engine.h"
#include "bench/inputs.h"
#include "bench/ops/gemm.h"
#include "bench/stats.h"
#include "bench/verify.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <tuple>
#include <vector>

namespace gpucheck::bench {

GemmTrialFn make_gemm_trial(Device& device, DType dtype, std::uint64_t seed) {
  auto inputs = std::make_shared<std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>,
                                          std::shared_ptr<GemmInputs>>>();
  return [&device, dtype, seed, inputs](const GemmShape& s, int reps, bool corrupt) {
    auto& slot = (*inputs)[{s.m, s.n, s.k}];
    if (!slot) slot = std::make_shared<GemmInputs>(make_gemm_inputs(dtype, s, seed));
    const GemmInputs& in = *slot;
    HostBuffer c = make_gemm_output(dtype, s);
    auto da = device.allocate(in.a.size_bytes());
    auto db = device.allocate(in.device_b().size_bytes());
    auto dc = device.allocate(c.size_bytes());
    device.upload(*da, in.a.data(), in.a.size_bytes());
    device.upload(*db, in.device_b().data(), in.device_b().size_bytes());
    poison(c);
    device.upload(*dc, c.data(), c.size_bytes());
    auto launch = [&] { device.gemm(dtype, s, *da, *db, *dc); };
    const auto first = std::chrono::steady_clock::now();
    launch();
    device.synchronize();
    const double first_run_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - first).count();
    std::vector<double> times;
    for (int r = 0; r < std::max(reps, 1); ++r) times.push_back(device.time_on_device(launch));
    device.download(c.data(), *dc, c.size_bytes());
    device.synchronize();
    if (corrupt) plant_error(c, PlantedError::kWrongValue);
    VerifyOptions vo;
    vo.seed = seed;
    const DType compute = gemm_check_compute(device, dtype);
    const Verification v = verify_gemm(s, in.a, in.b, c, compute, vo);
    return GemmTrialResult{v.ok, summarize(times, false).median, v.detail, first_run_s};
  };
}

}  // namespace gpucheck::bench

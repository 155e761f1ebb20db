// fp8 (e4m3 inputs, bf16 output) without a GPU: its names, the CPU's refusal, and bench's and
// stress's whole GEMM path (inputs, B sent K-major, a bf16 result, the float64 check) on a fake
// device that computes FP8 GEMM on the host as cuBLASLt's FP8 path does.
#include "backends/registry.h"
#include "bench/engine.h"
#include "bench/ops/gemm.h"
#include "bench_one_cell.h"
#include "core/half.h"
#include "core/json_keys.h"
#include "forwarding_device.h"
#include "stress/events.h"
#include "stress/plan.h"
#include "stress/runner.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace gpucheck {
namespace {

namespace k = keys;
using ::testing::HasSubstr;

std::unique_ptr<Device> cpu_device() {
  return make_backend("cpu", {})->open_device("cpu", {});
}

// The CPU device with an FP8 GEMM of its own: A m×k and Bᵀ n×k (K-major, gemm_b_k_major) in
// e4m3, products summed in float, C rounded once to bf16. `b_row_major` reads B the other way
// (as k×n), a layout mistake the float64 check must catch. Stress primitives are the CPU's.
class HostFp8Device final : public fakes::ForwardingDevice {
 public:
  explicit HostFp8Device(bool b_row_major = false)
      : ForwardingDevice(cpu_device()), b_row_major_(b_row_major) {}
  std::optional<std::string> unsupported_reason(Op op, DType dt, Layout l) const override {
    if (dt == DType::kFp8 && op == Op::kGemm) return std::nullopt;
    return ForwardingDevice::unsupported_reason(op, dt, l);
  }
  std::string compute_type(Op op, DType dt) const override {
    return dt == DType::kFp8 ? "f32" : ForwardingDevice::compute_type(op, dt);
  }
  void gemm(DType dt, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    if (dt != DType::kFp8) return ForwardingDevice::gemm(dt, s, a, b, c);
    std::vector<std::uint8_t> av(s.m * s.k), bv(s.k * s.n);
    download(av.data(), a, av.size());
    download(bv.data(), b, bv.size());
    synchronize();
    std::vector<std::uint16_t> cv(s.m * s.n);
    for (std::uint64_t i = 0; i < s.m; ++i)
      for (std::uint64_t j = 0; j < s.n; ++j) {
        float sum = 0;
        for (std::uint64_t l = 0; l < s.k; ++l) {
          const std::uint8_t bl = b_row_major_ ? bv[l * s.n + j] : bv[j * s.k + l];
          sum += e4m3_to_float(av[i * s.k + l]) * e4m3_to_float(bl);
        }
        cv[i * s.n + j] = float_to_bf16(sum);
      }
    upload(c, cv.data(), cv.size() * 2);
    synchronize();
  }
  StressOps* stress_ops() override { return inner().stress_ops(); }

 private:
  bool b_row_major_;
};

bench::Cell fp8_gemm(GemmShape s) {
  bench::Cell cell;
  cell.op = Op::kGemm;
  cell.dtype = DType::kFp8;
  cell.shape = s;
  return cell;
}

TEST(Fp8, NamesAndSizes) {
  EXPECT_EQ(dtype_from_string("fp8"), DType::kFp8);
  EXPECT_EQ(to_string(DType::kFp8), "fp8");
  EXPECT_FALSE(dtype_from_string("e4m3"));
  EXPECT_FALSE(dtype_from_string("f8"));
  EXPECT_EQ(element_size(DType::kFp8), 1u);
  EXPECT_EQ(gemm_output_dtype(DType::kFp8), DType::kBf16);
  EXPECT_EQ(gemm_output_dtype(DType::kF16), DType::kF16);
  EXPECT_TRUE(gemm_b_k_major(DType::kFp8));
  EXPECT_FALSE(gemm_b_k_major(DType::kBf16));
  EXPECT_EQ(bench::make_gemm_output(DType::kFp8, {32, 48, 16}).dtype(), DType::kBf16);
  EXPECT_EQ(bench::make_gemm_output(DType::kFp8, {32, 48, 16}).size(), 32u * 48u);
}

TEST(Fp8, TheCpuSaysItHasNoFp8GemmAndBenchRecordsThat) {
  auto cpu = cpu_device();
  const auto why = cpu->unsupported_reason(Op::kGemm, DType::kFp8, Layout::kNchw);
  ASSERT_TRUE(why);
  EXPECT_THAT(*why, HasSubstr("no FP8 GEMM on the CPU backend"));
  EXPECT_THAT(*why, HasSubstr("8.9"));
  const auto records = fakes::bench_one_cell(*cpu, fp8_gemm({64, 64, 64}), 2);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0][k::kStatus], "unsupported") << records[0].dump();
  EXPECT_EQ(records[0][k::kDtype], "fp8");
  EXPECT_THAT(records[0][k::kReason].get<std::string>(), HasSubstr("no FP8 GEMM"));
}

TEST(Fp8, BenchVerifiesAnFp8GemmWithABf16Result) {
  HostFp8Device dev;
  const auto records = fakes::bench_one_cell(dev, fp8_gemm({64, 48, 80}), 2);
  ASSERT_EQ(records.size(), 1u);  // a host device: device time only
  const auto& r = records[0];
  ASSERT_EQ(r[k::kStatus], "ok") << r.dump();
  EXPECT_EQ(r[k::kDtype], "fp8");
  EXPECT_EQ(r[k::kVerification][k::kMethod], "elementwise");
  EXPECT_LE(r[k::kVerification][k::kMaxRelError].get<double>(),
            r[k::kVerification][k::kTolerance].get<double>());
  // bf16's output rounding and the FP8 tensor core's term: far above an f32 GEMM's tolerance.
  EXPECT_DOUBLE_EQ(r[k::kVerification][k::kTolerance].get<double>(),
                   bench::gemm_error_model(DType::kFp8, DType::kBf16, DType::kF32, 80).tolerance);
  // A larger one goes through Freivalds' check.
  const auto big = fakes::bench_one_cell(dev, fp8_gemm({256, 128, 512}), 1);
  ASSERT_EQ(big.size(), 1u);
  EXPECT_EQ(big[0][k::kStatus], "ok") << big[0].dump();
  EXPECT_EQ(big[0][k::kVerification][k::kMethod], "freivalds+sampled+scan");
}

TEST(Fp8, BReadInTheWrongLayoutIsAMismatch) {
  HostFp8Device wrong(/*b_row_major=*/true);
  const auto records = fakes::bench_one_cell(wrong, fp8_gemm({64, 48, 80}), 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0][k::kStatus], "mismatch") << records[0].dump();
  EXPECT_THAT(records[0][k::kReason].get<std::string>(), HasSubstr("verification failed"));
}

TEST(Fp8, ShapesNotMultiplesOf16AreUnsupported) {
  HostFp8Device dev;
  const auto records = fakes::bench_one_cell(dev, fp8_gemm({100, 64, 64}), 1);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0][k::kStatus], "unsupported") << records[0].dump();
  EXPECT_THAT(records[0][k::kReason].get<std::string>(), HasSubstr("multiples of 16"));
  EXPECT_THAT(records[0][k::kReason].get<std::string>(), HasSubstr("100x64x64"));
}

TEST(Fp8, StressRunsAndChecksAnFp8Gemm) {
  HostFp8Device dev;
  stress::StressPlan plan;
  plan.device = "cpu";
  plan.backend = "cpu";
  plan.tests = {stress::Test::kGemm};
  plan.dtypes = {DType::kFp8};
  plan.duration_s = 0.5;
  plan.gemm_size = 64;
  plan.check_every = 2;
  plan.threads = 1;
  std::vector<nlohmann::json> records;
  stress::run_stress(plan, dev, {}, [&](const nlohmann::json& line) {
    if (line.at(stress::event::kKey) == stress::event::kRecord)
      records.push_back(line.at(stress::event::kPayload));
  });
  ASSERT_EQ(records.size(), 1u);
  const auto& r = records[0];
  ASSERT_EQ(r[k::kStatus], "ok") << r.dump();
  EXPECT_EQ(r[k::kDtype], "fp8");
  EXPECT_TRUE(r[k::kChecking][k::kReference]["max_rel_error"].get<double>() <=
              r[k::kChecking][k::kReference]["tolerance"].get<double>())
      << r.dump();
  EXPECT_GE(r[k::kChecking][k::kFullChecks].get<int>(), 1) << r.dump();
  EXPECT_EQ(r[k::kChecking][k::kMismatchedResults], 0) << r.dump();
}

TEST(Fp8, StressPlansCarryFp8AndRefuseWhatCannotRun) {
  stress::StressPlan plan;
  plan.device = "cuda0";
  plan.backend = "cuda";
  plan.tests = {stress::Test::kGemm};
  plan.dtypes = {DType::kFp8, DType::kBf16};
  const stress::StressPlan back = stress::plan_from_json(stress::to_json(plan));
  EXPECT_EQ(back.dtypes, plan.dtypes);
  EXPECT_EQ(stress::to_json(plan)[k::kDtypes], (nlohmann::json{"fp8", "bf16"}));
  // 8192: 1 + 1 + 2 bytes an element for A, B and the bf16 C, 256 MiB in all.
  EXPECT_FALSE(stress::gemm_refusal(plan, std::uint64_t{80} << 30));
  plan.dtypes = {DType::kFp8};
  EXPECT_FALSE(stress::gemm_refusal(plan, (std::uint64_t{256} << 20) + 1));
  EXPECT_TRUE(stress::gemm_refusal(plan, (std::uint64_t{256} << 20) - 1));
  plan.gemm_size = 1000;
  const auto odd = stress::gemm_refusal(plan, std::uint64_t{80} << 30);
  ASSERT_TRUE(odd);
  EXPECT_THAT(*odd, HasSubstr("multiples of 16"));
  plan.gemm_size = 0;
  plan.device = "cpu";
  plan.backend = "cpu";
  const auto cpu = stress::gemm_refusal(plan, std::uint64_t{80} << 30);
  ASSERT_TRUE(cpu);
  EXPECT_THAT(*cpu, HasSubstr("not fp8"));
}

}  // namespace
}  // namespace gpucheck

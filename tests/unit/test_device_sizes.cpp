// bench's default sizes per device: each op's size from the device's limit, the small preset's
// size kept only for the transfer lesson, the medium preset where no limit is known.
#include "app/device_sizes.h"
#include "bench/config.h"
#include "bench/ops/op_unit.h"
#include "qualify/limits.h"
#include "test_skus.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

namespace q = gpucheck::qualify;
namespace app = gpucheck::app;
namespace bench = gpucheck::bench;
using gpucheck::ConvShape;
using gpucheck::CopyShape;
using gpucheck::Direction;
using gpucheck::DType;
using gpucheck::ExpShape;
using gpucheck::GemmShape;
using gpucheck::HostMemory;
using gpucheck::Layout;
using gpucheck::Op;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Json = nlohmann::json;

struct Facts {
  std::vector<q::Sku> skus = q::parse_skus(gpucheck::testing::kTestSkus, "s.toml");
  q::LimitFacts facts;
  bench::Presets presets = bench::default_presets();
  Facts() {
    facts.backends = Json::parse(R"([
      {"name": "cpu", "devices": [{"device": "cpu"}]},
      {"name": "cuda", "devices": [
        {"device": "cuda0", "device_name": "H100", "pci_bus_id": "0000:00:06.0",
         "properties": {"compute_capability": "9.0", "multiprocessors": 132,
                        "nvml": {"max_sm_clock_mhz": 1980, "pcie_link_gen_max": 4,
                                 "pcie_link_width_max": 16}}}]},
      {"name": "opencl", "devices": [
        {"device": "opencl0", "device_name": "pthread-cpu",
         "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_CPU"]}}},
        {"device": "opencl1", "device_name": "Some GPU",
         "properties": {"cl_device_type": {"flags": ["CL_DEVICE_TYPE_GPU"]}}}]}])");
    // 2 cores × 64 f32 FLOP per cycle (AVX-512) × 2.5 GHz = 0.32 TFLOP/s.
    facts.cpu = {{"arch", "x86_64"},
                 {"cores", 2},
                 {"mhz_current", 2500.0},
                 {"isa", {{"avx512f", true}, {"avx2", true}, {"fma", true}}}};
    facts.skus = &skus;
    facts.pci_device_id = [](const std::string& bus) -> std::optional<std::string> {
      if (bus == "0000:00:06.0") return std::string("0x2330");
      return std::nullopt;
    };
  }
  app::DeviceSizes of(const std::string& device, const std::string& backend) const {
    return app::choose_device_sizes({device, backend}, presets, facts);
  }
};

std::vector<std::string> texts(const Json& entry) {
  return entry["sizes"].get<std::vector<std::string>>();
}

TEST(DeviceSizes, PowersOfTwo) {
  EXPECT_EQ(app::round_up_pow2(7906, 512), 8192u);
  EXPECT_EQ(app::round_up_pow2(8192, 512), 8192u);
  EXPECT_EQ(app::round_up_pow2(3, 512), 512u);
  EXPECT_EQ(app::round_up_pow2(1.0e30, 1), std::uint64_t{1} << 62);
}

TEST(DeviceSizes, AGpuGetsSizesFromItsLimits) {
  Facts f;
  const app::DeviceSizes s = f.of("cuda0", "cuda");
  // bf16's 989 TFLOP/s corrected from the datasheet's 1830 MHz to 1980: ∛(1070e12 × 0.1 ms / 2)
  // ≈ 3768 → 4096 (f32's 66.9 TFLOP/s alone would give 2048).
  EXPECT_THAT(texts(s.explained["gemm"]), ElementsAre("512x512x512", "4096x4096x4096"));
  EXPECT_THAT(s.explained["gemm"]["why"].get<std::string>(), HasSubstr("bf16 limit"));
  // 3350 GB/s × 0.1 ms / 8 bytes an element = 4.2e7 → 2^26.
  EXPECT_THAT(texts(s.explained["exp"]), ElementsAre("2^20", "2^26"));
  // The larger of PCIe Gen4 x16 (31.5 GB/s × 0.25 ms = 7.9 MB) and memory (3350 GB/s × 50 µs =
  // 168 MB): 256 MiB.
  EXPECT_THAT(texts(s.explained["copy"]), ElementsAre("1 MiB", "256 MiB"));
  // f32 from 132 SMs × 256 FLOP per clock × 1980 MHz = 66.9 TFLOP/s: 29 images of 231 MFLOP.
  const auto& conv = s.sizes.of(Op::kConv);
  ASSERT_EQ(conv.size(), 2u);
  EXPECT_EQ(std::get<ConvShape>(conv[1]).n, 32u);
  EXPECT_EQ(std::get<ConvShape>(conv[1]).c, std::get<ConvShape>(conv[0]).c);
  EXPECT_EQ(std::get<GemmShape>(s.lesson.at(Op::kGemm)).m, 512u);
  EXPECT_EQ(std::get<ExpShape>(s.lesson.at(Op::kExp)).n, 1u << 20);
}

TEST(DeviceSizes, TheCpuGetsItsOwnAndKeepsTheSmallWhereEnough) {
  Facts f;
  const app::DeviceSizes s = f.of("cpu", "cpu");
  // ∛(0.32e12 × 0.1 ms / 2) ≈ 252: the small 512 already; f32 only, whatever bf16 could do.
  EXPECT_THAT(texts(s.explained["gemm"]), ElementsAre("512x512x512"));
  EXPECT_THAT(s.explained["gemm"]["why"].get<std::string>(), HasSubstr("f32 limit"));
  EXPECT_THAT(s.explained["gemm"]["why"].get<std::string>(), HasSubstr("already"));
  // 64 times the cores: ∛(20.5e12 × 0.1 ms / 2) ≈ 1008 → 1024.
  f.facts.cpu["cores"] = 128;
  EXPECT_THAT(texts(f.of("cpu", "cpu").explained["gemm"]),
              ElementsAre("512x512x512", "1024x1024x1024"));
  // 0.14 images of the conv give 0.1 ms: the small batch of 8 already does.
  EXPECT_EQ(s.sizes.of(Op::kConv).size(), 1u);
  EXPECT_FALSE(s.lesson.contains(Op::kConv));
  EXPECT_THAT(s.explained["conv"]["why"].get<std::string>(), HasSubstr("already"));
  EXPECT_EQ(s.sizes.of(Op::kExp).size(), 1u);
  EXPECT_THAT(s.explained["exp"]["why"].get<std::string>(), HasSubstr("arithmetic"));
  // pocl runs on those cores too, and keeps the small sizes.
  const app::DeviceSizes pocl = f.of("opencl0", "opencl");
  EXPECT_THAT(texts(pocl.explained["gemm"]), ElementsAre("512x512x512"));
  EXPECT_THAT(pocl.explained["gemm"]["why"].get<std::string>(), HasSubstr("CPU's cores"));
  EXPECT_TRUE(pocl.lesson.empty());
}

TEST(DeviceSizes, AGpuWithoutALimitGetsTheMediumPreset) {
  Facts f;
  const app::DeviceSizes s = f.of("opencl1", "opencl");
  EXPECT_THAT(texts(s.explained["gemm"]), ElementsAre("512x512x512", "2048x2048x2048"));
  EXPECT_THAT(s.explained["gemm"]["why"].get<std::string>(),
              HasSubstr("no limit known (no FLOP figure known for Some GPU"));
  EXPECT_THAT(texts(s.explained["exp"]), ElementsAre("2^20", "2^24"));
}

TEST(DeviceSizes, TheLessonSizeKeepsOnlyF32NchwAndHostCopies) {
  Facts f;
  const app::DeviceSizes s = f.of("cuda0", "cuda");
  auto cell = [](Op op, DType dtype, gpucheck::bench::Shape shape) {
    bench::Cell c;
    c.op = op;
    c.dtype = dtype;
    c.shape = std::move(shape);
    return c;
  };
  EXPECT_TRUE(app::keep_cell(s, cell(Op::kGemm, DType::kF32, GemmShape{512, 512, 512})));
  EXPECT_FALSE(app::keep_cell(s, cell(Op::kGemm, DType::kBf16, GemmShape{512, 512, 512})));
  EXPECT_TRUE(app::keep_cell(s, cell(Op::kGemm, DType::kBf16, GemmShape{8192, 8192, 8192})));
  EXPECT_FALSE(app::keep_cell(s, cell(Op::kExp, DType::kF16, ExpShape{1u << 20})));
  ConvShape small = std::get<ConvShape>(s.lesson.at(Op::kConv));
  EXPECT_TRUE(app::keep_cell(s, cell(Op::kConv, DType::kF32, small)));
  small.layout = Layout::kNhwc;
  EXPECT_FALSE(app::keep_cell(s, cell(Op::kConv, DType::kF32, small)));
  EXPECT_TRUE(app::keep_cell(
      s, cell(Op::kCopy, DType::kF32, CopyShape{1u << 20, Direction::kH2d, HostMemory::kPinned})));
  EXPECT_FALSE(app::keep_cell(
      s, cell(Op::kCopy, DType::kF32, CopyShape{1u << 20, Direction::kD2d, HostMemory::kPinned})));
  EXPECT_TRUE(app::keep_cell(
      s, cell(Op::kCopy, DType::kF32, CopyShape{1u << 28, Direction::kD2d, HostMemory::kPinned})));
}

}  // namespace

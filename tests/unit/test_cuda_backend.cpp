// The CUDA backend's pure parts: architecture table, UUID and PCI forms, the driver verdicts,
// the alpha and beta the library calls read.
#if GPUCHECK_HAVE_CUDA

#include "backends/cuda/cuda_arch.h"
#include "backends/cuda/cuda_driver.h"
#include "backends/cuda/cuda_errors.h"
#include "backends/cuda/cuda_memory.h"
#include "backends/cuda/cuda_probe.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

using namespace gpucheck::cuda;
using ::testing::HasSubstr;

TEST(CudaArch, CoresPerSmMatchDeviceQuery) {
  struct Case {
    int major, minor, cores;
    const char* name;
  };
  for (const auto& c :
       {Case{3, 5, 192, "Kepler"}, Case{5, 2, 128, "Maxwell"}, Case{6, 0, 64, "Pascal"},
        Case{6, 1, 128, "Pascal"}, Case{7, 0, 64, "Volta"}, Case{7, 5, 64, "Turing"},
        Case{8, 0, 64, "Ampere"}, Case{8, 6, 128, "Ampere"}, Case{8, 9, 128, "Ada"},
        Case{9, 0, 128, "Hopper"}, Case{10, 0, 128, "Blackwell"}, Case{12, 0, 128, "Blackwell"}}) {
    auto f = arch_facts(c.major, c.minor);
    ASSERT_TRUE(f.has_value()) << c.major << "." << c.minor;
    EXPECT_EQ(f->fp32_cores_per_sm, c.cores) << c.major << "." << c.minor;
    EXPECT_STREQ(f->name, c.name);
  }
  EXPECT_FALSE(arch_facts(99, 0).has_value());
  EXPECT_FALSE(arch_facts(8, 1).has_value());
}

TEST(CudaProbe, UuidInNvidiaSmiForm) {
  std::array<unsigned char, 16> b{0x5d, 0x3e, 0x0b, 0x7a, 0x1c, 0x2f, 0x4a, 0x00,
                                  0xff, 0x10, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab};
  EXPECT_EQ(format_gpu_uuid(b), "GPU-5d3e0b7a-1c2f-4a00-ff10-0123456789ab");
}

TEST(CudaProbe, PciBusIdNormalised) {
  EXPECT_EQ(normalize_pci_bus_id("0000:17:00.0"), "0000:17:00.0");
  EXPECT_EQ(normalize_pci_bus_id("00000000:B3:00.0"), "0000:b3:00.0");
  EXPECT_EQ(normalize_pci_bus_id("0001:0A:1F.7"), "0001:0a:1f.7");
  EXPECT_FALSE(normalize_pci_bus_id("GPU-123").has_value());
  EXPECT_FALSE(normalize_pci_bus_id("0000:17:00").has_value());
  EXPECT_FALSE(normalize_pci_bus_id("0000:zz:00.0").has_value());
}

namespace {

DriverObservation loaded_driver() {
  DriverObservation o;
  o.loaded = true;
  o.path = "/usr/lib/x86_64-linux-gnu/libcuda.so.1";
  o.real_path = "/usr/lib/x86_64-linux-gnu/libcuda.so.580.82.07";
  o.init_result = 0;
  o.driver_version = 13000;
  o.device_count = 1;
  o.dev_nodes = {"/dev/nvidia0", "/dev/nvidiactl"};
  return o;
}

}  // namespace

TEST(CudaDriver, NoDriverKeepsTheDlerror) {
  DriverObservation o;
  o.dlerror = "libcuda.so.1: cannot open shared object file: No such file or directory";
  auto v = judge_driver(o);
  EXPECT_FALSE(v.usable);
  EXPECT_EQ(v.kind, "no_driver");
  EXPECT_EQ(v.reason,
            "no NVIDIA driver: libcuda.so.1: cannot open shared object file: No such file or "
            "directory");
  EXPECT_THAT(v.reason, ::testing::Not(HasSubstr("insufficient")));
}

TEST(CudaDriver, StubByPathOrByCode) {
  auto o = loaded_driver();
  o.path = "/tmp/x/libcuda.so.1";
  o.real_path = "/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so";
  auto v = judge_driver(o);
  EXPECT_EQ(v.kind, "stub");
  EXPECT_THAT(
      v.reason,
      HasSubstr("toolkit's stub (/usr/local/cuda-13.0/targets/x86_64-linux/lib/stubs/libcuda.so)"));
  auto o2 = loaded_driver();
  o2.init_result = 34;  // CUDA_ERROR_STUB_LIBRARY
  EXPECT_EQ(judge_driver(o2).kind, "stub");
}

TEST(CudaDriver, TooOldNamesTheUpdate) {
  auto o = loaded_driver();
  o.driver_version = 12080;
  auto v = judge_driver(o);
  EXPECT_EQ(v.kind, "too_old");
  EXPECT_THAT(v.reason, HasSubstr("supports CUDA 12.8"));
  EXPECT_THAT(v.reason, HasSubstr("update the driver to ≥ 580"));
}

TEST(CudaDriver, NoDeviceAndHidden) {
  auto o = loaded_driver();
  o.init_result = 100;  // CUDA_ERROR_NO_DEVICE
  o.device_count.reset();
  EXPECT_EQ(judge_driver(o).kind, "no_device");
  o.cuda_visible_devices = "";
  auto v = judge_driver(o);
  EXPECT_EQ(v.kind, "hidden");
  EXPECT_THAT(v.reason, HasSubstr("CUDA_VISIBLE_DEVICES=''"));
  o.dev_nodes.clear();  // no device nodes: the variable is not what hides them
  EXPECT_EQ(judge_driver(o).kind, "no_device");
  auto o2 = loaded_driver();
  o2.device_count = 0;
  o2.cuda_visible_devices = "7";
  EXPECT_EQ(judge_driver(o2).kind, "hidden");
}

TEST(CudaDriver, InitFailureAndOk) {
  auto o = loaded_driver();
  EXPECT_TRUE(judge_driver(o).usable);
  o.init_result = 999;
  o.init_error_name = "CUDA_ERROR_UNKNOWN";
  auto v = judge_driver(o);
  EXPECT_EQ(v.kind, "init_failed");
  EXPECT_THAT(v.reason, HasSubstr("CUDA_ERROR_UNKNOWN (999)"));
}

TEST(CudaDriver, VersionString) {
  EXPECT_EQ(cuda_version_string(13000), "13.0");
  EXPECT_EQ(cuda_version_string(12080), "12.8");
}

// cuBLAS and cuDNN read alpha and beta as double for f64 work and as float otherwise: a float
// where a double is read would be garbage scaling, silently.
TEST(CudaUnitScale, DoubleForF64FloatOtherwise) {
  const UnitScale f64(gpucheck::DType::kF64);
  EXPECT_TRUE(f64.f64());
  EXPECT_EQ(*static_cast<const double*>(f64.alpha()), 1.0);
  EXPECT_EQ(*static_cast<const double*>(f64.beta()), 0.0);
  for (auto d : {gpucheck::DType::kF32, gpucheck::DType::kTf32, gpucheck::DType::kF16,
                 gpucheck::DType::kBf16, gpucheck::DType::kFp8}) {
    const UnitScale s(d);
    EXPECT_FALSE(s.f64());
    EXPECT_EQ(*static_cast<const float*>(s.alpha()), 1.0f);
    EXPECT_EQ(*static_cast<const float*>(s.beta()), 0.0f);
  }
  EXPECT_TRUE(UnitScale(true).f64());
  EXPECT_FALSE(UnitScale(false).f64());
}

// The graph API's failures name the status, not only its number.
TEST(CudaErrors, CudnnStatusNamesKnownCodesAndTheirThousands) {
  EXPECT_EQ(cudnn_status_name(3000), "CUDNN_STATUS_NOT_SUPPORTED");
  EXPECT_EQ(cudnn_status_name(3005), "CUDNN_STATUS_NOT_SUPPORTED_*");
  EXPECT_EQ(cudnn_status_name(7), "CUDNN_STATUS_UNKNOWN");
  EXPECT_EQ(cudnn_status_name(6000), "CUDNN_STATUS_UNKNOWN");
}

#endif  // GPUCHECK_HAVE_CUDA

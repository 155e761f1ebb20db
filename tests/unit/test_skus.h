// A SKU table for the limits' tests: an H100 known by its PCI device id (0x2330, 132 SMs) with
// datasheet figures for bf16 GEMM, memory, PCIe, NVLink and all-reduce.
#pragma once

namespace gpucheck::testing {

inline constexpr const char* kTestSkus = R"(
[[sku]]
model = "Test H100"
pci_device_ids = ["0x2330"]
sm_count = 132
[[sku.reference]]
source = "datasheet"
op = "gemm"
dtype = "bf16"
value = 989.4
unit = "TFLOP/s"
datasheet = "Test datasheet"
[[sku.reference]]
source = "datasheet"
op = "exp"
value = 3350
unit = "GB/s"
datasheet = "Test datasheet"
[[sku.reference]]
source = "datasheet"
op = "copy"
shape = { direction = "h2d" }
value = 63.0
unit = "GB/s"
datasheet = "Test datasheet"
[[sku.reference]]
source = "datasheet"
op = "p2p"
value = 450
signalling = 478.1
unit = "GB/s"
datasheet = "Test datasheet"
[[sku.reference]]
source = "datasheet"
op = "allreduce"
value = 450
unit = "GB/s"
datasheet = "Test datasheet"
)";

}  // namespace gpucheck::testing

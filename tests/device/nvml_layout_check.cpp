// Compiled on the GPU machine against the real nvml.h (not in CI: no nvml.h there): compares
// the sizes and offsets gpucheck's hand-written declarations (nvml_api.h) assume with NVML's.
// Build: c++ -std=c++17 -I<cuda>/targets/x86_64-linux/include nvml_layout_check.cpp
#include <nvml.h>

#include <cstddef>
#include <cstdio>

namespace {

int failures = 0;

void check(const char* what, std::size_t real, std::size_t ours) {
  std::printf("%-32s nvml.h %4zu  gpucheck %4zu  %s\n", what, real, ours,
              real == ours ? "ok" : "MISMATCH");
  if (real != ours) ++failures;
}

}  // namespace

int main() {
  // The numbers nvml_api.h static_asserts.
  check("sizeof(nvmlPciInfo_t)", sizeof(nvmlPciInfo_t), 68);
  check("offsetof(nvmlPciInfo_t, busId)", offsetof(nvmlPciInfo_t, busId), 36);
  check("sizeof(nvmlMemory_v2_t)", sizeof(nvmlMemory_v2_t), 40);
  check("offsetof(nvmlMemory_v2_t, total)", offsetof(nvmlMemory_v2_t, total), 8);
  check("nvmlMemory_v2", nvmlMemory_v2, 40u | (2u << 24));
  check("sizeof(nvmlProcessInfo_t)", sizeof(nvmlProcessInfo_t), 24);
  check("offsetof(nvmlProcessInfo_t, usedGpuMemory)", offsetof(nvmlProcessInfo_t, usedGpuMemory),
        8);
  check("sizeof(nvmlUtilization_t)", sizeof(nvmlUtilization_t), 8);
  check("NVML_DEVICE_UUID_V2_BUFFER_SIZE", NVML_DEVICE_UUID_V2_BUFFER_SIZE, 96);
  check("NVML_DEVICE_NAME_V2_BUFFER_SIZE", NVML_DEVICE_NAME_V2_BUFFER_SIZE, 96);
  check("NVML_ERROR_NOT_SUPPORTED", NVML_ERROR_NOT_SUPPORTED, 3);
  check("nvmlClocksThrottleReasonHwSlowdown", nvmlClocksThrottleReasonHwSlowdown, 0x8);
  // The violation counters stress reads.
  check("sizeof(nvmlViolationTime_t)", sizeof(nvmlViolationTime_t), 16);
  check("offsetof(nvmlViolationTime_t, violationTime)",
        offsetof(nvmlViolationTime_t, violationTime), 8);
  check("NVML_PERF_POLICY_THERMAL", NVML_PERF_POLICY_THERMAL, 1);
  check("NVML_PERF_POLICY_RELIABILITY", NVML_PERF_POLICY_RELIABILITY, 5);
  // Multi-GPU: NVLink, field values, topology, P2P, fabric.
  check("sizeof(nvmlFieldValue_t)", sizeof(nvmlFieldValue_t), 40);
  check("offsetof(nvmlFieldValue_t, valueType)", offsetof(nvmlFieldValue_t, valueType), 24);
  check("offsetof(nvmlFieldValue_t, value)", offsetof(nvmlFieldValue_t, value), 32);
  check("sizeof(nvmlGpuFabricInfo_v3_t)", sizeof(nvmlGpuFabricInfo_v3_t), 40);
  check("offsetof(nvmlGpuFabricInfo_v3_t, state)", offsetof(nvmlGpuFabricInfo_v3_t, state), 28);
  check("offsetof(nvmlGpuFabricInfo_v3_t, healthMask)",
        offsetof(nvmlGpuFabricInfo_v3_t, healthMask), 32);
  check("nvmlGpuFabricInfo_v3", nvmlGpuFabricInfo_v3, 40u | (3u << 24));
  check("NVML_FI_DEV_NVLINK_GET_SPEED", NVML_FI_DEV_NVLINK_GET_SPEED, 164);
  check("NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON", NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON, 90);
  check("NVML_FI_DEV_NVLINK_LINK_COUNT", NVML_FI_DEV_NVLINK_LINK_COUNT, 91);
  // A loop bound, not an array size: gpucheck asks about links up to 36 (newer headers) and a GPU
  // answers INVALID_ARGUMENT for links it lacks, so it only has to cover the header's count.
  check("NVML_NVLINK_MAX_LINKS (covered)", NVML_NVLINK_MAX_LINKS <= 36 ? 1 : 0, 1);
  check("NVML_NVLINK_ERROR_DL_ECC_DATA", NVML_NVLINK_ERROR_DL_ECC_DATA, 4);
  check("NVML_NVLINK_DEVICE_TYPE_SWITCH", NVML_NVLINK_DEVICE_TYPE_SWITCH, 2);
  check("NVML_TOPOLOGY_SYSTEM", NVML_TOPOLOGY_SYSTEM, 50);
  check("NVML_P2P_CAPS_INDEX_PCI", NVML_P2P_CAPS_INDEX_PCI, 4);
  check("NVML_P2P_STATUS_UNKNOWN", NVML_P2P_STATUS_UNKNOWN, 6);
  std::printf("%s\n", failures == 0 ? "NVML layout: all match" : "NVML layout: MISMATCH");
  return failures == 0 ? 0 : 1;
}

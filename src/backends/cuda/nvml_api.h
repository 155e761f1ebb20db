// The part of NVML's C API that gpucheck uses, declared by hand (no nvml.h on the development and
// CI machines): types with their sizes checked, return codes, and the versioned entry points.
// A device test compiles a checker against the real nvml.h and compares sizeof/offsetof.
#pragma once

#include <cstddef>

namespace gpucheck::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorLibRmVersionMismatch = 18;
inline constexpr Return kErrorUnknown = 999;

struct DeviceSt;
using Device = DeviceSt*;  // nvmlDevice_t

// nvmlPciInfo_t (the _v3 query fills it): busId is "00000000:17:00.0".
struct PciInfo {
  char bus_id_legacy[16];
  unsigned int domain;
  unsigned int bus;
  unsigned int device;
  unsigned int pci_device_id;
  unsigned int pci_subsystem_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68);
static_assert(offsetof(PciInfo, bus_id) == 36);

// nvmlMemory_v2_t: `version` must be set to kMemoryV2Version before the call.
struct MemoryV2 {
  unsigned int version;
  unsigned long long total;
  unsigned long long reserved;
  unsigned long long free;
  unsigned long long used;
};
static_assert(sizeof(MemoryV2) == 40);
static_assert(offsetof(MemoryV2, total) == 8);
// NVML_STRUCT_VERSION(Memory, 2) = sizeof | (2 << 24).
inline constexpr unsigned int kMemoryV2Version =
    static_cast<unsigned int>(sizeof(MemoryV2)) | (2u << 24);

// nvmlUtilization_t, percent.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};
static_assert(sizeof(Utilization) == 8);

// nvmlProcessInfo_t as nvmlDeviceGetComputeRunningProcesses_v3 fills it.
struct ProcessInfo {
  unsigned int pid;
  unsigned long long used_gpu_memory;  // bytes; kValueNotAvailable when unknown
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};
static_assert(sizeof(ProcessInfo) == 24);
static_assert(offsetof(ProcessInfo, used_gpu_memory) == 8);
inline constexpr unsigned long long kValueNotAvailable = ~0ULL;

// nvmlViolationTime_t: referenceTime is a CPU timestamp in µs, violationTime nanoseconds.
struct ViolationTime {
  unsigned long long reference_time;
  unsigned long long violation_time;
};
static_assert(sizeof(ViolationTime) == 16);

// nvmlPerfPolicyType_t values nvmlDeviceGetViolationStatus takes.
inline constexpr int kPerfPolicyPower = 0, kPerfPolicyThermal = 1, kPerfPolicySyncBoost = 2,
                     kPerfPolicyBoardLimit = 3, kPerfPolicyLowUtilization = 4,
                     kPerfPolicyReliability = 5;

// Enumerations passed by value (all C enums: int-sized).
inline constexpr int kClockGraphics = 0, kClockSm = 1, kClockMem = 2;
inline constexpr int kTemperatureGpu = 0;
inline constexpr int kMemoryErrorCorrected = 0, kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0, kAggregateEcc = 1;
inline constexpr int kRetiredMultipleSingleBit = 0, kRetiredDoubleBit = 1;

// Clocks-event (throttle) reason bits.
inline constexpr unsigned long long kEventGpuIdle = 0x1;
inline constexpr unsigned long long kEventApplicationsClocksSetting = 0x2;
inline constexpr unsigned long long kEventSwPowerCap = 0x4;
inline constexpr unsigned long long kEventHwSlowdown = 0x8;
inline constexpr unsigned long long kEventSyncBoost = 0x10;
inline constexpr unsigned long long kEventSwThermalSlowdown = 0x20;
inline constexpr unsigned long long kEventHwThermalSlowdown = 0x40;
inline constexpr unsigned long long kEventHwPowerBrakeSlowdown = 0x80;
inline constexpr unsigned long long kEventDisplayClockSetting = 0x100;

// Buffer sizes NVML documents for its string queries.
inline constexpr unsigned int kDeviceNameBufferSize = 96;
inline constexpr unsigned int kUuidBufferSize = 96;
inline constexpr unsigned int kSerialBufferSize = 30;
inline constexpr unsigned int kVbiosBufferSize = 32;
inline constexpr unsigned int kInforomBufferSize = 16;
inline constexpr unsigned int kDriverVersionBufferSize = 80;

// ---- Multi-GPU servers: topology, NVLink, P2P, field values, fabric ----

// nvmlGpuTopologyLevel_t: the closest common ancestor of two GPUs on the PCIe tree.
inline constexpr int kTopologyInternal = 0, kTopologySingle = 10, kTopologyMultiple = 20,
                     kTopologyHostBridge = 30, kTopologyNode = 40, kTopologySystem = 50;

// nvmlGpuP2PCapsIndex_t and nvmlGpuP2PStatus_t.
inline constexpr int kP2pCapsRead = 0, kP2pCapsWrite = 1, kP2pCapsNvlink = 2, kP2pCapsAtomics = 3,
                     kP2pCapsPci = 4;
inline constexpr int kP2pStatusOk = 0, kP2pStatusChipsetNotSupported = 1,
                     kP2pStatusGpuNotSupported = 2, kP2pStatusIohTopologyNotSupported = 3,
                     kP2pStatusDisabledByRegkey = 4, kP2pStatusNotSupported = 5,
                     kP2pStatusUnknown = 6;

// nvmlNvLinkErrorCounter_t: read per link with nvmlDeviceGetNvLinkErrorCounter.
inline constexpr int kNvLinkErrorDlReplay = 0, kNvLinkErrorDlRecovery = 1,
                     kNvLinkErrorDlCrcFlit = 2, kNvLinkErrorDlCrcData = 3,
                     kNvLinkErrorDlEccData = 4;
// nvmlIntNvLinkDeviceType_t.
inline constexpr int kNvLinkDeviceGpu = 0x00, kNvLinkDeviceIbmNpu = 0x01,
                     kNvLinkDeviceSwitch = 0x02, kNvLinkDeviceUnknown = 0xFF;
inline constexpr unsigned int kNvLinkMaxLinks = 36;  // NVML_NVLINK_MAX_LINKS

// Field ids (NVML_FI_*) read with nvmlDeviceGetFieldValues; scope_id = link for the per-link ones.
inline constexpr unsigned int kFiNvLinkLinkCount = 91;    // NVML_FI_DEV_NVLINK_LINK_COUNT
inline constexpr unsigned int kFiNvLinkGetSpeed = 164;    // MBps of one link (scope_id = link)
inline constexpr unsigned int kFiNvLinkSpeedCommon = 90;  // MBps common to the active links

// nvmlValue_t / nvmlFieldValue_t.
union Value {
  double d;
  int si;
  unsigned int ui;
  unsigned long ul;
  unsigned long long ull;
  long long sll;
  unsigned short us;
};
static_assert(sizeof(Value) == 8);
inline constexpr int kValueTypeDouble = 0, kValueTypeUnsignedInt = 1, kValueTypeUnsignedLong = 2,
                     kValueTypeUnsignedLongLong = 3, kValueTypeSignedLongLong = 4,
                     kValueTypeSignedInt = 5, kValueTypeUnsignedShort = 6;
struct FieldValue {
  unsigned int field_id;
  unsigned int scope_id;
  long long timestamp;
  long long latency_usec;
  int value_type;  // nvmlValueType_t
  Return nvml_return;
  Value value;
};
static_assert(sizeof(FieldValue) == 40);
static_assert(offsetof(FieldValue, value_type) == 24);
static_assert(offsetof(FieldValue, value) == 32);

// nvmlGpuFabricInfo_v3_t (NVSwitch systems: the GPU's registration with Fabric Manager).
struct GpuFabricInfoV3 {
  unsigned int version;
  unsigned char cluster_uuid[16];
  Return status;
  unsigned int clique_id;
  unsigned char state;  // nvmlGpuFabricState_t
  unsigned int health_mask;
  unsigned char health_summary;
};
static_assert(sizeof(GpuFabricInfoV3) == 40);
static_assert(offsetof(GpuFabricInfoV3, state) == 28);
static_assert(offsetof(GpuFabricInfoV3, health_mask) == 32);
inline constexpr unsigned int kGpuFabricInfoV3Version =
    static_cast<unsigned int>(sizeof(GpuFabricInfoV3)) | (3u << 24);
inline constexpr unsigned char kFabricStateNotSupported = 0, kFabricStateNotStarted = 1,
                               kFabricStateInProgress = 2, kFabricStateCompleted = 3;

// Entry point types; each is dlsym'ed under the versioned name in the comment.
extern "C" {
using InitFn = Return (*)();                                         // nvmlInit_v2
using ShutdownFn = Return (*)();                                     // nvmlShutdown
using ErrorStringFn = const char* (*)(Return);                       // nvmlErrorString
using SystemStringFn = Return (*)(char*, unsigned int);              // nvmlSystemGet*Version
using SystemIntFn = Return (*)(int*);                                // ..CudaDriverVersion_v2
using DeviceGetCountFn = Return (*)(unsigned int*);                  // nvmlDeviceGetCount_v2
using DeviceGetHandleByIndexFn = Return (*)(unsigned int, Device*);  // ..ByIndex_v2
using DeviceStringFn = Return (*)(Device, char*, unsigned int);
using DeviceUintFn = Return (*)(Device, unsigned int*);
using DeviceIntFn = Return (*)(Device, int*);
using DeviceUllFn = Return (*)(Device, unsigned long long*);
using DeviceUintPairFn = Return (*)(Device, unsigned int*, unsigned int*);
using DevicePciInfoFn = Return (*)(Device, PciInfo*);          // nvmlDeviceGetPciInfo_v3
using DeviceMemoryFn = Return (*)(Device, MemoryV2*);          // nvmlDeviceGetMemoryInfo_v2
using DeviceUtilizationFn = Return (*)(Device, Utilization*);  // nvmlDeviceGetUtilizationRates
using DeviceTemperatureFn = Return (*)(Device, int, unsigned int*);
using DeviceClockFn = Return (*)(Device, int, unsigned int*);
using DeviceEccCountFn = Return (*)(Device, int, int, unsigned long long*);
using DeviceRetiredPagesFn = Return (*)(Device, int, unsigned int*, unsigned long long*);
using DeviceRemappedRowsFn = Return (*)(Device, unsigned int*, unsigned int*, unsigned int*,
                                        unsigned int*);
using DeviceProcessesFn = Return (*)(Device, unsigned int*, ProcessInfo*);  // .._v3
using DeviceCpuAffinityFn = Return (*)(Device, unsigned int, unsigned long*);
// Multi-GPU servers: NVLink per link, pairs of GPUs, field values, fabric registration.
using DeviceLinkIntFn = Return (*)(Device, unsigned int,
                                   int*);  // ..NvLinkState, ..RemoteDeviceType
using DeviceLinkUintFn = Return (*)(Device, unsigned int, unsigned int*);  // ..NvLinkVersion
using DeviceLinkPciFn = Return (*)(Device, unsigned int, PciInfo*);  // ..NvLinkRemotePciInfo_v2
using DeviceLinkCounterFn = Return (*)(Device, unsigned int, int, unsigned long long*);
using DeviceFieldValuesFn = Return (*)(Device, int, FieldValue*);
using DevicePairTopologyFn = Return (*)(Device, Device, int*);        // ..TopologyCommonAncestor
using DevicePairP2pFn = Return (*)(Device, Device, int, int*);        // nvmlDeviceGetP2PStatus
using DeviceFabricInfoFn = Return (*)(Device, GpuFabricInfoV3*);      // ..GetGpuFabricInfoV
using DeviceMigHandleFn = Return (*)(Device, unsigned int, Device*);  // ..MigDeviceHandleByIndex
using DeviceViolationFn = Return (*)(Device, int, ViolationTime*);    // ..GetViolationStatus
}

}  // namespace gpucheck::nvml

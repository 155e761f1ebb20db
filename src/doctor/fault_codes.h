// Every fault code doctor gives, with the check that gives it, the repair action it calls for and
// its meaning: one table, mirrored by the table in docs/CHECKS.md (a unit test keeps them equal).
// The recovery action in NVML's words is derived from the repair action, with the few codes
// where that is not enough overridden below the table (docs/FLEET.md explains both).
// Codes are stable: a code keeps its meaning for good and is never given to another fault.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string_view>

namespace gpucheck::doctor {

// What a remediation system does with a finding, modelled on DCGM's and NVSentinel's actions;
// ordered from nothing to the vendor.
enum class Action {
  kNone,                   // PASS, INFO, SKIP: nothing to do
  kFixConfig,              // change a setting, a variable, a permission or a service
  kUpdateDriverOrLibrary,  // install, update or reinstall a driver or a library
  kResetGpu,               // reset the GPU (nvidia-smi -r) with nothing running on it
  kReboot,                 // reboot the node
  kDrainAndDiagnose,       // drain the node and run field diagnostics (dcgmi diag -r 3)
  kReplaceHardware,        // reseat or replace a GPU, bridge, board or cable
  kContactVendor,          // the fault is the vendor's to diagnose
};

// "none", "fix_config", "update_driver_or_library", "reset_gpu", "reboot",
// "drain_and_diagnose", "replace_hardware", "contact_vendor".
std::string_view to_string(Action a);
std::optional<Action> action_from_string(std::string_view s);

// NVML's nvmlGpuRecoveryAction_t, the words a fleet controller (NVSentinel, a drain script)
// already acts on; a finding names one beside its Action.
enum class RecoveryAction {
  kNone,           // NONE: nothing to do at the GPU level
  kGpuReset,       // GPU_RESET: stop the GPU's processes and reset it
  kNodeReboot,     // NODE_REBOOT: reboot the node
  kDrainP2p,       // DRAIN_P2P: stop peer-to-peer (NVLink) work on the node
  kDrainAndReset,  // DRAIN_AND_RESET: drain the GPU's work, peer traffic included, then reset
};

// "NONE", "GPU_RESET", "NODE_REBOOT", "DRAIN_P2P", "DRAIN_AND_RESET".
std::string_view to_string(RecoveryAction r);
std::optional<RecoveryAction> recovery_action_from_string(std::string_view s);

// What an Action means for the GPU. Settings, drivers and libraries: no GPU-level recovery
// helps. Hardware faults and diagnostics: keep work off the GPU and reset it.
constexpr RecoveryAction recovery_for(Action a) {
  switch (a) {
    case Action::kResetGpu:
      return RecoveryAction::kGpuReset;
    case Action::kReboot:
      return RecoveryAction::kNodeReboot;
    case Action::kDrainAndDiagnose:
    case Action::kReplaceHardware:
    case Action::kContactVendor:
      return RecoveryAction::kDrainAndReset;
    case Action::kNone:
    case Action::kFixConfig:
    case Action::kUpdateDriverOrLibrary:
      break;
  }
  return RecoveryAction::kNone;
}

struct FaultCode {
  std::string_view code;   // GC-<TOPIC>-<WHAT>
  std::string_view check;  // the check id that gives it ("doctor": doctor itself)
  Action action;
  std::string_view meaning;
};

// A check's own code (PASS, INFO and SKIP; action none) is GC- and its id upper-cased with '-'
// for '_'. Grouped by check, in the registry's order.
inline constexpr FaultCode kFaultCodes[] = {
    // clang-format off
    {"GC-DOCTOR-UNCODED", "doctor", Action::kDrainAndDiagnose, "a WARN or FAIL of a check that gives no code of its own yet: read its finding"},
    {"GC-DOCTOR-UNACKNOWLEDGED", "doctor", Action::kDrainAndDiagnose, "an earlier run's event in the state file is not acknowledged yet (doctor --ack CHECK once handled)"},

    {"GC-OPENCL-LOADER", "opencl_loader", Action::kNone, "which OpenCL ICD loader loads"},
    {"GC-OPENCL-LOADER-MISSING", "opencl_loader", Action::kUpdateDriverOrLibrary, "OpenCL drivers are installed but no ICD loader (libOpenCL.so.1)"},
    {"GC-OPENCL-LOADER-COPIES", "opencl_loader_copies", Action::kNone, "other libOpenCL.so copies"},
    {"GC-OPENCL-LOADER-SHADOWED", "opencl_loader_copies", Action::kFixConfig, "another libOpenCL.so on the library path can be loaded instead of the system's loader"},
    {"GC-OPENCL-VENDORS-DIR", "opencl_vendors_dir", Action::kNone, "the vendors directory of .icd files"},
    {"GC-OPENCL-VENDORS-MISSING", "opencl_vendors_dir", Action::kFixConfig, "the vendors directory (or the one a variable names) does not exist"},
    {"GC-OPENCL-VENDORS-EMPTY", "opencl_vendors_dir", Action::kUpdateDriverOrLibrary, "the vendors directory holds no .icd file"},
    {"GC-OPENCL-ICD-LOADS", "opencl_icd_loads", Action::kNone, "every .icd file's library loads"},
    {"GC-OPENCL-ICD-BROKEN", "opencl_icd_loads", Action::kUpdateDriverOrLibrary, "an .icd file names a library that does not load"},
    {"GC-OPENCL-ICD-NOT-ICD", "opencl_icd_loads", Action::kFixConfig, "an .icd file names a library that exports no ICD entry point"},
    {"GC-OPENCL-VENDOR-REGISTRATION", "opencl_vendor_registration", Action::kNone, "installed vendor OpenCL libraries are registered"},
    {"GC-OPENCL-UNREGISTERED", "opencl_vendor_registration", Action::kFixConfig, "a vendor OpenCL library is registered by nothing (or only by a variable the loader ignores)"},
    {"GC-OPENCL-ENV-REGISTERED", "opencl_vendor_registration", Action::kFixConfig, "a vendor OpenCL library is registered only by an environment variable"},
    {"GC-OPENCL-ENUMERATION", "opencl_enumeration", Action::kNone, "platform enumeration"},
    {"GC-OPENCL-ENUM-FAILED", "opencl_enumeration", Action::kUpdateDriverOrLibrary, "platform enumeration fails or crashes (an ICD breaks it)"},
    {"GC-OPENCL-NO-PLATFORM", "opencl_enumeration", Action::kFixConfig, "the loader found no platform: no ICD is registered or none loads"},
    {"GC-OPENCL-DRIVER-NO-HW", "opencl_enumeration", Action::kUpdateDriverOrLibrary, "ICD libraries load but report no platform: the drivers found no hardware"},
    {"GC-OPENCL-PLATFORM-DEVICES", "opencl_platform_devices", Action::kNone, "every platform has devices"},
    {"GC-OPENCL-EMPTY-PLATFORM", "opencl_platform_devices", Action::kUpdateDriverOrLibrary, "an OpenCL platform has no device"},
    {"GC-OPENCL-GPU-DEVICES", "opencl_gpu_devices", Action::kNone, "OpenCL reaches a GPU"},
    {"GC-OPENCL-NO-GPU", "opencl_gpu_devices", Action::kUpdateDriverOrLibrary, "OpenCL reaches only CPU implementations on a system set up for GPUs"},
    {"GC-OPENCL-DUPLICATE-DEVICES", "opencl_duplicate_devices", Action::kNone, "no device or ICD listed twice"},
    {"GC-OPENCL-DUPLICATE", "opencl_duplicate_devices", Action::kFixConfig, "an OpenCL device or ICD is listed twice"},
    {"GC-OPENCL-PLATFORM-FAMILY", "opencl_platform_family", Action::kNone, "the family of each platform"},
    {"GC-OPENCL-OBSOLETE-DRIVER", "opencl_platform_family", Action::kUpdateDriverOrLibrary, "an obsolete OpenCL implementation (Mesa Clover, Beignet)"},

    {"GC-CPU-ISA", "cpu_isa", Action::kNone, "the CPU's vector extensions"},
    {"GC-CPU-ISA-MISSING", "cpu_isa", Action::kFixConfig, "the CPU (or a virtual machine's CPU model) lacks AVX, AVX2, FMA or NEON"},
    {"GC-CPU-BLAS", "cpu_blas", Action::kNone, "which BLAS serves CPU GEMM"},
    {"GC-CPU-BLAS-MISSING", "cpu_blas", Action::kUpdateDriverOrLibrary, "no BLAS library loads"},
    {"GC-CPU-BLAS-REFERENCE", "cpu_blas", Action::kUpdateDriverOrLibrary, "the reference (netlib) BLAS serves GEMM"},
    {"GC-CPU-BLAS-CORETYPE", "cpu_blas", Action::kFixConfig, "OPENBLAS_CORETYPE holds OpenBLAS on an older CPU's kernels"},
    {"GC-CPU-BLAS-OLD-BUILD", "cpu_blas", Action::kUpdateDriverOrLibrary, "OpenBLAS is built for, or chooses, kernels below what the CPU runs"},
    {"GC-CPU-BLAS-ALTERNATIVE", "cpu_blas", Action::kFixConfig, "libblas.so.3 (the alternatives link) is a slow BLAS"},

    {"GC-CONTAINER-GPU-DEVICES", "container_gpu_devices", Action::kNone, "a container's GPU device nodes and driver libraries"},
    {"GC-CONTAINER-NO-GPU", "container_gpu_devices", Action::kFixConfig, "a container started without the GPU device nodes or driver libraries"},
    {"GC-WSL-GPU", "wsl_gpu", Action::kNone, "WSL2 GPU passthrough"},
    {"GC-WSL-NO-DXG", "wsl_gpu", Action::kUpdateDriverOrLibrary, "WSL2 without /dev/dxg (old WSL or Windows driver)"},
    {"GC-WSL-NO-LIBS", "wsl_gpu", Action::kFixConfig, "the Windows driver libraries are not mounted or not on the linker's path"},
    {"GC-WSL-LINUX-DRIVER", "wsl_gpu", Action::kFixConfig, "a Linux NVIDIA driver library installed inside WSL2 hides the Windows one"},
    {"GC-GPU-NODE-ACCESS", "gpu_node_access", Action::kNone, "this user may open /dev/kfd and /dev/dri"},
    {"GC-GPU-NODE-DENIED", "gpu_node_access", Action::kFixConfig, "this user may not open /dev/kfd or /dev/dri/renderD* (render/video groups)"},
    {"GC-AMD-GFX-TARGET", "amd_gfx_target", Action::kNone, "AMD GPUs' gfx targets and their ROCm runtimes"},
    {"GC-AMD-GFX-UNSUPPORTED", "amd_gfx_target", Action::kFixConfig, "an AMD GPU's gfx target is missing from a ROCm runtime's kernels"},

    {"GC-ENV-VISIBLE-DEVICES", "env_visible_devices", Action::kNone, "the *_VISIBLE_DEVICES variables"},
    {"GC-ENV-DEVICES-HIDDEN", "env_visible_devices", Action::kFixConfig, "a *_VISIBLE_DEVICES variable hides every GPU or stops at an invalid entry"},
    {"GC-ENV-CUDA-BEHAVIOUR", "env_cuda_behaviour", Action::kNone, "variables that change CUDA"},
    {"GC-ENV-CUDA-SLOW", "env_cuda_behaviour", Action::kFixConfig, "a variable slows CUDA down (CUDA_LAUNCH_BLOCKING=1, ...)"},
    {"GC-ENV-LD-PRELOAD", "env_ld_preload", Action::kNone, "LD_PRELOAD"},
    {"GC-ENV-PRELOAD-GPU-LIB", "env_ld_preload", Action::kFixConfig, "LD_PRELOAD forces a GPU library into every process"},
    {"GC-ENV-LD-LIBRARY-PATH", "env_ld_library_path", Action::kNone, "LD_LIBRARY_PATH"},
    {"GC-ENV-STUB-FIRST", "env_ld_library_path", Action::kFixConfig, "LD_LIBRARY_PATH puts the CUDA toolkit's stub libcuda.so first"},
    {"GC-ENV-OPENCL-LOADER", "env_opencl_loader", Action::kNone, "the OpenCL loader's variables"},
    {"GC-ENV-OPENCL-IGNORED", "env_opencl_loader", Action::kFixConfig, "an OpenCL loader variable is set but the loaded loader ignores or misreads it"},
    {"GC-ENV-CPU-THREADS", "env_cpu_threads", Action::kNone, "the CPU thread-count variables"},
    {"GC-ENV-ONE-THREAD", "env_cpu_threads", Action::kFixConfig, "OMP_NUM_THREADS or a BLAS thread variable pins CPU code to one thread"},

    {"GC-FRAMEWORK-PACKAGES", "framework_packages", Action::kNone, "the frameworks' wheels and their CUDA"},
    {"GC-FRAMEWORK-CUDA-MIXED", "framework_packages", Action::kUpdateDriverOrLibrary, "wheels built for different CUDA majors in one site-packages directory"},
    {"GC-FRAMEWORK-TORCH-LIBS-MISSING", "framework_packages", Action::kUpdateDriverOrLibrary, "a CUDA build of torch without the cuDNN or cuBLAS it imports"},

    {"GC-NOUVEAU-MODULE", "nouveau_module", Action::kNone, "nouveau and the NVIDIA GPUs"},
    {"GC-NOUVEAU-LOADED", "nouveau_module", Action::kFixConfig, "nouveau is loaded while an NVIDIA GPU is on the bus (blacklist it, rebuild the initramfs, reboot)"},
    {"GC-NVIDIA-KERNEL-MODULE", "nvidia_kernel_module", Action::kNone, "the nvidia kernel module"},
    {"GC-DRIVER-MODULE-MISSING", "nvidia_kernel_module", Action::kUpdateDriverOrLibrary, "the nvidia kernel module is not loaded for the NVIDIA GPUs on the bus"},
    {"GC-DRIVER-BLACKWELL-PROPRIETARY", "nvidia_kernel_module", Action::kUpdateDriverOrLibrary, "a Blackwell GPU under the proprietary kernel module, which does not drive it"},
    {"GC-PCI-BAR1-SMALL", "nvidia_kernel_module", Action::kFixConfig, "a GPU's BAR1 is left at 256 MiB or less while the card offers more (Resizable BAR off)"},
    {"GC-NVIDIA-DEVICE-NODES", "nvidia_device_nodes", Action::kNone, "the /dev/nvidia* nodes"},
    {"GC-DRIVER-DEVICE-NODES", "nvidia_device_nodes", Action::kFixConfig, "a /dev/nvidia* node is missing or this user may not open it"},
    {"GC-DEVICE-CGROUP-DENIED", "nvidia_device_nodes", Action::kFixConfig, "the kernel refuses to open a /dev/nvidia* node its mode allows (a container's device cgroup)"},
    {"GC-DEV-CHAR-LINKS", "nvidia_device_nodes", Action::kFixConfig, "the container toolkit's /dev/char links to the NVIDIA nodes are missing on the host"},
    {"GC-CUDA-DRIVER-LIBRARY", "cuda_driver_library", Action::kNone, "libcuda.so.1"},
    {"GC-DRIVER-LIBCUDA-MISSING", "cuda_driver_library", Action::kUpdateDriverOrLibrary, "libcuda.so.1 (the driver's user-space library) does not load"},
    {"GC-CUDA-DRIVER-STUB", "cuda_driver_stub", Action::kNone, "the loaded libcuda.so.1 is the driver's"},
    {"GC-DRIVER-STUB-LOADED", "cuda_driver_stub", Action::kFixConfig, "the loaded libcuda.so.1 is the toolkit's stub"},
    {"GC-NVIDIA-DRIVER-VERSIONS", "nvidia_driver_versions", Action::kNone, "kernel module and libcuda versions"},
    {"GC-DRIVER-VERSION-MISMATCH", "nvidia_driver_versions", Action::kReboot, "the kernel module's version differs from libcuda's (a driver update without a reboot)"},
    {"GC-CUDA-DRIVER-RUNTIME", "cuda_driver_runtime", Action::kNone, "the driver's CUDA version"},
    {"GC-DRIVER-TOO-OLD", "cuda_driver_runtime", Action::kUpdateDriverOrLibrary, "the driver is too old for gpucheck's CUDA runtime or the toolkits"},
    {"GC-DRIVER-MINOR-COMPAT", "cuda_driver_runtime", Action::kUpdateDriverOrLibrary, "the driver is older than the toolkit and runs it through minor-version compatibility"},
    {"GC-CUDA-DEVICES", "cuda_devices", Action::kNone, "cuInit and CUDA's devices"},
    {"GC-CUDA-NO-DEVICE", "cuda_devices", Action::kFixConfig, "CUDA finds no device (hidden by CUDA_VISIBLE_DEVICES, a container without GPUs, no driver loaded)"},
    {"GC-CUDA-GPU-MISSING", "cuda_devices", Action::kDrainAndDiagnose, "a GPU on the PCI bus is missing from CUDA's devices (fallen off the bus)"},
    {"GC-CUDA-INIT-FAILED", "cuda_devices", Action::kReboot, "cuInit fails although the driver is present (a driver in a bad state)"},
    {"GC-CUDA-FABRIC-NOT-READY", "cuda_devices", Action::kFixConfig, "cuInit answers CUDA_ERROR_SYSTEM_NOT_READY: Fabric Manager is not running"},
    {"GC-NVSWITCH-FABRIC-MANAGER", "nvswitch_fabric_manager", Action::kNone, "Fabric Manager on NVSwitch systems"},
    {"GC-FABRIC-MANAGER-DOWN", "nvswitch_fabric_manager", Action::kFixConfig, "NVSwitches are on the bus but nv-fabricmanager does not run"},
    {"GC-IMEX-CHANNEL-MISSING", "nvswitch_fabric_manager", Action::kFixConfig, "multi-node NVLink GPUs without an IMEX channel device"},
    {"GC-IMEX-DOWN", "nvswitch_fabric_manager", Action::kFixConfig, "multi-node NVLink GPUs without the nvidia-imex service"},

    {"GC-NVIDIA-MIG", "nvidia_mig", Action::kNone, "MIG mode and instances"},
    {"GC-MIG-PENDING", "nvidia_mig", Action::kResetGpu, "a MIG mode change waits for a GPU reset"},
    {"GC-MIG-NO-INSTANCE", "nvidia_mig", Action::kFixConfig, "MIG is on but no GPU instance exists"},
    {"GC-NVIDIA-COMPUTE-MODE", "nvidia_compute_mode", Action::kNone, "the compute mode"},
    {"GC-COMPUTE-PROHIBITED", "nvidia_compute_mode", Action::kFixConfig, "compute mode PROHIBITED: no process may use the GPU"},
    {"GC-COMPUTE-EXCLUSIVE", "nvidia_compute_mode", Action::kFixConfig, "compute mode EXCLUSIVE_PROCESS: one process at a time"},
    {"GC-NVIDIA-ECC", "nvidia_ecc", Action::kNone, "ECC errors, row remaps and retired pages"},
    {"GC-ECC-UNCORRECTABLE", "nvidia_ecc", Action::kResetGpu, "uncorrectable ECC errors since the driver loaded"},
    {"GC-ECC-REMAP-PENDING", "nvidia_ecc", Action::kResetGpu, "a row remap or page retirement waits for a GPU reset"},
    {"GC-ECC-REMAP-FAILED", "nvidia_ecc", Action::kReplaceHardware, "row remapping failed: no spare rows left"},
    {"GC-NVIDIA-PERSISTENCE-MODE", "nvidia_persistence_mode", Action::kNone, "persistence mode"},
    {"GC-PERSISTENCE-OFF", "nvidia_persistence_mode", Action::kFixConfig, "persistence mode is off on CI (nvidia-persistenced)"},
    {"GC-PCIE-LINK-UNDER-LOAD", "pcie_link_under_load", Action::kNone, "PCIe generation and width under load"},
    {"GC-PCIE-DEGRADED", "pcie_link_under_load", Action::kDrainAndDiagnose, "the PCIe link runs below its maximum generation or width under load"},
    {"GC-CLOCKS-UNDER-LOAD", "clocks_under_load", Action::kNone, "clock events under load"},
    {"GC-CLOCKS-THROTTLED", "clocks_under_load", Action::kDrainAndDiagnose, "thermal, hardware-slowdown or power-brake clock events under load"},
    {"GC-NVIDIA-XID", "nvidia_xid", Action::kNone, "Xid errors in the kernel log"},
    {"GC-XID-HARDWARE", "nvidia_xid", Action::kDrainAndDiagnose, "Xid errors that mean a hardware, memory, NVLink or bus fault"},
    {"GC-XID-DRIVER", "nvidia_xid", Action::kUpdateDriverOrLibrary, "Xid errors of the driver (neither a program's fault nor the hardware's)"},

    {"GC-NVLINK-LINKS", "nvlink_links", Action::kNone, "NVLink states, versions and speeds"},
    {"GC-NVLINK-DOWN", "nvlink_links", Action::kReplaceHardware, "an NVLink is inactive while others are up"},
    {"GC-NVLINK-DEGRADED", "nvlink_links", Action::kResetGpu, "an NVLink trained at a lower version or speed than the others"},
    {"GC-NVLINK-ASYMMETRIC", "nvlink_links", Action::kReplaceHardware, "two GPUs see different numbers of NVLinks between them"},
    {"GC-NVLINK-FABRIC", "nvlink_links", Action::kFixConfig, "a GPU's NVLink fabric registration did not complete, or no link is up beside NVSwitches (Fabric Manager)"},
    {"GC-NVLINK-ERRORS", "nvlink_errors", Action::kNone, "NVLink error counters around the load run"},
    {"GC-NVLINK-REPLAY", "nvlink_errors", Action::kDrainAndDiagnose, "NVLink replay errors grew under load (DCGM: failure)"},
    {"GC-NVLINK-RECOVERY", "nvlink_errors", Action::kDrainAndDiagnose, "NVLink recovery errors grew under load: a link went down and retrained (DCGM: failure)"},
    {"GC-NVLINK-CRC", "nvlink_errors", Action::kDrainAndDiagnose, "NVLink CRC (flit or data) errors grew above the healthy band (WARN) or at 100/s and more (FAIL, DCGM's limit)"},
    {"GC-NVLINK-ECC-DATA", "nvlink_errors", Action::kDrainAndDiagnose, "corrected NVLink data ECC errors grew above the healthy band (WARN) or at 100/s and more (FAIL)"},
    {"GC-NVLINK-LOST", "nvlink_errors", Action::kResetGpu, "an NVLink active at the probe was gone after the load"},
    {"GC-P2P-ACCESS", "p2p_access", Action::kNone, "peer access and peer copies"},
    {"GC-P2P-DENIED", "p2p_access", Action::kFixConfig, "peer access refused or disabled (IOMMU, ACS, a virtual machine, a driver registry key)"},
    {"GC-P2P-SLOW", "p2p_access", Action::kDrainAndDiagnose, "a peer copy under load reached less than half of what its link allows"},
    {"GC-P2P-COPY-FAILED", "p2p_access", Action::kDrainAndDiagnose, "a peer copy between NVLink-joined GPUs failed under load"},
    {"GC-GPU-SIBLINGS", "gpu_siblings", Action::kNone, "GPUs against their same-model siblings"},
    {"GC-GPU-SLOW-SIBLING", "gpu_siblings", Action::kDrainAndDiagnose, "a GPU is 5 % (WARN) or 10 % (FAIL) below its same-model siblings under load"},
    {"GC-NCCL-ENVIRONMENT", "nccl_environment", Action::kNone, "NCCL's settings and the GPUs' PCIe paths"},
    {"GC-NCCL-TRANSPORT-DISABLED", "nccl_environment", Action::kFixConfig, "NCCL_P2P_DISABLE or NCCL_SHM_DISABLE set for good"},
    {"GC-NCCL-NVLS-UNSUPPORTED", "nccl_environment", Action::kFixConfig, "NCCL_NVLS_ENABLE=1 where no NVSwitch is"},
    {"GC-NCCL-IFNAME-NO-MATCH", "nccl_environment", Action::kFixConfig, "NCCL_SOCKET_IFNAME or NCCL_IB_HCA selects nothing here"},
    {"GC-PCI-ACS-REDIRECT", "nccl_environment", Action::kFixConfig, "ACS redirects peer traffic on the bridges above the GPUs"},
    {"GC-IOMMU-TRANSLATED", "nccl_environment", Action::kFixConfig, "the IOMMU translates the GPUs' DMA"},

    {"GC-INFINIBAND-PORTS", "infiniband_ports", Action::kNone, "InfiniBand and RoCE port states and rates"},
    {"GC-IB-PORT-DOWN", "infiniband_ports", Action::kReplaceHardware, "an InfiniBand or RoCE port is down or polling (no link: cable, transceiver or the far side)"},
    {"GC-IB-PORT-NO-SM", "infiniband_ports", Action::kFixConfig, "an InfiniBand port has a physical link but stays INIT or ARMED: no subnet manager brought it up"},
    {"GC-IB-NO-ACTIVE-PORT", "infiniband_ports", Action::kReplaceHardware, "no port of any RDMA adapter is active: the node cannot reach the fabric"},
    {"GC-IB-RATE-LOW", "infiniband_ports", Action::kReplaceHardware, "a port's rate is below the node's other ports of the same adapter model, or below the profile's"},
    {"GC-INFINIBAND-ERRORS", "infiniband_errors", Action::kNone, "InfiniBand and RoCE port error counters around the run"},
    {"GC-IB-LINK-FLAP", "infiniband_errors", Action::kReplaceHardware, "a port's link went down and retrained (link_downed grew)"},
    {"GC-IB-LINK-ERRORS", "infiniband_errors", Action::kReplaceHardware, "physical-layer error counters grew (symbol errors, link recoveries, integrity, receive errors, buffer overruns)"},
    {"GC-GPUDIRECT-RDMA", "gpudirect_rdma", Action::kNone, "GPUDirect RDMA between NVIDIA GPUs and RDMA adapters"},
    {"GC-GPUDIRECT-RDMA-OFF", "gpudirect_rdma", Action::kFixConfig, "NVIDIA GPUs and an RDMA adapter without nvidia_peermem or dma-buf: GPUDirect RDMA is off and NCCL stages through host memory"},
    {"GC-INFINIBAND-GPU-AFFINITY", "infiniband_gpu_affinity", Action::kNone, "the RDMA adapter nearest each GPU on the PCI tree"},
    {"GC-IB-HCA-REMOTE", "infiniband_gpu_affinity", Action::kFixConfig, "a GPU's nearest RDMA adapter is across the CPU interconnect (another socket)"},

    {"GC-CUBLAS-LIBRARY", "cublas_library", Action::kNone, "cuBLAS"},
    {"GC-CUBLAS-MISSING", "cublas_library", Action::kUpdateDriverOrLibrary, "cuBLAS does not load"},
    {"GC-CUBLAS-VERSIONS", "cublas_library", Action::kFixConfig, "several cuBLAS versions on the linker's path"},
    {"GC-CUBLAS-HEADER-MISMATCH", "cublas_library", Action::kUpdateDriverOrLibrary, "cuBLAS's header and library versions differ"},
    {"GC-CUBLAS-SHADOWED", "cublas_library", Action::kFixConfig, "LD_LIBRARY_PATH puts another cuBLAS, cuSPARSE or nvJitLink before a Python environment's wheel copy"},
    {"GC-CUDNN-LIBRARY", "cudnn_library", Action::kNone, "cuDNN"},
    {"GC-CUDNN-MISSING", "cudnn_library", Action::kUpdateDriverOrLibrary, "cuDNN does not load"},
    {"GC-CUDNN-VERSIONS", "cudnn_library", Action::kFixConfig, "several cuDNN versions on the linker's path"},
    {"GC-CUDNN-HEADER-MISMATCH", "cudnn_library", Action::kUpdateDriverOrLibrary, "cuDNN's header and library versions differ"},
    {"GC-CUDNN-SHADOWED", "cudnn_library", Action::kFixConfig, "LD_LIBRARY_PATH puts another cuDNN before a Python environment's wheel copy"},
    {"GC-FRAMEWORK-CUDA-DRIVER", "framework_cuda_driver", Action::kNone, "the driver against the frameworks' CUDA builds"},
    {"GC-DRIVER-TOO-OLD-FOR-FRAMEWORK", "framework_cuda_driver", Action::kUpdateDriverOrLibrary, "the driver is too old for the CUDA build of torch, JAX or CuPy"},
    {"GC-LLM-RUNTIMES", "llm_runtimes", Action::kNone, "local LLM runtimes and their GPU backends"},
    {"GC-LLM-BACKEND-UNLOADABLE", "llm_runtimes", Action::kUpdateDriverOrLibrary, "an LLM runtime has no GPU backend that can load for a GPU here"},
    {"GC-LLM-GPU-HIDDEN", "llm_runtimes", Action::kFixConfig, "a setting hides the GPUs from an LLM runtime"},
    {"GC-PYTORCH-CUDA-USABLE", "pytorch_cuda_usable", Action::kNone, "whether PyTorch can use CUDA here"},
    {"GC-PYTORCH-CUDA-UNUSABLE", "pytorch_cuda_usable", Action::kUpdateDriverOrLibrary, "PyTorch cannot use CUDA here: a CPU-only build on an NVIDIA machine, its CUDA libraries missing, no driver, or a driver too old or unusable"},
    {"GC-FRAMEWORK-TORCH", "framework_torch", Action::kNone, "PyTorch in each Python environment against this machine's GPUs"},
    {"GC-TORCH-CANNOT-USE-GPU", "framework_torch", Action::kUpdateDriverOrLibrary, "the installed PyTorch cannot use this machine's GPU (a CPU-only build, no kernels for its architecture, its CUDA wheels missing or mismatched, a driver too old, or another torch shadowing it)"},
    {"GC-FRAMEWORK-TENSORFLOW", "framework_tensorflow", Action::kNone, "TensorFlow in each Python environment against this machine's GPUs"},
    {"GC-TENSORFLOW-CANNOT-USE-GPU", "framework_tensorflow", Action::kUpdateDriverOrLibrary, "the installed TensorFlow cannot use this machine's GPU (a CPU build, a CUDA or cuDNN library it opens not found, a driver too old, no kernels for the GPU)"},
    {"GC-FRAMEWORK-JAX", "framework_jax", Action::kNone, "JAX, jaxlib and its CUDA plugin in each Python environment"},
    {"GC-JAX-OUT-OF-STEP", "framework_jax", Action::kUpdateDriverOrLibrary, "jax, jaxlib and the CUDA plugin are out of step, or the plugin cannot use this driver"},
    {"GC-FRAMEWORK-KERAS", "framework_keras", Action::kNone, "the backend Keras will use and whether it reaches the GPU"},
    {"GC-KERAS-BACKEND", "framework_keras", Action::kFixConfig, "Keras's backend is missing, unknown or cannot use the GPU"},
    {"GC-FRAMEWORK-CUPY", "framework_cupy", Action::kNone, "CuPy's packages against the driver"},
    {"GC-CUPY-CANNOT-USE-GPU", "framework_cupy", Action::kUpdateDriverOrLibrary, "two CuPy packages at once, a ROCm build, or a CuPy built for a CUDA the driver cannot run"},
    {"GC-FRAMEWORK-THEANO", "framework_theano", Action::kNone, "Theano's or PyTensor's device settings"},
    {"GC-THEANO-CONFIG", "framework_theano", Action::kFixConfig, "Theano asks for a GPU it cannot use (no pygpu, the old backend, floatX not float32)"},
    {"GC-FRAMEWORK-MEMORY", "framework_memory", Action::kNone, "the frameworks' GPU memory settings"},
    {"GC-FRAMEWORK-PREALLOCATION", "framework_memory", Action::kFixConfig, "a memory setting is invalid, or two frameworks in one process would both preallocate most of the GPU"},
    {"GC-FRAMEWORK-QUERY", "framework_query", Action::kNone, "each framework's own answer (import, GPU devices, a small matmul) against the reading of its files"},
    {"GC-FRAMEWORK-DISAGREES", "framework_query", Action::kUpdateDriverOrLibrary, "a framework's own answer differs from the verdict read from its files (GPU use, or the version import finds)"},
    {"GC-FRAMEWORK-WRONG-RESULT", "framework_query", Action::kDrainAndDiagnose, "a framework's small matmul returned wrong numbers"},
    {"GC-FRAMEWORK-QUERY-TIMEOUT", "framework_query", Action::kUpdateDriverOrLibrary, "a framework's device query overran doctor's budget and was killed (an import or CUDA start that hangs, or a JIT compile slower than the budget)"},
    {"GC-FRAMEWORK-QUERY-CRASHED", "framework_query", Action::kUpdateDriverOrLibrary, "a framework's device query crashed or answered nothing readable (an import that kills the interpreter: mismatched builds, a broken library)"},
    {"GC-FRAMEWORK-UNSAFE-ENV", "framework_query", Action::kFixConfig, "run as root, doctor did not start an interpreter whose prefix, standard library or site-packages a group or every user can write"},
    {"GC-VULKAN-LOADER", "vulkan_loader", Action::kNone, "the Vulkan loader"},
    {"GC-VULKAN-NO-LOADER", "vulkan_loader", Action::kUpdateDriverOrLibrary, "Vulkan driver manifests are installed but no loader (libvulkan.so.1)"},
    {"GC-VULKAN-ICD-LOADS", "vulkan_icd_loads", Action::kNone, "every Vulkan driver manifest's library loads"},
    {"GC-VULKAN-ICD-BROKEN", "vulkan_icd_loads", Action::kUpdateDriverOrLibrary, "a Vulkan driver manifest names a library that does not load"},
    {"GC-VULKAN-ICD-INVALID", "vulkan_icd_loads", Action::kFixConfig, "a Vulkan driver manifest is unusable, or its library exports no driver entry point"},
    {"GC-VULKAN-ICD-INIT", "vulkan_icd_init", Action::kNone, "every loadable Vulkan driver initialises"},
    {"GC-VULKAN-ICD-INIT-FAILED", "vulkan_icd_init", Action::kFixConfig, "a Vulkan driver loads but refuses to initialise (for NVIDIA in a container: libglvnd, /dev/nvidia-modeset, graphics capability)"},
    {"GC-VULKAN-GPU-DEVICES", "vulkan_gpu_devices", Action::kNone, "Vulkan reaches the GPUs on the PCI bus"},
    {"GC-VULKAN-ONLY-CPU", "vulkan_gpu_devices", Action::kUpdateDriverOrLibrary, "Vulkan reaches only a CPU implementation (lavapipe) while a GPU is on the bus"},
    {"GC-VULKAN-RENDER-NODE-ACCESS", "vulkan_render_node_access", Action::kNone, "the Mesa Vulkan drivers can open the GPU's render node"},
    {"GC-VULKAN-RENDER-NODE-DENIED", "vulkan_render_node_access", Action::kFixConfig, "/dev/dri/renderD* cannot be opened by this user (group membership)"},
    {"GC-VULKAN-ENV-DRIVER-FILES", "vulkan_env_driver_files", Action::kNone, "VK_DRIVER_FILES / VK_ICD_FILENAMES"},
    {"GC-VULKAN-DRIVER-HIDDEN", "vulkan_env_driver_files", Action::kFixConfig, "VK_DRIVER_FILES or VK_ICD_FILENAMES hides the driver of a GPU on the bus"},
    // clang-format on
};

std::span<const FaultCode> all_fault_codes();
// The recovery action of a code: its override, else recovery_for(its action).
RecoveryAction recovery_action(const FaultCode& f);
const FaultCode* find_fault_code(std::string_view code);
// The check's own code (action none), or nullptr for an unknown check.
const FaultCode* own_code(std::string_view check);

// A code named in a check's source: Code{"GC-NVLINK-REPLAY"} or "GC-NVLINK-REPLAY"_gc. A name
// missing from the table does not compile. Default: the check's own code.
class Code {
 public:
  constexpr Code() = default;
  consteval explicit Code(std::string_view code) : fault_(lookup(code)) {}
  const FaultCode* get() const { return fault_; }

 private:
  static consteval const FaultCode* lookup(std::string_view code) {
    for (const auto& f : kFaultCodes)
      if (f.code == code) return &f;
    throw "fault code missing from kFaultCodes";  // not a constant expression: a compile error
  }
  const FaultCode* fault_ = nullptr;
};

consteval Code operator""_gc(const char* s, std::size_t n) {
  return Code(std::string_view(s, n));
}

// The codes whose Action alone does not say what the GPU needs; the reasons are docs/FLEET.md's.
struct RecoveryOverride {
  Code code;
  RecoveryAction recovery;
};

inline constexpr RecoveryOverride kRecoveryOverrides[] = {
    // An NVLink or peer-path fault: peer traffic over it stops first (NVML asks again after).
    {"GC-NVLINK-DOWN"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-DEGRADED"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-ASYMMETRIC"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-FABRIC"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-REPLAY"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-RECOVERY"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-CRC"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-ECC-DATA"_gc, RecoveryAction::kDrainP2p},
    {"GC-NVLINK-LOST"_gc, RecoveryAction::kDrainP2p},
    {"GC-P2P-SLOW"_gc, RecoveryAction::kDrainP2p},
    {"GC-P2P-COPY-FAILED"_gc, RecoveryAction::kDrainP2p},
    // A GPU off the bus answers no reset through the driver.
    {"GC-CUDA-GPU-MISSING"_gc, RecoveryAction::kNodeReboot},
    // The driver's own fault leaves the GPU's state suspect until a reset, whatever the update.
    {"GC-XID-DRIVER"_gc, RecoveryAction::kGpuReset},
    // A network port, not a GPU: no GPU recovery helps; the Action names the repair.
    {"GC-IB-PORT-DOWN"_gc, RecoveryAction::kNone},
    {"GC-IB-NO-ACTIVE-PORT"_gc, RecoveryAction::kNone},
    {"GC-IB-RATE-LOW"_gc, RecoveryAction::kNone},
    {"GC-IB-LINK-FLAP"_gc, RecoveryAction::kNone},
    {"GC-IB-LINK-ERRORS"_gc, RecoveryAction::kNone},
};

}  // namespace gpucheck::doctor

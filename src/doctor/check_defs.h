// Every doctor check described once: its id, the line --list prints, its healthy status, its
// function, whether `doctor --quick` runs it, and every fault code it may give with the repair
// action and meaning of each. The registry, the --quick list, the code table that every output
// and each `"GC-..."_gc` read, and docs/CHECKS.md's two tables (`gpucheck __checks-table`) all
// come from here.
//
// Why the codes live in their check's entry rather than in a table of codes that names its
// check: a new check is then this one entry besides its function and its doc section, and a code
// can belong to no check but the one it is written under. The table is constexpr (a function
// pointer, not std::function) so the flat code table below is derived at compile time and a code
// a check names that no entry declares still does not compile.
//
// Codes are stable: a code keeps its meaning for good and is never given to another fault. A
// code's recovery_action (NVML's words) follows from its action (recovery_for); the few codes
// whose action alone does not say what the GPU needs name theirs last, for docs/FLEET.md's
// reasons: an NVLink or peer-path fault stops peer traffic over it first (DRAIN_P2P), a GPU off
// the bus answers no reset through the driver (NODE_REBOOT), the driver's own fault leaves the
// GPU suspect until a reset whatever the update (GPU_RESET), and a network port is no GPU's to
// recover (NONE: the action names the repair).
#pragma once

#include "doctor/check.h"
#include "doctor/checks.h"
#include "doctor/fault_codes.h"

#include <array>
#include <cstddef>
#include <string_view>

namespace gpucheck::doctor {

namespace defs {

using A = Action;
using R = RecoveryAction;
using S = CheckStatus;

// Whether `doctor --quick` (a node's health check) runs the check: only checks that read, never
// one that needs the load step; each joins deliberately.
inline constexpr bool kQuick = true;
inline constexpr bool kNotQuick = false;

// Every check, in the order doctor runs and prints them (the PyTorch verdict closes the list).
// A check's first code is its own (GC- and its id upper-cased, '-' for '_'; action none), given
// with PASS, INFO and SKIP; the others are its WARN and FAIL codes, each named in its source.
inline constexpr CheckDef kCheckDefs[] = {
    // clang-format off
    {"opencl_loader", "which OpenCL ICD loader loads (ocl-icd or Khronos), or none", S::kPass, check_opencl_loader, kQuick, {
        {"GC-OPENCL-LOADER", A::kNone, "which OpenCL ICD loader loads"},
        {"GC-OPENCL-LOADER-MISSING", A::kUpdateDriverOrLibrary, "OpenCL drivers are installed but no ICD loader (libOpenCL.so.1)"}}},
    {"opencl_loader_copies", "other libOpenCL.so copies on the library search path", S::kPass, check_opencl_loader_copies, kNotQuick, {
        {"GC-OPENCL-LOADER-COPIES", A::kNone, "other libOpenCL.so copies"},
        {"GC-OPENCL-LOADER-SHADOWED", A::kFixConfig, "another libOpenCL.so on the library path can be loaded instead of the system's loader"}}},
    {"opencl_vendors_dir", "the vendors directory of .icd files exists and holds some", S::kPass, check_opencl_vendors_dir, kQuick, {
        {"GC-OPENCL-VENDORS-DIR", A::kNone, "the vendors directory of .icd files"},
        {"GC-OPENCL-VENDORS-MISSING", A::kFixConfig, "the vendors directory (or the one a variable names) does not exist"},
        {"GC-OPENCL-VENDORS-EMPTY", A::kUpdateDriverOrLibrary, "the vendors directory holds no .icd file"}}},
    {"opencl_icd_loads", "every .icd file's library loads and is an ICD", S::kPass, check_opencl_icd_loads, kQuick, {
        {"GC-OPENCL-ICD-LOADS", A::kNone, "every .icd file's library loads"},
        {"GC-OPENCL-ICD-BROKEN", A::kUpdateDriverOrLibrary, "an .icd file names a library that does not load"},
        {"GC-OPENCL-ICD-NOT-ICD", A::kFixConfig, "an .icd file names a library that exports no ICD entry point"}}},
    {"opencl_vendor_registration", "installed vendor OpenCL libraries have an .icd file (not only OCL_ICD_FILENAMES)", S::kPass, check_opencl_vendor_registration, kNotQuick, {
        {"GC-OPENCL-VENDOR-REGISTRATION", A::kNone, "installed vendor OpenCL libraries are registered"},
        {"GC-OPENCL-UNREGISTERED", A::kFixConfig, "a vendor OpenCL library is registered by nothing (or only by a variable the loader ignores)"},
        {"GC-OPENCL-ENV-REGISTERED", A::kFixConfig, "a vendor OpenCL library is registered only by an environment variable"}}},
    {"opencl_enumeration", "platform enumeration succeeds and finds platforms", S::kPass, check_opencl_enumeration, kQuick, {
        {"GC-OPENCL-ENUMERATION", A::kNone, "platform enumeration"},
        {"GC-OPENCL-ENUM-FAILED", A::kUpdateDriverOrLibrary, "platform enumeration fails or crashes (an ICD breaks it)"},
        {"GC-OPENCL-NO-PLATFORM", A::kFixConfig, "the loader found no platform: no ICD is registered or none loads"},
        {"GC-OPENCL-DRIVER-NO-HW", A::kUpdateDriverOrLibrary, "ICD libraries load but report no platform: the drivers found no hardware"}}},
    {"opencl_platform_devices", "every OpenCL platform has devices", S::kPass, check_opencl_platform_devices, kQuick, {
        {"GC-OPENCL-PLATFORM-DEVICES", A::kNone, "every platform has devices"},
        {"GC-OPENCL-EMPTY-PLATFORM", A::kUpdateDriverOrLibrary, "an OpenCL platform has no device"}}},
    {"opencl_gpu_devices", "OpenCL reaches a GPU, not only CPU implementations", S::kPass, check_opencl_gpu_devices, kNotQuick, {
        {"GC-OPENCL-GPU-DEVICES", A::kNone, "OpenCL reaches a GPU"},
        {"GC-OPENCL-NO-GPU", A::kUpdateDriverOrLibrary, "OpenCL reaches only CPU implementations on a system set up for GPUs"}}},
    {"opencl_duplicate_devices", "no OpenCL device or ICD listed twice", S::kPass, check_opencl_duplicate_devices, kNotQuick, {
        {"GC-OPENCL-DUPLICATE-DEVICES", A::kNone, "no device or ICD listed twice"},
        {"GC-OPENCL-DUPLICATE", A::kFixConfig, "an OpenCL device or ICD is listed twice"}}},
    {"opencl_platform_family", "the family of each platform (NVIDIA, AMD, Mesa Clover/rusticl, pocl, Intel NEO/Beignet)", S::kInfo, check_opencl_platform_family, kNotQuick, {
        {"GC-OPENCL-PLATFORM-FAMILY", A::kNone, "the family of each platform"},
        {"GC-OPENCL-OBSOLETE-DRIVER", A::kUpdateDriverOrLibrary, "an obsolete OpenCL implementation (Mesa Clover, Beignet)"}}},
    {"vulkan_loader", "the Vulkan loader (libvulkan.so.1) loads, above all where drivers are", S::kPass, check_vulkan_loader, kNotQuick, {
        {"GC-VULKAN-LOADER", A::kNone, "the Vulkan loader"},
        {"GC-VULKAN-NO-LOADER", A::kUpdateDriverOrLibrary, "Vulkan driver manifests are installed but no loader (libvulkan.so.1)"}}},
    {"vulkan_icd_loads", "every Vulkan driver manifest parses and its library loads", S::kPass, check_vulkan_icd_loads, kNotQuick, {
        {"GC-VULKAN-ICD-LOADS", A::kNone, "every Vulkan driver manifest's library loads"},
        {"GC-VULKAN-ICD-BROKEN", A::kUpdateDriverOrLibrary, "a Vulkan driver manifest names a library that does not load"},
        {"GC-VULKAN-ICD-INVALID", A::kFixConfig, "a Vulkan driver manifest is unusable, or its library exports no driver entry point"}}},
    {"vulkan_icd_init", "every Vulkan driver that loads initialises (negotiation, instance)", S::kPass, check_vulkan_icd_init, kNotQuick, {
        {"GC-VULKAN-ICD-INIT", A::kNone, "every loadable Vulkan driver initialises"},
        {"GC-VULKAN-ICD-INIT-FAILED", A::kFixConfig, "a Vulkan driver loads but refuses to initialise (for NVIDIA in a container: libglvnd, /dev/nvidia-modeset, graphics capability)"}}},
    {"vulkan_gpu_devices", "Vulkan reaches the GPUs on the PCI bus, not only lavapipe", S::kPass, check_vulkan_gpu_devices, kNotQuick, {
        {"GC-VULKAN-GPU-DEVICES", A::kNone, "Vulkan reaches the GPUs on the PCI bus"},
        {"GC-VULKAN-ONLY-CPU", A::kUpdateDriverOrLibrary, "Vulkan reaches only a CPU implementation (lavapipe) while a GPU is on the bus"}}},
    {"vulkan_render_node_access", "the Mesa Vulkan drivers may open /dev/dri/renderD*", S::kPass, check_vulkan_render_node_access, kNotQuick, {
        {"GC-VULKAN-RENDER-NODE-ACCESS", A::kNone, "the Mesa Vulkan drivers can open the GPU's render node"},
        {"GC-VULKAN-RENDER-NODE-DENIED", A::kFixConfig, "/dev/dri/renderD* cannot be opened by this user (group membership)"}}},
    {"vulkan_env_driver_files", "VK_DRIVER_FILES/VK_ICD_FILENAMES hide no GPU driver", S::kPass, check_vulkan_env_driver_files, kNotQuick, {
        {"GC-VULKAN-ENV-DRIVER-FILES", A::kNone, "VK_DRIVER_FILES / VK_ICD_FILENAMES"},
        {"GC-VULKAN-DRIVER-HIDDEN", A::kFixConfig, "VK_DRIVER_FILES or VK_ICD_FILENAMES hides the driver of a GPU on the bus"}}},
    {"cpu_isa", "the CPU has AVX, AVX2 and FMA (NEON on Arm)", S::kPass, check_cpu_isa, kNotQuick, {
        {"GC-CPU-ISA", A::kNone, "the CPU's vector extensions"},
        {"GC-CPU-ISA-MISSING", A::kFixConfig, "the CPU (or a virtual machine's CPU model) lacks AVX, AVX2, FMA or NEON"}}},
    {"cpu_blas", "which BLAS serves GEMM, and that it is not a slow fallback", S::kPass, check_cpu_blas, kNotQuick, {
        {"GC-CPU-BLAS", A::kNone, "which BLAS serves CPU GEMM"},
        {"GC-CPU-BLAS-MISSING", A::kUpdateDriverOrLibrary, "no BLAS library loads"},
        {"GC-CPU-BLAS-REFERENCE", A::kUpdateDriverOrLibrary, "the reference (netlib) BLAS serves GEMM"},
        {"GC-CPU-BLAS-CORETYPE", A::kFixConfig, "OPENBLAS_CORETYPE holds OpenBLAS on an older CPU's kernels"},
        {"GC-CPU-BLAS-OLD-BUILD", A::kUpdateDriverOrLibrary, "OpenBLAS is built for, or chooses, kernels below what the CPU runs"},
        {"GC-CPU-BLAS-ALTERNATIVE", A::kFixConfig, "libblas.so.3 (the alternatives link) is a slow BLAS"}}},
    {"container_gpu_devices", "in a container: GPU device nodes and driver libraries mounted in", S::kPass, check_container_gpu_devices, kQuick, {
        {"GC-CONTAINER-GPU-DEVICES", A::kNone, "a container's GPU device nodes and driver libraries"},
        {"GC-CONTAINER-NO-GPU", A::kFixConfig, "a container started without the GPU device nodes or driver libraries"}}},
    {"wsl_gpu", "in WSL2: /dev/dxg and the Windows driver libraries in /usr/lib/wsl/lib", S::kPass, check_wsl_gpu, kNotQuick, {
        {"GC-WSL-GPU", A::kNone, "WSL2 GPU passthrough"},
        {"GC-WSL-NO-DXG", A::kUpdateDriverOrLibrary, "WSL2 without /dev/dxg (old WSL or Windows driver)"},
        {"GC-WSL-NO-LIBS", A::kFixConfig, "the Windows driver libraries are not mounted or not on the linker's path"},
        {"GC-WSL-LINUX-DRIVER", A::kFixConfig, "a Linux NVIDIA driver library installed inside WSL2 hides the Windows one"}}},
    {"gpu_node_access", "this user may open /dev/kfd and /dev/dri/renderD* (render/video groups)", S::kPass, check_gpu_node_access, kNotQuick, {
        {"GC-GPU-NODE-ACCESS", A::kNone, "this user may open /dev/kfd and /dev/dri"},
        {"GC-GPU-NODE-DENIED", A::kFixConfig, "this user may not open /dev/kfd or /dev/dri/renderD* (render/video groups)"}}},
    {"amd_gfx_target", "each AMD GPU's gfx target is among those its ROCm runtimes (system, torch, ollama) carry", S::kPass, check_amd_gfx_target, kNotQuick, {
        {"GC-AMD-GFX-TARGET", A::kNone, "AMD GPUs' gfx targets and their ROCm runtimes"},
        {"GC-AMD-GFX-UNSUPPORTED", A::kFixConfig, "an AMD GPU's gfx target is missing from a ROCm runtime's kernels"}}},
    {"env_visible_devices", "CUDA/HIP/ROCR_VISIBLE_DEVICES do not hide every GPU", S::kPass, check_env_visible_devices, kQuick, {
        {"GC-ENV-VISIBLE-DEVICES", A::kNone, "the *_VISIBLE_DEVICES variables"},
        {"GC-ENV-DEVICES-HIDDEN", A::kFixConfig, "a *_VISIBLE_DEVICES variable hides every GPU or stops at an invalid entry"}}},
    {"env_cuda_behaviour", "no variable that slows CUDA or changes its math (CUDA_LAUNCH_BLOCKING, ...)", S::kPass, check_env_cuda_behaviour, kNotQuick, {
        {"GC-ENV-CUDA-BEHAVIOUR", A::kNone, "variables that change CUDA"},
        {"GC-ENV-CUDA-SLOW", A::kFixConfig, "a variable slows CUDA down (CUDA_LAUNCH_BLOCKING=1, ...)"}}},
    {"env_ld_preload", "LD_PRELOAD does not force GPU libraries into every process", S::kPass, check_env_ld_preload, kNotQuick, {
        {"GC-ENV-LD-PRELOAD", A::kNone, "LD_PRELOAD"},
        {"GC-ENV-PRELOAD-GPU-LIB", A::kFixConfig, "LD_PRELOAD forces a GPU library into every process"}}},
    {"env_ld_library_path", "LD_LIBRARY_PATH does not put the CUDA stub libraries first", S::kPass, check_env_ld_library_path, kNotQuick, {
        {"GC-ENV-LD-LIBRARY-PATH", A::kNone, "LD_LIBRARY_PATH"},
        {"GC-ENV-STUB-FIRST", A::kFixConfig, "LD_LIBRARY_PATH puts the CUDA toolkit's stub libcuda.so first"}}},
    {"env_opencl_loader", "OCL_ICD_* and OPENCL_* variables, and what the loaded loader does with them", S::kPass, check_env_opencl_loader, kNotQuick, {
        {"GC-ENV-OPENCL-LOADER", A::kNone, "the OpenCL loader's variables"},
        {"GC-ENV-OPENCL-IGNORED", A::kFixConfig, "an OpenCL loader variable is set but the loaded loader ignores or misreads it"}}},
    {"env_cpu_threads", "OMP_NUM_THREADS and BLAS thread variables do not pin CPU code to one thread", S::kPass, check_env_cpu_threads, kNotQuick, {
        {"GC-ENV-CPU-THREADS", A::kNone, "the CPU thread-count variables"},
        {"GC-ENV-ONE-THREAD", A::kFixConfig, "OMP_NUM_THREADS or a BLAS thread variable pins CPU code to one thread"}}},
    {"framework_packages", "torch, JAX, CuPy and nvidia-* wheels in site-packages agree on CUDA", S::kPass, check_framework_packages, kNotQuick, {
        {"GC-FRAMEWORK-PACKAGES", A::kNone, "the frameworks' wheels and their CUDA"},
        {"GC-FRAMEWORK-CUDA-MIXED", A::kUpdateDriverOrLibrary, "wheels built for different CUDA majors in one site-packages directory"},
        {"GC-FRAMEWORK-TORCH-LIBS-MISSING", A::kUpdateDriverOrLibrary, "a CUDA build of torch without the cuDNN or cuBLAS it imports"}}},
    {"nouveau_module", "nouveau is not loaded while an NVIDIA GPU is on the PCI bus", S::kPass, check_nouveau_module, kQuick, {
        {"GC-NOUVEAU-MODULE", A::kNone, "nouveau and the NVIDIA GPUs"},
        {"GC-NOUVEAU-LOADED", A::kFixConfig, "nouveau is loaded while an NVIDIA GPU is on the bus (blacklist it, rebuild the initramfs, reboot)"}}},
    {"nvidia_kernel_module", "the nvidia kernel module is loaded for the NVIDIA GPUs on the bus", S::kPass, check_nvidia_kernel_module, kQuick, {
        {"GC-NVIDIA-KERNEL-MODULE", A::kNone, "the nvidia kernel module"},
        {"GC-DRIVER-MODULE-MISSING", A::kUpdateDriverOrLibrary, "the nvidia kernel module is not loaded for the NVIDIA GPUs on the bus"},
        {"GC-DRIVER-BLACKWELL-PROPRIETARY", A::kUpdateDriverOrLibrary, "a Blackwell GPU under the proprietary kernel module, which does not drive it"},
        {"GC-PCI-BAR1-SMALL", A::kFixConfig, "a GPU's BAR1 is left at 256 MiB or less while the card offers more (Resizable BAR off)"}}},
    {"nvidia_device_nodes", "/dev/nvidiactl, /dev/nvidia0.., /dev/nvidia-uvm exist and this user may open them", S::kPass, check_nvidia_device_nodes, kQuick, {
        {"GC-NVIDIA-DEVICE-NODES", A::kNone, "the /dev/nvidia* nodes"},
        {"GC-DRIVER-DEVICE-NODES", A::kFixConfig, "a /dev/nvidia* node is missing or this user may not open it"},
        {"GC-DEVICE-CGROUP-DENIED", A::kFixConfig, "the kernel refuses to open a /dev/nvidia* node its mode allows (a container's device cgroup)"},
        {"GC-DEV-CHAR-LINKS", A::kFixConfig, "the container toolkit's /dev/char links to the NVIDIA nodes are missing on the host"}}},
    {"cuda_driver_library", "libcuda.so.1 (the NVIDIA driver library) loads", S::kPass, check_cuda_driver_library, kQuick, {
        {"GC-CUDA-DRIVER-LIBRARY", A::kNone, "libcuda.so.1"},
        {"GC-DRIVER-LIBCUDA-MISSING", A::kUpdateDriverOrLibrary, "libcuda.so.1 (the driver's user-space library) does not load"}}},
    {"cuda_driver_stub", "the loaded libcuda.so.1 is the driver's, not the toolkit's stub", S::kPass, check_cuda_driver_stub, kQuick, {
        {"GC-CUDA-DRIVER-STUB", A::kNone, "the loaded libcuda.so.1 is the driver's"},
        {"GC-DRIVER-STUB-LOADED", A::kFixConfig, "the loaded libcuda.so.1 is the toolkit's stub"}}},
    {"nvidia_driver_versions", "the kernel module's version equals that of the libcuda.so.1 dlopen resolves", S::kPass, check_nvidia_driver_versions, kQuick, {
        {"GC-NVIDIA-DRIVER-VERSIONS", A::kNone, "kernel module and libcuda versions"},
        {"GC-DRIVER-VERSION-MISMATCH", A::kReboot, "the kernel module's version differs from libcuda's (a driver update without a reboot)"}}},
    {"cuda_driver_runtime", "the driver supports the CUDA of gpucheck's runtime and the toolkits", S::kPass, check_cuda_driver_runtime, kQuick, {
        {"GC-CUDA-DRIVER-RUNTIME", A::kNone, "the driver's CUDA version"},
        {"GC-DRIVER-TOO-OLD", A::kUpdateDriverOrLibrary, "the driver is too old for gpucheck's CUDA runtime or the toolkits"},
        {"GC-DRIVER-MINOR-COMPAT", A::kUpdateDriverOrLibrary, "the driver is older than the toolkit and runs it through minor-version compatibility"}}},
    {"cuda_devices", "cuInit succeeds and CUDA sees devices (none hidden by CUDA_VISIBLE_DEVICES)", S::kPass, check_cuda_devices, kQuick, {
        {"GC-CUDA-DEVICES", A::kNone, "cuInit and CUDA's devices"},
        {"GC-CUDA-NO-DEVICE", A::kFixConfig, "CUDA finds no device (hidden by CUDA_VISIBLE_DEVICES, a container without GPUs, no driver loaded)"},
        {"GC-CUDA-GPU-MISSING", A::kDrainAndDiagnose, "a GPU on the PCI bus is missing from CUDA's devices (fallen off the bus)", R::kNodeReboot},
        {"GC-CUDA-INIT-FAILED", A::kReboot, "cuInit fails although the driver is present (a driver in a bad state)"},
        {"GC-CUDA-FABRIC-NOT-READY", A::kFixConfig, "cuInit answers CUDA_ERROR_SYSTEM_NOT_READY: Fabric Manager is not running"}}},
    {"nvswitch_fabric_manager", "NVSwitch systems run nv-fabricmanager", S::kPass, check_nvswitch_fabric_manager, kQuick, {
        {"GC-NVSWITCH-FABRIC-MANAGER", A::kNone, "Fabric Manager on NVSwitch systems"},
        {"GC-FABRIC-MANAGER-DOWN", A::kFixConfig, "NVSwitches are on the bus but nv-fabricmanager does not run"},
        {"GC-IMEX-CHANNEL-MISSING", A::kFixConfig, "multi-node NVLink GPUs without an IMEX channel device"},
        {"GC-IMEX-DOWN", A::kFixConfig, "multi-node NVLink GPUs without the nvidia-imex service"}}},
    {"nvidia_mig", "MIG is off, or on with instances", S::kPass, check_nvidia_mig, kQuick, {
        {"GC-NVIDIA-MIG", A::kNone, "MIG mode and instances"},
        {"GC-MIG-PENDING", A::kResetGpu, "a MIG mode change waits for a GPU reset"},
        {"GC-MIG-NO-INSTANCE", A::kFixConfig, "MIG is on but no GPU instance exists"}}},
    {"nvidia_compute_mode", "compute mode DEFAULT (not exclusive or prohibited)", S::kPass, check_nvidia_compute_mode, kQuick, {
        {"GC-NVIDIA-COMPUTE-MODE", A::kNone, "the compute mode"},
        {"GC-COMPUTE-PROHIBITED", A::kFixConfig, "compute mode PROHIBITED: no process may use the GPU"},
        {"GC-COMPUTE-EXCLUSIVE", A::kFixConfig, "compute mode EXCLUSIVE_PROCESS: one process at a time"}}},
    {"nvidia_ecc", "no uncorrectable ECC error, pending or failed row remap (lifetime counts INFO)", S::kPass, check_nvidia_ecc, kQuick, {
        {"GC-NVIDIA-ECC", A::kNone, "ECC errors, row remaps and retired pages"},
        {"GC-ECC-UNCORRECTABLE", A::kResetGpu, "uncorrectable ECC errors since the driver loaded"},
        {"GC-ECC-REMAP-PENDING", A::kResetGpu, "a row remap or page retirement waits for a GPU reset"},
        {"GC-ECC-REMAP-FAILED", A::kReplaceHardware, "row remapping failed: no spare rows left"}}},
    {"nvidia_persistence_mode", "persistence mode on (WARN when off on CI, INFO elsewhere)", S::kPass, check_nvidia_persistence_mode, kQuick, {
        {"GC-NVIDIA-PERSISTENCE-MODE", A::kNone, "persistence mode"},
        {"GC-PERSISTENCE-OFF", A::kFixConfig, "persistence mode is off on CI (nvidia-persistenced)"}}},
    {"pcie_link_under_load", "the PCIe link reaches its maximum generation and width under load", S::kPass, check_pcie_link_under_load, kNotQuick, {
        {"GC-PCIE-LINK-UNDER-LOAD", A::kNone, "PCIe generation and width under load"},
        {"GC-PCIE-DEGRADED", A::kDrainAndDiagnose, "the PCIe link runs below its maximum generation or width under load"}}},
    {"clocks_under_load", "no thermal, HW slowdown or power-brake clocks event under load", S::kPass, check_clocks_under_load, kNotQuick, {
        {"GC-CLOCKS-UNDER-LOAD", A::kNone, "clock events under load"},
        {"GC-CLOCKS-THROTTLED", A::kDrainAndDiagnose, "thermal, hardware-slowdown or power-brake clock events under load"}}},
    {"nvidia_xid", "no NVIDIA Xid error in the kernel log (/dev/kmsg or dmesg)", S::kPass, check_nvidia_xid, kQuick, {
        {"GC-NVIDIA-XID", A::kNone, "Xid errors in the kernel log"},
        {"GC-XID-HARDWARE", A::kDrainAndDiagnose, "Xid errors that mean a hardware, memory, NVLink or bus fault"},
        {"GC-XID-DRIVER", A::kUpdateDriverOrLibrary, "Xid errors of the driver (neither a program's fault nor the hardware's)", R::kGpuReset}}},
    {"nvlink_links", "every NVLink is active, all at one version and speed (fabric registered)", S::kPass, check_nvlink_links, kQuick, {  // quick: link states from the probe, no load
        {"GC-NVLINK-LINKS", A::kNone, "NVLink states, versions and speeds"},
        {"GC-NVLINK-DOWN", A::kReplaceHardware, "an NVLink is inactive while others are up", R::kDrainP2p},
        {"GC-NVLINK-DEGRADED", A::kResetGpu, "an NVLink trained at a lower version or speed than the others", R::kDrainP2p},
        {"GC-NVLINK-ASYMMETRIC", A::kReplaceHardware, "two GPUs see different numbers of NVLinks between them", R::kDrainP2p},
        {"GC-NVLINK-FABRIC", A::kFixConfig, "a GPU's NVLink fabric registration did not complete, or no link is up beside NVSwitches (Fabric Manager)", R::kDrainP2p}}},
    {"nvlink_errors", "no NVLink replay or recovery error under load; CRC/ECC-data errors within 20/s per link (DCGM: 100/s)", S::kPass, check_nvlink_errors, kQuick, {  // quick: growth since the state file's reading, per second of uptime
        {"GC-NVLINK-ERRORS", A::kNone, "NVLink error counters around the load run"},
        {"GC-NVLINK-REPLAY", A::kDrainAndDiagnose, "NVLink replay errors grew under load (DCGM: failure)", R::kDrainP2p},
        {"GC-NVLINK-RECOVERY", A::kDrainAndDiagnose, "NVLink recovery errors grew under load: a link went down and retrained (DCGM: failure)", R::kDrainP2p},
        {"GC-NVLINK-CRC", A::kDrainAndDiagnose, "NVLink CRC (flit or data) errors grew above the healthy band (WARN) or at 100/s and more (FAIL, DCGM's limit)", R::kDrainP2p},
        {"GC-NVLINK-ECC-DATA", A::kDrainAndDiagnose, "corrected NVLink data ECC errors grew above the healthy band (WARN) or at 100/s and more (FAIL)", R::kDrainP2p},
        {"GC-NVLINK-LOST", A::kResetGpu, "an NVLink active at the probe was gone after the load", R::kDrainP2p}}},
    {"p2p_access", "GPUs joined by NVLink have peer access; a peer copy under load reaches half the link rate", S::kPass, check_p2p_access, kNotQuick, {
        {"GC-P2P-ACCESS", A::kNone, "peer access and peer copies"},
        {"GC-P2P-DENIED", A::kFixConfig, "peer access refused or disabled (IOMMU, ACS, a virtual machine, a driver registry key)"},
        {"GC-P2P-SLOW", A::kDrainAndDiagnose, "a peer copy under load reached less than half of what its link allows", R::kDrainP2p},
        {"GC-P2P-COPY-FAILED", A::kDrainAndDiagnose, "a peer copy between NVLink-joined GPUs failed under load", R::kDrainP2p}}},
    {"gpu_siblings", "no GPU is more than 5 % below its same-model siblings in the load run", S::kPass, check_gpu_siblings, kNotQuick, {
        {"GC-GPU-SIBLINGS", A::kNone, "GPUs against their same-model siblings"},
        {"GC-GPU-SLOW-SIBLING", A::kDrainAndDiagnose, "a GPU is 5 % (WARN) or 10 % (FAIL) below its same-model siblings under load"}}},
    {"nccl_environment", "no NCCL setting or PCIe path (ACS, IOMMU) that slows or stops collectives", S::kPass, check_nccl_environment, kNotQuick, {
        {"GC-NCCL-ENVIRONMENT", A::kNone, "NCCL's settings and the GPUs' PCIe paths"},
        {"GC-NCCL-TRANSPORT-DISABLED", A::kFixConfig, "NCCL_P2P_DISABLE or NCCL_SHM_DISABLE set for good"},
        {"GC-NCCL-NVLS-UNSUPPORTED", A::kFixConfig, "NCCL_NVLS_ENABLE=1 where no NVSwitch is"},
        {"GC-NCCL-IFNAME-NO-MATCH", A::kFixConfig, "NCCL_SOCKET_IFNAME or NCCL_IB_HCA selects nothing here"},
        {"GC-PCI-ACS-REDIRECT", A::kFixConfig, "ACS redirects peer traffic on the bridges above the GPUs"},
        {"GC-IOMMU-TRANSLATED", A::kFixConfig, "the IOMMU translates the GPUs' DMA"}}},
    {"infiniband_ports", "every InfiniBand/RoCE port is active (disabled ones are INFO), at its siblings' rate", S::kPass, check_infiniband_ports, kQuick, {
        {"GC-INFINIBAND-PORTS", A::kNone, "InfiniBand and RoCE port states and rates"},
        {"GC-IB-PORT-DOWN", A::kReplaceHardware, "an InfiniBand or RoCE port is down or polling (no link: cable, transceiver or the far side)", R::kNone},
        {"GC-IB-PORT-NO-SM", A::kFixConfig, "an InfiniBand port has a physical link but stays INIT or ARMED: no subnet manager brought it up"},
        {"GC-IB-NO-ACTIVE-PORT", A::kReplaceHardware, "no port of any RDMA adapter is active: the node cannot reach the fabric", R::kNone},
        {"GC-IB-RATE-LOW", A::kReplaceHardware, "a port's rate is below the node's other ports of the same adapter model, or below the profile's", R::kNone}}},
    {"infiniband_errors", "no InfiniBand/RoCE error counter grows during the run or since the last", S::kPass, check_infiniband_errors, kQuick, {  // quick: deltas against the state file
        {"GC-INFINIBAND-ERRORS", A::kNone, "InfiniBand and RoCE port error counters around the run"},
        {"GC-IB-LINK-FLAP", A::kReplaceHardware, "a port's link went down and retrained (link_downed grew)", R::kNone},
        {"GC-IB-LINK-ERRORS", A::kReplaceHardware, "physical-layer error counters grew (symbol errors, link recoveries, integrity, receive errors, buffer overruns)", R::kNone}}},
    {"gpudirect_rdma", "NVIDIA GPUs beside an RDMA adapter have nvidia_peermem or dma-buf", S::kPass, check_gpudirect_rdma, kQuick, {
        {"GC-GPUDIRECT-RDMA", A::kNone, "GPUDirect RDMA between NVIDIA GPUs and RDMA adapters"},
        {"GC-GPUDIRECT-RDMA-OFF", A::kFixConfig, "NVIDIA GPUs and an RDMA adapter without nvidia_peermem or dma-buf: GPUDirect RDMA is off and NCCL stages through host memory"}}},
    {"infiniband_gpu_affinity", "each GPU has an RDMA adapter on its own CPU socket", S::kPass, check_infiniband_gpu_affinity, kQuick, {
        {"GC-INFINIBAND-GPU-AFFINITY", A::kNone, "the RDMA adapter nearest each GPU on the PCI tree"},
        {"GC-IB-HCA-REMOTE", A::kFixConfig, "a GPU's nearest RDMA adapter is across the CPU interconnect (another socket)"}}},
    {"cublas_library", "cuBLAS loads; one version on the linker's path", S::kPass, check_cublas_library, kQuick, {
        {"GC-CUBLAS-LIBRARY", A::kNone, "cuBLAS"},
        {"GC-CUBLAS-MISSING", A::kUpdateDriverOrLibrary, "cuBLAS does not load"},
        {"GC-CUBLAS-VERSIONS", A::kFixConfig, "several cuBLAS versions on the linker's path"},
        {"GC-CUBLAS-HEADER-MISMATCH", A::kUpdateDriverOrLibrary, "cuBLAS's header and library versions differ"},
        {"GC-CUBLAS-SHADOWED", A::kFixConfig, "LD_LIBRARY_PATH puts another cuBLAS, cuSPARSE or nvJitLink before a Python environment's wheel copy"}}},
    {"cudnn_library", "cuDNN loads; one version on the linker's path; header equals library", S::kPass, check_cudnn_library, kQuick, {
        {"GC-CUDNN-LIBRARY", A::kNone, "cuDNN"},
        {"GC-CUDNN-MISSING", A::kUpdateDriverOrLibrary, "cuDNN does not load"},
        {"GC-CUDNN-VERSIONS", A::kFixConfig, "several cuDNN versions on the linker's path"},
        {"GC-CUDNN-HEADER-MISMATCH", A::kUpdateDriverOrLibrary, "cuDNN's header and library versions differ"},
        {"GC-CUDNN-SHADOWED", A::kFixConfig, "LD_LIBRARY_PATH puts another cuDNN before a Python environment's wheel copy"}}},
    {"framework_cuda_driver", "the driver is new enough for the CUDA builds of torch, JAX, CuPy", S::kPass, check_framework_cuda_driver, kNotQuick, {
        {"GC-FRAMEWORK-CUDA-DRIVER", A::kNone, "the driver against the frameworks' CUDA builds"},
        {"GC-DRIVER-TOO-OLD-FOR-FRAMEWORK", A::kUpdateDriverOrLibrary, "the driver is too old for the CUDA build of torch, JAX or CuPy"}}},
    {"framework_torch", "torch will use the GPUs: a CUDA build with kernels for them, its nvidia-* wheels, one copy", S::kPass, check_framework_torch, kNotQuick, {
        {"GC-FRAMEWORK-TORCH", A::kNone, "PyTorch in each Python environment against this machine's GPUs"},
        {"GC-TORCH-CANNOT-USE-GPU", A::kUpdateDriverOrLibrary, "the installed PyTorch cannot use this machine's GPU (a CPU-only build, no kernels for its architecture, its CUDA wheels missing or mismatched, a driver too old, or another torch shadowing it)"}}},
    {"framework_tensorflow", "TensorFlow will use the GPUs: a CUDA build for them and the CUDA/cuDNN libraries it finds", S::kPass, check_framework_tensorflow, kNotQuick, {
        {"GC-FRAMEWORK-TENSORFLOW", A::kNone, "TensorFlow in each Python environment against this machine's GPUs"},
        {"GC-TENSORFLOW-CANNOT-USE-GPU", A::kUpdateDriverOrLibrary, "the installed TensorFlow cannot use this machine's GPU (a CPU build, a CUDA or cuDNN library it opens not found, a driver too old, no kernels for the GPU)"}}},
    {"framework_jax", "JAX will use the GPUs: jax, jaxlib and its CUDA plugin in step", S::kPass, check_framework_jax, kNotQuick, {
        {"GC-FRAMEWORK-JAX", A::kNone, "JAX, jaxlib and its CUDA plugin in each Python environment"},
        {"GC-JAX-OUT-OF-STEP", A::kUpdateDriverOrLibrary, "jax, jaxlib and the CUDA plugin are out of step, or the plugin cannot use this driver"}}},
    {"framework_keras", "Keras's backend (KERAS_BACKEND, keras.json) is installed and uses the GPU", S::kPass, check_framework_keras, kNotQuick, {
        {"GC-FRAMEWORK-KERAS", A::kNone, "the backend Keras will use and whether it reaches the GPU"},
        {"GC-KERAS-BACKEND", A::kFixConfig, "Keras's backend is missing, unknown or cannot use the GPU"}}},
    {"framework_cupy", "one CuPy package, built for a CUDA the driver supports", S::kPass, check_framework_cupy, kNotQuick, {
        {"GC-FRAMEWORK-CUPY", A::kNone, "CuPy's packages against the driver"},
        {"GC-CUPY-CANNOT-USE-GPU", A::kUpdateDriverOrLibrary, "two CuPy packages at once, a ROCm build, or a CuPy built for a CUDA the driver cannot run"}}},
    {"framework_theano", "Theano's device and floatX (THEANO_FLAGS, .theanorc) can work here", S::kInfo, check_framework_theano, kNotQuick, {
        {"GC-FRAMEWORK-THEANO", A::kNone, "Theano's or PyTensor's device settings"},
        {"GC-THEANO-CONFIG", A::kFixConfig, "Theano asks for a GPU it cannot use (no pygpu, the old backend, floatX not float32)"}}},
    {"framework_memory", "GPU memory settings of the frameworks; no two preallocating most of the GPU at once", S::kPass, check_framework_memory, kNotQuick, {
        {"GC-FRAMEWORK-MEMORY", A::kNone, "the frameworks' GPU memory settings"},
        {"GC-FRAMEWORK-PREALLOCATION", A::kFixConfig, "a memory setting is invalid, or two frameworks in one process would both preallocate most of the GPU"}}},
    {"framework_query", "each framework asked itself (import, GPUs, a small matmul) agrees with the files' verdict", S::kPass, check_framework_query, kNotQuick, {
        {"GC-FRAMEWORK-QUERY", A::kNone, "each framework's own answer (import, GPU devices, a small matmul) against the reading of its files"},
        {"GC-FRAMEWORK-DISAGREES", A::kUpdateDriverOrLibrary, "a framework's own answer differs from the verdict read from its files (GPU use, or the version import finds)"},
        {"GC-FRAMEWORK-WRONG-RESULT", A::kDrainAndDiagnose, "a framework's small matmul returned wrong numbers"},
        {"GC-FRAMEWORK-QUERY-TIMEOUT", A::kUpdateDriverOrLibrary, "a framework's device query overran doctor's budget and was killed (an import or CUDA start that hangs, or a JIT compile slower than the budget)"},
        {"GC-FRAMEWORK-QUERY-CRASHED", A::kUpdateDriverOrLibrary, "a framework's device query crashed or answered nothing readable (an import that kills the interpreter: mismatched builds, a broken library)"},
        {"GC-FRAMEWORK-UNSAFE-ENV", A::kFixConfig, "run as root, doctor did not start an interpreter whose prefix, standard library or site-packages a group or every user can write"}}},
    {"llm_runtimes", "ollama and llama.cpp carry a GPU backend that loads here, and no setting hides the GPUs", S::kPass, check_llm_runtimes, kNotQuick, {
        {"GC-LLM-RUNTIMES", A::kNone, "local LLM runtimes and their GPU backends"},
        {"GC-LLM-BACKEND-UNLOADABLE", A::kUpdateDriverOrLibrary, "an LLM runtime has no GPU backend that can load for a GPU here"},
        {"GC-LLM-GPU-HIDDEN", A::kFixConfig, "a setting hides the GPUs from an LLM runtime"}}},
    {"pytorch_cuda_usable", "the verdict: CUDA usable by PyTorch here, and why", S::kInfo, check_pytorch_cuda_usable, kNotQuick, {
        {"GC-PYTORCH-CUDA-USABLE", A::kNone, "whether PyTorch can use CUDA here"},
        {"GC-PYTORCH-CUDA-UNUSABLE", A::kUpdateDriverOrLibrary, "PyTorch cannot use CUDA here: a CPU-only build on an NVIDIA machine, its CUDA libraries missing, no driver, or a driver too old or unusable"}}},
    // clang-format on
};

// doctor's own codes, given by no check.
inline constexpr CodeDef kDoctorCodes[] = {
    // clang-format off
    {"GC-DOCTOR-UNCODED", A::kDrainAndDiagnose, "a WARN or FAIL of a check that gives no code of its own yet: read its finding"},
    {"GC-DOCTOR-UNACKNOWLEDGED", A::kDrainAndDiagnose, "an earlier run's event in the state file is not acknowledged yet (doctor --ack CHECK once handled)"},
    // clang-format on
};

consteval std::size_t fault_code_count() {
  std::size_t n = std::size(kDoctorCodes);
  for (const auto& c : kCheckDefs)
    for (const auto& code : c.codes) n += code.code.empty() ? 0 : 1;
  return n;
}

consteval std::array<FaultCode, fault_code_count()> flat_fault_codes() {
  std::array<FaultCode, fault_code_count()> out{};
  std::size_t i = 0;
  for (const auto& code : kDoctorCodes)
    out[i++] = {code.code, "doctor", code.action, code.meaning, code.recovery};
  for (const auto& c : kCheckDefs)
    for (const auto& code : c.codes)
      if (!code.code.empty())
        out[i++] = {code.code, c.id, code.action, code.meaning, code.recovery};
  return out;
}

}  // namespace defs

using defs::kCheckDefs;

// Every code with the check that gives it ("doctor": doctor itself): doctor's, then each
// check's in the registry's order.
inline constexpr std::array<FaultCode, defs::fault_code_count()> kFaultCodes =
    defs::flat_fault_codes();

namespace defs {

consteval const FaultCode* lookup_code(std::string_view code) {
  for (const auto& f : kFaultCodes)
    if (f.code == code) return &f;
  throw "fault code declared by no CheckDef";  // not a constant expression: a compile error
}

}  // namespace defs

consteval Code::Code(std::string_view code) : fault_(defs::lookup_code(code)) {}

consteval Code operator""_gc(const char* s, std::size_t n) {
  return Code(std::string_view(s, n));
}

}  // namespace gpucheck::doctor

// Every check function of doctor (parts 1 and 2). Each is a pure function of the SystemView; the
// explicit list that names them, with their ids, one-line summaries and codes, is check_defs.h.
#pragma once

#include "doctor/check.h"
#include "doctor/system_view.h"

#include <map>
#include <string>
#include <vector>

namespace gpucheck::doctor {

// OpenCL (checks_opencl.cpp)
CheckResult check_opencl_loader(const SystemView& view);
CheckResult check_opencl_loader_copies(const SystemView& view);
CheckResult check_opencl_vendors_dir(const SystemView& view);
CheckResult check_opencl_icd_loads(const SystemView& view);
CheckResult check_opencl_vendor_registration(const SystemView& view);
CheckResult check_opencl_enumeration(const SystemView& view);
CheckResult check_opencl_platform_devices(const SystemView& view);
CheckResult check_opencl_gpu_devices(const SystemView& view);
CheckResult check_opencl_duplicate_devices(const SystemView& view);
CheckResult check_opencl_platform_family(const SystemView& view);

// Vulkan (checks_vulkan.cpp)
CheckResult check_vulkan_loader(const SystemView& view);
CheckResult check_vulkan_icd_loads(const SystemView& view);
CheckResult check_vulkan_icd_init(const SystemView& view);
CheckResult check_vulkan_gpu_devices(const SystemView& view);
CheckResult check_vulkan_render_node_access(const SystemView& view);
CheckResult check_vulkan_env_driver_files(const SystemView& view);

// CPU (checks_cpu.cpp)
CheckResult check_cpu_isa(const SystemView& view);
CheckResult check_cpu_blas(const SystemView& view);

// Containers, WSL2 and device nodes (checks_platform.cpp)
CheckResult check_container_gpu_devices(const SystemView& view);
CheckResult check_wsl_gpu(const SystemView& view);
CheckResult check_gpu_node_access(const SystemView& view);

// AMD GPUs' gfx targets against their ROCm runtimes' (checks_amd.cpp)
CheckResult check_amd_gfx_target(const SystemView& view);

// Environment variables (checks_env.cpp)
CheckResult check_env_visible_devices(const SystemView& view);
CheckResult check_env_cuda_behaviour(const SystemView& view);
CheckResult check_env_ld_preload(const SystemView& view);
CheckResult check_env_ld_library_path(const SystemView& view);
CheckResult check_env_opencl_loader(const SystemView& view);
CheckResult check_env_cpu_threads(const SystemView& view);

// Python frameworks, read from site-packages without importing them (checks_frameworks.cpp)
CheckResult check_framework_packages(const SystemView& view);
CheckResult check_pytorch_cuda_usable(const SystemView& view);

// Local LLM runtimes: ollama and llama.cpp (checks_llm.cpp)
CheckResult check_llm_runtimes(const SystemView& view);

// The NVIDIA driver as the CUDA probe opened it (checks_cuda_driver.cpp)
CheckResult check_cuda_driver_library(const SystemView& view);
CheckResult check_cuda_driver_stub(const SystemView& view);
CheckResult check_nvidia_driver_versions(const SystemView& view);
CheckResult check_cuda_driver_runtime(const SystemView& view);
CheckResult check_cuda_devices(const SystemView& view);

// The kernel's side: PCI bus, modules, device nodes, kernel log (checks_nvidia_kernel.cpp)
CheckResult check_nouveau_module(const SystemView& view);
CheckResult check_nvidia_kernel_module(const SystemView& view);
CheckResult check_nvidia_device_nodes(const SystemView& view);
CheckResult check_nvidia_xid(const SystemView& view);
// nvidia_xid's verdict on Xid codes newly seen (code → lines), shared with doctor --inject:
// FAIL for a hardware or memory Xid, WARN for another the driver raised, INFO when every one is
// a program's own fault. `found` opens the finding; `unread` ends it.
std::string xid_summary(const std::map<int, long long>& per_code);  // "Xid 79 ×2, Xid 13 ×1"
CheckResult judge_xids(const std::map<int, long long>& per_code, const std::string& found,
                       const std::string& unread, std::vector<std::string> evidence);
CheckResult check_nvswitch_fabric_manager(const SystemView& view);

// NVML, some readings taken under doctor's load run (checks_nvml.cpp)
CheckResult check_nvidia_mig(const SystemView& view);
CheckResult check_nvidia_compute_mode(const SystemView& view);
CheckResult check_nvidia_ecc(const SystemView& view);
CheckResult check_nvidia_persistence_mode(const SystemView& view);
CheckResult check_pcie_link_under_load(const SystemView& view);
CheckResult check_clocks_under_load(const SystemView& view);

// The GPUs together: NVLink, peer access, siblings (checks_multigpu.cpp)
CheckResult check_nvlink_links(const SystemView& view);
CheckResult check_nvlink_errors(const SystemView& view);
CheckResult check_p2p_access(const SystemView& view);
CheckResult check_gpu_siblings(const SystemView& view);

// NCCL's traps, from its settings and the PCIe topology (checks_nccl.cpp)
CheckResult check_nccl_environment(const SystemView& view);

// InfiniBand / RoCE ports and GPUDirect RDMA, from the probe's infiniband section
// (checks_infiniband.cpp)
CheckResult check_infiniband_ports(const SystemView& view);
CheckResult check_infiniband_errors(const SystemView& view);
CheckResult check_gpudirect_rdma(const SystemView& view);
CheckResult check_infiniband_gpu_affinity(const SystemView& view);

// CUDA libraries and the frameworks' CUDA builds (checks_cuda_libraries.cpp)
CheckResult check_cublas_library(const SystemView& view);
CheckResult check_cudnn_library(const SystemView& view);
CheckResult check_framework_cuda_driver(const SystemView& view);

// Each framework's verdict: will it use the GPUs here, read without importing it
// (framework_torch.cpp, framework_tensorflow.cpp, framework_jax_cupy.cpp,
// framework_keras_theano.cpp, framework_memory.cpp)
CheckResult check_framework_torch(const SystemView& view);
CheckResult check_framework_tensorflow(const SystemView& view);
CheckResult check_framework_jax(const SystemView& view);
CheckResult check_framework_keras(const SystemView& view);
CheckResult check_framework_cupy(const SystemView& view);
CheckResult check_framework_theano(const SystemView& view);
CheckResult check_framework_memory(const SystemView& view);

// Each framework asked itself in a child of its interpreter, against the verdicts above
// (framework_query_check.cpp; the children run in doctor, framework_query.cpp)
CheckResult check_framework_query(const SystemView& view);

}  // namespace gpucheck::doctor

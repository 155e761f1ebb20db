// Every check function of doctor part 1. Each is a pure function of the SystemView; the
// explicit list that names them, with their ids and one-line summaries, is in registry.cpp.
#pragma once

#include "doctor/check.h"
#include "doctor/system_view.h"

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

// CPU (checks_cpu.cpp)
CheckResult check_cpu_isa(const SystemView& view);
CheckResult check_cpu_blas(const SystemView& view);

// Containers, WSL2 and device nodes (checks_platform.cpp)
CheckResult check_container_gpu_devices(const SystemView& view);
CheckResult check_wsl_gpu(const SystemView& view);
CheckResult check_gpu_node_access(const SystemView& view);

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

}  // namespace gpucheck::doctor

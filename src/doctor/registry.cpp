// The explicit list of checks (no static self-registration: linkers drop it from static
// libraries) and the runner, which is doctor's only catch boundary.
#include "doctor/registry.h"

#include "core/closest_word.h"
#include "core/errors.h"
#include "doctor/checks.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>

namespace gpucheck::doctor {

const std::vector<CheckDef>& all_checks() {
  using S = CheckStatus;
  static const std::vector<CheckDef> kChecks{
      {"opencl_loader", "which OpenCL ICD loader loads (ocl-icd or Khronos), or none", S::kPass,
       check_opencl_loader},
      {"opencl_loader_copies", "other libOpenCL.so copies on the library search path", S::kPass,
       check_opencl_loader_copies},
      {"opencl_vendors_dir", "the vendors directory of .icd files exists and holds some", S::kPass,
       check_opencl_vendors_dir},
      {"opencl_icd_loads", "every .icd file's library loads and is an ICD", S::kPass,
       check_opencl_icd_loads},
      {"opencl_vendor_registration",
       "installed vendor OpenCL libraries have an .icd file (not only OCL_ICD_FILENAMES)", S::kPass,
       check_opencl_vendor_registration},
      {"opencl_enumeration", "platform enumeration succeeds and finds platforms", S::kPass,
       check_opencl_enumeration},
      {"opencl_platform_devices", "every OpenCL platform has devices", S::kPass,
       check_opencl_platform_devices},
      {"opencl_gpu_devices", "OpenCL reaches a GPU, not only CPU implementations", S::kPass,
       check_opencl_gpu_devices},
      {"opencl_duplicate_devices", "no OpenCL device or ICD listed twice", S::kPass,
       check_opencl_duplicate_devices},
      {"opencl_platform_family",
       "the family of each platform (NVIDIA, AMD, Mesa Clover/rusticl, pocl, Intel NEO/Beignet)",
       S::kInfo, check_opencl_platform_family},
      {"vulkan_loader", "the Vulkan loader (libvulkan.so.1) loads, above all where drivers are",
       S::kPass, check_vulkan_loader},
      {"vulkan_icd_loads", "every Vulkan driver manifest parses and its library loads", S::kPass,
       check_vulkan_icd_loads},
      {"vulkan_icd_init", "every Vulkan driver that loads initialises (negotiation, instance)",
       S::kPass, check_vulkan_icd_init},
      {"vulkan_gpu_devices", "Vulkan reaches the GPUs on the PCI bus, not only lavapipe", S::kPass,
       check_vulkan_gpu_devices},
      {"vulkan_render_node_access", "the Mesa Vulkan drivers may open /dev/dri/renderD*", S::kPass,
       check_vulkan_render_node_access},
      {"vulkan_env_driver_files", "VK_DRIVER_FILES/VK_ICD_FILENAMES hide no GPU driver", S::kPass,
       check_vulkan_env_driver_files},
      {"cpu_isa", "the CPU has AVX, AVX2 and FMA (NEON on Arm)", S::kPass, check_cpu_isa},
      {"cpu_blas", "which BLAS serves GEMM, and that it is not a slow fallback", S::kPass,
       check_cpu_blas},
      {"container_gpu_devices", "in a container: GPU device nodes and driver libraries mounted in",
       S::kPass, check_container_gpu_devices},
      {"wsl_gpu", "in WSL2: /dev/dxg and the Windows driver libraries in /usr/lib/wsl/lib",
       S::kPass, check_wsl_gpu},
      {"gpu_node_access", "this user may open /dev/kfd and /dev/dri/renderD* (render/video groups)",
       S::kPass, check_gpu_node_access},
      {"amd_gfx_target",
       "each AMD GPU's gfx target is among those its ROCm runtimes (system, torch, ollama) carry",
       S::kPass, check_amd_gfx_target},
      {"env_visible_devices", "CUDA/HIP/ROCR_VISIBLE_DEVICES do not hide every GPU", S::kPass,
       check_env_visible_devices},
      {"env_cuda_behaviour",
       "no variable that slows CUDA or changes its math (CUDA_LAUNCH_BLOCKING, ...)", S::kPass,
       check_env_cuda_behaviour},
      {"env_ld_preload", "LD_PRELOAD does not force GPU libraries into every process", S::kPass,
       check_env_ld_preload},
      {"env_ld_library_path", "LD_LIBRARY_PATH does not put the CUDA stub libraries first",
       S::kPass, check_env_ld_library_path},
      {"env_opencl_loader",
       "OCL_ICD_* and OPENCL_* variables, and what the loaded loader does with them", S::kPass,
       check_env_opencl_loader},
      {"env_cpu_threads",
       "OMP_NUM_THREADS and BLAS thread variables do not pin CPU code to one thread", S::kPass,
       check_env_cpu_threads},
      {"framework_packages", "torch, JAX, CuPy and nvidia-* wheels in site-packages agree on CUDA",
       S::kPass, check_framework_packages},
      {"nouveau_module", "nouveau is not loaded while an NVIDIA GPU is on the PCI bus", S::kPass,
       check_nouveau_module},
      {"nvidia_kernel_module", "the nvidia kernel module is loaded for the NVIDIA GPUs on the bus",
       S::kPass, check_nvidia_kernel_module},
      {"nvidia_device_nodes",
       "/dev/nvidiactl, /dev/nvidia0.., /dev/nvidia-uvm exist and this "
       "user may open them",
       S::kPass, check_nvidia_device_nodes},
      {"cuda_driver_library", "libcuda.so.1 (the NVIDIA driver library) loads", S::kPass,
       check_cuda_driver_library},
      {"cuda_driver_stub", "the loaded libcuda.so.1 is the driver's, not the toolkit's stub",
       S::kPass, check_cuda_driver_stub},
      {"nvidia_driver_versions",
       "the kernel module's version equals that of the libcuda.so.1 dlopen resolves", S::kPass,
       check_nvidia_driver_versions},
      {"cuda_driver_runtime", "the driver supports the CUDA of gpucheck's runtime and the toolkits",
       S::kPass, check_cuda_driver_runtime},
      {"cuda_devices",
       "cuInit succeeds and CUDA sees devices (none hidden by CUDA_VISIBLE_DEVICES)", S::kPass,
       check_cuda_devices},
      {"nvswitch_fabric_manager", "NVSwitch systems run nv-fabricmanager", S::kPass,
       check_nvswitch_fabric_manager},
      {"nvidia_mig", "MIG is off, or on with instances", S::kPass, check_nvidia_mig},
      {"nvidia_compute_mode", "compute mode DEFAULT (not exclusive or prohibited)", S::kPass,
       check_nvidia_compute_mode},
      {"nvidia_ecc",
       "no uncorrectable ECC error, pending or failed row remap (lifetime counts INFO)", S::kPass,
       check_nvidia_ecc},
      {"nvidia_persistence_mode", "persistence mode on (WARN when off on CI, INFO elsewhere)",
       S::kPass, check_nvidia_persistence_mode},
      {"pcie_link_under_load", "the PCIe link reaches its maximum generation and width under load",
       S::kPass, check_pcie_link_under_load},
      {"clocks_under_load", "no thermal, HW slowdown or power-brake clocks event under load",
       S::kPass, check_clocks_under_load},
      {"nvidia_xid", "no NVIDIA Xid error in the kernel log (/dev/kmsg or dmesg)", S::kPass,
       check_nvidia_xid},
      {"nvlink_links", "every NVLink is active, all at one version and speed (fabric registered)",
       S::kPass, check_nvlink_links},
      {"nvlink_errors",
       "no NVLink replay or recovery error under load; CRC/ECC-data errors within 20/s per link "
       "(DCGM: 100/s)",
       S::kPass, check_nvlink_errors},
      {"p2p_access",
       "GPUs joined by NVLink have peer access; a peer copy under load reaches half the link rate",
       S::kPass, check_p2p_access},
      {"gpu_siblings", "no GPU is more than 5 % below its same-model siblings in the load run",
       S::kPass, check_gpu_siblings},
      {"nccl_environment",
       "no NCCL setting or PCIe path (ACS, IOMMU) that slows or stops collectives", S::kPass,
       check_nccl_environment},
      {"infiniband_ports",
       "every InfiniBand/RoCE port is active (disabled ones are INFO), at its siblings' rate",
       S::kPass, check_infiniband_ports},
      {"infiniband_errors",
       "no InfiniBand/RoCE error counter grows during the run or since the last", S::kPass,
       check_infiniband_errors},
      {"gpudirect_rdma", "NVIDIA GPUs beside an RDMA adapter have nvidia_peermem or dma-buf",
       S::kPass, check_gpudirect_rdma},
      {"infiniband_gpu_affinity", "each GPU has an RDMA adapter on its own CPU socket", S::kPass,
       check_infiniband_gpu_affinity},
      {"cublas_library", "cuBLAS loads; one version on the linker's path", S::kPass,
       check_cublas_library},
      {"cudnn_library", "cuDNN loads; one version on the linker's path; header equals library",
       S::kPass, check_cudnn_library},
      {"framework_cuda_driver", "the driver is new enough for the CUDA builds of torch, JAX, CuPy",
       S::kPass, check_framework_cuda_driver},
      {"framework_torch",
       "torch will use the GPUs: a CUDA build with kernels for them, its nvidia-* wheels, one copy",
       S::kPass, check_framework_torch},
      {"framework_tensorflow",
       "TensorFlow will use the GPUs: a CUDA build for them and the CUDA/cuDNN libraries it finds",
       S::kPass, check_framework_tensorflow},
      {"framework_jax", "JAX will use the GPUs: jax, jaxlib and its CUDA plugin in step", S::kPass,
       check_framework_jax},
      {"framework_keras",
       "Keras's backend (KERAS_BACKEND, keras.json) is installed and uses the GPU", S::kPass,
       check_framework_keras},
      {"framework_cupy", "one CuPy package, built for a CUDA the driver supports", S::kPass,
       check_framework_cupy},
      {"framework_theano", "Theano's device and floatX (THEANO_FLAGS, .theanorc) can work here",
       S::kInfo, check_framework_theano},
      {"framework_memory",
       "GPU memory settings of the frameworks; no two preallocating most of the GPU at once",
       S::kPass, check_framework_memory},
      {"framework_query",
       "each framework asked itself (import, GPUs, a small matmul) agrees with the files' verdict",
       S::kPass, check_framework_query},
      {"llm_runtimes",
       "ollama and llama.cpp carry a GPU backend that loads here, and no setting hides the GPUs",
       S::kPass, check_llm_runtimes},
      {"pytorch_cuda_usable", "the verdict: CUDA usable by PyTorch here, and why", S::kInfo,
       check_pytorch_cuda_usable},
  };
  return kChecks;
}

const CheckDef* find_check(std::string_view id) {
  const auto& checks = all_checks();
  auto it =
      std::find_if(checks.begin(), checks.end(), [&](const CheckDef& c) { return c.id == id; });
  return it == checks.end() ? nullptr : &*it;
}

CheckResult run_check(const CheckDef& check, const SystemView& view) {
  CheckResult r;
  try {
    r = check.run(view);
  } catch (const NotObservable& e) {
    r = skip(e.what());
  } catch (const std::exception& e) {
    // Facts of an unexpected shape (a JSON type error) or a bug: the check cannot judge.
    r = skip(fmt::format("the check could not read what it needs ({})", e.what()));
  }
  r.id = std::string(check.id);
  const bool problem = r.status == CheckStatus::kWarn || r.status == CheckStatus::kFail;
  if (problem && r.fix.empty()) r.fix = "(no fix known: please report this check's finding)";
  // PASS, INFO and SKIP carry the check's own code; a WARN or FAIL one of its failure codes. A
  // code of another check, or none, is a bug in the check: GC-DOCTOR-UNCODED says so.
  if (!problem)
    r.fault = own_code(check.id);
  else if (r.fault != nullptr && (r.fault->check != check.id || r.fault->action == Action::kNone))
    r.fault = nullptr;
  return r;
}

std::string unknown_check_id(std::string_view flag, std::string_view id) {
  std::vector<std::string> ids;
  for (const auto& c : all_checks()) ids.emplace_back(c.id);
  return fmt::format("{}: unknown check id {}{}", flag, id, did_you_mean(id, ids));
}

std::vector<const CheckDef*> select_checks(const std::vector<std::string>& only,
                                           const std::vector<std::string>& skip) {
  std::vector<std::string> problems;
  for (const auto& [flag, list] : {std::pair{"--only", &only}, std::pair{"--skip", &skip}})
    for (const auto& id : *list)
      if (find_check(id) == nullptr) problems.push_back(unknown_check_id(flag, id));
  if (!problems.empty())
    throw UsageError(fmt::format("{} (gpucheck doctor --list lists the {} ids)",
                                 fmt::join(problems, "; "), all_checks().size()));
  std::vector<const CheckDef*> out;
  for (const auto& c : all_checks()) {
    const std::string id(c.id);
    if (!only.empty() && std::find(only.begin(), only.end(), id) == only.end()) continue;
    if (std::find(skip.begin(), skip.end(), id) != skip.end()) continue;
    out.push_back(&c);
  }
  return out;
}

std::vector<CheckResult> run_checks(const std::vector<const CheckDef*>& checks,
                                    const SystemView& view) {
  std::vector<CheckResult> out;
  out.reserve(checks.size());
  for (const auto* c : checks) out.push_back(run_check(*c, view));
  return out;
}

}  // namespace gpucheck::doctor

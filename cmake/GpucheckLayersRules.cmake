# The layers of src/ (docs/ARCHITECTURE.md "Layers"): each part and the parts its files may
# include. A part not listed here may include only itself and core.
# host: facts read from the machine's files (no process, no device); probe: the backends' probes
# run in children, which needs the backends, so it sits above them and below app only.
set(GPUCHECK_LAYERS core host backends probe bench doctor stress report qualify app)
set(GPUCHECK_MAY_USE_core     core)
set(GPUCHECK_MAY_USE_host     core host)
set(GPUCHECK_MAY_USE_backends core host backends)
set(GPUCHECK_MAY_USE_probe    core host backends probe)
set(GPUCHECK_MAY_USE_bench    core host backends bench)
set(GPUCHECK_MAY_USE_doctor   core host backends bench doctor)
set(GPUCHECK_MAY_USE_stress   core host backends bench stress)
set(GPUCHECK_MAY_USE_report   core report)
set(GPUCHECK_MAY_USE_qualify  core host bench doctor qualify)
set(GPUCHECK_MAY_USE_app      core host backends probe bench doctor stress report qualify app)

# Each backend folder's public headers: a file outside src/backends/<backend>/ (another part,
# another backend, the registry) includes that backend only through these, so a backend's
# internals can change without reaching into doctor, probe or app.
# cpu_backend.h, cuda_backend.h, ...: the registry's way in (make_*_backend).
# blas_kernel.h: OpenBLAS's kernel choice as pure functions of ISA flags and the environment;
#   doctor judges the choice and app sets it before a CPU bench child loads the library.
# cuda_driver.h: what gpucheck saw of libcuda.so.1 (DriverObservation), which doctor's driver
#   checks judge.
# icd_isolation.h: naming the OpenCL ICD that crashed the probe, run in the parent (the
#   registry's explain_failed_probe) after the opencl probe child failed.
set(GPUCHECK_BACKEND_PUBLIC_cpu     cpu_backend.h blas_kernel.h)
set(GPUCHECK_BACKEND_PUBLIC_cuda    cuda_backend.h cuda_driver.h)
set(GPUCHECK_BACKEND_PUBLIC_opencl  opencl_backend.h icd_isolation.h)
set(GPUCHECK_BACKEND_PUBLIC_vulkan  vulkan_backend.h)
set(GPUCHECK_BACKEND_PUBLIC_testing test_backends.h)

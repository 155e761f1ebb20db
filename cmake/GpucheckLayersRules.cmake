# The layers of src/ (docs/ARCHITECTURE.md "Layers"): each part and the parts its files may
# include. A part not listed here may include only itself and core.
set(GPUCHECK_LAYERS core probe backends bench doctor stress report qualify app)
set(GPUCHECK_MAY_USE_core     core)
set(GPUCHECK_MAY_USE_probe    core probe)
set(GPUCHECK_MAY_USE_backends core probe backends)
set(GPUCHECK_MAY_USE_bench    core probe backends bench)
set(GPUCHECK_MAY_USE_doctor   core probe backends bench doctor)
set(GPUCHECK_MAY_USE_stress   core probe backends bench doctor stress)
set(GPUCHECK_MAY_USE_report   core report)
set(GPUCHECK_MAY_USE_qualify  core probe bench doctor qualify)
set(GPUCHECK_MAY_USE_app      core probe backends bench doctor stress report qualify app)

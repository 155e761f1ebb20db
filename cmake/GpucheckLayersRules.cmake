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
set(GPUCHECK_MAY_USE_stress   core host backends bench doctor stress)
set(GPUCHECK_MAY_USE_report   core report)
set(GPUCHECK_MAY_USE_qualify  core host bench doctor qualify)
set(GPUCHECK_MAY_USE_app      core host backends probe bench doctor stress report qualify app)

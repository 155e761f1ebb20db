#!/usr/bin/env bash
# The checks of what sends frameworks to the CPU, on a real GPU machine: the checks that read the
# kernel's side (the /dev/nvidia* opens, BAR1 against resource1_resize, the module flavour, IMEX),
# the CUDA libraries against the Python wheels, the LLM runtimes and NCCL's settings, then
# doctor --suggest for each framework, then nccl_environment with a debugging switch planted.
# With two or more GPUs, bench --ops allreduce with and without NCCL_P2P_DISABLE=1 and
# NCCL_SHM_DISABLE=1 gives the measured cost of the switches the check warns about.
# Needs tools/device/stage.sh doctor-traps run here first (.devrun/doctor-traps carried).
# Logs and documents under $OUT (default /tmp/gpucheck-traps-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
OUT=${OUT:-/tmp/gpucheck-traps-out}
mkdir -p "$OUT"
g=$root/.devrun/doctor-traps/install/bin/gpucheck
[ -x "$g" ] || { echo "doctor-traps.sh: run tools/device/stage.sh doctor-traps first" >&2; exit 2; }
cat .devrun/doctor-traps/STAGED 2>/dev/null
checks=nvidia_kernel_module,nvidia_device_nodes,nvswitch_fabric_manager,cublas_library,cudnn_library
checks=$checks,framework_torch,framework_jax,framework_cupy,pytorch_cuda_usable,amd_gfx_target
checks=$checks,llm_runtimes,nccl_environment
echo "== doctor --only (device nodes, module, fabric, libraries, frameworks, LLM runtimes, NCCL)"
"$g" doctor --no-load --no-frameworks --only "$checks" --details >"$OUT/doctor.txt" 2>"$OUT/doctor.err"
"$g" doctor --no-load --no-frameworks --only "$checks" -q
"$g" doctor --no-load --no-frameworks --only "$checks" --json -o "$OUT/doctor.json" 2>>"$OUT/doctor.err"
for f in torch jax tensorflow cupy; do
  echo "== doctor --suggest $f"
  "$g" doctor --suggest "$f" -q; echo "exit $?"
done
echo "== nccl_environment with NCCL_P2P_DISABLE=1 and NCCL_SOCKET_IFNAME=ib9 planted"
NCCL_P2P_DISABLE=1 NCCL_SOCKET_IFNAME=ib9 "$g" doctor --no-load --no-frameworks --only nccl_environment -q
echo "exit $?"
ngpu=$(nvidia-smi -L 2>/dev/null | wc -l)
if [ "$ngpu" -ge 2 ]; then
  for v in "" "NCCL_P2P_DISABLE=1" "NCCL_P2P_DISABLE=1 NCCL_SHM_DISABLE=1"; do
    echo "== bench --ops allreduce ${v:-(defaults)}"
    env $v "$g" bench --device cuda0,cuda1 --no-baseline --ops allreduce --allreduce 64MiB,1GiB \
      --json -o "$OUT/allreduce-${v// /_}.json" -q 2>"$OUT/allreduce-${v// /_}.err"
    "$g" report show "$OUT/allreduce-${v// /_}.json" 2>/dev/null | head -14
  done
else
  echo "== one GPU here: the all-reduce cost of the NCCL switches needs two (skipped)"
fi

#!/bin/bash
# The GPUs of one machine together, on a GPU machine with two (or more) NVLink-joined GPUs, in
# one call of under ten minutes: probe, nvidia-smi's view (topo -m, topo -p2p r, nvlink -s/-e),
# the GPU-only tests that compare them, doctor, bench --ops p2p,allreduce beside peers.py --ops p2p (PyTorch, the same
# NCCL), and bench on two GPUs at once against --serial. A short table with every speed target
# comes last. Staged by tools/device/stage.sh multigpu into .devrun/multigpu (carry it).
#
#   bash tools/device/multigpu.sh           # in the repository root; OUT= where files go
#   STEPS="concurrent serial serial2" ...   # only those steps; serial2 (a second --serial run,
#                                           # the noise floor) runs only when named
#   STEPS=gemm-concurrency ...              # only when named (about 45 s): tensor-core GEMMs of
#       2048³ on cuda0 and cuda1, concurrent and --serial alternating twice, only GEMM cells in
#       the plan (no sibling copies); each record's concurrent/serial ratio
#
# Files under $OUT (8): probe.json nvidia-smi.txt doctor.json bench-multigpu.json peers.jsonl
# bench-concurrent.json bench-serial.json multigpu.log (everything printed, the table last).
# Every step runs under a timeout taken from one deadline, so the call ends in time and says
# which step ran out; a failing step never stops the later ones.
set -uo pipefail
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$tools/../.." && pwd)
cd "$root" || exit 2
here=${STAGE:-$root/.devrun/multigpu}
OUT=${OUT:-$PWD/multigpu-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/multigpu.log") 2>&1
t0=$(date +%s)
deadline=$((t0 + ${BUDGET_S:-560}))
gpucheck=$here/install/bin/gpucheck
echo "multigpu.sh: $(date -u +%FT%TZ) on $(hostname)"
cat "$here/STAGED" 2>/dev/null || echo "WARNING: no STAGED file: which commit is this?"
[ -x "$gpucheck" ] || { echo "FATAL: no $gpucheck: run tools/device/stage.sh multigpu and carry .devrun/multigpu"; exit 2; }
if [ -f "$here/devlibs/env.sh" ]; then
  # env.sh sets its own `here`: keep ours.
  stage=$here
  # shellcheck disable=SC1091
  source "$here/devlibs/env.sh"
  here=$stage
fi
"$gpucheck" --version || { echo "FATAL: gpucheck does not start (missing libraries?):"; ldd "$gpucheck" | grep -i "not found"; exit 2; }
echo "NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE-<unset>} (left as it is; gpucheck's NCCL child pins 0 when unset)"
nvidia-smi -L || echo "WARNING: nvidia-smi -L failed"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ')
[ "$ngpu" -ge 2 ] || echo "WARNING: $ngpu GPU(s) listed: the multi-GPU steps will report unsupported"

# step NAME LIMIT_S CMD...: runs CMD under min(LIMIT, time left) and says how it ended.
declare -a summary
step() {
  local name=$1 limit=$2
  shift 2
  if [ -n "${STEPS:-}" ] && [[ " $STEPS " != *" $name "* ]]; then
    echo "=== $name: not in STEPS"
    return
  fi
  local left=$((deadline - $(date +%s) - 20))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -lt 5 ]; then
    echo "=== $name: SKIPPED, no time left in the budget"
    summary+=("$name|skipped (no time left)")
    return
  fi
  echo "=== $name (limit ${limit} s): $*"
  local s e rc
  s=$(date +%s.%N)
  timeout --kill-after=10 "$limit" "$@"
  rc=$?
  e=$(date +%s.%N)
  local secs
  secs=$(python3 -c "print(f'{$e - $s:.1f}')")
  [ "$rc" -eq 124 ] && echo "=== $name: TIMED OUT after $limit s (raise its limit or BUDGET_S)"
  echo "=== $name: exit $rc after $secs s"
  summary+=("$name|exit $rc, ${secs} s")
}

# torch's own NCCL, so gpucheck and torch.cuda.nccl run the same library.
nccl=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia.nccl as m
    libs = sorted(glob.glob(os.path.join(list(m.__path__)[0], "lib", "libnccl.so*")))
    print(libs[0] if libs else "")
except Exception:
    print("")
PY
)
python3 -c 'import torch; print("torch", torch.__version__, "NCCL", torch.cuda.nccl.version(), "GPUs", torch.cuda.device_count())' ||
  echo "WARNING: no torch in python3: peers.py will measure nothing"
nccl_flag=()
if [ -n "$nccl" ]; then
  echo "NCCL for gpucheck: $nccl (torch's wheel)"
  nccl_flag=(--nccl "$nccl")
else
  echo "WARNING: torch's nvidia/nccl wheel not found: gpucheck uses its own search (see the records' context.nccl_path)"
fi

step probe 60 sh -c "'$gpucheck' probe --json > '$OUT/probe.json'"
{
  for a in "topo -m" "topo -p2p r" "topo -p2p w" "nvlink -s" "nvlink -e" "nvlink -c"; do
    echo "### nvidia-smi $a"
    # shellcheck disable=SC2086
    timeout 20 nvidia-smi $a 2>&1
  done
  echo "### nvidia-smi -q -d FABRIC"
  timeout 20 nvidia-smi -q 2>&1 | grep -A4 -i fabric | head -40
} > "$OUT/nvidia-smi.txt"
echo "nvidia-smi topo -m:"
sed -n '/### nvidia-smi topo -m/,/### nvidia-smi topo -p2p r/p' "$OUT/nvidia-smi.txt" | head -20
# The hand-declared NVML structs against the machine's nvml.h (FieldValue, FabricInfo, ...).
cxx=$(command -v g++ || command -v c++ || true)
if [ -n "$cxx" ] && [ -f tests/device/nvml_layout_check.cpp ]; then
  step nvml-layout 60 sh -c "'$cxx' -std=c++17 -I/usr/local/cuda/include \
    -I/usr/local/cuda/targets/x86_64-linux/include tests/device/nvml_layout_check.cpp \
    -o /tmp/gpucheck_nvml_layout && /tmp/gpucheck_nvml_layout"
else
  echo "=== nvml-layout: SKIPPED (no C++ compiler or no tests/device/nvml_layout_check.cpp here)"
fi
step device-tests 150 env GPUCHECK_BIN="$gpucheck" "$here/device_tests" --gtest_brief=0 \
  --gtest_filter='MultiGpuDevice.*:CudaDevice.ProbeMatchesNvidiaSmi'
step doctor 120 sh -c "'$gpucheck' doctor --json > '$OUT/doctor.json'"
step bench-p2p-allreduce 200 sh -c "'$gpucheck' bench --device cuda0,cuda1 --ops p2p,allreduce \
  --copy 256MiB,1GiB --reps 10 --warmup 3 --min-time 0 --max-time 10 ${nccl_flag[*]} --json \
  > '$OUT/bench-multigpu.json'"
step peers 90 sh -c "python3 '$here/peers.py' --ops p2p --copy 268435456,1073741824 --reps 20 \
  > '$OUT/peers.jsonl'"
step concurrent 150 sh -c "'$gpucheck' bench --device cuda0,cuda1 --no-baseline --size medium --json \
  > '$OUT/bench-concurrent.json'"
step serial 240 sh -c "'$gpucheck' bench --device cuda0,cuda1 --no-baseline --size medium --serial \
  --json > '$OUT/bench-serial.json'"
# A second serial run only when STEPS names it: the run-to-run noise floor of each figure.
[[ " ${STEPS:-} " == *" serial2 "* ]] && step serial2 240 sh -c "'$gpucheck' bench --device \
  cuda0,cuda1 --no-baseline --size medium --serial --json > '$OUT/bench-serial2.json'"

# The scaling steps, each only when STEPS names it (tools/device/README.md, "scale"): the
# default-size p2p and all-reduce run on every GPU with its -v split of set-up, timed and
# verification seconds; peers.py on every GPU at the same sizes; doctor, doctor --quick and probe
# timed on every GPU, probe on one as well.
only() { [[ " ${STEPS:-} " == *" $1 "* ]]; }
only scale-bench && step scale-bench 120 sh -c "'$gpucheck' bench --device all --no-baseline \
  --ops p2p,allreduce -v ${nccl_flag[*]} --json > '$OUT/bench-scale.json' 2> '$OUT/bench-scale.log'"
only scale-doctor && step scale-doctor 60 sh -c "'$gpucheck' doctor -v --json \
  > '$OUT/doctor-scale.json' 2> '$OUT/doctor-scale.log'"
only scale-quick && step scale-quick 20 sh -c "'$gpucheck' doctor --quick --json > '$OUT/doctor-quick.json'"
only scale-probe && step scale-probe 20 sh -c "'$gpucheck' probe --json > '$OUT/probe-all.json'"
only scale-probe-one && step scale-probe-one 20 sh -c "CUDA_VISIBLE_DEVICES=0 '$gpucheck' probe --json \
  > '$OUT/probe-one.json'"
only scale-peers && step scale-peers 90 sh -c "python3 '$here/peers.py' --ops p2p \
  --copy 67108864,268435456,1073741824 --reps 20 > '$OUT/peers-scale.jsonl'"

# pairs-concurrent, pairs-serial, pairs-serial2, each only when named: p2p at 256 MiB with pairs
# at once against two --serial runs (their spread is the noise floor); pair-allreduce: the
# all-reduce of two GPUs beside peers.py.
for mode in concurrent serial serial2; do
  flag=; [ "$mode" = concurrent ] || flag=--serial
  only "pairs-$mode" && step "pairs-$mode" 90 sh -c "'$gpucheck' bench --device all --no-baseline --ops p2p --copy 256MiB \
    $flag --json > '$OUT/pairs-$mode.json'"
done
only pair-allreduce && step pair-allreduce 120 sh -c "CUDA_VISIBLE_DEVICES=0,1 '$gpucheck' bench \
  --device all --no-baseline --ops allreduce --allreduce 64MiB,1GiB ${nccl_flag[*]} --json \
  > '$OUT/pair-allreduce.json' && CUDA_VISIBLE_DEVICES=0,1 python3 '$here/peers.py' --ops p2p \
  --copy 67108864,1073741824 --reps 20 > '$OUT/peers-pair.jsonl'"
if only pairs-concurrent || only pair-allreduce; then
  echo "=== pairs and the all-reduce of two GPUs"
  python3 "$tools/spread_table.py" "$OUT" || echo "spread_table.py failed"
fi

# gemm-concurrency, only when STEPS names it: does running the two GPUs at once cost GEMM speed?
gemm_concurrency() {
  local d=$OUT/gemm-concurrency i mode extra
  mkdir -p "$d"
  for i in 1 2; do
    for mode in conc ser; do
      extra=()
      [ "$mode" = ser ] && extra=(--serial)
      "$gpucheck" bench --device cuda0,cuda1 --no-baseline --ops gemm --dtype f16,bf16,tf32 \
        --gemm 2048 --json "${extra[@]}" >"$d/$mode$i.json" 2>>"$d/log"
      echo "$mode$i exit $?"
    done
  done
  python3 - "$d" <<'PY'
import json, sys, os
out = sys.argv[1]
rows = {}
for f in sorted(os.listdir(out)):
    if not f.endswith('.json'): continue
    for r in json.load(open(os.path.join(out, f)))['results']:
        if r['op'] == 'gemm' and r['status'] == 'ok':
            rows.setdefault((r['device'], r['dtype'], r['transfers']), {})[f[:-5]] = r['throughput']['value']
for k, v in sorted(rows.items()):
    print(k, {n: round(x, 1) for n, x in sorted(v.items())},
          'conc/ser', round((v.get('conc1', 0) + v.get('conc2', 0)) / max(1e-9, v.get('ser1', 0) + v.get('ser2', 0)), 3))
PY
}
if [[ " ${STEPS:-} " == *" gemm-concurrency "* ]]; then
  export -f gemm_concurrency
  export gpucheck OUT
  step gemm-concurrency 120 bash -c gemm_concurrency
fi

echo "=== steps"
for s in "${summary[@]}"; do echo "  ${s%%|*}: ${s#*|}"; done
echo "=== summary table (the multi-GPU speed targets)"
python3 "$tools/multigpu_table.py" "$OUT" || echo "the table script failed (files above are complete)"
echo "multigpu.sh: done in $(( $(date +%s) - t0 )) s"

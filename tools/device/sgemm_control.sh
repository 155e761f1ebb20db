#!/usr/bin/env bash
# On the GPU machine: sgemm_control.cu (gemm_vec4.comp's algorithm in CUDA beside cuBLAS SGEMM
# without TF32; staged as .devrun/sgemmctl/sgemm_control, carried) at each size of SIZES, ROUNDS
# interleaved rounds each, with the SM clock, power and throttle reasons sampled meanwhile
# ($OUT/sgemmctl-smi.csv, summarized last). Everything else goes to stdout.
# Stage here: mkdir -p .devrun/sgemmctl && nvcc -O3 -arch=sm_90 -lcublas \
#   -o .devrun/sgemmctl/sgemm_control tools/device/sgemm_control.cu
# A binary that does not load there (its libcublas.so.13 not found even beside the toolkit's and
# torch's), or BUILD=1, is built there from the tree with that machine's nvcc.
# Exit status: 1 when any size's run failed (a variant's wrong result, a CUDA error).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
here=${STAGE:-.devrun/sgemmctl}
out=${OUT:-/tmp}
mkdir -p "$out"
bin=$here/sgemm_control
command -v nvidia-smi >/dev/null || { echo "sgemm_control.sh: no nvidia-smi: not a GPU machine"; exit 2; }

# cuBLAS 13 beside the toolkit's, then torch's wheels' (nvidia/cu13/lib), when the loader has none.
loads() { [ -x "$1" ] && ! ldd "$1" 2>/dev/null | grep -q 'not found'; }
if [ "${BUILD:-0}" != 1 ] && [ -x "$bin" ] && ! loads "$bin"; then
  extra=$(python3 -c 'import importlib.util, os
s = importlib.util.find_spec("torch")
print(os.path.join(os.path.dirname(os.path.dirname(s.origin)), "nvidia/cu13/lib") if s and s.origin else "")' 2>/dev/null)
  export LD_LIBRARY_PATH=/usr/local/cuda/lib64:/usr/local/cuda/targets/x86_64-linux/lib${extra:+:$extra}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
fi
if [ "${BUILD:-0}" = 1 ] || ! loads "$bin"; then
  echo "sgemm_control.sh: building there ($( [ -x "$bin" ] && echo "$bin does not load: $(ldd "$bin" | grep 'not found' | tr -s ' \t' ' ')" || echo "BUILD=1 or no $bin"))"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  bin=$out/sgemm_control
  "$nvcc" -O3 -arch=sm_90 -lcublas -o "$bin" tools/device/sgemm_control.cu || { echo "sgemm_control.sh: build failed"; exit 2; }
fi
echo "sgemm_control.sh: $bin; $(nvidia-smi -L | head -1); commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- tools/device/sgemm_control.cu 2>/dev/null || echo ' (sgemm_control.cu changed)')"

nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu,clocks_throttle_reasons.active \
  --format=csv,noheader,nounits -lms 250 >"$out/sgemmctl-smi.csv" 2>&1 &
smi=$!
status=0
for s in ${SIZES:-2560 4096 8192}; do
  "$bin" "$s" "${ROUNDS:-7}" || { echo "sgemm_control.sh: N=$s exited $?"; status=1; }
done
kill "$smi" 2>/dev/null
wait "$smi" 2>/dev/null
# The SM clock and power while the GPU was busy (utilization ≥ 50%), and the throttle reasons seen.
python3 - "$out/sgemmctl-smi.csv" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    f = [x.strip() for x in line.split(",")]
    try:
        rows.append((float(f[1]), float(f[3]), float(f[4]), float(f[5]), f[6]))
    except (IndexError, ValueError):
        pass
busy = [r for r in rows if r[3] >= 50]
if not busy:
    print(f"nvidia-smi: {len(rows)} samples, none busy")
    sys.exit()
def spread(xs):
    xs = sorted(xs)
    return f"min {xs[0]:.0f} median {xs[len(xs) // 2]:.0f} max {xs[-1]:.0f}"
print(f"nvidia-smi, {len(busy)} busy samples of {len(rows)}: SM MHz {spread([r[0] for r in busy])}; "
      f"W {spread([r[1] for r in busy])}; C {spread([r[2] for r in busy])}; "
      f"throttle reasons {sorted(set(r[4] for r in busy))}")
PY
exit $status

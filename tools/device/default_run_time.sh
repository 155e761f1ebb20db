#!/bin/bash
# How long the default `gpucheck bench --device cuda0` takes, cold (no kept cuBLASLt/cuDNN choices)
# and warm, and where each cell round's time goes (GPUCHECK_TRACE_FILE, src/bench/phase_trace.h);
# with OLD=path/to/an/older/gpucheck, that binary's cold run between them, in the same call.
# Stage first, here: tools/device/stage.sh default-sizes; carry .devrun/default-sizes (and OLD).
# Everything lands in one tarball, $OUT/default-run.tgz (a device call brings back few files).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
new=${GPUCHECK:-.devrun/default-sizes/install/bin/gpucheck}
[ -x "$new" ] || { echo "default_run_time.sh: no $new: stage default-sizes first" >&2; exit 2; }
work=$(mktemp -d)
nvidia-smi -L | head -1 | tee "$work/gpu.txt"
run() {
  local name=$1 bin=$2 cache=$3 t0
  t0=$(date +%s.%N)
  XDG_CACHE_HOME=$cache GPUCHECK_TRACE_FILE=$work/trace-$name.txt timeout 300 "$bin" bench \
    --device cuda0 -o "$work/$name.json" >"$work/$name.txt" 2>"$work/$name.err"
  echo "$name rc $? wall $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" | tee -a "$work/walls.txt"
}
run new-cold "$new" "$work/cache-new"
[ -n "${OLD:-}" ] && run old-cold "$OLD" "$work/cache-old"
run new-warm "$new" "$work/cache-new"
tar czf "${OUT:-.}/default-run.tgz" -C "$work" .

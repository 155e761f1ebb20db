#!/bin/bash
# bench's default sizes on cuda0, checked in one call (docs/PERFORMANCE.md): whether each size
# chosen for the GPU reaches at least 0.8 of the saturated rate, the best rate of a sweep of
# growing sizes run in the same call, and how long the default run takes. Stage first, here:
# tools/device/stage.sh default-sizes; carry .devrun/default-sizes. Steps, each logged:
#   default  gpucheck bench --device cuda0 (the CPU baseline included), timed   → default.json
#   sweep    gpucheck bench --device cuda0 --no-baseline over growing sizes: GEMM f32/bf16
#            1024…16384, exp f32 2^20…2^30, copies 1 MiB…1 GiB                  → sweep-*.json
#   peers    peers.py: torch's bf16 GEMM 8192 and f32 exp 2^29                   → peers.jsonl
# Then default_sizes_table.py prints, per GPU cell of a chosen size, its rate, the sweep's best,
# the fraction (goal ≥ 0.8) and its fraction of limit. STEPS="default sweep peers" narrows it;
# OUT=./default-sizes-out holds the outputs.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
stage=.devrun/default-sizes
out=${OUT:-$root/default-sizes-out}
mkdir -p "$out"
STEPS=${STEPS:-default sweep peers}
log=$out/log.txt
: >"$log"
say() { echo "default_sizes.sh: $*" | tee -a "$log" >&2; }
step() { [[ " $STEPS " == *" $1 "* ]]; }
gpucheck=${GPUCHECK:-$stage/install/bin/gpucheck}
[ -x "$gpucheck" ] || { say "no $gpucheck: run tools/device/stage.sh default-sizes here and carry $stage"; exit 2; }
cat "$stage/STAGED" 2>/dev/null
command -v nvidia-smi >/dev/null || { say "no nvidia-smi: not a GPU machine"; exit 2; }
say "$("$gpucheck" --version 2>&1 | head -1); $(nvidia-smi -L | head -1); STEPS=$STEPS"

if step default; then
  t0=$(date +%s.%N)
  timeout 300 "$gpucheck" bench --device cuda0 -o "$out/default.json" >"$out/default.txt" 2>>"$log"
  rc=$?
  t1=$(date +%s.%N)
  wall=$(python3 -c "print(f'{$t1 - $t0:.1f}')")
  say "default bench --device cuda0: rc $rc, wall $wall s"
  echo "$wall" >"$out/default-wall.txt"
  cat "$out/default.txt"
fi
if step sweep; then
  run() {
    local name=$1
    shift
    local t0=$SECONDS
    timeout 240 "$gpucheck" bench --device cuda0 --no-baseline "$@" -o "$out/sweep-$name.json" \
      >/dev/null 2>>"$log"
    say "sweep $name: rc $?, $((SECONDS - t0)) s"
  }
  run gemm --ops gemm --dtype f32,bf16 --gemm 1024,2048,4096,8192,16384
  run exp --ops exp --dtype f32 --exp 2^20,2^22,2^24,2^26,2^27,2^28,2^29,2^30
  run copy --ops copy --copy 1MiB,4MiB,16MiB,64MiB,256MiB,1GiB
fi
if step peers && [ -f "$stage/peers.py" ]; then
  timeout 120 python3 "$stage/peers.py" --ops gemm --gemm 8192 --dtypes bf16 >"$out/peers.jsonl" 2>>"$log"
  timeout 120 python3 "$stage/peers.py" --ops exp --exp 536870912 --dtypes f32 >>"$out/peers.jsonl" 2>>"$log"
  say "peers: rc $?"
fi
python3 tools/device/default_sizes_table.py "$out" | tee "$out/table.md"

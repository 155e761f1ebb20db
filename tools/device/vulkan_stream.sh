#!/bin/bash
# Vulkan's bandwidth-bound shaders (exp, the device copy) on the GPU machine, each experiment
# variant in turn: dedicated allocations off (GPUCHECK_TEST_VULKAN_NO_DEDICATED) and other
# unrolls (GPUCHECK_TEST_VULKAN_STREAM_UNROLL), beside CUDA's figures. Stage with
# tools/device/stage.sh vulkan; carry .devrun/vulkan. Prints one line a record.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
stage=.devrun/vulkan
out=${OUT:-$root/vulkan-out}
mkdir -p "$out"
scratch=$(mktemp -d)
for d in "$stage"/debs/*.deb; do dpkg -x "$d" "$scratch"; done
export LD_LIBRARY_PATH=$scratch/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export XDG_CACHE_HOME=$out/cache
g=$stage/install/bin/gpucheck
args=(bench --no-baseline --ops exp,copy --dtype f32,f16 --exp "${EXP:-16777216,536870912}"
  --copy "${COPY:-1073741824}" --warmup 10 --reps 10 --rounds 1)
"$g" "${args[@]}" --device cuda0 -o "$out/cuda.json" 2>/dev/null | tail -1
for v in default GPUCHECK_TEST_VULKAN_NO_DEDICATED=1 GPUCHECK_TEST_VULKAN_STREAM_UNROLL=1 \
  GPUCHECK_TEST_VULKAN_STREAM_UNROLL=8; do
  echo "== $v"
  [ "$v" = default ] && v=GPUCHECK_NOTHING=1
  env "$v" "$g" "${args[@]}" --device vulkan0 -o "$out/v.json" 2>/dev/null | tail -1
  python3 tools/device/vulkan_samples.py "$out/v.json" | grep -v "h2d\|d2h" | cut -c1-150
done
echo "== cuda"
python3 tools/device/vulkan_samples.py "$out/cuda.json" | grep -v "h2d\|d2h" | cut -c1-150
rm -rf "$scratch"

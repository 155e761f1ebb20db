#!/bin/bash
# Vulkan beside CUDA on the same GPU, in one call. Stage first, here: tools/device/stage.sh
# vulkan; carry .devrun/vulkan. The GPU machine has NVIDIA's Vulkan driver but no loader: the
# staged Debian packages (libvulkan1, vulkan-tools and their X/Wayland client libraries, and
# libglvnd: without its libGLdispatch NVIDIA's libGLX_nvidia.so.0 loads but hands the loader no
# vkCreateInstance, "Found no drivers") are unpacked with dpkg -x and put on LD_LIBRARY_PATH.
#   1. vulkaninfo --summary and gpucheck probe's Vulkan section (cooperative matrices, subgroups)
#   2. bench --device vulkan0,cuda0: GEMM f32/f16, exp f32/f16, 1 GiB copies, launch latency
#   3. conv2d on three shapes (3×3, 1×1, 7×7 stride 2), both layouts, f32 and f16
#   4. the cooperative-matrix shader's tiles (GPUCHECK_TEST_VULKAN_COOPMAT_TILE) on f16 GEMM
#   5. exp and device copies at growing sizes, the stream shaders' groups capped or not
#      (GPUCHECK_TEST_VULKAN_STREAM_GROUPS)
#   6. cli: the Vulkan CLI tests (probe against vulkaninfo, bench, stress, qualify) on the GPU
#   7. qualify: configs/qualify/vulkan.toml and vulkan-gpu.toml on vulkan0; stress on vulkan0
#   8. gemm32: f32 GEMM beside cuBLASLt after a full tuning search (TUNE_BUDGET, default 30 s)
#   9. pageable: host copies of 256 MiB and 1 GiB, pinned and pageable, both ways, beside CUDA's
#      (with OLD=path/to/an/older/gpucheck, that binary's too, in the same call); not in the
#      default set
#  10. convparams: conv f32 on the three shapes with each GEMM parameter set of PARAMS
#      (GPUCHECK_TEST_GEMM_PARAMS; the tuned set first); not in the default set
#  11. gemmparams: GEMM f32 at GEMM's sizes with each parameter set of PARAMS, likewise
# STEPS="probe main conv coopmat stream cli qualify gemm32" (the default) picks steps.
# GPUCHECK_BIN=path runs another gpucheck (an older build, carried beside) through the same steps.
# Output under $OUT (default ./vulkan-out): every gpucheck document and log.txt; the tables are
# printed as they come.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
stage=.devrun/vulkan
out=${OUT:-$root/vulkan-out}
mkdir -p "$out"
log=$out/log.txt
: >"$log"
say() { echo "vulkan.sh: $*" | tee -a "$log" >&2; }
gpucheck=${GPUCHECK_BIN:-$stage/install/bin/gpucheck}  # another build: a path from the root
[ -x "$gpucheck" ] || { say "no $gpucheck: run tools/device/stage.sh vulkan here"; exit 2; }
cat "$stage/STAGED" 2>/dev/null

scratch=$(mktemp -d)
for d in "$stage"/debs/*.deb; do dpkg -x "$d" "$scratch" || say "dpkg -x $d failed"; done
export LD_LIBRARY_PATH=$scratch/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# NVIDIA's driver manifest: the loader's search path first, then where the container puts it.
say "driver manifests: $(find / -xdev -name 'nvidia_icd*.json' 2>/dev/null | tr '\n' ' ')"
vk_ok() { "$gpucheck" probe --json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(b["name"] == "vulkan" and b.get("devices") for b in d["backends"]) else 1)'; }
if ! vk_ok; then
  for f in $(find / -xdev -name 'nvidia_icd*.json' 2>/dev/null); do
    export VK_DRIVER_FILES=$f
    vk_ok && break
    unset VK_DRIVER_FILES
  done
fi
say "VK_DRIVER_FILES=${VK_DRIVER_FILES:-unset}"
if ! vk_ok; then
  say "no Vulkan device through any manifest; vulkaninfo says:"
  "$scratch/usr/bin/vulkaninfo" --summary 2>&1 | tail -30
  exit 3
fi
export XDG_CACHE_HOME=$out/cache

step() {  # step NAME [ENV=V ...] -- gpucheck args...
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  say "== $name: ${envs[*]} gpucheck $*"
  local t0=$SECONDS
  env "${envs[@]}" "$gpucheck" "$@" >"$out/$name.txt" 2>"$out/$name.err"
  local rc=$?
  say "   rc $rc, $((SECONDS - t0)) s"
  case $name in probe) ;; *) tail -1 "$out/$name.txt" ;; esac
  grep -v ' elapsed · ' "$out/$name.err" | tail -5
}

steps=" ${STEPS:-probe main conv coopmat stream cli qualify gemm32} "
want() { [[ "$steps" == *" $1 "* ]]; }

if want probe; then
"$scratch/usr/bin/vulkaninfo" --summary 2>&1 | sed -n '/Devices:/,$p' | head -30 | tee -a "$log"
step probe -- probe --json
python3 - "$out/probe.txt" <<'PY' || true
import json, sys
d = json.load(open(sys.argv[1]))
for b in d["backends"]:
    if b["name"] != "vulkan": continue
    for dev in b.get("devices", []):
        p = dev["properties"]
        print(dev["device"], dev["device_name"], "subgroup", p.get("subgroup", {}).get("size"))
        print(" cooperative_matrix:", json.dumps(p.get("cooperative_matrix")))
        nv = p.get("cooperative_matrix_nv", {})
        print(" nv supported", nv.get("supported"), [
            f'{x["m"]}x{x["n"]}x{x["k"]} {x["a"]}/{x["c"]}/{x.get("d")} {x["scope"]}'
            for x in nv.get("properties", [])])
PY
fi
if want main; then
step bench_main -- bench --device vulkan0,cuda0 --no-baseline --ops gemm,exp,copy,latency \
  --gemm "${GEMM:-2560,4096,5120,8192}" --dtype f32,f16 --exp 16777216,536870912 --copy 1073741824 \
  --reps 5 -o "$out/bench_main.json"
python3 tools/device/vulkan_samples.py "$out/bench_main.json" | cut -c1-160
fi
# The three conv shapes: 3×3, 1×1, and 7×7 stride 2, each with 64 output channels.
conv_shapes="32,64,56,56,64,3,3,1,1;32,256,56,56,64,1,1,1,0;32,3,224,224,64,7,7,2,3"
if want conv; then
step conv -- bench --device vulkan0,cuda0 --no-baseline --ops conv --dtype f32,f16 --layout nchw,nhwc \
  --conv "$conv_shapes" \
  --reps 5 -o "$out/conv.json"
python3 tools/device/vulkan_samples.py "$out/conv.json" | cut -c1-160
fi
if want coopmat; then
for tile in ${TILES:-256x128x32 128x256x32}; do
  step "coopmat_$tile" GPUCHECK_TEST_VULKAN_COOPMAT_TILE=$tile -- bench --device vulkan0 --no-baseline \
    --ops gemm --dtype f16 --gemm 4096,8192 --reps 5 -o "$out/coopmat_$tile.json"
  python3 tools/device/vulkan_samples.py "$out/coopmat_$tile.json" | cut -c1-160
done
fi
# One bench per GEMM parameter set: the tuned set, then each of $1 (GPUCHECK_TEST_GEMM_PARAMS).
param_sweep() {  # param_sweep STEP "SETS" bench args...
  local name=$1 sets=$2 params envs tag
  shift 2
  for params in tuned $sets; do
    envs=(); [ "$params" = tuned ] || envs=("GPUCHECK_TEST_GEMM_PARAMS=$params")
    tag=${name}_${params//[=,]/_}
    step "$tag" "${envs[@]}" -- bench --device vulkan0 --no-baseline --reps 5 "$@" -o "$out/$tag.json"
    python3 tools/device/vulkan_samples.py "$out/$tag.json" | cut -c1-160
  done
}
if want convparams; then
  param_sweep convparams "${PARAMS:-wx=16,wy=8,tm=8,tn=8,bk=8,vec4=1 wx=8,wy=16,tm=8,tn=8,bk=8,vec4=1}" \
    --ops conv --dtype f32 --layout nchw,nhwc --conv "$conv_shapes"
fi
if want gemmparams; then
  param_sweep gemmparams "${PARAMS:-wx=16,wy=16,tm=8,tn=8,bk=8,vec4=1}" \
    --ops gemm --dtype f32 --gemm "${GEMM:-2560,4096,5120,8192}"
fi
if want stream; then
for groups in 0 1056 4224; do
  step "stream_$groups" GPUCHECK_TEST_VULKAN_STREAM_GROUPS=$groups -- bench --device vulkan0 --no-baseline \
    --ops exp,copy --dtype f32 --exp 67108864,268435456,536870912 --copy 67108864,268435456 --warmup 5 \
    --reps 5 --rounds 1 -o "$out/stream_$groups.json"
  python3 tools/device/vulkan_samples.py "$out/stream_$groups.json" | grep -v "h2d\|d2h" | cut -c1-120
done
fi
if want cli; then
  # The tests find fixtures and configs under the source path they were built in.
  src_dir=$(strings "$stage/cli_tests" | grep -m1 -o '^/[^ ]*/tests/fixtures' | sed 's,/tests/fixtures$,,')
  [ -n "$src_dir" ] && [ ! -e "$src_dir" ] && mkdir -p "$(dirname "$src_dir")" && ln -s "$root" "$src_dir"
  say "== cli: cli_tests on vulkan0 (sources at ${src_dir:-?})"
  PATH=$scratch/usr/bin:$PATH GPUCHECK_TEST_BINARY=$root/$gpucheck \
    "$stage/cli_tests" --gtest_filter='Vulkan*' --gtest_brief=1 >"$out/cli.txt" 2>&1
  say "   rc $?"
  grep -E "FAILED|Failure|SKIPPED|PASSED|tests ran" "$out/cli.txt" | head -30
fi
if want qualify; then
  for profile in vulkan vulkan-gpu; do
    step "qualify_$profile" -- qualify --profile "configs/qualify/$profile.toml"
    grep -E "MET|UNMET|SKIP|FAIL" "$out/qualify_$profile.txt" | cut -c1-150 | head -20
  done
  step stress -- stress --device vulkan0 --duration 20s --json
  # The document's verdicts (its devices' and the run's), without parsing its layout here.
  grep -o '"verdict": *"[a-z_]*"' "$out/stress.txt" | sort | uniq -c
fi
if want gemm32; then
  step gemm32 -- bench --device vulkan0,cuda0 --no-baseline --ops gemm --dtype f32 \
    --gemm "${GEMM32:-2560,5120,8192,3000}" --retune --tune-budget "${TUNE_BUDGET:-30}" --reps 5 \
    -o "$out/gemm32.json"
  python3 tools/device/vulkan_samples.py "$out/gemm32.json" | cut -c1-200
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(r["device"], r["shape"], json.dumps(r.get("context",{}).get("tuning_parameters"))[:300], r.get("context",{}).get("gemm_path")) for r in d["results"] if r.get("device")=="vulkan0"]' "$out/gemm32.json" || true
fi
if want pageable; then
  step pageable -- bench --device vulkan0,cuda0 --no-baseline --ops copy --copy 256MiB,1GiB --json
  python3 tools/device/vulkan_samples.py "$out/pageable.txt" | cut -c1-200
  if [ -n "${OLD:-}" ]; then
    gpucheck=$OLD step pageable_old -- bench --device vulkan0 --no-baseline --ops copy \
      --copy 256MiB,1GiB --json
    python3 tools/device/vulkan_samples.py "$out/pageable_old.txt" | cut -c1-200
  fi
fi
rm -rf "$scratch"

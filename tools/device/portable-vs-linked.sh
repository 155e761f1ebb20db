#!/bin/bash
# Issue 14 on the GPU machine, in one call: the portable binary (.devrun/portable, no bundle) and a
# build that links fmt/spdlog/toml++/OpenBLAS at load time (.devrun/fx, needs .devlibs; an older
# commit, the last before run-time BLAS) run the same CPU GEMM f32 2048 in alternating rounds,
# and the portable one runs bench on cpu and cuda0 at --size medium with every record checked.
# Prints the per-round TFLOP/s and the median ratio last. Files under $OUT.
set -u
out=${OUT:-/tmp/portable-vs-linked}
mkdir -p "$out"
portable=.devrun/portable/install/bin/gpucheck
linked=.devrun/fx/install/bin/gpucheck
gemm() {  # $1 label, $2 binary, [$3 env file to source]
  (
    [ -n "${3:-}" ] && source "$3"
    "$2" bench --device cpu --no-baseline --ops gemm --dtype f32 --gemm 2048 --reps 10 \
      --min-time 0 --json -o "$out/gemm-$1.json" 2>>"$out/gemm.err"
  )
  python3 -c "import json,sys; r=[x for x in json.load(open(sys.argv[1]))['results'] if x['op']=='gemm'][0]; print(r['status'], r.get('throughput',{}).get('value', r.get('tflops','?')))" "$out/gemm-$1.json"
}
for round in 1 2 3; do
  echo "round $round portable $(gemm portable-$round "$portable")"
  echo "round $round linked   $(gemm linked-$round "$linked" .devlibs/env.sh)"
done | tee "$out/gemm.txt"
timeout 300 "$portable" bench --device cpu,cuda0 --size medium --json -o "$out/bench-medium.json" \
  2>"$out/bench-medium.err"
echo "bench medium (portable): exit $?"
python3 - "$out" <<'PY'
import json, statistics, sys, collections
out = sys.argv[1]
p, l = [], []
for line in open(f"{out}/gemm.txt"):
    w = line.split()
    (p if w[2] == "portable" else l).append(float(w[4]))
print(f"CPU GEMM f32 2048 TFLOP/s median: portable {statistics.median(p):.4g}, linked {statistics.median(l):.4g}, ratio {statistics.median(p)/statistics.median(l):.3f}")
try:
    d = json.load(open(f"{out}/bench-medium.json"))
    print("bench medium records:", dict(collections.Counter(r["status"] for r in d["results"])))
except Exception as e:
    print("bench medium: no document:", e)
PY

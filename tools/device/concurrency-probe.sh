#!/bin/bash
# Issue 17 diagnostic on a two-GPU machine (about 45 s): tensor-core GEMMs of 2048³ on cuda0 and
# cuda1, concurrent and --serial, alternating twice, with only GEMM cells in the plan (no sibling
# copies), and each record's concurrent/serial ratio. Uses what tools/device/stage-multigpu.sh
# staged: carry .devrun/multigpu and run bash tools/device/concurrency-probe.sh.
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
probe_dir=$root/.devrun/multigpu
# shellcheck disable=SC1091
source "$probe_dir/devlibs/env.sh" 2>/dev/null
g=$probe_dir/install/bin/gpucheck
out=${OUT:-/tmp/cp}; mkdir -p "$out"
for i in 1 2; do
  for mode in conc ser; do
    extra=""; [ $mode = ser ] && extra="--serial"
    t0=$(date +%s.%N)
    "$g" bench --device cuda0,cuda1 --no-baseline --ops gemm --dtype f16,bf16,tf32 --gemm 2048 --json $extra > "$out/$mode$i.json" 2>>"$out/log"
    echo "$mode$i exit $? $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s"
  done
done
python3 - "$out" <<'PY'
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

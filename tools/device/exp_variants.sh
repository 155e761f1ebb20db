#!/usr/bin/env bash
# On the GPU machine: the exp variants of exp_variants.cu (staged as .devrun/exp/exp_variants),
# then torch.exp timed alike (7 rounds of back-to-back calls after 3 warm-ups, CUDA events), at
# each size of SIZES (log2 of the float count), with the SM clock and power sampled meanwhile.
set -uo pipefail
here=${STAGE:-.devrun/exp}
out=${OUT:-/tmp}
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,clocks_throttle_reasons.active \
  --format=csv -lms 250 >"$out/exp-smi.csv" 2>&1 &
smi=$!
for s in ${SIZES:-24 26 29}; do "$here/exp_variants" "$s" 7; done
python3 - ${SIZES:-24 26 29} <<'PY'
import sys, torch
for log2n in map(int, sys.argv[1:]):
    n = 1 << log2n
    x = torch.rand(n, device="cuda") * 2 - 1
    y = torch.empty_like(x)
    reps = 20 if log2n >= 28 else 200
    res = []
    for _ in range(7):
        for _ in range(3):
            torch.exp(x, out=y)
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        for _ in range(reps):
            torch.exp(x, out=y)
        e.record()
        e.synchronize()
        res.append(2 * n * 4 * reps / (s.elapsed_time(e) * 1e-3) / 1e9)
    res.sort()
    print(f"2^{log2n} torch.exp median {res[len(res)//2]:7.1f} GB/s  min {res[0]:7.1f}  max {res[-1]:7.1f}")
PY
kill $smi

#!/bin/bash
# stress's host copies against bench's pinned copies on every GPU of the machine, in about two
# minutes: the target is each direction of stress ≥ 0.9 × bench's pinned copy of that direction
# with the same GPUs copying at once (they share the host's memory and PCIe root).
#   1. bench, one GPU's host copies at a time (the default host lock): each GPU alone
#   2. bench --host-copies-together: every GPU's host copies at the same time (the baseline), with
#      pinned copies both ways at once (direction "both": each direction's figure while the
#      other runs, the baseline stress's round trips are judged against: "stress/both")
#   3. stress --tests copy on every GPU for DUR s (default 20; with several GPUs the host copies
#      take the first half, the peer copies the second)
# Any staged gpucheck: GPUCHECK=.devrun/stress/install/bin/gpucheck (tools/device/stage.sh
# stress). Output under $OUT (default ./hostcopy-out): the three documents and table.txt.
# MIN_TIME (default 3) is each bench cell's --min-time; ALONE=0 skips step 1 (the baseline is
# step 2) when device time is short. ONE=1 adds bench and stress on cuda0 with no other GPU
# visible: the line rate where the host is not shared.
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
gpucheck=${GPUCHECK:-$root/.devrun/stress/install/bin/gpucheck}
out=${OUT:-$root/hostcopy-out}
DUR=${DUR:-20}
[ -x "$gpucheck" ] || { echo "hostcopy.sh: no $gpucheck (GPUCHECK=path)" >&2; exit 2; }
command -v nvidia-smi >/dev/null || { echo "hostcopy.sh: no nvidia-smi: not a GPU machine" >&2; exit 2; }
mkdir -p "$out"
gpus=$(nvidia-smi -L | grep -c '^GPU ')
devices=$(seq -s, -f 'cuda%g' 0 $((gpus - 1)))
# Cells of 3 s each: the GPUs' children start a second apart at most, so their copies overlap.
bench=(bench --device "$devices" --no-baseline --ops copy --copy 256MiB --rounds 1
       --min-time "${MIN_TIME:-3}" --warmup 3 --json)
echo "hostcopy.sh: $gpus GPU(s): $devices" >&2
if [ "${ALONE:-1}" != 0 ]; then
  "$gpucheck" "${bench[@]}" -o "$out/bench-alone.json" || echo "hostcopy.sh: bench alone: exit $?" >&2
fi
"$gpucheck" "${bench[@]}" --host-copies-together -o "$out/bench-together.json" ||
  echo "hostcopy.sh: bench together: exit $?" >&2
"$gpucheck" stress --device "$devices" --tests copy --duration "${DUR}s" --json \
  -o "$out/stress.json" || echo "hostcopy.sh: stress: exit $?" >&2
if [ "${ONE:-0}" != 0 ] && [ "$gpus" -gt 1 ]; then
  # One GPU alone, both tools: whether stress reaches line rate where the host is not shared.
  CUDA_VISIBLE_DEVICES=0 "$gpucheck" "${bench[@]/$devices/cuda0}" --host-copies-together \
    -o "$out/bench-one.json" ||
    echo "hostcopy.sh: bench on one GPU: exit $?" >&2
  CUDA_VISIBLE_DEVICES=0 "$gpucheck" stress --device cuda0 --tests copy --duration "${DUR}s" \
    --json -o "$out/stress-one.json" || echo "hostcopy.sh: stress on one GPU: exit $?" >&2
fi
python3 - "$out" <<'PY' | tee "$out/table.txt"
import json, sys
out = sys.argv[1]
def pinned(name):
    try:
        doc = json.load(open(f"{out}/{name}"))
    except (OSError, ValueError):
        return {}
    out_ = {}
    for r in doc.get("results", []):
        if r.get("op") != "copy" or r.get("status") != "ok" or r["shape"].get("host_memory") != "pinned":
            continue
        d = r["shape"]["direction"]
        if d == "both":  # each direction's own figure while the other ran: (device, "both h2d")
            for dir, v in zip(("h2d", "d2h"), r.get("context", {}).get("direction_gbps", [])):
                out_[(r["device"], "both " + dir)] = v
        else:
            out_[(r["device"], d)] = r["throughput"]["value"]
    return out_
def stress_devices(name):
    try:
        return json.load(open(f"{out}/{name}"))["stress"]["devices"]
    except (OSError, ValueError, KeyError):
        return []
def table(title, stress, together, alone):
    print(title)
    print(f"{'device':8} {'dir':4} {'bench alone':>11} {'bench together':>14} {'both ways':>9} "
          f"{'stress':>8} {'stress/together':>15} {'stress/both':>11}  verdict")
    for d in stress:
        rec = next((r for r in d.get("records", []) if r.get("test") == "copy"), {})
        c = rec.get("copy", {})
        for dir in ("h2d", "d2h"):
            s, t, a = c.get(f"{dir}_gbps"), together.get((d["device"], dir)), alone.get((d["device"], dir))
            b = together.get((d["device"], "both " + dir))
            ratio = f"{s / t:.2f}" if s and t else "-"
            ratio_b = f"{s / b:.2f}" if s and b else "-"
            f = lambda v: f"{v:.1f}" if v else "-"
            print(f"{d['device']:8} {dir:4} {f(a):>11} {f(t):>14} {f(b):>9} {f(s):>8} {ratio:>15} "
                  f"{ratio_b:>11}  {d.get('verdict')} ({c.get('transfers_verified')} verified, "
                  f"{c.get('mismatches')} differed)")
table("every GPU at once", stress_devices("stress.json"), pinned("bench-together.json"),
      pinned("bench-alone.json"))
one = pinned("bench-one.json")
if one:
    table("cuda0 alone (CUDA_VISIBLE_DEVICES=0): bench's figure is the baseline",
          stress_devices("stress-one.json"), one, one)
PY

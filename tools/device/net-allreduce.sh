#!/bin/bash
# The path between nodes, on one GPU machine with two or more GPUs, in one call of a few minutes:
#   (a) bench --ops allreduce --transport net: NCCL's P2P and SHM transports off, so the
#       all-reduce takes the network path (IB, RoCE or sockets); the record names the transport
#       NCCL chose (context.nccl_transports, from NCCL's own log);
#   (b) two gpucheck processes as two ranks (one GPU each: CUDA_VISIBLE_DEVICES=0 and 1), meeting
#       through a rendezvous file, forced network transport, exact results;
#   (c) the same through TCP (rank 0's 127.0.0.1:PORT), each rank naming its GPU with --device,
#       NCCL's own choice of transport;
#   (d) a rank left alone: exit 2 within its --rendezvous-timeout, naming rank 0.
# Staged by tools/device/stage.sh net-allreduce into .devrun/net-allreduce (carry it).
#
#   bash tools/device/net-allreduce.sh        # in the repository root; OUT= where files go
#
# Files under $OUT: net.json rank0-file.json rank1-file.json rank0-tcp.json rank1-tcp.json
# alone.err net-allreduce.log (everything printed, a summary last).
set -uo pipefail
tools=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$tools/../.." && pwd)
cd "$root" || exit 2
here=${STAGE:-$root/.devrun/net-allreduce}
OUT=${OUT:-$PWD/net-allreduce-out}
mkdir -p "$OUT"
exec > >(tee -a "$OUT/net-allreduce.log") 2>&1
gpucheck=$here/install/bin/gpucheck
echo "net-allreduce.sh: $(date -u +%FT%TZ) on $(hostname)"
cat "$here/STAGED" 2>/dev/null || echo "WARNING: no STAGED file: which commit is this?"
[ -x "$gpucheck" ] || { echo "FATAL: no $gpucheck: run tools/device/stage.sh net-allreduce and carry .devrun/net-allreduce"; exit 2; }
"$gpucheck" --version || exit 2
nvidia-smi -L || echo "WARNING: nvidia-smi -L failed"
size=${SIZE:-64MiB}
common=(bench --ops allreduce --allreduce "1MiB,$size" --reps 5 --rounds 1 --json)

echo "=== (a) one process, two GPUs, --transport net"
timeout 240 "$gpucheck" "${common[@]}" --device cuda0,cuda1 --transport net -o "$OUT/net.json"
echo "=== (a) exit $?"

echo "=== (b) two processes, a rendezvous file, --transport net"
rdv=$OUT/rendezvous
rm -f "$rdv" "$rdv".*
CUDA_VISIBLE_DEVICES=0 timeout 240 "$gpucheck" "${common[@]}" --transport net --rank 0 \
  --world-size 2 --rendezvous "$rdv" --rendezvous-timeout 60 -o "$OUT/rank0-file.json" &
p0=$!
CUDA_VISIBLE_DEVICES=1 timeout 240 "$gpucheck" "${common[@]}" --transport net --rank 1 \
  --world-size 2 --rendezvous "$rdv" --rendezvous-timeout 60 -o "$OUT/rank1-file.json"
rc1=$?
wait $p0
echo "=== (b) exit rank 0: $?, rank 1: $rc1; file left behind: $(ls "$rdv"* 2>/dev/null || echo none)"

echo "=== (c) two processes, TCP, --device cuda0 / cuda1, NCCL's own transport"
port=$((29600 + RANDOM % 1000))
timeout 240 "$gpucheck" "${common[@]}" --device cuda0 --rank 0 --world-size 2 \
  --rendezvous "127.0.0.1:$port" --rendezvous-timeout 60 -o "$OUT/rank0-tcp.json" &
p0=$!
timeout 240 "$gpucheck" "${common[@]}" --device cuda1 --rank 1 --world-size 2 \
  --rendezvous "127.0.0.1:$port" --rendezvous-timeout 60 -o "$OUT/rank1-tcp.json"
rc1=$?
wait $p0
echo "=== (c) exit rank 0: $?, rank 1: $rc1"

echo "=== (d) a rank alone (exit 2 expected within about 3 s)"
s=$(date +%s)
timeout 60 "$gpucheck" "${common[@]}" --device cuda0 --rank 1 --world-size 2 \
  --rendezvous "127.0.0.1:$((port + 1))" --rendezvous-timeout 3 2> "$OUT/alone.err" > /dev/null
echo "=== (d) exit $? after $(($(date +%s) - s)) s: $(tail -1 "$OUT/alone.err")"

python3 - "$OUT" <<'PY'
import json, os, sys
out = sys.argv[1]
print("\n=== summary: document | rank | device(s) | bytes | status | verify | busbw GB/s | transport NCCL used")
for name in ("net", "rank0-file", "rank1-file", "rank0-tcp", "rank1-tcp"):
    path = os.path.join(out, name + ".json")
    if not os.path.exists(path):
        print(f"{name}: NO DOCUMENT"); continue
    doc = json.load(open(path))
    ranks = doc.get("ranks")
    if ranks:
        print(f"{name}: ranks " + "; ".join(
            f"{r.get('rank')}@{r.get('hostname')}:" + ",".join(
                d.get("device", "?") + "(" + d.get("device_uuid", "?")[:12] + ")" for d in r.get("devices", []))
            for r in ranks))
    for r in doc.get("results", []):
        c = r.get("context", {})
        v = r.get("verification", {})
        print(f"{name} | {c.get('first_rank', '-')}/{c.get('ranks', '-')} | {r.get('device')} | "
              f"{r.get('shape', {}).get('bytes')} | {r.get('status')} | {v.get('method', '?')} "
              f"{'ok' if v.get('ok', r.get('status') == 'ok') else 'BAD'} | {r.get('busbw', 0):.2f} | "
              f"transport={c.get('transport')} nccl_transports={c.get('nccl_transports')} "
              f"network={c.get('nccl_network')} {r.get('reason', '')}")
PY

#!/bin/bash
# A change to the code's structure must not move a GPU figure: the old build against the new on
# cuda0, `bench --size medium` old, new, old, new, in one call; then whether each record's new
# mean lies within the two pairs' spread + 2 % (the same records and statuses first). Then
# p2p/all-reduce on every GPU with both builds (the same records and statuses) and a 20 s stress
# of every GPU with the new one.
#   OLD=.devrun/old/install/bin/gpucheck NEW=.devrun/multigpu/install/bin/gpucheck \
#     bash tools/device/build_change.sh
# Stage: NEW with tools/device/stage.sh multigpu; OLD with `cmake --install BUILD --prefix
# .devrun/old/install --strip` of a build of the old commit; carry both. Files under $OUT (default
# /tmp/build-change), packed into $OUT/build-change.tgz when OUT is the device call's.
set -u
new=${NEW:-.devrun/multigpu/install/bin/gpucheck}
old=${OLD:-.devrun/old/install/bin/gpucheck}
m=/tmp/build-change
mkdir -p "$m"
"$old" --version && "$new" --version || { echo "build_change.sh: OLD and NEW must run"; exit 2; }
nvidia-smi -L | head -8
for r in 1 2; do
  for b in old new; do
    bin=$old
    [ "$b" = new ] && bin=$new
    s=$SECONDS
    timeout 120 "$bin" bench --device cuda0 --no-baseline --size medium --json -o "$m/$b-$r.json" \
      2>"$m/$b-$r.err"
    echo "$b run $r: exit $? in $((SECONDS - s)) s"
  done
done
python3 "$(dirname "$0")/build_change.py" medium "$m"
nccl=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2
nccl_flag=()
[ -f "$nccl" ] && nccl_flag=(--nccl "$nccl")
# The work between GPUs, old and new, at the default sizes and at sizes the flags give: the
# same records and statuses (their figures are judged by multigpu.sh, not here).
for b in old new; do
  bin=$old
  [ "$b" = new ] && bin=$new
  s=$SECONDS
  timeout 90 "$bin" bench --device all --no-baseline --ops p2p,allreduce -v "${nccl_flag[@]}" \
    --json >"$m/scale-$b.json" 2>"$m/scale-$b.log"
  echo "p2p/all-reduce on every GPU ($b): exit $? in $((SECONDS - s)) s"
  grep -E "group of" "$m/scale-$b.log" | tail -1
  s=$SECONDS
  timeout 90 "$bin" bench --device all --no-baseline --ops p2p,allreduce "${nccl_flag[@]}" \
    --copy 64MiB --allreduce 4KiB,64MiB --json >"$m/flags-$b.json" 2>"$m/flags-$b.log"
  echo "p2p/all-reduce, sizes from flags ($b): exit $? in $((SECONDS - s)) s"
done
python3 "$(dirname "$0")/build_change.py" group "$m"
s=$SECONDS
timeout 60 "$new" stress --device all --duration 20s --json -o "$m/stress.json" >"$m/stress.out" 2>&1
echo "stress 20 s on every GPU (new): exit $? in $((SECONDS - s)) s"
[ -n "${OUT:-}" ] && tar czf "$OUT/build-change.tgz" -C "$m" . 2>/dev/null
exit 0

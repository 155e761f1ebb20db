#!/bin/bash
# A change to the code's structure must not move a GPU figure: the old build against the new on
# cuda0, `bench --size medium` old, new, old, new, in one call; then whether each record's new
# mean lies within the two pairs' spread + 2 % (the same records and statuses first). Then the
# new build's p2p/all-reduce run on every GPU and a 20 s stress of every GPU.
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
python3 - "$m" <<'PY'
import json, sys
d = sys.argv[1]
def recs(n):
    try:
        doc = json.load(open(f"{d}/{n}.json"))
    except Exception as e:  # noqa: BLE001 - report and go on
        print(n, e)
        return {}
    return {json.dumps([r["op"], r.get("dtype"), r["shape"], r.get("transfers"), r.get("impl")],
                       sort_keys=True): r for r in doc["results"]}
o1, o2, n1, n2 = (recs(x) for x in ("old-1", "old-2", "new-1", "new-2"))
print("record sets equal:", set(o1) == set(o2) == set(n1) == set(n2), len(o1), len(n1))
print("statuses equal:", all(o1[k]["status"] == n1[k]["status"] == n2[k]["status"]
                             for k in o1 if k in n1 and k in n2))
within, rows = 0, []
for k in o1:
    if o1[k]["status"] != "ok" or not all(k in x and x[k]["status"] == "ok" for x in (o2, n1, n2)):
        continue
    a, b, c, e = (x[k]["time_s"]["median"] for x in (o1, o2, n1, n2))
    om, nm = (a + b) / 2, (c + e) / 2
    spread = max(abs(b / a - 1), abs(e / c - 1))
    ok = abs(nm / om - 1) <= spread + 0.02
    within += ok
    rows.append((nm / om, spread, ok, k))
print(f"new mean within the pairs' spread + 2 %: {within} of {len(rows)}")
if rows:
    rs = sorted(r[0] for r in rows)
    print(f"new/old median time: median {rs[len(rs) // 2]:.3f}, range {rs[0]:.3f}-{rs[-1]:.3f}")
for r in rows:
    if not r[2]:
        print(f"  outside: new/old {r[0]:.3f}, pair spread {r[1]:.3f}: {r[3]}")
PY
nccl=/opt/torch/.venv/lib/python3.12/site-packages/nvidia/nccl/lib/libnccl.so.2
nccl_flag=()
[ -f "$nccl" ] && nccl_flag=(--nccl "$nccl")
s=$SECONDS
timeout 90 "$new" bench --device all --no-baseline --ops p2p,allreduce -v "${nccl_flag[@]}" --json \
  >"$m/scale.json" 2>"$m/scale.log"
echo "p2p/all-reduce on every GPU (new): exit $? in $((SECONDS - s)) s"
grep -E "group of" "$m/scale.log" | tail -1
s=$SECONDS
timeout 60 "$new" stress --device all --duration 20s --json -o "$m/stress.json" >"$m/stress.out" 2>&1
echo "stress 20 s on every GPU (new): exit $? in $((SECONDS - s)) s"
[ -n "${OUT:-}" ] && tar czf "$OUT/build-change.tgz" -C "$m" . 2>/dev/null
exit 0

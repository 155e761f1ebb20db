#!/usr/bin/env bash
# Library choices and between-run noise on the GPU machine, in one call: RUNS (default 10)
# back-to-back `bench --device cuda0 --no-baseline --size small` runs with a fresh choice cache
# (the first searches, the others read its picks), every ordered single-base `report compare` of
# them (RUNS x (RUNS-1), none may exit 1), whether each record ran the same cuDNN engine /
# cuBLASLt algorithm in every run, and each record's spread of medians between runs. The
# documents come back as $OUT/runs.tgz (tools/perf/compare_rules.py and a rerun of report compare
# read them here). Binary: $GPUCHECK or .devrun/lib-choices/install/bin/gpucheck (staged by
# tools/device/stage.sh lib-choices; carry .devrun/lib-choices).
#   bash tools/device/lib_choices.sh [RUNS]
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bin=${GPUCHECK:-.devrun/lib-choices/install/bin/gpucheck}
out=${OUT:-/tmp/lib-choices-out}
runs=${1:-10}
work=/tmp/lib-choices
rm -rf "$work" && mkdir -p "$work/runs" "$out"
export XDG_CACHE_HOME=$work/cache
[ -x "$bin" ] || { echo "lib_choices.sh: no $bin: run tools/device/stage.sh lib-choices and carry .devrun/lib-choices"; exit 2; }
nvidia-smi --query-gpu=name,uuid,driver_version,clocks.sm,temperature.gpu,power.draw \
  --format=csv,noheader
"$bin" --version
pack() { tar czf "$out/runs.tgz" -C "$work" runs cache 2>/dev/null; }
for i in $(seq 1 "$runs"); do
  start=$SECONDS
  "$bin" bench --device cuda0 --no-baseline --size small --json -o "$work/runs/r$i.json" \
    2>"$work/runs/r$i.err"
  rc=$?
  printf 'run %2d exit %d in %d s\n' "$i" "$rc" "$((SECONDS - start))"
  if [ "$rc" != 0 ]; then tail -20 "$work/runs/r$i.err"; pack; exit 1; fi
  pack
done
fails=0
for i in $(seq 1 "$runs"); do
  for j in $(seq 1 "$runs"); do
    [ "$i" = "$j" ] && continue
    "$bin" report compare "$work/runs/r$i.json" "$work/runs/r$j.json" --json \
      -o "$work/runs/c$i-$j.json" 2>/dev/null
    rc=$?
    [ "$rc" = 0 ] || { fails=$((fails + 1)); echo "compare r$i r$j exit $rc"; }
  done
done
pack
echo "ordered single-base compares failing: $fails of $((runs * (runs - 1)))"
python3 - "$work/runs" "$runs" <<'PY'
import json, sys, statistics as st
d, n = sys.argv[1], int(sys.argv[2])
recs = {}
for i in range(1, n + 1):
    for r in json.load(open(f"{d}/r{i}.json"))["results"]:
        if r.get("status") != "ok": continue
        key = (r["op"], r.get("dtype"), json.dumps(r["shape"], sort_keys=True), r.get("transfers"))
        recs.setdefault(key, []).append((r["time_s"]["median"], (r.get("choice") or {}).get("id")))
changed = 0
rows = []
for key, v in recs.items():
    t = [x[0] for x in v]
    ids = {x[1] for x in v}
    if len(ids) > 1: changed += 1
    m = st.median(t)
    rows.append(((max(t) - min(t)) / m, (max(t) - min(t)) * 1e6, m * 1e6, key, len(ids)))
print(f"records with more than one choice over the runs: {changed} of {len(recs)}")
rows.sort(reverse=True)
print("spread  abs_us  median_us  choices  record")
for s, a, m, key, c in rows[:25]:
    print(f"{s*100:5.1f}% {a:7.2f} {m:10.2f}  {c}  {' '.join(str(x) for x in key)}")
PY
summary=$(python3 -c '
import json,glob,collections
c=collections.Counter()
for f in glob.glob("'"$work"'/runs/c*.json"):
    for k,v in json.load(open(f))["comparison"]["summary"].items(): c[k]+=v
print(dict(c))')
echo "verdicts over all compares: $summary"

# A planted 10 % slowdown of every record (GPUCHECK_TEST_SLOWDOWN=1.1) against the last three
# runs as bases: the share of records whose between-run spread is under 3 % that compare calls a
# REGRESSION (the goal is at least 95 %).
if [ "$runs" -ge 3 ]; then
  GPUCHECK_TEST_SLOWDOWN=1.1 "$bin" bench --device cuda0 --no-baseline --size small --json \
    -o "$work/runs/slow10.json" 2>"$work/runs/slow10.err"
  echo "planted 10 % run: exit $?"
  "$bin" report compare "$work/runs/r$((runs - 2)).json" "$work/runs/r$((runs - 1)).json" \
    "$work/runs/r$runs.json" "$work/runs/slow10.json" --json -o "$work/runs/c-slow10.json" 2>/dev/null
  echo "compare of the planted run against three bases: exit $?"
  pack
  python3 - "$work/runs/c-slow10.json" <<'PY'
import json, sys, collections
rows = json.load(open(sys.argv[1]))["comparison"]["rows"]
steady = [r for r in rows if r.get("between_runs") is not None and r["between_runs"] < 0.03]
caught = [r for r in steady if r.get("verdict") == "regression"]
share = len(caught) / len(steady) if steady else 0
print(f"planted 10 %: REGRESSION in {len(caught)} of {len(steady)} rows with a between-run "
      f"spread under 3 % ({share:.1%}; goal >= 95 %); all rows: "
      f"{dict(collections.Counter(r.get('verdict') for r in rows))}")
for r in steady:
    if r.get("verdict") != "regression":
        print(f"  not caught: {r.get('op')} {r.get('dtype', '')} {json.dumps(r.get('shape'))} "
              f"{r.get('verdict')}: {r.get('reason', '')[:120]}")
PY
fi

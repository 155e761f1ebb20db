#!/usr/bin/env bash
# Verdicts to trust, on the GPU machine in one call: bench rounds and report compare on cuda0
# (two runs compared both ways, planted slowdowns of 3x and 25 % against one and three bases),
# and SIGTERM during a CUDA bench (exit 143, -o kept, no child left on the GPU). Logs under $OUT
# (default /tmp/gpucheck-compare-out); a table last. Binary: .devrun/compare/install/bin/gpucheck
# (tools/device/stage.sh compare), or $GPUCHECK.
#   bash tools/device/compare.sh
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
bin=${GPUCHECK:-.devrun/compare/install/bin/gpucheck}
out=${OUT:-/tmp/gpucheck-compare-out}
mkdir -p "$out"
[ -x "$bin" ] || { echo "compare.sh: no $bin (run tools/device/stage.sh compare here first)"; exit 2; }
cat .devrun/compare/STAGED 2>/dev/null
rows=()
row() { rows+=("$(printf '%-46s %-10s %s' "$1" "$2" "$3")"); }
bench() {  # name, then extra flags: cuda0 small preset with the CPU baseline
  local name=$1; shift
  "$bin" bench --device cuda0 --size small --json -o "$out/$name.json" "$@" 2>"$out/$name.err"
}
compare() {  # name, then documents
  local name=$1; shift
  "$bin" report compare "$@" --json -o "$out/$name.json" 2>"$out/$name.err"
  echo $?
}
summary() { python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["comparison"]; print(" ".join(f"{k}={v}" for k,v in sorted(c["summary"].items()) if v))' "$1"; }

bench a; ra=$?
bench b; rb=$?
row "bench cuda0 small, twice (exit codes)" "$ra $rb" "expect 0 0"
python3 - "$out/a.json" >"$out/rounds.txt" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ok = [r for r in d["results"] if r["status"] == "ok"]
bad = [r for r in ok if len(r["time_s"].get("round_medians", [])) != 3 or not r["time_s"].get("samples")]
print(f"{len(ok)} ok records, {len(bad)} without 3 round medians and samples")
PY
row "records with rounds and samples" "$(cat "$out/rounds.txt")" "expect 0 without"
c1=$(compare ab "$out/a.json" "$out/b.json"); c2=$(compare ba "$out/b.json" "$out/a.json")
row "compare a b / b a (default 5 %)" "$c1 $c2" "expect 0 0; $(summary "$out/ab.json") | $(summary "$out/ba.json")"
GPUCHECK_TEST_SLOWDOWN=3 bench slow3
c3=$(compare a_slow3 "$out/a.json" "$out/slow3.json")
row "planted 3x slowdown" "$c3" "expect 1; $(summary "$out/a_slow3.json")"
bench c
GPUCHECK_TEST_SLOWDOWN=1.25 bench slow25
c4=$(compare bases_slow25 "$out/a.json" "$out/b.json" "$out/c.json" "$out/slow25.json")
row "planted 25 % slowdown vs 3 bases" "$c4" "expect 1; $(summary "$out/bases_slow25.json")"

# SIGTERM while the CUDA child runs a long GEMM: exit 143, the previous -o file kept, no
# gpucheck process left on the GPU.
echo previous >"$out/signal.json"
"$bin" bench --device cuda0 --no-baseline --ops gemm --dtype f32 --gemm 8192 --min-time 120 \
  --max-time 120 -o "$out/signal.json" 2>"$out/signal.err" &
pid=$!
for _ in $(seq 1 120); do
  sleep 1
  pgrep -f "__child bench" >/dev/null && break
done
sleep 5
kill -TERM "$pid"
wait "$pid"; rs=$?
sleep 2
left=$(pgrep -f "__child bench" | wc -l)
gpu_procs=$(nvidia-smi --query-compute-apps=pid,process_name --format=csv,noheader | grep -c gpucheck)
row "SIGTERM during a CUDA bench" "$rs" "expect 143; -o kept: $(cat "$out/signal.json"); children left: $left; on GPU: $gpu_procs"

echo
printf '%-46s %-10s %s\n' check result notes
for r in "${rows[@]}"; do echo "$r"; done

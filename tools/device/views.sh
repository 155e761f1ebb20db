#!/usr/bin/env bash
# Output for people on the GPU machine: the views as a new user meets them, and fresh real
# documents for the golden view tests (tests/fixtures/views/). Every command's JSON and its table
# view at 80 and 120 columns; probe -L, --device, --full; --version -v; doctor's progress in a log
# (stderr not a terminal: a line every 10 s); bench --size small and --size large (the "too small
# for the card" marks); probe --format prometheus (NVML gauges, one GPU- uuid per GPU); HTML of
# bench. Prints a table last: per view its lines, widest line, closing line.
# Needs tools/device/stage.sh views run here first (.devrun/views carried).
# Logs and documents under $OUT (default /tmp/gpucheck-views-out).
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
OUT=${OUT:-/tmp/gpucheck-views-out}
mkdir -p "$OUT"
g=$root/.devrun/views/install/bin/gpucheck
[ -x "$g" ] || { echo "views.sh: run tools/device/stage.sh views first" >&2; exit 2; }
cat .devrun/views/STAGED 2>/dev/null
unset COLUMNS
"$g" --version -v >"$OUT/version-v.txt" 2>&1
{ nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; } \
  >"$OUT/nvidia-smi.txt" 2>&1

# One saved document per command, then its views from the saved document (report show), so the
# golden tests can use the same documents.
"$g" probe --json -o "$OUT/probe.json" 2>"$OUT/probe.err"
"$g" doctor --json -o "$OUT/doctor.json" 2>"$OUT/doctor.err"
# --no-tune: OpenCL GEMM tuning on pocl would spend minutes on the CPU device; the
# views, not the tuning, are under test here.
GPUCHECK_PROGRESS_SECONDS=10 "$g" bench --device all --size small --no-tune --json -o "$OUT/bench_small.json" \
  2>"$OUT/bench_small.progress.log"
"$g" bench --device cpu,cuda0 --ops gemm,copy --size large --json -o "$OUT/bench_large.json" \
  2>"$OUT/bench_large.progress.log"
"$g" qualify --profile cuda-hopper --json -o "$OUT/qualify.json" 2>"$OUT/qualify.err"
"$g" bench --device all --size small --no-tune --json -o "$OUT/bench_small2.json" 2>/dev/null
"$g" report compare "$OUT/bench_small.json" "$OUT/bench_small2.json" --json \
  -o "$OUT/compare.json" 2>"$OUT/compare.err"

rows=()
view() {  # view NAME ARGS...: the table view at 80 and 120 columns and at a pipe's 100
  local name=$1; shift
  for w in 80 120 pipe; do
    if [ "$w" = pipe ]; then "$g" "$@" >"$OUT/$name.pipe.txt" 2>"$OUT/$name.pipe.err"
    else COLUMNS=$w "$g" "$@" >"$OUT/$name.w$w.txt" 2>"$OUT/$name.w$w.err"; fi
  done
  local f=$OUT/$name.w80.txt
  rows+=("$(printf '%-16s %5s %6s  %s' "$name" "$(wc -l <"$OUT/$name.pipe.txt")" \
    "$(python3 -c 'import sys; print(max((len(l.rstrip("\n")) for l in open(sys.argv[1], encoding="utf-8")), default=0))' "$f")" \
    "$(grep -v '^$' "$OUT/$name.pipe.txt" | tail -n 1 | cut -c1-70)")")
}
view probe          report show "$OUT/probe.json"
view probe-full     report show "$OUT/probe.json" --full
view probe-list     report show "$OUT/probe.json" -L
view probe-cuda0    report show "$OUT/probe.json" --device cuda0
view doctor         report show "$OUT/doctor.json"
view doctor-details report show "$OUT/doctor.json" --details
view bench-small    report show "$OUT/bench_small.json"
view bench-large    report show "$OUT/bench_large.json"
view qualify        report show "$OUT/qualify.json"
view compare        report show "$OUT/compare.json"
view probe-live     probe
"$g" probe --format prometheus >"$OUT/probe.prom" 2>"$OUT/probe.prom.err"
"$g" report show "$OUT/bench_small.json" --format html -o "$OUT/bench_small.html"
"$g" report show "$OUT/bench_small.json" --format csv -o "$OUT/bench_small.csv"

echo
echo "== --version -v"; cat "$OUT/version-v.txt"
echo "== progress lines in bench --size small's log: $(grep -c 'elapsed' "$OUT/bench_small.progress.log")"
echo "== prometheus gauges: $(grep -c '^gpucheck_gpu_' "$OUT/probe.prom") samples," \
  "uuids $(grep -o 'uuid="GPU-[^"]*"' "$OUT/probe.prom" | sort -u | tr '\n' ' ')"
echo "== view             lines widest  closing line (widest at 80 columns must be <= 80)"
printf '%s\n' "${rows[@]}"

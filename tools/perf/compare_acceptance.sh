#!/usr/bin/env bash
# The acceptance experiment for report compare (docs/PERFORMANCE.md), on the machine it
# runs on: PAIRS pairs of back-to-back `bench --device cpu --size small` runs compared in both
# orders at the default tolerance (none may exit 1), once quiet and once with a CPU-loading
# process during both runs; per pair a run with a planted 3x slowdown (GPUCHECK_TEST_SLOWDOWN=3)
# compared against the pair's first run (must exit 1), the same with every record's library
# choice changed (must exit 1 too: a regression is one whatever the library chose), and a
# planted 25 % slowdown compared against the three latest runs (must exit 1).
#   tools/perf/compare_acceptance.sh GPUCHECK_BINARY OUT_DIR [PAIRS]
# PHASES (default "quiet loaded") picks the phases.
set -uo pipefail
bin=$1
out=$2
pairs=${3:-20}
mkdir -p "$out"
bench() { "$bin" bench --device cpu --size small --json --quiet "$@"; }
compare() { "$bin" report compare "$@" --json --quiet >"$out/last_compare.json"; echo $?; }
summary() { /usr/bin/python3 -c 'import json,sys; s=json.load(open(sys.argv[1]))["comparison"]["summary"]; print(" ".join(f"{k}={v}" for k,v in sorted(s.items()) if v))' "$out/last_compare.json" 2>/dev/null; }

# with_choice IN OUT ID: IN with every result record's library choice set to cuBLAS's ID.
with_choice() { /usr/bin/python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [r.__setitem__("choice", {"library": "cublas", "id": sys.argv[3]}) for r in d.get("results", [])]; json.dump(d, open(sys.argv[2], "w"))' "$@"; }

log="$out/log.tsv"
printf 'phase\tpair\tload1\tcheck\texit\tsummary\n' >"$log"
declare -A fails
declare -A total
record() {  # phase pair check exit expected
  local s
  s=$(summary)
  printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$(cut -d' ' -f1 /proc/loadavg)" "$3" "$4" "$s" >>"$log"
  total[$1/$3]=$(( ${total[$1/$3]:-0} + 1 ))
  [ "$4" = "$5" ] || fails[$1/$3]=$(( ${fails[$1/$3]:-0} + 1 ))
}

for phase in ${PHASES:-quiet loaded}; do
  loader=
  if [ "$phase" = loaded ]; then
    # One busy process on the CPU for the whole phase (both runs of every pair).
    sh -c 'while :; do :; done' &
    loader=$!
  fi
  for i in $(seq 1 "$pairs"); do
    a="$out/$phase-$i-a.json" b="$out/$phase-$i-b.json"
    bench -o "$a"
    bench -o "$b"
    record "$phase" "$i" "a-vs-b" "$(compare "$a" "$b")" 0
    record "$phase" "$i" "b-vs-a" "$(compare "$b" "$a")" 0
    slow="$out/$phase-$i-slow3.json"
    GPUCHECK_TEST_SLOWDOWN=3 bench -o "$slow"
    record "$phase" "$i" "3x" "$(compare "$a" "$slow")" 1
    # Another library choice on every record of both sides: CHANGED must not hide the slowdown.
    chosen="$out/$phase-$i-a-choice.json" slowchosen="$out/$phase-$i-slow3-choice.json"
    with_choice "$a" "$chosen" "algo base"
    with_choice "$slow" "$slowchosen" "algo other"
    record "$phase" "$i" "3x-changed" "$(compare "$chosen" "$slowchosen")" 1
    if [ "$i" -ge 2 ]; then
      prev="$out/$phase-$((i - 1))-b.json"
      slow25="$out/$phase-$i-slow25.json"
      GPUCHECK_TEST_SLOWDOWN=1.25 bench -o "$slow25"
      record "$phase" "$i" "25%-vs-3" "$(compare "$prev" "$a" "$b" "$slow25")" 1
    fi
  done
  [ -n "$loader" ] && kill "$loader"
done

printf '\n%-8s %-10s %6s %8s\n' phase check runs wrong
rc=0
for key in $(printf '%s\n' "${!total[@]}" | sort); do
  printf '%-8s %-10s %6s %8s\n' "${key%%/*}" "${key#*/}" "${total[$key]}" "${fails[$key]:-0}"
  [ "${fails[$key]:-0}" = 0 ] || rc=1
done
exit "$rc"

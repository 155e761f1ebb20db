#!/bin/bash
# doctor as a node health check on the GPU machine: `gpucheck doctor --quick`, as root and as a
# non-root user (nobody), each twice (cold, then warm), timed; exit codes and the one line; the
# JSON document of each user's run; the Slurm script's decision on this node (no Slurm here:
# scontrol and sinfo are stand-ins that log what they are asked). Prints a table last.
# Needs tools/device/stage.sh health run here first (.devrun/health carried).
# Logs under $OUT (default /tmp/gpucheck-health-out).
set -uo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$root" || exit 2
OUT=${OUT:-/tmp/gpucheck-health-out}
mkdir -p "$OUT"
stage=.devrun/health
[ -x "$stage/install/bin/gpucheck" ] || { echo "health.sh: run tools/device/stage.sh health first" >&2; exit 2; }
cat "$stage/STAGED" 2>/dev/null
# A copy every user can read: the working tree may sit under a private home directory.
run=/tmp/gpucheck-health
rm -rf "$run" && mkdir -p "$run" && cp -a "$stage/install" "$run/"
[ -d "$stage/devlibs" ] && cp -a "$stage/devlibs" "$run/"
cp -a contrib "$run/contrib"
chmod -R a+rX "$run"
mkdir -p "$run/nobody" && chown 65534:65534 "$run/nobody" 2>/dev/null
# shellcheck disable=SC1091
[ -f "$run/devlibs/env.sh" ] && source "$run/devlibs/env.sh"
gpucheck=$run/install/bin/gpucheck
"$gpucheck" --version | tee "$OUT/version.txt"
{ id; sysctl kernel.dmesg_restrict 2>&1; nvidia-smi -L; ls -l /dev/nvidia*; } >"$OUT/machine.txt" 2>&1

rows=()
as_user() {  # as_user USER CMD...: root runs it directly, nobody through setpriv
  if [ "$1" = root ]; then shift; "$@"; else shift
    setpriv --reuid=65534 --regid=65534 --clear-groups env HOME="$run/nobody" "$@"; fi
}
timed() {  # timed USER LABEL ARGS...: one doctor --quick run, recorded as a table row
  local user=$1 label=$2; shift 2
  local t0 t1 rc line
  t0=$(date +%s.%N)
  line=$(as_user "$user" "$gpucheck" doctor --quick "$@" 2>"$run/err")
  rc=$?
  cp "$run/err" "$OUT/$user-$label.err"
  t1=$(date +%s.%N)
  printf '%s\n' "$line" >"$OUT/$user-$label.out"
  rows+=("$(printf '%-6s  %-22s  %6.2f  %4s  %s' "$user" "$label" "$(awk "BEGIN{print $t1 - $t0}")" "$rc" "$(printf '%s' "$line" | head -c 80)")")
}
for user in root nobody; do
  state=$run/$user-state.json
  [ "$user" = nobody ] && state=$run/nobody/state.json
  timed "$user" oneline-cold --format oneline --ok-line --state "$state"
  timed "$user" oneline-warm --format oneline --ok-line --state "$state"
  dir=$run && [ "$user" = nobody ] && dir=$run/nobody
  timed "$user" json --json -o "$dir/quick-$user.json" --state "$state"
  cp "$dir/quick-$user.json" "$OUT/" 2>/dev/null
  timed "$user" default-state --format oneline --ok-line
  timed "$user" timeout-1s --format oneline --ok-line --no-state --timeout 1
done

# The Slurm script's decision on this node, with logging stand-ins for scontrol and sinfo.
mkdir -p "$run/fake-slurm"
printf '#!/bin/sh\necho "scontrol $*" >>%s/slurm-calls.log\n' "$OUT" >"$run/fake-slurm/scontrol"
printf '#!/bin/sh\necho "sinfo $*" >>%s/slurm-calls.log\necho idle\n' "$OUT" >"$run/fake-slurm/sinfo"
chmod +x "$run/fake-slurm/"*
cat >"$run/healthcheck.conf" <<CONF
GPUCHECK=$gpucheck
GPUCHECK_STATE=$run/slurm-state.json
SCONTROL=$run/fake-slurm/scontrol
SINFO=$run/fake-slurm/sinfo
LOG_FILE=$OUT/healthcheck.log
CONF
t0=$(date +%s.%N)
GPUCHECK_HEALTHCHECK_CONF=$run/healthcheck.conf SLURMD_NODENAME=$(hostname -s) \
  "$run/contrib/slurm/gpucheck-healthcheck"
rc=$?
t1=$(date +%s.%N)
rows+=("$(printf '%-6s  %-22s  %6.2f  %4s  %s' root slurm-healthcheck "$(awk "BEGIN{print $t1 - $t0}")" "$rc" "$(tail -n 1 "$OUT/healthcheck.log" | cut -c1-120)")")

# Per-check statuses of both users' JSON runs, for the SKIPs non-root gets.
python3 - "$OUT/quick-root.json" "$OUT/quick-nobody.json" >"$OUT/statuses.txt" 2>&1 <<'PY'
import json, sys
docs = [json.load(open(p)) for p in sys.argv[1:]]
for i, c in enumerate(docs[0]["checks"]):
    other = next((o for o in docs[1]["checks"] if o["id"] == c["id"]), {})
    print(f'{c["id"]:26} root {c["status"]:5} nobody {other.get("status", "-"):5} {other.get("finding", "")[:90] if other.get("status") != c["status"] else ""}')
print("health root:", docs[0].get("health")); print("health nobody:", docs[1].get("health"))
PY
cat "$OUT/statuses.txt"
echo
echo "== doctor --quick on $(hostname -s) ($(nvidia-smi -L 2>/dev/null | wc -l) GPUs); limit 5 s"
printf '%-6s  %-22s  %6s  %4s  %s\n' user run seconds exit "line (oneline) / log"
printf '%s\n' "${rows[@]}"

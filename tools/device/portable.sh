#!/usr/bin/env bash
# The portable binary on the GPU machine, in one go: the stripped release binary staged here by
# tools/device/stage.sh portable (carry .devrun/portable), run WITHOUT any .devlibs bundle:
#   1. what it needs at load time there (readelf NEEDED, ldd),
#   2. gpucheck --version, probe, doctor, bench --device all --size medium (JSON under $OUT),
#   3. its CPU GEMM through the run-time-loaded system OpenBLAS beside numpy's (peers.py, three
#      alternating rounds, tools/perf/cpu_perf.py): the build that links OpenBLAS cannot start on
#      Ubuntu 24.04 without the bundle (libfmt9, libspdlog1.10, libtomlplusplus3 are missing
#      there), so numpy's CPU GEMM in the same call stands in for it,
# then prints a short table and writes $OUT/portable.json. Exit 0 when every step ran and no bench
# record failed or mismatched (unsupported and skipped ones are listed); 1 otherwise.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root" || exit 2
stage=${STAGE:-.devrun/portable}
bin=$stage/install/bin/gpucheck
peers=$stage/peers.py
out=${OUT:-$stage/out}
mkdir -p "$out"
[ -x "$bin" ] || { echo "portable: no $bin: run tools/device/stage.sh portable here first" >&2; exit 2; }
cat "$stage/STAGED" 2>/dev/null
case ":${LD_LIBRARY_PATH:-}:" in *devlibs*) echo "portable: LD_LIBRARY_PATH names a .devlibs bundle: run without it" >&2; exit 2 ;; esac
log() { echo "== $*" | tee -a "$out/steps.log"; }

log "load-time needs"
readelf -d "$bin" | grep NEEDED | tee "$out/needed.txt"
ldd "$bin" | tee "$out/ldd.txt"
log "version"
"$bin" --version | tee "$out/version.txt"; version_rc=${PIPESTATUS[0]}
log "probe"
"$bin" probe --json -o "$out/probe.json" 2>"$out/probe.err"; probe_rc=$?
"$bin" probe >"$out/probe.txt" 2>&1
log "doctor"
"$bin" doctor --json -o "$out/doctor.json" 2>"$out/doctor.err"; doctor_rc=$?
log "bench --device all --size medium"
"$bin" bench --device all --size medium --json -o "$out/bench.json" 2>"$out/bench.err"; bench_rc=$?
log "CPU GEMM f32: run-time-loaded BLAS vs numpy (3 alternating rounds)"
python3 tools/perf/cpu_perf.py "$bin" "$peers" --ops gemm --gemm 2048,4096 --rounds 3 \
  2>"$out/cpu_gemm.err" | tee "$out/cpu_gemm.txt"; gemm_rc=${PIPESTATUS[0]}

python3 - "$out" "$version_rc" "$probe_rc" "$doctor_rc" "$bench_rc" "$gemm_rc" <<'PY'
import json, sys, collections, os
out, rcs = sys.argv[1], dict(zip(["version", "probe", "doctor", "bench", "cpu_gemm"], map(int, sys.argv[2:])))
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception as e:
        return {"error": str(e)}
probe, doctor, bench = load("probe.json"), load("doctor.json"), load("bench.json")
summary = {"exit_codes": rcs, "needed": open(os.path.join(out, "needed.txt")).read().split("\n")}
summary["backends"] = {b.get("name"): b.get("status") for b in probe.get("backends", [])}
cpu = next((b for b in probe.get("backends", []) if b.get("name") == "cpu"), {})
blas = (cpu.get("devices") or [{}])[0].get("properties", {}).get("blas", {})
summary["blas"] = {k: blas.get(k) for k in ("library", "path", "version", "kernel", "kernel_source", "kernel_below_isa", "error")}
summary["doctor"] = collections.Counter(c.get("status") for c in doctor.get("checks", []))
records = bench.get("results", [])
summary["bench_status"] = collections.Counter(r.get("status") for r in records)
summary["bench_not_ok"] = [f"{r.get('device')} {r.get('op')} {r.get('dtype', '')} {r.get('status')}: {r.get('reason', '')}"[:160]
                           for r in records if r.get("status") != "ok"]
summary["cpu_gemm_table"] = open(os.path.join(out, "cpu_gemm.txt")).read()
with open(os.path.join(out, "portable.json"), "w") as f:
    json.dump(summary, f, indent=1, default=dict)
print("\n| step | result |\n|---|---|")
print(f"| load-time NEEDED | {', '.join(n.split('[')[-1].rstrip(']') for n in summary['needed'] if n)} |")
for step in ("version", "probe", "doctor", "bench", "cpu_gemm"):
    print(f"| {step} exit | {rcs[step]} |")
print(f"| backends | {', '.join(f'{k}: {v}' for k, v in summary['backends'].items())} |")
print(f"| CPU BLAS | {blas.get('description', blas.get('error', '?'))} ({blas.get('kernel_source', '?')}) |")
print(f"| doctor | {dict(summary['doctor'])} |")
print(f"| bench records | {dict(summary['bench_status'])} |")
for line in summary["bench_not_ok"][:10]:
    print(f"| not ok | {line} |")
print("\nCPU GEMM (gpucheck through the run-time-loaded BLAS vs numpy, same call):")
print(summary["cpu_gemm_table"])
ok = rcs["version"] == 0 and rcs["probe"] == 0 and rcs["bench"] == 0 and rcs["cpu_gemm"] == 0 \
    and records and not any(r.get("status") in ("failed", "mismatch") for r in records)
sys.exit(0 if ok else 1)
PY

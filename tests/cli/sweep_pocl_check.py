#!/usr/bin/env python3
"""Runs small break-even sweeps on an OpenCL device (pocl in CI) and checks the sweep section.

usage: sweep_pocl_check.py SCHEMA GPUCHECK DEVICE

For exp, gemm and conv, each over a few sizes: the document validates against the schema, the
sweep lists exactly the planned sizes, every (transfers) series has one point per size with the
CPU's times beside the device's, and the break-even size is what the rule gives when recomputed
here from the records themselves (smallest size from which the device's median is below the
CPU's and its max below the CPU's min, there and at every larger measured size).
Exit 0 pass, 1 fail, 77 skipped (no such device, or python3-jsonschema missing).
"""
import json
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("SKIP: python3-jsonschema is not installed")
    sys.exit(77)

SWEEPS = [("exp", "2^13", [1024, 2048, 4096, 8192]),
          ("gemm", "128", [64, 128]),
          ("conv", "1", [1])]


def fail(msg):
    print(f"FAIL: {msg}", file=sys.stderr)
    sys.exit(1)


def swept_size(rec):
    return rec["shape"]["m"] if rec["op"] == "gemm" else rec["shape"]["n"]


def recomputed_break_even(records, device, transfers, sizes):
    cpu = {swept_size(r): r["time_s"] for r in records
           if r["backend"] == "cpu" and r["status"] == "ok"}
    dev = {swept_size(r): r["time_s"] for r in records
           if r["device"] == device and r["transfers"] == transfers and r["status"] == "ok"}
    found = None
    for size in reversed([s for s in sizes if s in cpu and s in dev]):
        d, c = dev[size], cpu[size]
        if d["median"] < c["median"] and d["max"] < c["min"]:
            found = size
        else:
            break
    return found


def main():
    schema_path, gpucheck, device = sys.argv[1:4]
    with open(schema_path) as f:
        validator = jsonschema.Draft202012Validator(json.load(f))
    for op, top, sizes in SWEEPS:
        # --no-tune: the sweep's records, not GEMM tuning (tests/cli/test_opencl_tuning.cpp), here.
        cmd = [gpucheck, "bench", "--device", device, "--sweep", op, "--sweep-max", top, "--json",
               "--no-tune"]
        proc = subprocess.run(cmd, capture_output=True, timeout=120)
        if proc.returncode == 3:
            print(f"SKIP: {device} is not here: {proc.stderr.decode(errors='replace').strip()}")
            sys.exit(77)
        if proc.returncode != 0:
            fail(f"{' '.join(cmd)} exited {proc.returncode}: {proc.stderr.decode(errors='replace')}")
        doc = json.loads(proc.stdout)
        errors = list(validator.iter_errors(doc))
        if errors:
            fail(f"{op}: {len(errors)} schema errors, first: {errors[0].message[:300]}")
        sweep = doc["sweep"]
        if sweep["op"] != op or sweep["sizes"] != sizes:
            fail(f"{op}: sweep says {sweep['op']} {sweep['sizes']}, want {sizes}")
        records = doc["results"]
        for r in records:
            if r["op"] != op or r.get("dtype") != "f32" or r["shape"].get("layout", "nchw") != "nchw":
                fail(f"{op}: a record of another op or dtype: {r['op']} {r.get('dtype')}")
            if r["status"] == "ok" and r["time_s"]["reps"] != 5:
                fail(f"{op}: {r['time_s']['reps']} reps, the sweep default is 5")
        series = {s["transfers"]: s for s in sweep["series"] if s["device"] == device}
        if set(series) != {"excluded", "included"}:
            fail(f"{op}: series for transfers {sorted(series)}, want excluded and included")
        for transfers, s in series.items():
            got_sizes = [p["size"] for p in s["points"]]
            if got_sizes != sizes:
                fail(f"{op}/{transfers}: points at {got_sizes}, want {sizes}")
            for p in s["points"]:
                if p["status"] != "ok" or "cpu" not in p or "beats_cpu" not in p:
                    fail(f"{op}/{transfers}: incomplete point {p}")
            want = recomputed_break_even(records, device, transfers, sizes)
            if s["break_even"] != want:
                fail(f"{op}/{transfers}: break_even {s['break_even']}, the rule gives {want}")
            print(f"{op} {transfers}: sizes {sizes}, break-even "
                  f"{s['break_even'] if s['break_even'] is not None else 'none in range'}")
    print("PASS")


if __name__ == "__main__":
    main()

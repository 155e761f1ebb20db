#!/usr/bin/env python3
"""gpucheck's CPU bench beside numpy on this machine: exp f32 and GEMM f32, three alternating rounds.

usage: /usr/bin/python3 tools/cpu_perf.py BUILD/src/gpucheck ../shared/tools/peers.py [--rounds 3]

Prints one table: workload, gpucheck median, numpy median, ratio (median of the rounds' ratios)
and the spread of the ratios. Throughput units are the same on both sides (GB/s counts read +
write, 8n bytes for f32 exp; GEMM is 2mnk FLOP)."""
import argparse
import json
import statistics
import subprocess
import sys

EXP = [16777216, 67108864]
GEMM = [2048, 4096]


def gpucheck_round(binary):
    out = {}
    for args in (["--ops", "exp", "--dtype", "f32", "--exp", ",".join(map(str, EXP))],
                 ["--ops", "gemm", "--dtype", "f32", "--gemm", ",".join(map(str, GEMM))]):
        p = subprocess.run([binary, "bench", "--device", "cpu", "--json", "--min-time", "1"] + args,
                           capture_output=True, text=True, check=True)
        for r in json.loads(p.stdout)["results"]:
            if r["status"] != "ok":
                sys.exit(f"gpucheck record not ok: {r}")
            key = ("exp", r["shape"]["n"]) if r["op"] == "exp" else ("gemm", r["shape"]["m"])
            out[key] = r["throughput"]["value"]
    return out


def numpy_round(peers):
    out = {}
    p = subprocess.run([sys.executable, peers, "--ops", "exp,gemm", "--exp", ",".join(map(str, EXP)),
                        "--gemm", ",".join(map(str, GEMM)), "--dtypes", "f32", "--reps", "10"],
                       capture_output=True, text=True, check=True)
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r.get("peer") != "numpy" or "op" not in r:
            continue
        if r["op"] == "exp":
            out[("exp", r["n"])] = r["GBps"]
        elif r["op"] == "gemm":
            out[("gemm", r["m"])] = r["TFLOPs"]
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpucheck")
    ap.add_argument("peers")
    ap.add_argument("--rounds", type=int, default=3)
    a = ap.parse_args()
    g, n = [], []
    for _ in range(a.rounds):
        g.append(gpucheck_round(a.gpucheck))
        n.append(numpy_round(a.peers))
    print(f"{'workload':<16}{'gpucheck':>14}{'numpy':>14}{'ratio':>8}{'spread':>16}")
    for key in [("exp", e) for e in EXP] + [("gemm", m) for m in GEMM]:
        unit = "GB/s" if key[0] == "exp" else "TFLOP/s"
        ratios = [gi[key] / ni[key] for gi, ni in zip(g, n)]
        label = f"{key[0]} f32 {key[1]}"
        print(f"{label:<16}{statistics.median(x[key] for x in g):>9.4g} {unit:<4}"
              f"{statistics.median(x[key] for x in n):>9.4g} {unit:<4}"
              f"{statistics.median(ratios):>8.2f}  {min(ratios):.2f}–{max(ratios):.2f}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""gpucheck's CPU bench beside numpy on this machine: exp f32 and GEMM f32, three alternating rounds.

usage: /usr/bin/python3 tools/perf/cpu_perf.py BUILD/src/gpucheck ../shared/tools/peers.py [--rounds 3]
         [--ops exp,gemm] [--exp N,N] [--gemm N,N] [--also-env NAME=VALUE ...]

Prints one table: workload, gpucheck median, numpy median, ratio (median of the rounds' ratios)
and the spread of the ratios, with the BLAS kernel gpucheck's record names and who chose it.
Throughput units are the same on both sides (GB/s counts read + write, 8n bytes for f32 exp; GEMM
is 2mnk FLOP). Each --also-env adds a setup in which both sides run with that variable set (e.g.
OPENBLAS_CORETYPE=SkylakeX: both given the right kernel), its rounds interleaved with the
environment as it is ("as users run it")."""
import argparse
import json
import os
import statistics
import subprocess
import sys


def gpucheck_round(binary, exp, gemm, env, kernels):
    out = {}
    runs = []
    if exp:
        runs.append(["--ops", "exp", "--dtype", "f32", "--exp", ",".join(map(str, exp))])
    if gemm:
        runs.append(["--ops", "gemm", "--dtype", "f32", "--gemm", ",".join(map(str, gemm))])
    for args in runs:
        p = subprocess.run([binary, "bench", "--device", "cpu", "--json", "--min-time", "1"] + args,
                           capture_output=True, text=True, check=True, env=env)
        for r in json.loads(p.stdout)["results"]:
            if r["status"] != "ok":
                sys.exit(f"gpucheck record not ok: {r}")
            key = ("exp", r["shape"]["n"]) if r["op"] == "exp" else ("gemm", r["shape"]["m"])
            out[key] = r["throughput"]["value"]
            blas = r.get("context", {}).get("blas")
            if r["op"] == "gemm" and isinstance(blas, dict):
                kernels.add(f"{blas.get('kernel', '?')} ({blas.get('kernel_source', '?')})")
    return out


def numpy_round(peers, exp, gemm, env):
    out = {}
    ops = ",".join(o for o, sizes in (("exp", exp), ("gemm", gemm)) if sizes)
    p = subprocess.run([sys.executable, peers, "--ops", ops, "--exp", ",".join(map(str, exp)),
                        "--gemm", ",".join(map(str, gemm)), "--dtypes", "f32", "--reps", "10"],
                       capture_output=True, text=True, check=True, env=env)
    for line in p.stdout.splitlines():
        r = json.loads(line)
        if r.get("peer") != "numpy" or "op" not in r:
            continue
        if r["op"] == "exp":
            out[("exp", r["n"])] = r["GBps"]
        elif r["op"] == "gemm":
            out[("gemm", r["m"])] = r["TFLOPs"]
    return out


def ints(text):
    return [int(v) for v in text.split(",") if v]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gpucheck")
    ap.add_argument("peers")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--ops", default="exp,gemm")
    ap.add_argument("--exp", default="16777216,67108864")
    ap.add_argument("--gemm", default="2048,4096")
    ap.add_argument("--also-env", action="append", default=[], metavar="NAME=VALUE")
    a = ap.parse_args()
    ops = a.ops.split(",")
    exp = ints(a.exp) if "exp" in ops else []
    gemm = ints(a.gemm) if "gemm" in ops else []
    setups = [("as is", dict(os.environ))]
    for assignment in a.also_env:
        name, _, value = assignment.partition("=")
        setups.append((assignment, dict(os.environ, **{name: value})))
    results = {label: ([], [], set()) for label, _ in setups}
    for _ in range(a.rounds):
        for label, env in setups:
            g, n, kernels = results[label]
            g.append(gpucheck_round(a.gpucheck, exp, gemm, env, kernels))
            n.append(numpy_round(a.peers, exp, gemm, env))
    print(f"{'setup':<28}{'workload':<16}{'gpucheck':>14}{'numpy':>14}{'ratio':>8}{'spread':>16}"
          "  gpucheck's BLAS kernel")
    for label, _ in setups:
        g, n, kernels = results[label]
        for key in [("exp", e) for e in exp] + [("gemm", m) for m in gemm]:
            unit = "GB/s" if key[0] == "exp" else "TFLOP/s"
            ratios = [gi[key] / ni[key] for gi, ni in zip(g, n)]
            name = f"{key[0]} f32 {key[1]}"
            print(f"{label:<28}{name:<16}{statistics.median(x[key] for x in g):>9.4g} {unit:<4}"
                  f"{statistics.median(x[key] for x in n):>9.4g} {unit:<4}"
                  f"{statistics.median(ratios):>8.2f}  {min(ratios):.2f}–{max(ratios):.2f}"
                  f"  {', '.join(sorted(kernels)) if key[0] == 'gemm' else ''}")


if __name__ == "__main__":
    main()

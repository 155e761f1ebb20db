#!/usr/bin/env python3
"""`gpucheck bench --framework torch` beside peers.py on the GPU machine, in one call.

  python3 tools/device/framework_bench.py --gpucheck G --python /opt/torch/.venv/bin/python \
      --peers .devrun/perf/peers.py [--rounds 3] [--out DIR] [--isolate [--reps N] [--pause S]]

Runs, in alternating rounds, gpucheck's bench of cuda0 with torch as its framework (gpucheck's
inputs, torch's kernels, gpucheck's verification) and peers.py's torch measurements of the same
workloads (20 repetitions after 3 warm-ups, CUDA events, median) in the same interpreter, then
prints per workload torch-through-gpucheck, peers.py and their ratio (peers.py's time over
gpucheck's torch time, median of the rounds; 1.00 = the same figure; the acceptance band is
0.95-1.05), and gpucheck's own kernel's figure
beside them. cuDNN's autotuner is on for both (peers.py turns it on; gpucheck's torch child
gets GPUCHECK_TORCH_CUDNN_BENCHMARK=1).

--isolate times only the workloads whose figure depends on what ran before them (the 8192 GEMMs
near the power limit, the 0.06 ms NHWC tf32 conv, the launch-bound seed loop), one small group
at a time, both tools with the same repetitions (--reps, default 100), after the same idle pause
(--pause seconds, default 2), the tool that goes first alternating from round to round: both
sides then start from the same power state, which the full run's order does not give them.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

# peers.py also times numpy on the CPU for exp and f32 GEMM: sizes that keep a round short.
GEMM, EXP, CONV = "4096,8192", "67108864", "32,64,56,56,64,3,3,1,1"
DTYPES = "f32,tf32,f16,bf16"
# --isolate's groups: (name, gpucheck's workload flags, peers.py's workload flags).
# One dtype a group: in one child, the cell before leaves the GPU idle while its outputs go back.
ISOLATED = [
    ("gemm-tf32", ["--ops", "gemm", "--gemm", "8192", "--dtype", "tf32"],
     ["--ops", "gemm", "--gemm", "8192", "--dtypes", "tf32"]),
    ("gemm-bf16", ["--ops", "gemm", "--gemm", "8192", "--dtype", "bf16"],
     ["--ops", "gemm", "--gemm", "8192", "--dtypes", "bf16"]),
    ("conv-nhwc-tf32", ["--ops", "conv", "--conv", CONV, "--layout", "nhwc", "--dtype", "tf32"],
     ["--ops", "conv", "--conv", CONV, "--layouts", "nhwc", "--dtypes", "tf32"]),
    ("seedloop", ["--ops", "seedloop"], ["--ops", "seedloop"]),
]


def run(cmd, env=None):
    print("+", " ".join(cmd), file=sys.stderr, flush=True)
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode not in (0, 1):
        sys.stderr.write(p.stderr[-4000:])
        raise SystemExit("%s exited %d" % (cmd[0], p.returncode))
    return p.stdout


def key_of_gpucheck(r):
    s, op = r["shape"], r["op"]
    if op == "gemm":
        return ("gemm", r["dtype"], s["m"])
    if op == "exp":
        return ("exp", r["dtype"], s["n"])
    if op == "conv":
        return ("conv", r["dtype"], s["layout"])
    if op == "seedloop":
        return ("seedloop", "d2h" if s["d2h_each_call"] else "resident", s["n"])
    return None


def key_of_peer(r):
    op = r.get("op")
    if op == "gemm":
        return ("gemm", r["dtype"], r["m"])
    if op == "exp" and r.get("transfers") == "excluded":
        return ("exp", r["dtype"], r["n"])
    if op == "conv":
        return ("conv", r["dtype"], r["layout"])
    if op == "seedloop" and "d2h_each_call" in r:
        return ("seedloop", "d2h" if r["d2h_each_call"] else "resident", r["n"])
    return None


def gpucheck_round(o, env, workload, reps, times, tag):
    doc = json.loads(run([o.gpucheck, "bench", "--device", "cuda0", "--no-baseline",
                          "--framework", "torch", "--python", o.python] + workload +
                         ["--reps", str(reps), "--warmup", "3", "--min-time", "0", "--rounds",
                          "1", "--json"], env))
    if o.out:
        with open(os.path.join(o.out, "gpucheck-%s.json" % tag), "w") as f:
            json.dump(doc, f)
    for r in doc["results"]:
        if r.get("status") != "ok":
            continue
        if r.get("transfers") != "excluded" and r.get("op") != "seedloop":
            continue  # peers.py times the op alone (the seed loop's copy is its own shape)
        k = key_of_gpucheck(r)
        if k:
            who = "torch" if "framework" in r else "own"
            times.setdefault(k, {}).setdefault(who, []).append(r["time_s"]["median"])


def peers_round(o, workload, reps, times, tag):
    out = run([o.python, o.peers] + workload + ["--reps", str(reps)])
    if o.out:
        with open(os.path.join(o.out, "peers-%s.jsonl" % tag), "w") as f:
            f.write(out)
    for line in out.splitlines():
        r = json.loads(line)
        if r.get("peer") != "torch" or r.get("device") != "cuda0":
            continue
        k = key_of_peer(r)
        if k:
            t = r.get("median_s", r.get("per_call_s"))
            times.setdefault(k, {}).setdefault("peer", []).append(t)


def print_table(times):
    print("| workload | gpucheck's torch (ms) | peers.py torch (ms) | ratio | gpucheck's kernel (ms) |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for k in sorted(times, key=str):
        v = times[k]
        if "torch" not in v or "peer" not in v:
            continue
        ratios = [p / t for t, p in zip(v["torch"], v["peer"])]
        own = statistics.median(v["own"]) * 1e3 if "own" in v else float("nan")
        print("| %s | %.4f | %.4f | %.3f (%.3f-%.3f) | %.4f |"
              % (" ".join(map(str, k)), statistics.median(v["torch"]) * 1e3,
                 statistics.median(v["peer"]) * 1e3, statistics.median(ratios), min(ratios),
                 max(ratios), own), flush=True)


def main():
    a = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    a.add_argument("--gpucheck", required=True)
    a.add_argument("--python", required=True, help="the interpreter with torch")
    a.add_argument("--peers", required=True, help="shared/tools/peers.py, copied along")
    a.add_argument("--rounds", type=int, default=3)
    a.add_argument("--out", default=os.environ.get("OUT"))
    a.add_argument("--isolate", action="store_true", help="the order-sensitive workloads alone")
    a.add_argument("--reps", type=int, default=None, help="repetitions (20; --isolate: 100)")
    a.add_argument("--pause", type=float, default=2.0, help="--isolate: idle seconds before each")
    a.add_argument("--groups", default=",".join(g[0] for g in ISOLATED),
                   help="--isolate: which groups (%(default)s)")
    o = a.parse_args()
    env = dict(os.environ, GPUCHECK_TORCH_CUDNN_BENCHMARK="1")
    if not o.isolate:
        reps = o.reps or 20
        times = {}  # key -> {"torch": [s...], "peer": [...], "own": [...]}
        gp = ["--ops", "gemm,exp,conv,seedloop", "--gemm", GEMM, "--exp", EXP, "--conv", CONV,
              "--layout", "nchw,nhwc", "--dtype", DTYPES]
        pe = ["--ops", "gemm,exp,conv,seedloop", "--gemm", GEMM, "--exp", EXP, "--conv", CONV,
              "--dtypes", DTYPES]
        for rnd in range(o.rounds):
            gpucheck_round(o, env, gp, reps, times, str(rnd))
            peers_round(o, pe, reps, times, str(rnd))
        print_table(times)
        return
    reps = o.reps or 100
    wanted = o.groups.split(",")
    unknown = set(wanted) - {g[0] for g in ISOLATED}
    if unknown:
        raise SystemExit("--groups: unknown %s" % ", ".join(sorted(unknown)))
    for gi, (name, gp, pe) in enumerate(ISOLATED):
        if name not in wanted:
            continue
        times = {}
        for rnd in range(o.rounds):
            steps = [lambda: gpucheck_round(o, env, gp, reps, times, "%d-%d" % (gi, rnd)),
                     lambda: peers_round(o, pe, reps, times, "%d-%d" % (gi, rnd))]
            for step in (steps if rnd % 2 == 0 else steps[::-1]):
                time.sleep(o.pause)
                step()
        print("### %s: %d rounds, %d repetitions, %.1f s pause, first tool alternating"
              % (name, o.rounds, reps, o.pause))
        print_table(times)


if __name__ == "__main__":
    main()

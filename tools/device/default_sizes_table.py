#!/usr/bin/env python3
"""The table of tools/device/default_sizes.sh: per GPU cell of a size bench chose (default.json's
default_sizes, the small lesson size apart), its rate, the best rate of the same op, dtype and
copy kind over the sweep and the default run (the saturated rate), their ratio (goal >= 0.8) and
the fraction of limit the record carries; then the default run's wall time and the peers.

  default_sizes_table.py OUT_DIR
"""
import glob
import json
import os
import sys


def records(path):
    try:
        with open(path) as f:
            return json.load(f).get("results", [])
    except (OSError, ValueError):
        return []


def key(r):
    s = r.get("shape", {})
    return (r.get("op"), r.get("dtype", ""), s.get("direction", ""), s.get("host_memory", ""))


def size_of(r):
    s = r.get("shape", {})
    for k in ("bytes", "n"):
        if k in s and r.get("op") != "gemm" and r.get("op") != "conv":
            return s[k]
    return s.get("m", s.get("n", 0))


def rate(r):
    return (r.get("throughput") or {}).get("value")


def gpu_ok(r):
    return (r.get("device", "").startswith("cuda") and r.get("status") == "ok"
            and r.get("transfers", "excluded") == "excluded" and rate(r) and not r.get("framework"))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    default_path = os.path.join(out, "default.json")
    try:
        with open(default_path) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print(f"no default run: {e}")
        doc = {}
    default = doc.get("results", [])
    sweep = [r for p in sorted(glob.glob(os.path.join(out, "sweep-*.json"))) for r in records(p)]
    best = {}
    for r in default + sweep:
        if gpu_ok(r):
            k = key(r)
            if rate(r) > best.get(k, (0, None))[0]:
                best[k] = (rate(r), size_of(r))
    chosen = doc.get("default_sizes", {})
    print("| cell | size | rate | sweep's best (at size) | of best | of limit |")
    print("|---|---|---|---|---|---|")
    worst = None
    for r in default:
        if not gpu_ok(r):
            continue
        op = r.get("op")
        sizes = chosen.get(r.get("device"), {}).get(op, {}).get("sizes", [])
        if len(sizes) < 2:
            continue
        # The lesson size is the first of an op's list; the chosen one(s) follow it.
        if size_of(r) == min(size_of(x) for x in default if gpu_ok(x) and key(x) == key(r)) \
                and len({size_of(x) for x in default if gpu_ok(x) and key(x) == key(r)}) > 1:
            continue
        b, at = best.get(key(r), (None, None))
        frac = rate(r) / b if b else None
        if frac is not None:
            worst = frac if worst is None else min(worst, frac)
        unit = r["throughput"].get("unit", "")
        lim = (r.get("limit") or {}).get("fraction")
        name = " ".join(x for x in key(r) if x)
        print(f"| {name} | {size_of(r)} | {rate(r):.4g} {unit} | {b:.4g} ({at}) | "
              f"{frac:.3f} | {'' if lim is None else f'{lim:.3f}'} |" if b else
              f"| {name} | {size_of(r)} | {rate(r):.4g} {unit} | - | - | |")
    wall_path = os.path.join(out, "default-wall.txt")
    if os.path.exists(wall_path):
        print(f"\ndefault run: {len(default)} records, wall {open(wall_path).read().strip()} s")
    if worst is not None:
        print(f"worst chosen cell: {worst:.3f} of the sweep's best (goal >= 0.8)")
    peers = os.path.join(out, "peers.jsonl")
    if os.path.exists(peers):
        for line in open(peers):
            try:
                p = json.loads(line)
            except ValueError:
                continue
            if p.get("device") == "cuda0" and p.get("transfers", "excluded") == "excluded":
                print(f"peer {p.get('peer')} {p.get('op')} {p.get('dtype')} "
                      f"{p.get('m', p.get('n'))}: {p.get('TFLOPs', p.get('GBps'))}")


if __name__ == "__main__":
    main()

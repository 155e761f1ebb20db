#!/usr/bin/env python3
"""Concurrent pairs against --serial, judged by the spread between two --serial runs of the same
build on the same machine (multigpu.sh's pairs-* steps), and the all-reduce of two GPUs beside
torch.cuda.nccl (its pair-allreduce step). Reads OUT/pairs-{concurrent,serial,serial2}.json,
OUT/pair-allreduce.json and OUT/peers-pair.jsonl; prints a table; a missing file is named.

  python3 spread_table.py OUT
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from multigpu_table import load  # noqa: E402 - beside this file: a missing file is named


def figures(doc):
    out = {}
    for r in (doc or {}).get("results", []):
        if r.get("status") != "ok" or r.get("op") not in ("p2p", "allreduce"):
            continue
        s = r.get("shape", {})
        key = (r["op"], s.get("src", ""), s.get("dst", ""), s.get("bytes"), s.get("engine", ""),
               s.get("peer_access"), s.get("direction", ""), s.get("bidirectional", False),
               r.get("dtype", ""))
        # All-reduce: bus bandwidth, as nccl-tests and peers.py report it.
        out[key] = r["busbw"] if r["op"] == "allreduce" else r["throughput"]["value"]
    return out


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    conc = figures(load(out, "pairs-concurrent.json"))
    ser = figures(load(out, "pairs-serial.json"))
    ser2 = figures(load(out, "pairs-serial2.json"))
    keys = sorted(k for k in conc if k in ser and k in ser2)
    if keys:
        print("concurrent pairs vs --serial (GB/s); 'within' = |conc/serial - 1| <= the spread of "
              "serial2/serial, or <= 1 %")
        within = 0
        for k in keys:
            c, a, b = conc[k], ser[k], ser2[k]
            spread = abs(b / a - 1)
            ok = abs(c / a - 1) <= max(spread, 0.01)
            within += ok
            print(f"  {k[0]:9} {k[1]:>5}->{k[2]:<5} {k[3] or '':>10} {k[4]!s:3} {k[5]!s:5} "
                  f"{k[6]:10} {'bidir' if k[7] else '':5} serial {a:7.1f} serial2 {b:7.1f} concurrent {c:7.1f}  "
                  f"conc/serial {c / a:.3f}  serial2/serial {b / a:.3f}  {'within' if ok else 'OUT'}")
        print(f"  {within} of {len(keys)} concurrent figures within the serial runs' spread")
    pair = figures(load(out, "pair-allreduce.json"))
    peers = [p for p in (load(out, "peers-pair.jsonl") or []) if p.get("op") == "allreduce"]
    for p in peers:
        ours = [v for k, v in pair.items() if k[0] == "allreduce" and k[3] == p["bytes"]]
        best = max(ours) if ours else None
        ratio = f"{best / p['busbw_GBps']:.3f}" if best else "-"
        print(f"  all-reduce {p['gpus']} GPUs {p['bytes'] >> 20} MiB: gpucheck busbw "
              f"{best if best is None else round(best, 1)} GB/s, torch.cuda.nccl "
              f"{p['busbw_GBps']:.1f} GB/s, ratio {ratio} (goal >= 0.97)")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes a synthetic gpucheck/1 bench document of many records (report compare of a
180 MB, 250k-record document in seconds and a few hundred MB).

usage: make_big_document.py OUT RECORDS [SLOWDOWN]
Each record is an ok exp record of its own size with 16 kept samples and 3 round medians, like
`bench --rounds 3` writes them; SLOWDOWN scales every time (and throughput) by that factor."""
import json
import random
import sys

out, n = sys.argv[1], int(sys.argv[2])
slow = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
rng = random.Random(16)
with open(out, "w") as f:
    f.write('{"schema":"gpucheck/1","command":"bench","provenance":{"gpucheck_version":"0.1.0",'
            '"git_commit":"synthetic","time":"2025-01-01T00:00:00Z","argv":["gpucheck","bench"],'
            '"environment":{},"backends_built":["cpu"]},"results":[')
    for i in range(n):
        elements = 1024 + i
        t = 1e-6 * elements / 512 * slow
        samples = [t * (1 + rng.uniform(-0.03, 0.03)) for _ in range(16)]
        rounds = [t * (1 + rng.uniform(-0.01, 0.01)) for _ in range(3)]
        rec = {
            "device": "cpu", "device_name": "Synthetic CPU @ 2.0GHz", "backend": "cpu",
            "op": "exp", "impl": "avx512", "dtype": "f32", "compute_type": "f32",
            "shape": {"n": elements}, "transfers": "excluded", "status": "ok",
            "time_s": {"median": t, "min": min(samples), "max": max(samples),
                       "stddev": t * 0.017, "reps": 48, "truncated": False,
                       "samples": samples, "round_medians": rounds},
            "throughput": {"value": 8 * elements / t / 1e9, "unit": "GB/s"},
            "verification": {"tolerance": 2e-6, "method": "elementwise",
                             "max_rel_error": 1.1e-7},
        }
        f.write(("," if i else "") + json.dumps(rec, separators=(",", ":")))
    f.write("]}\n")

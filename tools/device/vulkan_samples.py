#!/usr/bin/env python3
"""Prints each device-time record of gpucheck bench JSON documents in one line: device, op, dtype,
shape, median and every sample (ms), throughput, and the GEMM path; then Vulkan/CUDA ratios of the
medians for records both devices have. For tools/device/vulkan.sh."""
import json
import sys

for path in sys.argv[1:]:
    try:
        doc = json.load(open(path))
    except (OSError, ValueError) as e:
        print(f"{path}: {e}")
        continue
    medians = {}
    for r in doc.get("results", []):
        if r.get("status") != "ok":
            print(f"{path}: {r.get('device')} {r.get('op')} {r.get('status')} {r.get('reason', '')}")
            continue
        if r.get("transfers") != "excluded":
            continue
        shape = ",".join(f"{k}={v}" for k, v in sorted(r["shape"].items()))
        t = r["time_s"]
        tp = r.get("throughput") or {}
        samples = " ".join(f"{s * 1e3:.3g}" for s in t.get("samples", []))
        path_note = r.get("context", {}).get("gemm_path", "")
        print(f"{r['device']:8} {r['op']:7} {r.get('dtype', ''):4} {shape:40} "
              f"{t['median'] * 1e3:9.4g} ms {tp.get('value', 0):9.4g} {tp.get('unit', '')} "
              f"[{samples}] {path_note}")
        medians.setdefault((r["op"], r.get("dtype"), shape), {})[r["device"]] = t["median"]
    for (op, dtype, shape), devs in medians.items():
        if "vulkan0" in devs and "cuda0" in devs:
            print(f"ratio {op} {dtype} {shape}: cuda0/vulkan0 time = "
                  f"{devs['cuda0'] / devs['vulkan0']:.2f}")

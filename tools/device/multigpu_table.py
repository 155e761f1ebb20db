#!/usr/bin/env python3
"""The table multigpu.sh prints last: every multi-GPU speed target with what was measured, from
the files in OUT (probe.json, doctor.json, bench-multigpu.json, peers.jsonl, bench-concurrent.json,
bench-serial.json, multigpu.log). A missing or broken file is named, never a crash.

  python3 multigpu_table.py OUT
"""
import json
import os
import re
import statistics
import sys

GiB = 1 << 30
MiB = 1 << 20


def load(out, name):
    path = os.path.join(out, name)
    try:
        with open(path) as f:
            if name.endswith(".jsonl"):
                return [json.loads(l) for l in f if l.strip().startswith("{")]
            return json.load(f)
    except Exception as e:  # noqa: BLE001 - report and go on
        print(f"  ({name}: {type(e).__name__}: {e})")
        return None


rows = []


def row(target, measured, goal, ok):
    verdict = "n/a" if ok is None else ("PASS" if ok else "FAIL")
    rows.append((target, measured, goal, verdict))


def size_text(b):
    return f"{b // GiB} GiB" if b >= GiB and b % GiB == 0 else f"{b // MiB} MiB"


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    probe = load(out, "probe.json")
    bench = load(out, "bench-multigpu.json")
    peers = load(out, "peers.jsonl") or []
    doctor = load(out, "doctor.json")
    conc = load(out, "bench-concurrent.json")
    serial = load(out, "bench-serial.json")
    results = (bench or {}).get("results", [])

    # Verification first: a wrong result is worse than a slow one.
    bad = [r for r in results if r.get("status") in ("failed", "mismatch")]
    row("bench p2p/allreduce records", f"{len(results)} records, {len(bad)} failed or mismatched",
        "0 bad", len(results) > 0 and not bad)
    for r in bad[:5]:
        print(f"  BAD {r.get('op')} {json.dumps(r.get('shape'))}: {r.get('status')}: {r.get('reason')}")
    unsupported = [r for r in results if r.get("status") == "unsupported"]
    for r in unsupported[:5]:
        print(f"  unsupported {r.get('op')} {json.dumps(r.get('shape'))}: {r.get('reason')}")

    # NVML line rate per GPU pair: the sum of the link speeds from one GPU to the other.
    line = {}
    if probe:
        cuda = next((b for b in probe.get("backends", []) if b.get("name") == "cuda"), {})
        pci_to_dev = {d.get("pci_bus_id"): d.get("device") for d in cuda.get("devices", [])}
        for d in cuda.get("devices", []):
            links = d.get("properties", {}).get("nvml", {}).get("nvlink", {}).get("links", [])
            for peer_pci, peer in pci_to_dev.items():
                mbps = sum(l.get("speed_mbps", 0) for l in links if l.get("state") == "active"
                           and (l.get("remote_pci_bus_id") == peer_pci
                                or l.get("remote_device_type") == "switch"))
                if mbps and peer != d.get("device"):
                    line[(d.get("device"), peer)] = mbps / 1000.0
        for p in cuda.get("nvml", {}).get("pairs", []):
            print(f"  topology {pci_to_dev.get(p.get('gpu'), p.get('gpu'))} -> "
                  f"{pci_to_dev.get(p.get('peer'), p.get('peer'))}: {p.get('topology')} "
                  f"(ancestor {p.get('common_ancestor')}, p2p {p.get('p2p')})")

    def p2p(src, dst, size, bi=False, peer=True, engine="ce"):
        for r in results:
            s = r.get("shape", {})
            if (r.get("op") == "p2p" and r.get("status") == "ok" and s.get("bytes") == size
                    and s.get("bidirectional") == bi and s.get("peer_access") == peer
                    and s.get("engine") == engine
                    and {s.get("src"), s.get("dst")} == {src, dst}
                    and (bi or (s.get("src"), s.get("dst")) == (src, dst))):
                return r["throughput"]["value"]
        return None

    torch_p2p = {(p["src"], p["dst"], p["bytes"]): p["GBps"] for p in peers if p.get("op") == "p2p"}
    torch_ar = {p["bytes"]: p["busbw_GBps"] for p in peers if p.get("op") == "allreduce"}
    sizes = sorted({k[2] for k in torch_p2p} | {256 * MiB, GiB})
    pairs = sorted({(k[0], k[1]) for k in torch_p2p} | {("cuda0", "cuda1"), ("cuda1", "cuda0")})
    for size in sizes:
        for src, dst in pairs:
            ours, theirs = p2p(src, dst, size), torch_p2p.get((src, dst, size))
            if ours is None and theirs is None:
                continue
            if ours is not None and theirs:
                row(f"p2p CE uni {src}->{dst} {size_text(size)} vs torch",
                    f"{ours:.1f} / {theirs:.1f} GB/s = {ours / theirs:.3f}x", ">= 0.97x",
                    ours >= 0.97 * theirs)
            else:
                row(f"p2p CE uni {src}->{dst} {size_text(size)} vs torch",
                    f"gpucheck {ours}, torch {theirs}", ">= 0.97x", None)
            if ours is not None and (src, dst) in line:
                lr = line[(src, dst)]
                row(f"p2p CE uni {src}->{dst} {size_text(size)} vs NVML line rate",
                    f"{ours:.1f} / {lr:.1f} GB/s = {ours / lr:.3f}", ">= 0.80", ours >= 0.80 * lr)
        uni = p2p("cuda0", "cuda1", size)
        bi = p2p("cuda0", "cuda1", size, bi=True)
        if uni and bi:
            row(f"p2p CE bidirectional / uni {size_text(size)}", f"{bi:.1f} / {uni:.1f} = "
                f"{bi / uni:.2f}x", ">= 1.8x", bi >= 1.8 * uni)
        staged = p2p("cuda0", "cuda1", size, peer=False)
        sm = p2p("cuda0", "cuda1", size, engine="sm")
        row(f"p2p cuda0->cuda1 {size_text(size)}: staged / SM kernel (info)",
            f"{staged and round(staged, 1)} / {sm and round(sm, 1)} GB/s", "-", None)
    for r in results:
        s = r.get("shape", {})
        if r.get("op") == "latency" and s.get("mode") == "p2p" and r.get("status") == "ok":
            row(f"p2p latency {s['src']}->{s['dst']} {'peer' if s['peer_access'] else 'staged'} (info)",
                f"{r['time_s']['median'] * 1e6:.2f} us", "-", None)
    for r in results:
        if r.get("op") != "allreduce":
            continue
        b = r["shape"]["bytes"]
        if r.get("status") != "ok":
            row(f"allreduce {size_text(b)}", f"{r.get('status')}: {r.get('reason', '')[:60]}", "ok", False)
            continue
        theirs = torch_ar.get(b)
        if b in (256 * MiB, GiB):
            row(f"allreduce busbw {size_text(b)} vs torch.cuda.nccl",
                f"{r['busbw']:.1f} / {theirs and round(theirs, 1)} GB/s"
                + (f" = {r['busbw'] / theirs:.3f}x" if theirs else ""), ">= 0.97x",
                None if not theirs else r["busbw"] >= 0.97 * theirs)
        else:
            row(f"allreduce busbw {size_text(b)} (info)", f"{r['busbw']:.1f} GB/s", "-", None)
    nccl = next((r.get("context", {}) for r in results if r.get("op") == "allreduce"
                 and r.get("context", {}).get("nccl_version")), {})
    if nccl:
        print(f"  gpucheck's NCCL {nccl.get('nccl_version')} at {nccl.get('nccl_path')} "
              f"({nccl.get('nccl_source')}); NCCL_NVLS_ENABLE {nccl.get('nccl_nvls_enable')}")

    # Concurrent against serial: the wall time of each step, and every record's figure.
    log = open(os.path.join(out, "multigpu.log")).read() if os.path.exists(os.path.join(out, "multigpu.log")) else ""
    secs = {m.group(1): float(m.group(2)) for m in re.finditer(r"=== (\S+): exit \d+ after ([0-9.]+) s", log)}
    if "concurrent" in secs and "serial" in secs:
        ratio = secs["concurrent"] / secs["serial"]
        row("bench cuda0,cuda1 --size medium: concurrent / --serial wall",
            f"{secs['concurrent']:.1f} / {secs['serial']:.1f} s = {ratio:.2f}", "<= 0.6", ratio <= 0.6)
    if conc and serial:
        def key(r):
            return (r.get("device"), r.get("op"), r.get("dtype"), json.dumps(r.get("shape"), sort_keys=True),
                    r.get("transfers"))

        def figure(r):
            if r.get("status") != "ok":
                return None
            if r.get("op") in ("latency", "seedloop"):
                return 1.0 / r["time_s"]["median"]
            return r.get("throughput", {}).get("value")
        base = {key(r): r for r in serial.get("results", [])}
        serial2 = load(out, "bench-serial2.json") if os.path.exists(os.path.join(out, "bench-serial2.json")) else None
        again = {key(r): r for r in serial2.get("results", [])} if serial2 else {}
        if again:
            # Serial against serial: how far a figure moves with nothing changed (the noise floor).
            floor = {}
            for k2, r in again.items():
                b = base.get(k2)
                a, s = figure(r), figure(b) if b else None
                if a and s:
                    floor.setdefault(r["device"], []).append((a / s - 1, r))
            for dev, d in sorted(floor.items()):
                within = sum(abs(x[0]) <= 0.03 for x in d)
                row(f"{dev} serial vs serial figures, the noise floor ({len(d)} records)",
                    f"median |diff| {100 * statistics.median(abs(x[0]) for x in d):.1f} %, "
                    f"{within}/{len(d)} within 3 %", "information", True)
        locked = [r for r in conc.get("results", []) if r.get("context", {}).get("host_transfers_alone")]
        host_side = [r for r in conc.get("results", []) if r.get("transfers") == "included"
                     or r.get("op") in ("copy", "seedloop")]
        row("concurrent records whose host transfers ran alone (host_transfers_alone)",
            f"{len(locked)} flagged; {len(host_side)} copy/seedloop/transfers-included records",
            "information", True)
        devs = {}
        for r in conc.get("results", []):
            b = base.get(key(r))
            a, s = figure(r), figure(b) if b else None
            if a and s:
                devs.setdefault(r["device"], []).append((a / s - 1, r))
            if not r.get("concurrent_with") and r.get("device", "").startswith("cuda"):
                print(f"  NOTE {r['device']} {r.get('op')}: no concurrent_with in a concurrent run")
        for dev, d in sorted(devs.items()):
            worst = max(d, key=lambda x: abs(x[0]))
            med = statistics.median(abs(x[0]) for x in d)
            within = sum(abs(x[0]) <= 0.03 for x in d)
            row(f"{dev} concurrent vs serial figures ({len(d)} records)",
                f"median |diff| {100 * med:.1f} %, {within}/{len(d)} within 3 %, worst "
                f"{100 * worst[0]:+.1f} % ({worst[1].get('op')} {worst[1].get('dtype', '')} "
                f"{worst[1].get('transfers')})", "each within 3 %", within == len(d))
            for diff, r in sorted(d, key=lambda x: -abs(x[0])):
                if abs(diff) <= 0.03:
                    break
                r2 = again.get(key(r))
                noise = (figure(r2) / figure(base[key(r)]) - 1) if r2 and figure(r2) else None
                print(f"  beyond 3 %: {dev} {r.get('op')} {r.get('dtype', '')} "
                      f"{json.dumps(r.get('shape'), sort_keys=True)} {r.get('transfers')}: "
                      f"{100 * diff:+.1f} %" + (f" (serial vs serial {100 * noise:+.1f} %)" if noise is not None else "")
                      + (" [host lock]" if r.get("context", {}).get("host_transfers_alone") else ""))

    if doctor:
        for c in doctor.get("checks", []):
            if c["id"] in ("nvlink_links", "nvlink_errors", "p2p_access", "gpu_siblings",
                           "pcie_link_under_load", "clocks_under_load"):
                row(f"doctor {c['id']}", f"{c['status'].upper()}: {c['finding'][:70]}", "pass",
                    c["status"] in ("pass", "info"))
    if "NVML layout:" in log:
        ok = "NVML layout: all match" in log
        row("hand-declared NVML structs vs nvml.h", "all match" if ok else "MISMATCH (see the log)",
            "match", ok)
    tests = sorted(set(re.findall(r"\[\s+(OK|FAILED|SKIPPED)\s+\] (\w+\.\w+)", log)))
    if tests:
        failed = [t for s, t in tests if s == "FAILED"]
        skipped = [t for s, t in tests if s == "SKIPPED"]
        row("device tests (topology, NVLink, P2P vs nvidia-smi; bench verified)",
            f"{sum(s == 'OK' for s, _ in tests)} ok, {len(failed)} failed, {len(skipped)} skipped",
            "0 failed", not failed)
        for t in failed:
            print(f"  FAILED device test {t}")

    w = [max(len(r[i]) for r in rows + [("target", "measured", "goal", "verdict")]) for i in range(4)]
    print(f"{'target':<{w[0]}}  {'measured':<{w[1]}}  {'goal':<{w[2]}}  verdict")
    for r in rows:
        print(f"{r[0]:<{w[0]}}  {r[1]:<{w[1]}}  {r[2]:<{w[2]}}  {r[3]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""gpucheck beside PyTorch/CuPy on one GPU: alternating rounds, one table of ratios.

Run through tools/device/device-perf.sh on the GPU machine (its python3 has torch, cupy and numpy).
Each round runs gpucheck's benchmark child, then the peer (peers.py's own measuring code,
imported as a module), for every workload both sides run; the ratio of a round compares the
two figures of that round, and the table gives the median of the rounds' ratios and their spread.

Ratios are rates: throughput over throughput (GEMM, conv, exp, copies) or the peer's time over
gpucheck's (latency, seed loop), so > 1 always means gpucheck is faster.

  python3 tools/device/device_perf.py --gpucheck BIN --peers peers.py [--rounds 3] [--budget-s 420]
  python3 tools/device/device_perf.py --peer-run --peers peers.py --ops gemm ...   (one peer round)

With OUT set, every record (gpucheck's and the peer's, tagged with round, source and the
libraries used) goes to $OUT/perf.jsonl, and the table to $OUT/perf-table.md.
"""
import argparse
import datetime
import importlib.util
import json
import math
import os
import statistics
import subprocess
import sys
import time

EXP_SIZES = [1 << 26, 1 << 28]
GEMM_SIZES = [4096, 8192]
GEMM_DTYPES = ["f32", "tf32", "f16", "bf16", "f64"]
CONV_SHAPES = ["32,64,56,56,64,3,3,1,1", "32,256,14,14,256,3,3,1,1"]
CONV_DTYPES = ["f32", "tf32", "f16", "bf16"]
LAYOUTS = ["nchw", "nhwc"]
COPY_BYTES = 256 << 20


# ---------------------------------------------------------------- the peer, in its own process
def peer_run(a):
    """One peer round: peers.py's functions, with its CPU (numpy) timings switched off
    (median_cpu is replaced: numpy GEMMs of 8192 would take minutes and are not compared)."""
    spec = importlib.util.spec_from_file_location("peers", a.peers)
    peers = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(peers)
    peers.median_cpu = lambda fn, reps, warm=1: float("nan")
    watch_clocks(peers)
    ns = argparse.Namespace(
        exp=",".join(map(str, EXP_SIZES)), gemm=",".join(map(str, GEMM_SIZES)),
        dtypes=a.dtypes, conv=";".join(CONV_SHAPES), layouts=",".join(LAYOUTS),
        copy=str(COPY_BYTES), reps=a.reps)
    torch = peers.torch
    if peers.CUDA:
        torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
        torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
        pr = torch.cuda.get_device_properties(0)
        peers.emit(peer="torch", device="cuda0", name=pr.name, torch=torch.__version__,
                   cuda=torch.version.cuda, cudnn=torch.backends.cudnn.version())
    for op in a.ops.split(","):
        if op == "h2d_diag":
            h2d_diag(peers, a.reps)
        else:
            peers.OPS[op](ns)


def watch_clocks(peers):
    """The peer's mean SM clock while each of its median_cuda measurements ran (NVML through
    pynvml, every 25 ms on a thread, as gpucheck samples its own), added to the record it emits:
    GEMMs of 8192 are power-limited, so a ratio also compares clocks."""
    try:
        import threading
        import pynvml
        pynvml.nvmlInit()
        dev = pynvml.nvmlDeviceGetHandleByIndex(0)
    except Exception:  # no pynvml or NVML: records without the clock
        return
    last = {}
    orig_median, orig_emit = peers.median_cuda, peers.emit

    def median_cuda(fn, reps, warm=3):
        samples, stop = [], threading.Event()

        def loop():
            while not stop.is_set():
                samples.append(pynvml.nvmlDeviceGetClockInfo(dev, pynvml.NVML_CLOCK_SM))
                stop.wait(0.025)
        th = threading.Thread(target=loop, daemon=True)
        th.start()
        try:
            return orig_median(fn, reps, warm)
        finally:
            stop.set()
            th.join()
            last["sm_clock_mhz"] = sum(samples) / len(samples) if samples else None

    def emit(**kw):
        if "sm_clock_mhz" in last:
            kw["sm_clock_mhz"] = last.pop("sm_clock_mhz")
        orig_emit(**kw)
    peers.median_cuda, peers.emit = median_cuda, emit


def h2d_diag(peers, reps):
    """peers.py's pageable H2D copy reads a torch.empty() tensor nobody wrote: its pages may all
    map the kernel's shared zero page (hot in cache). The same copy from written memory is what
    gpucheck measures (it fills its pageable buffer with random bytes first)."""
    torch = peers.torch
    n = COPY_BYTES // 4
    d = torch.empty(n, device="cuda")
    written = torch.rand(n)
    for label, h in (("untouched torch.empty", torch.empty(n)), ("written torch.rand", written)):
        s = peers.median_cuda(lambda: d.copy_(h, non_blocking=True), reps)
        peers.emit(peer="torch", device="cuda0", op="h2d_diag", host=label, bytes=COPY_BYTES,
                   median_s=s, GBps=COPY_BYTES / s / 1e9)
    # gpucheck copies on a stream of its own (cudaStreamNonBlocking); torch on the legacy one.
    with torch.cuda.stream(torch.cuda.Stream()):
        s = peers.median_cuda(lambda: d.copy_(written, non_blocking=True), reps)
    peers.emit(peer="torch", device="cuda0", op="h2d_diag", host="written torch.rand, side stream",
               bytes=COPY_BYTES, median_s=s, GBps=COPY_BYTES / s / 1e9)


# ---------------------------------------------------------------- helpers
def now():
    return time.monotonic()


def log(msg):
    print(f"[{datetime.datetime.now().strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def torch_libs():
    """Torch's own cuBLAS/cuBLASLt/cuDNN from its site-packages, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    if spec is None or spec.origin is None:
        return {}
    site = os.path.dirname(os.path.dirname(spec.origin))
    found = {}
    for key, names in (("cublas", ["libcublas.so.13", "libcublas.so.12"]),
                       ("cublaslt", ["libcublasLt.so.13", "libcublasLt.so.12"]),
                       ("cudnn", ["libcudnn.so.9"])):
        for sub in ("nvidia/cu13/lib", "nvidia/cublas/lib", "nvidia/cudnn/lib"):
            for n in names:
                p = os.path.join(site, sub, n)
                if key not in found and os.path.exists(p):
                    found[key] = p
    return found


def run_json(cmd, env=None, timeout=300):
    t0 = now()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                       timeout=timeout)
    dt = now() - t0
    if p.returncode not in (0, 1):
        log(f"rc={p.returncode} from {' '.join(cmd[:4])}…: {p.stderr[-2000:]}")
    return p, dt


class Recorder:
    def __init__(self, out_dir):
        self.f = open(os.path.join(out_dir, "perf.jsonl"), "w") if out_dir else None
        self.gc = []    # (round, libs, record)
        self.peer = []  # (round, record)

    def add_gc(self, rnd, libs, rec):
        self.gc.append((rnd, libs, rec))
        if self.f:
            self.f.write(json.dumps({"round": rnd, "source": "gpucheck", "libs": libs, **rec}) + "\n")

    def add_peer(self, rnd, rec):
        self.peer.append((rnd, rec))
        if self.f:
            self.f.write(json.dumps({"round": rnd, "source": "peer", **rec}) + "\n")

    def flush(self):
        if self.f:
            self.f.flush()


def gc_groups(min_time, warmup, reps=None):
    common = ["--device", "cuda0", "--no-baseline", "--json", "--min-time", str(min_time),
              "--warmup", str(warmup)] + (["--reps", str(reps)] if reps else [])
    return {
        "mem": common + ["--ops", "exp,copy,latency,seedloop", "--dtype", "f32",
                         "--exp", ",".join(map(str, EXP_SIZES)), "--copy", str(COPY_BYTES)],
        "gemm": common + ["--ops", "gemm", "--dtype", ",".join(GEMM_DTYPES),
                          "--gemm", ",".join(map(str, GEMM_SIZES))],
        "conv": common + ["--ops", "conv", "--dtype", ",".join(CONV_DTYPES),
                          "--conv", ";".join(CONV_SHAPES), "--layout", ",".join(LAYOUTS)],
    }


PEER_OPS = {"mem": "exp,copy,latency,seedloop", "gemm": "gemm", "conv": "conv"}


def run_gpucheck(a, rec, rnd, groups, libs_name, lib_flags, env):
    for g in groups:
        cmd = [a.gpucheck, "bench"] + gc_groups(a.min_time, a.warmup, a.gc_reps)[g] + lib_flags
        p, dt = run_json(cmd, env=env, timeout=a.budget_s)
        n = 0
        try:
            doc = json.loads(p.stdout)
            for r in doc.get("results", []):
                if r.get("device") == "cuda0":
                    rec.add_gc(rnd, libs_name, r)
                    n += 1
        except json.JSONDecodeError:
            log(f"gpucheck {g}: no JSON (rc {p.returncode}): {p.stderr[-1500:]}")
        log(f"round {rnd} gpucheck[{libs_name}] {g}: {n} records in {dt:.1f} s")
    rec.flush()


def run_peer(a, rec, rnd, groups):
    for g in groups:
        dtypes = ",".join(GEMM_DTYPES) if g != "conv" else ",".join(CONV_DTYPES)
        cmd = [sys.executable, os.path.abspath(__file__), "--peer-run", "--peers", a.peers,
               "--ops", PEER_OPS[g], "--dtypes", dtypes, "--reps", str(a.peer_reps)]
        p, dt = run_json(cmd, timeout=a.budget_s)
        n = 0
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(r.get("median_s"), float) and math.isnan(r["median_s"]):
                continue  # the CPU timings switched off above
            rec.add_peer(rnd, r)
            n += 1
        if p.returncode != 0:
            log(f"peer {g}: rc {p.returncode}: {p.stderr[-1500:]}")
        log(f"round {rnd} peer {g}: {n} records in {dt:.1f} s")
    rec.flush()


# ---------------------------------------------------------------- matching records into rows
def gc_key(r):
    """(workload name, kind) of a gpucheck record, kind 'rate' (higher is better) or 'time'."""
    if r.get("status") != "ok":
        return None
    op, s, tr = r["op"], r["shape"], r["transfers"]
    if op == "gemm" and tr == "excluded":
        return f"gemm {r['dtype']} {s['m']}"
    if op == "exp" and tr == "excluded":
        return f"exp f32 2^{int(math.log2(s['n']))}"
    if op == "conv" and tr == "excluded":
        sh = ",".join(str(s[x]) for x in "n c h w k r s".split())
        return f"conv {r['dtype']} {s['layout']} {sh}"
    if op == "copy":
        mem = f" {s['host_memory']}" if s["direction"] in ("h2d", "d2h") else ""
        return f"copy {s['direction']}{mem} {s['bytes'] >> 20}MiB"
    if op == "latency":
        return f"latency {'async_launch' if s['mode'] == 'async' else 'round_trip'}"
    if op == "seedloop":
        return f"seedloop d2h={'yes' if s['d2h_each_call'] else 'no'}"
    return None


def gc_value(r):
    if r["op"] in ("latency", "seedloop"):
        return r["time_s"]["median"]
    return r["throughput"]["value"]


def peer_key(r):
    op = r.get("op")
    dev = r.get("device")
    if dev != "cuda0":
        return None
    if op == "gemm":
        return f"gemm {r['dtype']} {r['m']}"
    if op == "exp" and r.get("transfers") == "excluded":
        return f"exp f32 2^{int(math.log2(r['n']))}"
    if op == "conv":
        sh = ",".join(str(x) for x in r["shape"][:7])
        return f"conv {r['dtype']} {r['layout']} {sh}"
    if op == "copy":
        mem = f" {r['host_memory']}" if r["direction"] in ("h2d", "d2h") else ""
        return f"copy {r['direction']}{mem} {r['bytes'] >> 20}MiB"
    if op == "latency":
        return f"latency {r['mode']}"
    if op == "seedloop":
        return f"seedloop d2h={'yes' if r['d2h_each_call'] else 'no'}"
    return None


def peer_value(r):
    for k in ("TFLOPs", "GBps", "per_launch_s", "per_call_s", "median_s"):
        if k in r:
            return r[k]
    return None


UNITS = {"gemm": "TFLOP/s", "conv": "TFLOP/s", "exp": "GB/s", "copy": "GB/s",
         "latency": "us", "seedloop": "us"}
GOALS = {"gemm": 1.0, "conv": 1.0, "exp": 1.0, "copy": 1.0, "latency": 1.0, "seedloop": 1.0}


def is_time(key):
    return key.split()[0] in ("latency", "seedloop")


def fmt_v(key, v):
    if v is None:
        return "—"
    return f"{v * 1e6:.2f}" if is_time(key) else f"{v:.1f}" if v >= 100 else f"{v:.2f}"


def table(rec, libs_name="torch"):
    gc, pe = {}, {}
    ctx = {}
    for rnd, libs, r in rec.gc:
        if libs != libs_name:
            continue
        k = gc_key(r)
        if k:
            gc.setdefault(k, {})[rnd] = gc_value(r)
            ctx.setdefault(k, {})[rnd] = r
    for rnd, r in rec.peer:
        k = peer_key(r)
        if k:
            v = peer_value(r)
            if v is not None:
                pe.setdefault(k, {})[rnd] = v
    rows = []
    for k in sorted(gc, key=order_key):
        g = gc[k]
        p = pe.get(k, {})
        ratios = []
        for rnd in sorted(g):
            if rnd in p and g[rnd] > 0 and p[rnd] > 0:
                ratios.append(p[rnd] / g[rnd] if is_time(k) else g[rnd] / p[rnd])
        gm = statistics.median(g.values())
        pm = statistics.median(p.values()) if p else None
        rm = statistics.median(ratios) if ratios else None
        spread = (min(ratios), max(ratios)) if ratios else None
        goal = GOALS.get(k.split()[0], 1.0)
        met = None if rm is None or k.startswith("copy d2d") else rm >= 0.97 * goal
        rows.append(dict(key=k, unit=UNITS[k.split()[0]], gc=gm, peer=pm, ratio=rm, spread=spread,
                         rounds=len(ratios), met=met, recs=ctx[k]))
    return rows


def order_key(k):
    first = ["gemm", "exp", "conv", "copy", "latency", "seedloop"].index(k.split()[0])
    return (first, k)


def render(rows, title):
    out = [f"### {title}", "",
           "| workload | unit | gpucheck | peer | ratio | spread (min–max) | rounds | target met |",
           "|---|---|---:|---:|---:|---|---:|---|"]
    for r in rows:
        sp = f"{r['spread'][0]:.3f}–{r['spread'][1]:.3f}" if r["spread"] else "—"
        ratio = f"{r['ratio']:.3f}" if r["ratio"] is not None else "—"
        met = {True: "yes", False: "**no**", None: "—"}[r["met"]]
        out.append(f"| {r['key']} | {r['unit']} | {fmt_v(r['key'], r['gc'])} | "
                   f"{fmt_v(r['key'], r['peer'])} | {ratio} | {sp} | {r['rounds']} | {met} |")
    return "\n".join(out)


def extras(rec, rows):
    """exp against gpucheck's own D2D copy; GEMM peak fractions; throttling; NHWC gain."""
    out = []
    by = {r["key"]: r for r in rows}
    d2d = by.get(f"copy d2d {COPY_BYTES >> 20}MiB")
    if d2d:
        out += ["", "### exp against gpucheck's own device-to-device copy (goal ≥ 0.9)", "",
                "| workload | exp GB/s | D2D copy GB/s | fraction | met |", "|---|---:|---:|---:|---|"]
        for r in rows:
            if r["key"].startswith("exp"):
                f = r["gc"] / d2d["gc"]
                out.append(f"| {r['key']} | {r['gc']:.1f} | {d2d['gc']:.1f} | {f:.3f} | "
                           f"{'yes' if f >= 0.9 * 0.97 else '**no**'} |")
    out += ["", "### GEMM peak fraction (gpucheck, median over rounds)", "",
            "| workload | TFLOP/s | mean SM clock MHz | peak_fraction at mean clock | at max clock | throttled | torch's mean SM clock MHz | ratio per MHz |",
            "|---|---:|---:|---:|---:|---|---:|---:|"]
    peer_clk = {}
    for _, pr in rec.peer:
        if pr.get("op") == "gemm" and pr.get("sm_clock_mhz"):
            peer_clk.setdefault(f"gemm {pr['dtype']} {pr['m']}", []).append(pr["sm_clock_mhz"])
    for r in rows:
        if not r["key"].startswith("gemm"):
            continue
        pf, pfm, clk, thr = [], [], [], set()
        for rr in r["recs"].values():
            c = rr.get("context", {})
            if "peak_fraction" in rr:
                pf.append(rr["peak_fraction"])
            if "peak_fraction_at_max_sm_clock" in c:
                pfm.append(c["peak_fraction_at_max_sm_clock"])
            if "sm_clock_mhz" in c and isinstance(c["sm_clock_mhz"], dict):
                clk.append(c["sm_clock_mhz"].get("mean"))
            if "throttled" in c:
                thr.add(str(c["throttled"]))
        med = lambda xs: f"{statistics.median(xs):.3f}" if xs else "—"
        clk_s = f"{statistics.median(clk):.0f}" if clk else "—"
        # Throughput per MHz of SM clock on both sides: a sustained run sits at a lower clock
        # than a burst of 20 repetitions, and this ratio takes that difference out.
        per_mhz = "—"
        if clk and r["key"] in peer_clk and r["peer"]:
            per_mhz = (f"{(r['gc'] / statistics.median(clk)) / (r['peer'] / statistics.median(peer_clk[r['key']])):.3f}")
        peer_clk_s = f"{statistics.median(peer_clk[r['key']]):.0f}" if r["key"] in peer_clk else "—"
        out.append(f"| {r['key']} | {r['gc']:.1f} | {clk_s} | {med(pf)} | {med(pfm)} | "
                   f"{','.join(sorted(thr)) or '—'} | {peer_clk_s} | {per_mhz} |")
    out += ["", "### NHWC over NCHW (conv, median TFLOP/s)", "",
            "| conv | gpucheck NHWC/NCHW | torch NHWC/NCHW |", "|---|---:|---:|"]
    for r in rows:
        if r["key"].startswith("conv") and " nchw " in r["key"]:
            o = by.get(r["key"].replace(" nchw ", " nhwc "))
            if o and r["peer"] and o["peer"]:
                out.append(f"| {r['key'].replace(' nchw', '')} | {o['gc'] / r['gc']:.2f} | "
                           f"{o['peer'] / r['peer']:.2f} |")
    throttled = [(r["key"], rnd) for r in rows for rnd, rr in r["recs"].items()
                 if rr.get("context", {}).get("throttled")]
    out += ["", f"Records marked throttled: {len(throttled)} {throttled[:10]}"]
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--gpucheck")
    ap.add_argument("--peers", required=True)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--budget-s", type=float, default=420, help="stop starting rounds after this")
    ap.add_argument("--min-time", type=float, default=0.0)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--gc-reps", type=int, default=20,
                    help="gpucheck --reps; with the default --min-time 0 this is the peer's protocol "
                         "(20 timed repetitions after 3 warm-ups): a longer gpucheck run sits at a "
                         "lower, power-capped clock than the peer's burst (docs/PERFORMANCE.md, run 4)")
    ap.add_argument("--peer-reps", type=int, default=20)
    ap.add_argument("--groups", default="mem,gemm,conv")
    ap.add_argument("--system-libs", action="store_true",
                    help="after the rounds, one gpucheck round with the libraries its own search finds")
    ap.add_argument("--diagnose", action="store_true",
                    help="after the rounds, torch's pageable H2D from untouched vs written memory")
    ap.add_argument("--peer-run", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--ops", default="")
    ap.add_argument("--dtypes", default="")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    if a.peer_run:
        return peer_run(a)
    t_start = now()
    out_dir = os.environ.get("OUT") or None
    rec = Recorder(out_dir)
    groups = a.groups.split(",")
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,pci.bus_id,clocks.max.sm,"
                          "power.limit,temperature.gpu,persistence_mode",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    log(f"GPU: {smi}")
    libs = torch_libs()
    log(f"torch's libraries: {libs}")
    flags = []
    for k, flag in (("cublas", "--cublas"), ("cublaslt", "--cublaslt"), ("cudnn", "--cudnn")):
        if k in libs:
            flags += [flag, libs[k]]
    env = dict(os.environ)
    libs_name = "torch" if flags else "system"
    round_times = []
    for rnd in range(1, a.rounds + 1):
        t0 = now()
        if round_times and (now() - t_start) + max(round_times) > a.budget_s:
            log(f"stopping before round {rnd}: {now() - t_start:.0f} s spent, a round takes "
                f"{max(round_times):.0f} s, budget {a.budget_s:.0f} s")
            break
        run_gpucheck(a, rec, rnd, groups, libs_name, flags, env)
        run_peer(a, rec, rnd, groups)
        round_times.append(now() - t0)
    sys_rows = None
    if a.system_libs and libs_name == "torch":
        left = a.budget_s - (now() - t_start)
        if left > 0.6 * max(round_times):
            sys_groups = [g for g in groups if g in ("gemm", "conv")]
            run_gpucheck(a, rec, 1, sys_groups, "system", [], env)
            sys_rows = table(rec, "system")
        else:
            log(f"no system-library round: {left:.0f} s left")
    diag = []
    if a.diagnose:
        cmd = [sys.executable, os.path.abspath(__file__), "--peer-run", "--peers", a.peers,
               "--ops", "h2d_diag", "--reps", str(a.peer_reps)]
        p, _ = run_json(cmd, timeout=120)
        for line in p.stdout.splitlines():
            try:
                r = json.loads(line)
            except json.JSONDecodeError:
                continue
            if r.get("op") == "h2d_diag":
                rec.add_peer(0, r)
                diag.append(f"torch H2D pageable 256 MiB from {r['host']}: {r['GBps']:.2f} GB/s")
        rec.flush()
    rows = table(rec, libs_name)
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    head = (f"{date}; GPU (name, driver, PCI, max SM clock, power limit, temperature, persistence): "
            f"{smi}\ngpucheck libraries: {libs_name} {json.dumps(libs)}\n"
            f"rounds: {len(round_times)}, each gpucheck then peer; {now() - t_start:.0f} s in all")
    text = (head + "\n\n" + render(rows, f"gpucheck ({libs_name} libraries) vs peer") + "\n" +
            extras(rec, rows))
    if sys_rows:
        torch_by = {r["key"]: r for r in rows}
        text += "\n\n### gpucheck with the system's libraries (one round) vs the same round's peer\n\n"
        text += "| workload | gpucheck (system libs) | gpucheck (torch libs, median) | peer (median) | ratio (round 1) |\n|---|---:|---:|---:|---:|\n"
        for r in sys_rows:
            t = torch_by.get(r["key"])
            text += (f"| {r['key']} | {fmt_v(r['key'], r['gc'])} | "
                     f"{fmt_v(r['key'], t['gc']) if t else '—'} | {fmt_v(r['key'], r['peer'])} | "
                     f"{r['ratio']:.3f} |\n" if r["ratio"] else "")
    if diag:
        text += "\n\n### Diagnostics\n\n" + "\n".join(f"- {d}" for d in diag) + "\n"
    print(text)
    if out_dir:
        with open(os.path.join(out_dir, "perf-table.md"), "w") as f:
            f.write(text + "\n")


if __name__ == "__main__":
    sys.exit(main())

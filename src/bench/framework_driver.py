# gpucheck's framework bench driver, embedded in the gpucheck binary and run by it in a child of
# the interpreter under test (src/bench/framework_run.h describes the protocol).
#
# stdin: one JSON line, the job. gpucheck wrote each cell's inputs as raw little-endian arrays
# into job["dir"]; this script runs the cells through one framework with gpucheck's timing
# rules and writes each record's output the same way. stdout: one JSON object a line. It never
# checks a result itself: gpucheck verifies every output against its float64 reference.
import json
import math
import os
import random
import sys
import time

PROTOCOL = 1
OUT = sys.stdout
sys.stdout = sys.stderr  # a library that prints must not corrupt the protocol


def emit(**kw):
    OUT.write(json.dumps(kw) + "\n")
    OUT.flush()


class Unsupported(Exception):
    pass


# --- gpucheck's repetition policy (src/bench/reps.cpp), the same numbers ---------------------
MAX_AUTO_REPS = 1000000


def planned_reps(p, t1):
    if p.get("reps") is not None:
        return p["reps"]
    if not t1 > 0:
        return MAX_AUTO_REPS
    wanted = math.ceil(p["min_time"] / t1)
    if not wanted < MAX_AUTO_REPS:
        return MAX_AUTO_REPS
    return max(max(1, p["min_auto_reps"]), int(wanted))


def run_reps(p, once):
    """Warm-up runs, then the planned timed runs; stops once max_time is spent (the larger of
    the times reported and the wall clock). Returns (times, truncated)."""
    start = time.perf_counter()
    reported = 0.0

    def spent():
        return max(reported, time.perf_counter() - start)

    cut = False
    for _ in range(p["warmup"]):
        if spent() > p["max_time"]:
            cut = True
            break
        reported += once()
    w0 = time.perf_counter()
    t1 = once()
    t1_wall = time.perf_counter() - w0
    samples = [t1]
    reported += t1
    planned = planned_reps(p, max(t1, t1_wall))
    while len(samples) < planned:
        if spent() > p["max_time"]:
            cut = True
            break
        t = once()
        samples.append(t)
        reported += t
    return samples, cut


def wall(fn, sync=None):
    t0 = time.perf_counter()
    fn()
    if sync:
        sync()
    return time.perf_counter() - t0


def read_input(job, name):
    import numpy as np

    return np.fromfile(os.path.join(job["dir"], name), dtype=np.uint8)


def write_output(job, name, raw_bytes):
    with open(os.path.join(job["dir"], name), "wb") as f:
        f.write(raw_bytes)


# Raw storage of each gpucheck dtype: the numpy type of its bits (tf32 is stored as f32).
BITS = {"f32": "<u4", "tf32": "<u4", "f64": "<u8", "f16": "<u2", "bf16": "<u2"}


def conv_out_hw(s):
    return ((s["h"] + 2 * s["pad"] - s["r"]) // s["stride"] + 1,
            (s["w"] + 2 * s["pad"] - s["s"]) // s["stride"] + 1)


# --- PyTorch ---------------------------------------------------------------------------------
class Torch:
    name = "torch"

    def __init__(self, job):
        import numpy as np
        import torch

        self.np, self.torch = np, torch
        dev = job["device"]
        self.cuda = dev.startswith("cuda")
        if self.cuda:
            if not torch.cuda.is_available():
                raise Unsupported("torch.cuda.is_available() is False (torch %s, built for CUDA %s)"
                                  % (torch.__version__, torch.version.cuda))
            ordinal = int(dev[4:])
            if ordinal >= torch.cuda.device_count():
                raise Unsupported("torch sees %d CUDA devices; %s is not among them"
                                  % (torch.cuda.device_count(), dev))
            self.dev = torch.device("cuda", ordinal)
            torch.cuda.set_device(self.dev)
            # f16/bf16 accumulate in f32, as gpucheck's kernels and its verification assume
            torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
            if hasattr(torch.backends.cuda.matmul, "allow_bf16_reduced_precision_reduction"):
                torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction = False
            # cuDNN's autotuner is off, as in torch by default; GPUCHECK_TORCH_CUDNN_BENCHMARK=1
            # turns it on (as peers.py and many training scripts do) and the impl says so.
            torch.backends.cudnn.benchmark = os.environ.get("GPUCHECK_TORCH_CUDNN_BENCHMARK") == "1"
            self.device_name = torch.cuda.get_device_name(self.dev)
        else:
            self.dev = torch.device("cpu")
            if job.get("threads"):
                torch.set_num_threads(job["threads"])
            self.device_name = "cpu"
        self.tf32 = False
        self.set_tf32(False)
        self.version = torch.__version__
        self.torch_dtype = {"f32": torch.float32, "tf32": torch.float32, "f64": torch.float64,
                            "f16": torch.float16, "bf16": torch.bfloat16}
        self.bits_dtype = {2: torch.int16, 4: torch.int32, 8: torch.int64}

    def settings(self):
        if not self.cuda:
            n = self.torch.get_num_threads()
            return "CPU, %d thread%s" % (n, "" if n == 1 else "s")
        cudnn = self.torch.backends.cudnn
        return "cudnn.benchmark %s, TF32 off unless tf32" % ("on" if cudnn.benchmark else "off")

    def framework_device(self):
        return str(self.dev)

    def matmul(self, a, b, out):
        """The GEMM cell's call, shared with the accumulation probe."""
        return self.torch.matmul(a, b, out=out)

    def bf16_gemm_sum(self):
        """ones(4,512) @ ones(512,4) in bf16 through the cell's call: 512 where the kernel
        accumulates in f32, 256 where each partial sum is rounded to bf16 (past 256, bf16's
        spacing is 2, so +1 is lost). Torch 1.13 on a CPU without AVX-512 BW/VL/DQ (or with
        torch.backends.mkldnn.enabled False) leaves oneDNN for a kernel that does the latter."""
        torch = self.torch
        a = torch.ones(4, 512, dtype=torch.bfloat16, device=self.dev)
        b = torch.ones(512, 4, dtype=torch.bfloat16, device=self.dev)
        out = torch.empty(4, 4, dtype=torch.bfloat16, device=self.dev)
        self.matmul(a, b, out)
        self.sync()
        return float(out.float().min().item())

    def set_tf32(self, on):
        if self.cuda:
            self.torch.backends.cuda.matmul.allow_tf32 = on
            self.torch.backends.cudnn.allow_tf32 = on

    def tensor(self, raw, dtype, shape=None):
        """Host tensor of gpucheck's dtype from raw little-endian bytes."""
        np, torch = self.np, self.torch
        bits = np.frombuffer(raw.tobytes(), dtype=BITS[dtype]).astype(BITS[dtype].replace("u", "i"))
        t = torch.from_numpy(bits.copy()).view(self.torch_dtype[dtype])
        return t if shape is None else t.reshape(shape)

    def raw(self, t):
        t = t.detach().to("cpu").contiguous().reshape(-1)
        return t.view(self.bits_dtype[t.element_size()]).numpy().tobytes()

    def check_dtype(self, op, dtype):
        if dtype == "tf32" and not self.cuda:
            raise Unsupported("TF32 is a CUDA math mode; torch on the CPU has none")

    def timer(self):
        torch = self.torch
        if not self.cuda:
            return lambda fn: wall(fn)

        def on_device(fn):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            e.synchronize()
            return s.elapsed_time(e) / 1e3

        return on_device

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.dev)

    def pinned(self, t):
        return t.pin_memory() if self.cuda else t

    def pin_like(self, h):
        """Pinned host memory with h's strides (channels_last views stay so), so an upload is
        one plain copy."""
        if h.is_contiguous():
            return h.pin_memory()
        return h.permute(0, 2, 3, 1).contiguous().pin_memory().permute(0, 3, 1, 2)

    # Each op: host inputs -> (launch on resident data, resident output getter, end-to-end step)
    def op_fn(self, op, dtype, shape, hosts):
        torch = self.torch
        self.set_tf32(dtype == "tf32")
        dev = [h.to(self.dev) for h in hosts]
        if op == "exp":
            out = torch.empty_like(dev[0])
            launch = lambda: torch.exp(dev[0], out=out)
            result = lambda: out
        elif op == "gemm":
            out = torch.empty(shape["m"], shape["n"], dtype=dev[0].dtype, device=self.dev)
            launch = lambda: self.matmul(dev[0], dev[1], out)
            result = lambda: out
        elif op == "conv":
            box = {}

            def launch():
                box["y"] = torch.nn.functional.conv2d(dev[0], dev[1], stride=shape["stride"],
                                                      padding=shape["pad"])

            def result():
                y = box["y"]
                return y.permute(0, 2, 3, 1) if shape["layout"] == "nhwc" else y
        else:
            raise Unsupported("no %s here" % op)
        return dev, launch, result

    def load(self, op, dtype, shape, raws):
        if op == "exp":
            return [self.tensor(raws[0], dtype)]
        if op == "gemm":
            return [self.tensor(raws[0], dtype, (shape["m"], shape["k"])),
                    self.tensor(raws[1], dtype, (shape["k"], shape["n"]))]
        s = shape
        if s["layout"] == "nhwc":  # packed N×H×W×C and K×R×S×C: channels_last NCHW views
            x = self.tensor(raws[0], dtype, (s["n"], s["h"], s["w"], s["c"])).permute(0, 3, 1, 2)
            w = self.tensor(raws[1], dtype, (s["k"], s["r"], s["s"], s["c"])).permute(0, 3, 1, 2)
            return [x, w]
        return [self.tensor(raws[0], dtype, (s["n"], s["c"], s["h"], s["w"])),
                self.tensor(raws[1], dtype, (s["k"], s["c"], s["r"], s["s"]))]

    def run_compute(self, cell, policy, raws, want_raw):
        op, dtype, shape = cell["op"], cell["dtype"], cell["shape"]
        self.check_dtype(op, dtype)
        hosts = self.load(op, dtype, shape, raws)
        dev, launch, result = self.op_fn(op, dtype, shape, hosts)
        self.sync()
        records = []
        times, cut = run_reps(policy, lambda: self.timer()(launch))
        self.sync()
        records.append((times, cut, self.raw(result()) if want_raw else None))
        if self.cuda:
            pinned_in = [self.pin_like(h) for h in hosts]
            box = {}

            def end_to_end():
                for d, h in zip(dev, pinned_in):
                    d.copy_(h, non_blocking=True)
                launch()
                r = result()
                if "out" not in box:
                    box["out"] = torch_empty_pinned(self.torch, r)
                box["out"].copy_(r, non_blocking=True)
                self.sync()

            times, cut = run_reps(policy, lambda: wall(end_to_end))
            records.append((times, cut, self.raw(box["out"]) if want_raw else None))
        return records

    def run_copy(self, cell, policy, raws, want_raw):
        torch, s = self.torch, cell["shape"]
        src_host = torch.from_numpy(raws[0].copy())
        d = s["direction"]
        timer = self.timer()
        if d == "h2h":
            dst = torch.empty_like(src_host)
            times, cut = run_reps(policy, lambda: timer(lambda: dst.copy_(src_host)))
            return [(times, cut, dst.numpy().tobytes() if want_raw else None)]
        if not self.cuda:
            raise Unsupported("%s copies need a GPU" % d)
        pinned = s.get("host_memory") == "pinned"
        if d == "h2d":
            host = src_host.pin_memory() if pinned else src_host
            dst = torch.empty(host.shape, dtype=host.dtype, device=self.dev)
            times, cut = run_reps(policy, lambda: timer(lambda: dst.copy_(host, non_blocking=True)))
            self.sync()
            return [(times, cut, dst.cpu().numpy().tobytes() if want_raw else None)]
        src = src_host.to(self.dev)
        if d == "d2h":
            host = torch.empty(src.shape, dtype=src.dtype)
            host = host.pin_memory() if pinned else host
            host.fill_(0xA5)
            self.sync()
            times, cut = run_reps(policy, lambda: timer(lambda: host.copy_(src, non_blocking=True)))
            self.sync()
            return [(times, cut, host.numpy().tobytes() if want_raw else None)]
        dst = torch.empty_like(src)
        times, cut = run_reps(policy, lambda: timer(lambda: dst.copy_(src)))
        self.sync()
        return [(times, cut, dst.cpu().numpy().tobytes() if want_raw else None)]

    def run_seedloop(self, cell, policy, raws, want_raw):
        torch, s = self.torch, cell["shape"]
        x = self.tensor(raws[0], "f32").to(self.dev)
        y = torch.empty_like(x)
        host = self.pinned(torch.empty(s["n"]))
        d2h = s.get("d2h_each_call", False)

        def loop():
            t0 = time.perf_counter()
            for _ in range(s["calls"]):
                torch.exp(x, out=y)
                if d2h:
                    host.copy_(y)  # synchronous, as Theano returned a numpy array each call
            self.sync()
            return time.perf_counter() - t0

        times, cut = run_reps(policy, loop)
        return [([t / s["calls"] for t in times], cut, self.raw(y) if want_raw else None)]


def torch_empty_pinned(torch, like):
    t = torch.empty(like.shape, dtype=like.dtype)
    return t.pin_memory()


# --- CuPy ------------------------------------------------------------------------------------
class Cupy:
    name = "cupy"

    def __init__(self, job):
        import cupy
        import numpy as np

        self.cp, self.np = cupy, np
        dev = job["device"]
        if not dev.startswith("cuda"):
            raise Unsupported("CuPy runs on CUDA GPUs only")
        ordinal = int(dev[4:])
        count = cupy.cuda.runtime.getDeviceCount()
        if ordinal >= count:
            raise Unsupported("CuPy sees %d CUDA devices; %s is not among them" % (count, dev))
        self.device = cupy.cuda.Device(ordinal)
        self.device.use()
        props = cupy.cuda.runtime.getDeviceProperties(ordinal)
        self.device_name = props["name"].decode() if isinstance(props["name"], bytes) else props["name"]
        self.version = cupy.__version__
        self.tf32 = os.environ.get("CUPY_TF32", "0") != "0"

    def settings(self):
        return "CUPY_TF32 %s" % ("on" if self.tf32 else "off")

    def framework_device(self):
        return "cupy.cuda.Device(%d)" % self.device.id

    def dt(self, dtype):
        np = self.np
        if dtype == "bf16":
            raise Unsupported("CuPy has no bfloat16 arrays")
        if dtype == "tf32" and not self.tf32:
            raise Unsupported("CuPy uses TF32 only when CUPY_TF32=1 is set before import")
        return {"f32": np.float32, "tf32": np.float32, "f64": np.float64, "f16": np.float16}[dtype]

    def host(self, raw, dtype, shape=None):
        a = self.np.frombuffer(raw.tobytes(), dtype=self.np.dtype(self.dt(dtype)))
        return a if shape is None else a.reshape(shape)

    def raw(self, a):
        return self.cp.asnumpy(self.cp.ascontiguousarray(a)).tobytes()

    def timer(self):
        cp = self.cp

        def on_device(fn):
            s, e = cp.cuda.Event(), cp.cuda.Event()
            s.record()
            fn()
            e.record()
            e.synchronize()
            return cp.cuda.get_elapsed_time(s, e) / 1e3

        return on_device

    def sync(self):
        self.cp.cuda.Device().synchronize()

    def run_compute(self, cell, policy, raws, want_raw):
        cp, op, dtype, s = self.cp, cell["op"], cell["dtype"], cell["shape"]
        if op == "conv":
            raise Unsupported("CuPy has no conv2d (cupyx.scipy.signal works on one 2-D plane)")
        if op == "exp":
            hosts = [self.host(raws[0], dtype)]
        else:
            hosts = [self.host(raws[0], dtype, (s["m"], s["k"])),
                     self.host(raws[1], dtype, (s["k"], s["n"]))]
        dev = [cp.asarray(h) for h in hosts]
        if op == "exp":
            out = cp.empty_like(dev[0])
            launch = lambda: cp.exp(dev[0], out=out)
        else:
            out = cp.empty((s["m"], s["n"]), dtype=dev[0].dtype)
            launch = lambda: cp.matmul(dev[0], dev[1], out=out)
        self.sync()
        records = []
        times, cut = run_reps(policy, lambda: self.timer()(launch))
        self.sync()
        records.append((times, cut, self.raw(out) if want_raw else None))
        pinned_in = []
        for h in hosts:
            mem = cp.cuda.alloc_pinned_memory(h.nbytes)
            p = self.np.frombuffer(mem, h.dtype, h.size).reshape(h.shape)
            p[...] = h
            pinned_in.append(p)
        mem = cp.cuda.alloc_pinned_memory(out.nbytes)
        pinned_out = self.np.frombuffer(mem, out.dtype, out.size).reshape(out.shape)

        def end_to_end():
            for d, p in zip(dev, pinned_in):
                d.set(p)
            launch()
            out.get(out=pinned_out)
            self.sync()

        times, cut = run_reps(policy, lambda: wall(end_to_end))
        records.append((times, cut, pinned_out.tobytes() if want_raw else None))
        return records

    def run_copy(self, cell, policy, raws, want_raw):
        cp, np, s = self.cp, self.np, cell["shape"]
        src_host = raws[0].copy()
        timer = self.timer()
        d = s["direction"]
        pinned = s.get("host_memory") == "pinned"

        def host_array(fill=None):
            if pinned:
                mem = cp.cuda.alloc_pinned_memory(src_host.nbytes)
                a = np.frombuffer(mem, np.uint8, src_host.size)
            else:
                a = np.empty_like(src_host)
            a[...] = src_host if fill is None else fill
            return a

        if d == "h2h":
            raise Unsupported("host-to-host copies are not CuPy's")
        if d == "h2d":
            host = host_array()
            dst = cp.empty(src_host.shape, np.uint8)
            times, cut = run_reps(policy, lambda: timer(lambda: dst.set(host)))
            self.sync()
            return [(times, cut, cp.asnumpy(dst).tobytes() if want_raw else None)]
        src = cp.asarray(src_host)
        if d == "d2h":
            host = host_array(0xA5)
            times, cut = run_reps(policy, lambda: timer(lambda: src.get(out=host)))
            self.sync()
            return [(times, cut, host.tobytes() if want_raw else None)]
        dst = cp.empty_like(src)
        copy = lambda: dst.data.copy_from_device(src.data, src.nbytes)  # cudaMemcpy D2D
        times, cut = run_reps(policy, lambda: timer(copy))
        self.sync()
        return [(times, cut, cp.asnumpy(dst).tobytes() if want_raw else None)]

    def run_seedloop(self, cell, policy, raws, want_raw):
        cp, s = self.cp, cell["shape"]
        x = cp.asarray(self.host(raws[0], "f32"))
        y = cp.empty_like(x)
        mem = cp.cuda.alloc_pinned_memory(y.nbytes)
        host = self.np.frombuffer(mem, self.np.float32, y.size)
        d2h = s.get("d2h_each_call", False)

        def loop():
            t0 = time.perf_counter()
            for _ in range(s["calls"]):
                cp.exp(x, out=y)
                if d2h:
                    y.get(out=host)  # synchronous on the default stream
            self.sync()
            return time.perf_counter() - t0

        times, cut = run_reps(policy, loop)
        return [([t / s["calls"] for t in times], cut, self.raw(y) if want_raw else None)]


# --- JAX -------------------------------------------------------------------------------------
class Jax:
    name = "jax"

    def __init__(self, job):
        import jax
        import jax.numpy as jnp
        import numpy as np

        self.jax, self.jnp, self.np = jax, jnp, np
        dev = job["device"]
        self.cuda = dev.startswith("cuda")
        if self.cuda:
            try:
                gpus = jax.devices("gpu")
            except RuntimeError as e:
                raise Unsupported("jax.devices('gpu') failed: %s" % str(e).splitlines()[0])
            ordinal = int(dev[4:])
            if ordinal >= len(gpus):
                raise Unsupported("JAX sees %d GPUs; %s is not among them" % (len(gpus), dev))
            self.dev = gpus[ordinal]
        else:
            self.dev = jax.devices("cpu")[0]
        self.device_name = getattr(self.dev, "device_kind", str(self.dev))
        self.version = jax.__version__
        self.precision = "highest"

    def settings(self):
        return "jit, precision HIGHEST unless tf32, timed with block_until_ready"

    def framework_device(self):
        return str(self.dev)

    def dt(self, dtype):
        jnp = self.jnp
        if dtype == "tf32" and not self.cuda:
            raise Unsupported("TF32 is a CUDA math mode; XLA on the CPU has none")
        x64 = getattr(self.jax.config, "jax_enable_x64", None)
        if x64 is None:
            x64 = self.jax.config.read("jax_enable_x64")
        if dtype == "f64" and not x64:
            raise Unsupported("JAX computes in f32 unless jax_enable_x64 is set")
        return getattr(jnp, {"f32": "float32", "tf32": "float32", "f64": "float64",
                             "f16": "float16", "bf16": "bfloat16"}[dtype])

    def host(self, raw, dtype, shape=None):
        a = self.np.frombuffer(raw.tobytes(), dtype=self.np.dtype(self.dt(dtype)))
        return a if shape is None else a.reshape(shape)

    def raw(self, a):
        return self.np.asarray(a).tobytes()

    def run_compute(self, cell, policy, raws, want_raw):
        jax, jnp, op, dtype, s = self.jax, self.jnp, cell["op"], cell["dtype"], cell["shape"]
        prec = jax.lax.Precision.DEFAULT if dtype == "tf32" else jax.lax.Precision.HIGHEST
        if op == "exp":
            hosts = [self.host(raws[0], dtype)]
            fn = jax.jit(jnp.exp)
        elif op == "gemm":
            hosts = [self.host(raws[0], dtype, (s["m"], s["k"])),
                     self.host(raws[1], dtype, (s["k"], s["n"]))]
            acc = jnp.float32 if dtype in ("f16", "bf16") else None
            fn = jax.jit(lambda a, b: jnp.matmul(a, b, precision=prec,
                                                 preferred_element_type=acc).astype(a.dtype))
        else:
            nhwc = s["layout"] == "nhwc"
            if nhwc:
                hosts = [self.host(raws[0], dtype, (s["n"], s["h"], s["w"], s["c"])),
                         self.host(raws[1], dtype, (s["k"], s["r"], s["s"], s["c"]))]
                dims = ("NHWC", "OHWI", "NHWC")
            else:
                hosts = [self.host(raws[0], dtype, (s["n"], s["c"], s["h"], s["w"])),
                         self.host(raws[1], dtype, (s["k"], s["c"], s["r"], s["s"]))]
                dims = ("NCHW", "OIHW", "NCHW")
            pad = s["pad"]
            fn = jax.jit(lambda x, w: jax.lax.conv_general_dilated(
                x, w, (s["stride"], s["stride"]), [(pad, pad), (pad, pad)],
                dimension_numbers=dims, precision=prec))
        dev = [jax.device_put(h, self.dev) for h in hosts]
        box = {}

        def launch():
            box["y"] = fn(*dev)
            box["y"].block_until_ready()

        records = []
        times, cut = run_reps(policy, lambda: wall(launch))
        records.append((times, cut, self.raw(box["y"]) if want_raw else None))
        if self.cuda:
            def end_to_end():
                d = [jax.device_put(h, self.dev) for h in hosts]
                box["host"] = self.np.asarray(fn(*d))

            times, cut = run_reps(policy, lambda: wall(end_to_end))
            records.append((times, cut, box["host"].tobytes() if want_raw else None))
        return records

    def run_copy(self, cell, policy, raws, want_raw):
        jax, s = self.jax, cell["shape"]
        src_host = raws[0].copy()
        d = s["direction"]
        if d == "h2h" or s.get("host_memory") == "pinned":
            raise Unsupported("JAX has no %s copy of its own" % ("host-to-host" if d == "h2h"
                                                                 else "pinned host memory"))
        box = {}
        if d == "h2d":
            def once():
                box["d"] = jax.device_put(src_host, self.dev)
                box["d"].block_until_ready()
            times, cut = run_reps(policy, lambda: wall(once))
            return [(times, cut, self.raw(box["d"]) if want_raw else None)]
        src = jax.device_put(src_host, self.dev)
        src.block_until_ready()
        if d == "d2h":
            def once():
                box["h"] = jax.device_get(src)
            times, cut = run_reps(policy, lambda: wall(once))
            return [(times, cut, box["h"].tobytes() if want_raw else None)]
        copy = jax.jit(lambda a: a.copy())

        def once():
            box["d"] = copy(src)
            box["d"].block_until_ready()
        times, cut = run_reps(policy, lambda: wall(once))
        return [(times, cut, self.raw(box["d"]) if want_raw else None)]

    def run_seedloop(self, cell, policy, raws, want_raw):
        jax, jnp, s = self.jax, self.jnp, cell["shape"]
        x = jax.device_put(self.host(raws[0], "f32"), self.dev)
        fn = jax.jit(jnp.exp)
        d2h = s.get("d2h_each_call", False)
        box = {}

        def loop():
            t0 = time.perf_counter()
            for _ in range(s["calls"]):
                box["y"] = fn(x)
                if d2h:
                    self.np.asarray(box["y"])
            box["y"].block_until_ready()
            return time.perf_counter() - t0

        times, cut = run_reps(policy, loop)
        return [([t / s["calls"] for t in times], cut, self.raw(box["y"]) if want_raw else None)]


# --- TensorFlow ------------------------------------------------------------------------------
class Tensorflow:
    name = "tensorflow"

    def __init__(self, job):
        import numpy as np
        import tensorflow as tf

        self.tf, self.np = tf, np
        dev = job["device"]
        self.cuda = dev.startswith("cuda")
        if self.cuda:
            gpus = tf.config.list_physical_devices("GPU")
            ordinal = int(dev[4:])
            if ordinal >= len(gpus):
                raise Unsupported("TensorFlow sees %d GPUs; %s is not among them"
                                  % (len(gpus), dev))
            self.dev = "/GPU:%d" % ordinal
            details = tf.config.experimental.get_device_details(gpus[ordinal])
            self.device_name = details.get("device_name", self.dev)
        else:
            self.dev = "/CPU:0"
            self.device_name = "cpu"
        tf.config.experimental.enable_tensor_float_32_execution(False)
        self.version = tf.__version__

    def settings(self):
        return "tf.function, TF32 off unless tf32"

    def framework_device(self):
        return self.dev

    def sync(self):
        sync = getattr(getattr(self.tf.test, "experimental", None), "sync_devices", None)
        if sync:
            sync()

    def tfdtype(self, dtype):
        tf = self.tf
        if dtype == "tf32" and not self.cuda:
            raise Unsupported("TF32 is a CUDA math mode; TensorFlow on the CPU has none")
        return {"f32": tf.float32, "tf32": tf.float32, "f64": tf.float64, "f16": tf.float16,
                "bf16": tf.bfloat16}[dtype]

    def tensor(self, raw, dtype, shape):
        tf, np = self.tf, self.np
        bits = np.frombuffer(raw.tobytes(), dtype=BITS[dtype]).reshape(shape)
        signed = {2: tf.int16, 4: tf.int32, 8: tf.int64}[bits.dtype.itemsize]
        with tf.device(self.dev):
            t = tf.constant(bits.astype(BITS[dtype].replace("u", "i")), dtype=signed)
            return tf.bitcast(t, self.tfdtype(dtype))

    def raw(self, t):
        tf = self.tf
        size = t.dtype.size
        signed = {2: tf.int16, 4: tf.int32, 8: tf.int64}[size]
        return tf.bitcast(t, signed).numpy().tobytes()

    def run_compute(self, cell, policy, raws, want_raw):
        tf, op, dtype, s = self.tf, cell["op"], cell["dtype"], cell["shape"]
        tf.config.experimental.enable_tensor_float_32_execution(dtype == "tf32")
        if op == "exp":
            args = [self.tensor(raws[0], dtype, (s["n"],))]
            fn = tf.function(tf.exp)
        elif op == "gemm":
            args = [self.tensor(raws[0], dtype, (s["m"], s["k"])),
                    self.tensor(raws[1], dtype, (s["k"], s["n"]))]
            fn = tf.function(tf.matmul)
        else:
            if s["layout"] == "nhwc":
                x = self.tensor(raws[0], dtype, (s["n"], s["h"], s["w"], s["c"]))
                w = self.tensor(raws[1], dtype, (s["k"], s["r"], s["s"], s["c"]))
            else:
                if not self.cuda:
                    raise Unsupported("TensorFlow's CPU conv2d takes NHWC only")
                x = self.tensor(raws[0], dtype, (s["n"], s["c"], s["h"], s["w"]))
                w = tf.transpose(self.tensor(raws[1], dtype, (s["k"], s["c"], s["r"], s["s"])),
                                 (0, 2, 3, 1))
            with tf.device(self.dev):
                w = tf.transpose(w, (1, 2, 3, 0))  # TF filters are R×S×C×K
            fmt = "NHWC" if s["layout"] == "nhwc" else "NCHW"
            pad = s["pad"]
            pads = ([[0, 0], [pad, pad], [pad, pad], [0, 0]] if fmt == "NHWC"
                    else [[0, 0], [0, 0], [pad, pad], [pad, pad]])
            fn = tf.function(lambda x, w: tf.nn.conv2d(x, w, s["stride"], pads, data_format=fmt))
            args = [x, w]
        box = {}

        def launch():
            with tf.device(self.dev):
                box["y"] = fn(*args)
            self.sync()

        records = []
        times, cut = run_reps(policy, lambda: wall(launch))
        records.append((times, cut, self.raw(box["y"]) if want_raw else None))
        if self.cuda:
            hosts = [a.numpy() for a in args]

            def end_to_end():
                with tf.device(self.dev):
                    d = [tf.identity(h) for h in hosts]
                    box["host"] = fn(*d).numpy()

            times, cut = run_reps(policy, lambda: wall(end_to_end))
            records.append((times, cut, self.raw(tf.constant(box["host"])) if want_raw else None))
        return records

    def run_copy(self, cell, policy, raws, want_raw):
        raise Unsupported("TensorFlow has no copy of its own between named host and device "
                          "buffers")

    def run_seedloop(self, cell, policy, raws, want_raw):
        tf, s = self.tf, cell["shape"]
        x = self.tensor(raws[0], "f32", (s["n"],))
        fn = tf.function(tf.exp)
        d2h = s.get("d2h_each_call", False)
        box = {}

        def loop():
            t0 = time.perf_counter()
            with tf.device(self.dev):
                for _ in range(s["calls"]):
                    box["y"] = fn(x)
                    if d2h:
                        box["y"].numpy()
            self.sync()
            return time.perf_counter() - t0

        times, cut = run_reps(policy, loop)
        return [([t / s["calls"] for t in times], cut, self.raw(box["y"]) if want_raw else None)]


FRAMEWORKS = {"torch": Torch, "cupy": Cupy, "jax": Jax, "tensorflow": Tensorflow}


def first_line(e):
    text = str(e).strip().splitlines()
    return "%s: %s" % (type(e).__name__, text[0] if text else "")


def run_cell(fw, job, cell, policy, want_raw):
    raws = [read_input(job, name) for name in cell["inputs"]]
    op = cell["op"]
    if op in ("exp", "gemm", "conv"):
        return fw.run_compute(cell, policy, raws, want_raw)
    if op == "copy":
        return fw.run_copy(cell, policy, raws, want_raw)
    if op == "seedloop":
        return fw.run_seedloop(cell, policy, raws, want_raw)
    raise Unsupported("gpucheck runs %s through no framework" % op)


def main():
    job = json.loads(sys.stdin.readline())
    if job.get("protocol") != PROTOCOL:
        emit(fatal="protocol %r, this driver speaks %d" % (job.get("protocol"), PROTOCOL))
        return 2
    cls = FRAMEWORKS.get(job["framework"])
    if cls is None:
        emit(fatal="no driver for framework %r" % job["framework"])
        return 2
    try:
        fw = cls(job)
    except ImportError as e:
        emit(unavailable="cannot import %s: %s" % (job["framework"], first_line(e)))
        return 0
    except Unsupported as e:
        emit(unavailable=str(e))
        return 0
    hello = {"framework": fw.name, "version": fw.version, "device": fw.framework_device(),
             "device_name": fw.device_name, "settings": fw.settings(),
             "python": sys.version.split()[0]}
    cells = job["cells"]
    # How the framework sums a bf16 GEMM here: gpucheck names it when such a cell mismatches.
    if hasattr(fw, "bf16_gemm_sum") and any(
            c["op"] == "gemm" and c["dtype"] == "bf16" for c in cells):
        try:
            hello["bf16_gemm_sum"] = fw.bf16_gemm_sum()
        except Exception:  # the cell itself will say what fails
            pass
    emit(hello=hello)
    rounds = job["rounds"]
    max_time = job["max_time"]
    state = [{"times": None, "cut": False, "seconds": 0.0, "done": False} for _ in cells]
    for rnd, policy in enumerate(rounds):
        last = rnd + 1 == len(rounds)
        order = list(range(len(cells)))
        if not last:
            random.Random(job["seed"] * 1000 + rnd).shuffle(order)
        for i in order:
            st, cell = state[i], cells[i]
            if st["done"]:
                continue
            if rnd > 0 and st["seconds"] > max_time:
                st["cut"] = True  # --max-time spent: no more rounds for it
            else:
                emit(started=i)  # a heartbeat: gpucheck kills a child silent for too long
                t0 = time.perf_counter()
                try:
                    got = run_cell(fw, job, cell, policy, True)
                except Unsupported as e:
                    emit(cell=i, unsupported=str(e))
                    st["done"] = True
                    continue
                except Exception as e:  # the cell fails, the next one runs
                    text = first_line(e)
                    if "not implemented for" in text:
                        emit(cell=i, unsupported="%s %s: %s" % (fw.name, fw.version, text))
                    else:
                        emit(cell=i, failed=text)
                    st["done"] = True
                    continue
                st["seconds"] += time.perf_counter() - t0
                if st["times"] is None:
                    st["times"] = [[] for _ in got]
                for k, (times, cut, raw) in enumerate(got):
                    st["times"][k].append(times)
                    st["cut"] = st["cut"] or cut
                    if k < len(cell["outputs"]):
                        write_output(job, cell["outputs"][k], raw)  # the latest round's
            if last:
                st["done"] = True
                if st["times"] is None:
                    continue
                for k, per_round in enumerate(st["times"]):
                    if k >= len(cell["outputs"]):
                        emit(cell=i, record=k, failed="a record gpucheck did not ask for")
                        continue
                    emit(cell=i, record=k, times=per_round, truncated=st["cut"],
                         output=cell["outputs"][k])
    emit(done=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

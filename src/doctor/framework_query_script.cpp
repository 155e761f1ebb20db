// The Python program doctor runs in a child of each environment's interpreter to ask a framework
// itself: `python3 -c <this> <framework>`. It prints one JSON line and nothing else on stdout.
#include "doctor/framework_query.h"

namespace gpucheck::doctor {

namespace {

// Written for Python 3.6 and later, with nothing outside the standard library and the framework
// (numpy only where the framework itself needs it). The matmul's inputs are small multiples of
// 1/4 and 1/2, exact in bf16, TF32 and f32, and so is every product and sum: the result is exact
// whatever precision the framework picks for f32 matmul (TF32 on Ampere, JAX's default). gpucheck
// checks the numbers in C++ against the same formula; the child never judges itself.
constexpr std::string_view kScript = R"PY(
import json, os, sys, time

N = %N%
A = [[((i * 3 + k * 5) % 7 - 3) / 4.0 for k in range(N)] for i in range(N)]
B = [[((k * 2 + j * 7) % 5 - 2) / 2.0 for j in range(N)] for k in range(N)]


def first_lines(e):
    text = "%s: %s" % (type(e).__name__, e)
    lines = [l for l in text.strip().splitlines() if l.strip()][:3]
    return "\n".join(lines)[:600]


def flat(rows):
    return [float(x) for row in rows for x in row]


def on_gpu(device):
    d = str(device).lower()
    return "cuda" in d or "gpu" in d or "rocm" in d


def matmul(ans, device, rows):
    ans["matmul"] = {"device": str(device), "on_gpu": on_gpu(device), "n": N,
                     "result": flat(rows)}


def imported(ans, module):
    ans["version"] = str(module.__version__)
    ans["module"] = module.__file__
    ans["versions"] = {}
    return ans["versions"]


def torch_gpus(ans, torch):
    gpus = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            p = torch.cuda.get_device_properties(i)
            gpus.append({"name": p.name, "cc": "%d.%d" % (p.major, p.minor),
                         "memory_bytes": int(p.total_memory)})
        ans["versions"]["arch_list"] = " ".join(torch.cuda.get_arch_list())
        try:
            ans["versions"]["cudnn"] = str(torch.backends.cudnn.version())
        except Exception:
            pass
    else:
        # is_available() says only False; init() raises the reason.
        try:
            torch.cuda.init()
        except BaseException as e:
            ans["no_gpu_reason"] = first_lines(e)
    ans["gpus"] = gpus
    return gpus


def q_torch(ans, step):
    step("import")
    import torch
    v = imported(ans, torch)
    v["cuda"] = str(torch.version.cuda)
    v["hip"] = str(getattr(torch.version, "hip", None))
    step("devices")
    gpus = torch_gpus(ans, torch)
    step("matmul")
    dev = "cuda:0" if gpus else "cpu"
    a = torch.tensor(A, dtype=torch.float32, device=dev)
    b = torch.tensor(B, dtype=torch.float32, device=dev)
    c = a @ b
    matmul(ans, c.device, c.cpu().tolist())


def jax_gpus(ans, jax):
    ans["default_backend"] = jax.default_backend()
    try:
        devices = jax.devices("gpu")
    except BaseException as e:
        ans["no_gpu_reason"] = first_lines(e)
        devices = []
    ans["gpus"] = [{"name": d.device_kind, "cc": str(getattr(d, "compute_capability", ""))}
                   for d in devices]
    return devices


def q_jax(ans, step):
    step("import")
    import jax
    v = imported(ans, jax)
    try:
        import jaxlib
        v["jaxlib"] = jaxlib.__version__
    except Exception as e:
        v["jaxlib"] = first_lines(e)
    try:
        from importlib import metadata
        for d in metadata.distributions():
            name = (d.metadata["Name"] or "").lower().replace("_", "-")
            if name.startswith("jax-cuda") or name.startswith("jax-rocm"):
                v[name] = d.version
    except Exception:
        pass
    step("devices")
    devices = jax_gpus(ans, jax)
    step("matmul")
    import numpy as np
    import jax.numpy as jnp
    dev = devices[0] if devices else jax.devices("cpu")[0]
    a = jax.device_put(np.array(A, dtype=np.float32), dev)
    b = jax.device_put(np.array(B, dtype=np.float32), dev)
    c = jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)
    c.block_until_ready()
    matmul(ans, "%s:%d" % (dev.platform, dev.id), np.asarray(c).tolist())


def q_cupy(ans, step):
    step("import")
    import cupy
    v = imported(ans, cupy)
    step("devices")
    rt = cupy.cuda.runtime
    v["cuda_runtime"] = str(rt.runtimeGetVersion())
    v["cuda_driver"] = str(rt.driverGetVersion())
    gpus = []
    for i in range(rt.getDeviceCount()):
        p = rt.getDeviceProperties(i)
        name = p["name"]
        gpus.append({"name": name.decode() if isinstance(name, bytes) else str(name),
                     "cc": "%d.%d" % (p["major"], p["minor"]),
                     "memory_bytes": int(p["totalGlobalMem"])})
    ans["gpus"] = gpus
    if not gpus:
        ans["no_gpu_reason"] = "cupy.cuda.runtime.getDeviceCount() is 0"
        return
    step("matmul")
    with cupy.cuda.Device(0):
        a = cupy.asarray(A, dtype=cupy.float32)
        b = cupy.asarray(B, dtype=cupy.float32)
        c = a @ b
        matmul(ans, "cuda:0", c.get().tolist())


def tf_gpus(ans, tf):
    gpus = []
    for g in tf.config.list_physical_devices("GPU"):
        entry = {"name": g.name}
        try:
            d = tf.config.experimental.get_device_details(g)
            entry["name"] = d.get("device_name", g.name)
            if d.get("compute_capability"):
                entry["cc"] = "%d.%d" % tuple(d["compute_capability"])
        except Exception:
            pass
        gpus.append(entry)
    if not gpus:
        ans["no_gpu_reason"] = "tf.config.list_physical_devices('GPU') is empty"
    ans["gpus"] = gpus
    return gpus


def q_tensorflow(ans, step):
    step("import")
    import tensorflow as tf
    v = imported(ans, tf)
    try:
        info = tf.sysconfig.get_build_info()
        for k in ("cuda_version", "cudnn_version", "is_cuda_build", "is_rocm_build"):
            if k in info:
                v[k] = str(info[k])
    except Exception:
        pass
    step("devices")
    gpus = tf_gpus(ans, tf)
    step("matmul")
    with tf.device("/GPU:0" if gpus else "/CPU:0"):
        c = tf.matmul(tf.constant(A, dtype=tf.float32), tf.constant(B, dtype=tf.float32))
    matmul(ans, c.device, c.numpy().tolist())


def q_keras(ans, step):
    step("import")
    import keras
    backend = keras.backend.backend()
    imported(ans, keras)["backend"] = backend
    step("devices")
    if backend == "torch":
        import torch
        torch_gpus(ans, torch)
    elif backend == "jax":
        import jax
        jax_gpus(ans, jax)
    elif backend == "tensorflow":
        import tensorflow as tf
        tf_gpus(ans, tf)
    else:
        ans["gpus"] = []
        ans["no_gpu_reason"] = "the %s backend runs on the CPU" % backend
    step("matmul")
    ops = getattr(keras, "ops", None)
    if ops is None:  # Keras 2: TensorFlow's
        import tensorflow as tf
        c = tf.matmul(tf.constant(A, dtype=tf.float32), tf.constant(B, dtype=tf.float32))
        matmul(ans, c.device, c.numpy().tolist())
        return
    c = ops.matmul(ops.convert_to_tensor(A, dtype="float32"),
                   ops.convert_to_tensor(B, dtype="float32"))
    device = getattr(c, "device", None)
    if device is None and hasattr(c, "devices"):
        device = ",".join(sorted(str(d) for d in c.devices()))
    matmul(ans, device, ops.convert_to_numpy(c).tolist())


def main():
    # The answer keeps the real stdout; whatever the framework prints goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    framework = sys.argv[1] if len(sys.argv) > 1 else ""
    ans = {"framework": framework, "python": sys.version.split()[0],
           "executable": sys.executable, "prefix": sys.prefix}
    stage = ["start"]

    def step(name):
        stage[0] = name

    start = time.time()
    try:
        query = {"torch": q_torch, "jax": q_jax, "cupy": q_cupy, "tensorflow": q_tensorflow,
                 "keras": q_keras}.get(framework)
        if query is None:
            raise ValueError("no query for framework '%s'" % framework)
        query(ans, step)
    except BaseException as e:
        ans["error"] = {"stage": stage[0], "message": first_lines(e)}
    ans["seconds"] = round(time.time() - start, 3)
    out.write(json.dumps(ans) + "\n")
    out.flush()
    # A framework's atexit handlers (CUDA teardown) can hang; the answer is out.
    os._exit(0)


main()
)PY";

}  // namespace

std::string framework_query_script() {
  std::string script(kScript);
  const std::string_view mark = "%N%";
  script.replace(script.find(mark), mark.size(), std::to_string(kQueryMatmulN));
  return script;
}

}  // namespace gpucheck::doctor

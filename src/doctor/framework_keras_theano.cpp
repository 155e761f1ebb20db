// framework_keras: the backend Keras will use, read as keras/src/backend/config.py reads it
// (KERAS_BACKEND, else the "backend" of $KERAS_HOME/keras.json or ~/.keras/keras.json, else
// tensorflow), and that backend's own verdict here. framework_theano: THEANO_FLAGS and
// ~/.theanorc (PYTENSOR_FLAGS and ~/.pytensorrc for PyTensor) against what a GPU device needs.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"

#include <fmt/format.h>

namespace gpucheck::doctor {

namespace {

struct KerasBackend {
  std::string name;
  std::string source;  // "KERAS_BACKEND", "/home/a/.keras/keras.json", "the default"
};

KerasBackend keras_backend(const SystemView& view) {
  if (auto b = view.env_value("KERAS_BACKEND"); b && !b->empty()) return {*b, "KERAS_BACKEND"};
  std::string dir;
  if (auto home = view.env_value("KERAS_HOME"); home && !home->empty())
    dir = *home;
  else if (auto h = view.env_value("HOME"); h && !h->empty())
    dir = *h + "/.keras";
  if (!dir.empty())
    if (auto text = view.read_file(dir + "/keras.json", 64u << 10))
      if (auto b = parse_keras_backend(*text)) return {*b, dir + "/keras.json"};
  return {"tensorflow", "the default"};
}

}  // namespace

std::optional<Verdict> judge_keras(const SystemView& view, const GpuPicture& gpus,
                                   const EnvScan& scan, std::vector<std::string>& evidence) {
  const host::Distribution* keras = scan.first("keras");
  if (keras == nullptr) return std::nullopt;
  const bool keras3 = compare_versions(keras->version, "3") >= 0;
  // Keras 2 is tf.keras's: TensorFlow is its only backend.
  const KerasBackend backend =
      keras3 ? keras_backend(view) : KerasBackend{"tensorflow", "Keras 2 (TensorFlow only)"};
  evidence.push_back(fmt::format("{}: keras {}; backend {} from {}", keras->dist_info,
                                 keras->version, backend.name, backend.source));
  const std::string name =
      fmt::format("keras {} (backend {}, from {})", keras->version, backend.name, backend.source);
  const std::string py = python_of(*scan.env);
  Verdict v;
  std::optional<Verdict> under;
  std::string package;
  if (backend.name == "tensorflow") {
    under = judge_tensorflow(view, gpus, scan, evidence);
    package = "\"tensorflow[and-cuda]\"";
  } else if (backend.name == "jax") {
    under = judge_jax(view, gpus, scan, evidence);
    package = "-U \"jax[cuda12]\"";
  } else if (backend.name == "torch") {
    under = judge_torch(view, gpus, scan, evidence);
    package = "torch";
  } else if (backend.name == "numpy" || backend.name == "openvino") {
    v.status = gpus.nvidia ? CheckStatus::kWarn : CheckStatus::kInfo;
    v.line = fmt::format("{}: runs on the CPU{}", name,
                         gpus.nvidia ? ", though an NVIDIA GPU is here" : "");
    v.fix =
        "export KERAS_BACKEND=jax (or tensorflow, torch) with that framework's CUDA build "
        "installed";
    return v;
  } else {
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{}: import keras fails: '{}' is no Keras backend (tensorflow, jax, "
        "torch, numpy, openvino)",
        name, backend.name);
    v.fix = backend.source == "KERAS_BACKEND"
                ? std::string("export KERAS_BACKEND=tensorflow (or jax, torch)")
                : fmt::format("set \"backend\" in {} to tensorflow, jax or torch", backend.source);
    return v;
  }
  if (!under) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: import keras fails: {} is not installed in {}'s environment", name,
                         backend.name, py);
    v.fix = fmt::format("{} -m pip install {}, or choose an installed backend with KERAS_BACKEND",
                        py, package);
    return v;
  }
  v.uses_gpu = under->uses_gpu;
  v.status = under->status;
  v.fix = under->fix;
  // The backend's own line says why; keep its reason after the framework's name.
  const auto colon = under->line.find(": ");
  const std::string why = colon == std::string::npos ? under->line : under->line.substr(colon + 2);
  v.line = fmt::format("{}: {}", name, why);
  if (!under->uses_gpu && gpus.nvidia && v.status < CheckStatus::kWarn) {
    v.status = CheckStatus::kWarn;
    if (v.fix.empty()) v.fix = fmt::format("{} -m pip install {}", py, package);
  }
  return v;
}

namespace {

// ---- Theano / PyTensor ----

struct TheanoConfig {
  std::map<std::string, std::string> values;
  std::vector<std::string> sources;
};

TheanoConfig theano_config(const SystemView& view, const std::string& flags_var,
                           const std::string& rc_name) {
  TheanoConfig c;
  if (auto home = view.env_value("HOME"); home && !home->empty()) {
    const std::string rc = *home + "/" + rc_name;
    if (auto text = view.read_file(rc, 64u << 10)) {
      c.values = parse_theanorc(*text);
      c.sources.push_back(rc);
    }
  }
  if (auto flags = view.env_value(flags_var); flags && !flags->empty()) {
    for (const auto& [k, val] : parse_theano_flags(*flags)) c.values[k] = val;
    c.sources.push_back(flags_var + "=" + *flags);
  }
  return c;
}

std::string value_or(const std::map<std::string, std::string>& m, const std::string& key,
                     const std::string& fallback) {
  auto it = m.find(key);
  return it == m.end() ? fallback : it->second;
}

std::optional<Verdict> judge_theano(const SystemView& view, const GpuPicture& gpus,
                                    const EnvScan& scan, std::vector<std::string>& evidence) {
  const host::Distribution* theano = scan.first("theano");
  const host::Distribution* pytensor = scan.first("pytensor");
  if (theano == nullptr && pytensor == nullptr) return std::nullopt;
  const bool is_theano = theano != nullptr;
  const host::Distribution& d = is_theano ? *theano : *pytensor;
  const TheanoConfig cfg = is_theano ? theano_config(view, "THEANO_FLAGS", ".theanorc")
                                     : theano_config(view, "PYTENSOR_FLAGS", ".pytensorrc");
  for (const auto& s : cfg.sources) evidence.push_back("config: " + s);
  const std::string device = value_or(cfg.values, "device", "cpu");
  const std::string floatx = value_or(cfg.values, "floatx", "float64");
  const std::string name = fmt::format("{} {} (device={})", d.name, d.version, device);
  const std::string where = cfg.sources.empty() ? std::string("~/.theanorc") : cfg.sources.back();
  Verdict v;
  v.status = CheckStatus::kInfo;
  const bool gpu_device =
      device.starts_with("cuda") || device.starts_with("gpu") || device.starts_with("opencl");
  if (!is_theano) {
    v.line = fmt::format(
        "{}: PyTensor has no GPU device of its own; it reaches GPUs through its "
        "JAX backend (mode=JAX with a CUDA jax)",
        name);
    if (gpu_device) {
      v.status = CheckStatus::kWarn;
      v.line = fmt::format(
          "{}: device={} does nothing in PyTensor, which dropped Theano's GPU "
          "backend; it runs on the CPU",
          name, device);
      v.fix =
          "drop device= from PYTENSOR_FLAGS/~/.pytensorrc and use mode=JAX with "
          "pip install -U \"jax[cuda12]\"";
    }
    return v;
  }
  v.line = fmt::format(
      "{}: Theano is unmaintained (last release 1.0.5, 2020); PyTensor continues "
      "it",
      name);
  if (!gpu_device) {
    if (gpus.nvidia)
      v.line = fmt::format(
          "{}: runs on the CPU (device={}); Theano is unmaintained (last release "
          "1.0.5, 2020)",
          name, device);
    return v;
  }
  if (device.starts_with("gpu")) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{}: device={} is the old CUDA backend Theano 1.0 removed: Theano stops "
        "at import",
        name, device);
    v.fix = fmt::format("use device=cuda (with pygpu installed) in {}", where);
    return v;
  }
  // The gpuarray backend needs pygpu (Python) and libgpuarray (C).
  bool pygpu = scan.first("pygpu") != nullptr;
  for (const auto& s : scan.sites) pygpu = pygpu || view.is_dir(s.dir + "/pygpu");
  LibrarySearch search = linker_search(view);
  search.dirs.insert(search.dirs.begin(), scan.env->prefix + "/lib");
  const auto libgpuarray = search.find(view, "libgpuarray.so.3");
  if (libgpuarray) evidence.push_back("libgpuarray: " + *libgpuarray);
  if (!pygpu || !libgpuarray) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format(
        "{}: will NOT use the GPU: {} not installed (Theano stops: \"pygpu was "
        "configured but could not be imported\")",
        name,
        !pygpu && !libgpuarray ? "pygpu and libgpuarray are"
        : !pygpu               ? "pygpu is"
                               : "libgpuarray (libgpuarray.so.3) is");
    v.fix = "conda install -c conda-forge pygpu (it brings libgpuarray)";
    return v;
  }
  if (floatx != "float32") {
    v.status = CheckStatus::kWarn;
    v.line = fmt::format(
        "{}: floatX={} with a GPU device: the GPU backend computes in float32, "
        "so float64 work stays on the CPU and is slow",
        name, floatx);
    v.fix = fmt::format("set floatX=float32 in {}", where);
    return v;
  }
  v.uses_gpu = gpus.nvidia;
  v.line = fmt::format(
      "{}: will use {} through pygpu; Theano is unmaintained (last release "
      "1.0.5, 2020)",
      name, gpus.nvidia ? gpus.devices_text() : "a GPU if present");
  if (!gpus.nvidia) {
    v.status = CheckStatus::kWarn;
    v.line = fmt::format("{}: device={} but no NVIDIA GPU is here: Theano stops at start-up", name,
                         device);
    v.fix = fmt::format("set device=cpu in {}", where);
  }
  return v;
}

}  // namespace

CheckResult check_framework_keras(const SystemView& view) {
  return judge_every_environment(view, "GC-KERAS-BACKEND"_gc, "Keras", judge_keras);
}

CheckResult check_framework_theano(const SystemView& view) {
  return judge_every_environment(view, "GC-THEANO-CONFIG"_gc, "Theano or PyTensor", judge_theano);
}

}  // namespace gpucheck::doctor

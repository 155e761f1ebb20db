// framework_tensorflow: will the TensorFlow in each environment use the GPUs here? Read from
// its generated tensorflow/python/platform/build_info.py (CUDA build or not, CUDA and cuDNN
// versions, compute capabilities) and the CUDA libraries it would find.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_files.h"
#include "doctor/framework_gpus.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace gpucheck::doctor {

namespace {

constexpr const char* kBuildInfo = "tensorflow/python/platform/build_info.py";

struct NeededLibrary {
  std::string soname;  // libcudnn.so.9
  std::string wheel;   // nvidia-cudnn-cu12
};

// The libraries TensorFlow's GPU platform dlopens at start-up (tsl/platform/default/dso_loader),
// by the CUDA major and cuDNN major its build names.
std::vector<NeededLibrary> needed_libraries(int cuda_major, const std::string& cudnn_major) {
  const std::string cu = fmt::format("-cu{}", cuda_major);
  const bool cuda11 = cuda_major == 11;
  std::vector<NeededLibrary> out{
      {cuda11 ? "libcudart.so.11.0" : fmt::format("libcudart.so.{}", cuda_major),
       "nvidia-cuda-runtime" + cu},
      {fmt::format("libcublas.so.{}", cuda_major), "nvidia-cublas" + cu},
      {fmt::format("libcublasLt.so.{}", cuda_major), "nvidia-cublas" + cu},
      {cuda11 ? "libcufft.so.10" : "libcufft.so.11", "nvidia-cufft" + cu},
      {"libcusolver.so.11", "nvidia-cusolver" + cu},
      {fmt::format("libcusparse.so.{}", cuda_major), "nvidia-cusparse" + cu},
  };
  if (!cudnn_major.empty()) out.push_back({"libcudnn.so." + cudnn_major, "nvidia-cudnn" + cu});
  return out;
}

// TensorFlow 2.14 and 2.15 find the nvidia-* wheels of tensorflow[and-cuda] on their own;
// 2.16 and 2.17 do not without LD_LIBRARY_PATH (tensorflow#63362); earlier ones never did.
bool finds_wheel_libraries(const std::string& version) {
  return compare_versions(version, "2.14") >= 0 &&
         (compare_versions(version, "2.16") < 0 || compare_versions(version, "2.18") >= 0);
}

const host::Distribution* tf_dist(const host::SitePackages& site) {
  for (const char* n : {"tensorflow", "tensorflow-cpu", "tensorflow-gpu", "tf-nightly",
                        "tensorflow-intel", "tensorflow-macos", "tensorflow-rocm"})
    if (const host::Distribution* d = site.find(n)) return d;
  return nullptr;
}

Verdict judge_tensorflow_site(const SystemView& view, const GpuPicture& gpus, const EnvScan& scan,
                              const host::SitePackages& site, std::vector<std::string>& evidence) {
  const host::Distribution* dist = tf_dist(site);
  const std::string version = dist ? dist->version : std::string("(version unknown)");
  const std::string package = dist ? dist->name : std::string("tensorflow");
  const std::string name = package + " " + version;
  const std::string py = python_of(*scan.env);
  const std::string and_cuda = fmt::format("{} -m pip install \"tensorflow[and-cuda]{}\"", py,
                                           dist ? "==" + release_of(version) : std::string());
  Verdict v;
  const std::string file = site.dir + "/" + kBuildInfo;
  const auto text = view.read_file(file, 16u << 10);  // the generated file is about 1 KiB
  const auto info = text ? parse_tf_build_info(*text) : std::nullopt;
  if (!info) {
    v.status = gpus.nvidia ? CheckStatus::kWarn : CheckStatus::kInfo;
    v.line = fmt::format("{}: its build is unknown: {} is missing or unreadable", name, file);
    v.fix = fmt::format("{} -m pip install --force-reinstall \"tensorflow[and-cuda]\"", py);
    return v;
  }
  evidence.push_back(
      fmt::format("{}: is_cuda_build {}, cuda_version '{}', cudnn_version '{}', "
                  "cuda_compute_capabilities [{}]",
                  file, info->is_cuda_build ? "True" : "False", info->cuda_version,
                  info->cudnn_version, join(info->cuda_capabilities, " ")));
  if (package == "tensorflow-cpu" || !info->is_cuda_build) {
    const std::string kind = info->is_rocm_build ? "a ROCm build" : "a build without CUDA";
    if (!gpus.nvidia) {
      v.status = CheckStatus::kInfo;
      v.line = fmt::format("{}: {}, and no NVIDIA GPU is here: it runs on the CPU", name, kind);
      return v;
    }
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use the NVIDIA GPU: {}", name, kind);
    v.fix = fmt::format("{} -m pip uninstall -y {} && {}", py, package, and_cuda);
    return v;
  }
  if (!gpus.nvidia) {
    v.status = CheckStatus::kInfo;
    v.line = fmt::format("{}: a CUDA {} build, but no NVIDIA GPU is here: it runs on the CPU", name,
                         info->cuda_version);
    return v;
  }
  const auto needs = parse_cuda_version(info->cuda_version);
  if (needs && gpus.driver && *needs / 1000 > gpus.driver->encoded / 1000) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use the GPU: it needs CUDA {}, the driver gives {}", name,
                         info->cuda_version, cuda_version_text(gpus.driver->encoded));
    v.fix = fmt::format(
        "update the NVIDIA driver to one for CUDA {}, or install a TensorFlow "
        "built for CUDA {} (tensorflow.org/install/source#gpu lists them)",
        info->cuda_version, gpus.driver->encoded / 1000);
    return v;
  }
  // The GPUs' capabilities against the build's.
  const GpuFits fits = fit_gpus(gpus, info->cuda_capabilities);
  const auto& fine = fits.native;
  const auto& ptx = fits.ptx_only;
  const auto& none = fits.none;
  const std::string carries = arch_span(info->cuda_capabilities);
  if (!none.empty()) {
    v.status = CheckStatus::kFail;
    v.line = fmt::format("{}: will NOT use {}: it has no kernels for {} (it carries {})", name,
                         gpus.devices_text(), join(none, ", "), carries);
    // The wheel table's line for these GPUs, or why no TensorFlow wheel has kernels for them.
    const InstallAdvice a = install_advice(
        gpus, "tensorflow", scan.env,
        host::python_version_of_site(site.dir).value_or(python_version_of(*scan.env)),
        release_line(version), true);
    v.fix = a.found ? a.line : "no TensorFlow wheel fits: " + a.line;
    return v;
  }
  // The libraries: its wheels where this version finds them, LD_LIBRARY_PATH, the system.
  const int major = needs ? *needs / 1000 : 12;
  const std::string cudnn_major = info->cudnn_version.substr(0, info->cudnn_version.find('.'));
  const LibrarySearch linker = linker_search(view);
  LibrarySearch search;
  const auto wheel_dirs = wheel_lib_dirs(view, site.dir);
  const bool own = finds_wheel_libraries(version);
  if (own) search.dirs = wheel_dirs;
  search.dirs.insert(search.dirs.end(), linker.dirs.begin(), linker.dirs.end());
  for (const auto& lib : needed_libraries(major, cudnn_major)) {
    if (auto where = search.find(view, lib.soname)) {
      evidence.push_back(fmt::format("{} found: {}", lib.soname, *where));
      continue;
    }
    LibrarySearch wheels{wheel_dirs};
    const auto in_wheel = wheels.find(view, lib.soname);
    v.status = CheckStatus::kFail;
    if (in_wheel) {
      // The wheel is there; this TensorFlow does not look in it.
      std::string dirs = join(wheel_dirs, ":");
      v.line = fmt::format(
          "{}: will NOT use the GPU: {} not found ({} holds it, but TensorFlow "
          "{} does not search its nvidia-* wheels without LD_LIBRARY_PATH)",
          name, lib.soname, *in_wheel, version);
      v.fix = fmt::format(
          "export LD_LIBRARY_PATH={}${{LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}} (or "
          "upgrade: {} -m pip install -U \"tensorflow[and-cuda]\")",
          dirs, py);
    } else {
      v.line = fmt::format(
          "{}: will NOT use the GPU: {} not found (searched {} directories: "
          "{}LD_LIBRARY_PATH, /etc/ld.so.conf.d, the system's)",
          name, lib.soname, search.dirs.size(), own ? "its nvidia-* wheels, " : "");
      v.fix = scan.first(lib.wheel)
                  ? fmt::format("{} -m pip install --force-reinstall {}", py, lib.wheel)
                  : and_cuda;
    }
    return v;
  }
  v.uses_gpu = true;
  const std::string why =
      fmt::format("{}needs CUDA {} and cuDNN {}, driver gives {}",
                  fine.empty() ? std::string() : join(fine, ", ") + " in its build; ",
                  info->cuda_version, info->cudnn_version,
                  gpus.driver ? cuda_version_text(gpus.driver->encoded) : std::string("unknown"));
  if (!ptx.empty()) {
    v.status = CheckStatus::kWarn;
    v.line = fmt::format(
        "{}: will use {} only through PTX for {}: the driver compiles every "
        "kernel at first use, which TensorFlow warns can take 30 minutes ({})",
        name, gpus.devices_text(), join(ptx, ", "), why);
    v.fix =
        "export CUDA_CACHE_MAXSIZE=4294967296 so the driver's JIT cache keeps the compiled "
        "kernels across runs (or build TensorFlow for this GPU: "
        "tensorflow.org/install/source)";
    return v;
  }
  v.line = fmt::format("{}: will use {} ({})", name, gpus.devices_text(), why);
  return v;
}

}  // namespace

std::optional<Verdict> judge_tensorflow(const SystemView& view, const GpuPicture& gpus,
                                        const EnvScan& scan, std::vector<std::string>& evidence) {
  const host::SitePackages* site = scan.first_with_file(view, "tensorflow/__init__.py");
  if (site == nullptr) site = scan.first_with_file(view, kBuildInfo);
  if (site == nullptr) return std::nullopt;
  return judge_tensorflow_site(view, gpus, scan, *site, evidence);
}

CheckResult check_framework_tensorflow(const SystemView& view) {
  return judge_every_environment(view, "GC-TENSORFLOW-CANNOT-USE-GPU"_gc, "TensorFlow",
                                 judge_tensorflow);
}

}  // namespace gpucheck::doctor

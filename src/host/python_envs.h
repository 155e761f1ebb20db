// Python environments and the GPU frameworks installed in them, read from files only: the
// interpreters on PATH (and $CONDA_PREFIX, $VIRTUAL_ENV, pyenv's selected versions), their
// site-packages, torch/version.py and the dist-info METADATA of nvidia-*, jax and cupy wheels.
// Nothing is imported: importing torch on a broken stack can hang or crash.
#pragma once

#include "host/host_view.h"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::host {

struct PythonEnv {
  std::string prefix;                  // /usr, /opt/conda, ~/.venv
  std::string origin;                  // "CONDA_PREFIX", "PATH /usr/bin/python3", ...
  std::vector<std::string> site_dirs;  // existing site-packages / dist-packages directories
};

// In the order a shell would pick them: CONDA_PREFIX, VIRTUAL_ENV, then PATH order. A
// site-packages directory reached twice (through symlinks) is listed once, under its first env.
std::vector<PythonEnv> python_environments(const HostView& view);

struct Distribution {
  std::string name;  // normalised: lower-case, '-' for '_' and '.'
  std::string version;
  std::string dist_info;                   // path of the .dist-info (or .egg-info) directory
  std::vector<std::string> requires_dist;  // METADATA's Requires-Dist values, markers included
};

struct TorchBuild {
  std::string version;                         // __version__, "2.3.0+cu121"
  std::optional<std::string> cuda;             // "12.1"; nullopt for CPU-only and ROCm builds
  std::optional<std::string> hip;              // "6.0.32830"; ROCm builds
  std::string version_file;                    // .../torch/version.py
  std::vector<std::string> bundled_cuda_libs;  // torch/lib/libcudnn*, libcublas* (old wheels)
};

struct SitePackages {
  std::string dir;
  std::optional<TorchBuild> torch;
  // nvidia-*, torch, jax, jaxlib, jax-cuda*, cupy*, tensorflow*, keras, theano, pytensor, pygpu
  std::vector<Distribution> gpu_dists;

  // The distribution named exactly so, if installed here.
  const Distribution* find(const std::string& name) const;
  // The CUDA major versions these packages are built for, each with the package that says so.
  std::vector<std::pair<int, std::string>> cuda_majors() const;
};

SitePackages read_site_packages(const HostView& view, const std::string& dir);

// The directories `import` searches in an environment, in sys.path order: PYTHONPATH's, the
// user site (~/.local/lib/python3.N/site-packages, which venvs leave out unless their
// pyvenv.cfg includes system site-packages), /usr/local's dist-packages before /usr/lib's (as
// Debian orders them), then the environment's own site directories. Existing directories only.
std::vector<std::string> import_path(const HostView& view, const PythonEnv& env);

// The "3.11" of a site directory's lib/python3.11/..., nullopt when its path names none.
std::optional<std::string> python_version_of_site(const std::string& site_dir);

// Whether a venv's pyvenv.cfg says include-system-site-packages = true (its last such line).
bool pyvenv_includes_system_site(std::string_view cfg);

// torch/version.py's assignments; nullopt when the file has no __version__.
std::optional<TorchBuild> parse_torch_version_py(const std::string& text);

// The CUDA major a wheel name is built for: nvidia-cudnn-cu12 -> 12, jax-cuda12-plugin -> 12,
// cupy-cuda12x -> 12, cupy-cuda114 -> 11; nullopt when the name says none.
std::optional<int> cuda_major_of_wheel(const std::string& normalised_name);

// The same, also from the version of CUDA 13's suffix-less toolkit wheels (nvidia-cublas 13.0.2).
std::optional<int> cuda_major_of_dist(const std::string& normalised_name,
                                      const std::string& version);

// Whether a distribution is NVIDIA's wheel of this library ("cudnn", "cublas"):
// nvidia-cudnn-cu12, or CUDA 13's suffix-less nvidia-cublas.
bool is_library_wheel(const std::string& normalised_name, std::string_view library);

}  // namespace gpucheck::host

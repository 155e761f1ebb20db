// What the framework checks judge a build against: the NVIDIA GPUs here with their compute
// capabilities and the driver's CUDA version (from the CUDA probe's facts, else the files that
// say an NVIDIA GPU is set up), whether an architecture list can run on a capability, the
// install commands for this driver, and where the dynamic linker would find a library.
#pragma once

#include "doctor/check.h"
#include "doctor/check_util.h"
#include "doctor/cuda_facts.h"
#include "doctor/system_view.h"
#include "host/python_envs.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::doctor {

struct GpuHere {
  std::string device;  // "cuda0"
  std::string name;    // "NVIDIA H100 80GB HBM3"
  int cc = 0;          // 90 for 9.0
};

struct GpuPicture {
  bool nvidia = false;        // an NVIDIA GPU is present or the system is set up for one
  std::vector<GpuHere> gpus;  // what CUDA enumerated (empty without a working CUDA probe)
  std::optional<DriverCuda> driver;
  std::string driver_version;  // "580.95.05": the kernel module's, else NVML's; empty unread
  std::vector<std::string> evidence;

  // "cuda0, cuda1" or "the NVIDIA GPU" when CUDA enumerated none.
  std::string devices_text() const;
};
GpuPicture gpu_picture(const SystemView& view);

// "sm_90" of 90.
std::string sm_name(int cc);
// 90 of "9.0" or "sm_90"/"compute_90a"; nullopt otherwise.
std::optional<int> parse_cc(const std::string& text);

// How a build's architecture list serves one GPU: machine code for it (sm_XY runs on X.Z for
// Z >= Y; an "a"/"f" arch-specific entry only on its own capability), PTX the driver compiles
// at first use (compute_XY for any capability >= XY), or nothing.
enum class ArchFit { kNative, kPtxOnly, kNone };
ArchFit arch_fit(const std::vector<std::string>& arch_list, int cc);
// Each distinct GPU capability here sorted by how the arch list serves it ("sm_90" names).
struct GpuFits {
  std::vector<std::string> native, ptx_only, none;
  int cuda_for_none =
      0;  // the CUDA version the GPUs without kernels need (12080, CUDA 12.8, for sm_120)
};
GpuFits fit_gpus(const GpuPicture& gpus, const std::vector<std::string>& arch_list);
// "sm_50…sm_90" style summary of an arch list.
std::string arch_span(const std::vector<std::string>& arch_list);
// The first CUDA version whose toolkit compiles for this capability (12.8 for sm_120).
int min_cuda_for_cc(int cc);

// The install line configs/wheels.toml gives a framework for these GPUs, this driver and an
// environment's Python (python_of(env) -m pip install ...), keeping the release line `keep`
// ("2.11" of 2.11.0+cu130) when one of its wheels fits; otherwise why none fits. Both name the
// wheel chosen: "pip install torch==2.11.* (torch 2.11 cu130: CUDA 13.0, sm_75…sm_120)".
struct InstallAdvice {
  bool found = false;
  std::string line;        // the command, or the reason none exists
  std::string min_driver;  // found: the wheel's Linux driver floor ("580.65.06")
};
// `replace`: a build is installed that the line must replace (pip keeps an installed
// 2.11.0+cpu for torch==2.11.*, local labels aside): --force-reinstall.
InstallAdvice install_advice(const GpuPicture& gpus, const std::string& framework,
                             const host::PythonEnv* env, const std::string& python_version,
                             const std::string& keep = "", bool replace = false);
// "2.11" of "2.11.0+cu130": the release line an install advice keeps when one of its wheels fits.
std::string release_line(const std::string& version);
// "3.12" of an environment's site directories; empty when none names it.
std::string python_version_of(const host::PythonEnv& env);

// The interpreter a fix should name for an environment: its prefix's bin/python3 (or the
// PATH entry it came from).
std::string python_of(const host::PythonEnv& env);

// Where the dynamic linker (or a framework's own search) finds a library by soname.
struct LibrarySearch {
  std::vector<std::string> dirs;  // in search order
  std::optional<std::string> find(const SystemView& view, const std::string& soname) const;
};
// LD_LIBRARY_PATH, then ld.so.conf.d's directories, then the default system directories.
LibrarySearch linker_search(const SystemView& view);
// A colon-separated search list (LD_LIBRARY_PATH, an RPATH or RUNPATH) as its absolute
// directories, trailing slashes dropped, $ORIGIN replaced by `origin`, each once.
std::vector<std::string> search_dirs(const std::string& list, const std::string& origin = "");
// The lib/ directories of the nvidia-* wheels in a site directory (site/nvidia/*/lib).
std::vector<std::string> wheel_lib_dirs(const SystemView& view, const std::string& site_dir);

// One framework's verdict in one environment: the line doctor prints, its fix, and further
// findings about the install (a shadowed copy, a wheel out of step).
struct Verdict {
  CheckStatus status = CheckStatus::kPass;
  std::string line;
  std::string fix;
  bool uses_gpu = false;
  std::vector<Finding> more;
};

// An environment's site directories as `import` searches them, each read once.
struct EnvScan {
  const host::PythonEnv* env = nullptr;
  std::vector<host::SitePackages> sites;

  // The first distribution so named on the import path, and the site that holds it.
  const host::Distribution* first(const std::string& dist_name,
                                  const host::SitePackages** where = nullptr) const;
  // The first site holding this path (relative to the site: "tensorflow/__init__.py").
  const host::SitePackages* first_with_file(const SystemView& view, const std::string& rel) const;
};
std::vector<EnvScan> scan_environments(const SystemView& view,
                                       const std::vector<host::PythonEnv>& envs);

// A framework check's result from its verdicts (one a framework found) and further findings:
// the worst status decides; PASS when every one passes. Identical lines (one install reached
// from two environments) are said once.
CheckResult framework_result(Code failure, const std::vector<Verdict>& verdicts,
                             std::vector<std::string> evidence);

// One framework's verdict in one environment (nullopt: not installed there), with the
// evidence it read appended.
using Judge = std::function<std::optional<Verdict>(const SystemView&, const GpuPicture&,
                                                   const EnvScan&, std::vector<std::string>&)>;
// A framework check: the judge over every environment found; SKIP "does not apply" when the
// framework is in none.
CheckResult judge_every_environment(const SystemView& view, Code failure,
                                    const std::string& framework, const Judge& judge);

std::optional<Verdict> judge_torch(const SystemView& view, const GpuPicture& gpus,
                                   const EnvScan& scan, std::vector<std::string>& evidence);
std::optional<Verdict> judge_tensorflow(const SystemView& view, const GpuPicture& gpus,
                                        const EnvScan& scan, std::vector<std::string>& evidence);
std::optional<Verdict> judge_jax(const SystemView& view, const GpuPicture& gpus,
                                 const EnvScan& scan, std::vector<std::string>& evidence);
std::optional<Verdict> judge_cupy(const SystemView& view, const GpuPicture& gpus,
                                  const EnvScan& scan, std::vector<std::string>& evidence);
std::optional<Verdict> judge_keras(const SystemView& view, const GpuPicture& gpus,
                                   const EnvScan& scan, std::vector<std::string>& evidence);

}  // namespace gpucheck::doctor

// The NVIDIA user-space driver as the CUDA probe child opened it (dlopen of libcuda.so.1, cuInit,
// cuDriverGetVersion, cuDeviceGetCount): missing, the toolkit's stub, a version other than the
// kernel module's, older than the CUDA runtimes installed, or seeing no device.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"

#include "backends/cuda/cuda_driver.h"
#include "core/json_input.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <cctype>
#include <regex>
#include <set>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// CUresult values the judgements name (from cuda.h; the doctor builds without the toolkit).
constexpr int kCudaErrorStubLibrary = 34;
constexpr int kCudaErrorSystemNotReady = 802;

const Json& driver_of(const Json& cuda) {
  static const Json kNone = Json::object();
  auto it = cuda.find(k::kDriver);
  return it != cuda.end() && it->is_object() ? *it : kNone;
}

bool is_stub(const Json& driver) {
  const std::string path = text(driver, k::kPath), real = text(driver, k::kRealPath);
  return path.find("/stubs/") != std::string::npos || real.find("/stubs/") != std::string::npos ||
         driver.value(k::kInitResult, 0) == kCudaErrorStubLibrary;
}

std::string loaded_from(const Json& driver) {
  const std::string path = text(driver, k::kPath), real = text(driver, k::kRealPath);
  return real.empty() || real == path ? path : fmt::format("{} -> {}", path, real);
}

// Where a stub directory comes from: LD_LIBRARY_PATH entries and ld.so.conf.d lines naming it.
std::vector<std::string> stub_sources(const SystemView& view) {
  std::vector<std::string> out;
  if (auto ld = view.env_value("LD_LIBRARY_PATH"); ld && ld->find("stubs") != std::string::npos)
    out.push_back("LD_LIBRARY_PATH=" + *ld);
  for (const auto& conf : view.glob("/etc/ld.so.conf.d/*.conf")) {
    auto t = view.read_file(conf);
    if (t && t->find("stubs") != std::string::npos)
      out.push_back(conf + " names a stubs directory");
  }
  return out;
}

// The CUDA runtime versions installed as toolkits (/usr/local/cuda*/version.json).
struct Toolkit {
  std::string path;
  std::string version;
};
std::vector<Toolkit> toolkits(const SystemView& view) {
  std::vector<Toolkit> out;
  for (const auto& dir : view.glob("/usr/local/cuda*")) {
    if (view.read_link(dir)) continue;  // /usr/local/cuda -> cuda-13.0: counted once
    auto t = view.read_file(dir + "/version.json");
    if (!t) continue;
    const Json j = parse_json_or_discarded(*t);
    if (!j.is_object()) continue;
    std::string v;
    for (const char* key : {"cuda_cudart", "cuda"})
      if (j.contains(key) && j[key].is_object()) {
        v = text(j[key], "version");
        if (!v.empty()) break;
      }
    if (!v.empty()) out.push_back({dir + "/version.json", v});
  }
  return out;
}

}  // namespace

// ---- cuda_driver_library ----

CheckResult check_cuda_driver_library(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  const Json& driver = driver_of(cuda);
  if (driver.value(k::kLoaded, false))
    return pass(fmt::format("libcuda.so.1 loads: {}", loaded_from(driver)),
                {"dlopen(\"libcuda.so.1\") resolved " + loaded_from(driver)});
  const NvidiaExpectation nv = nvidia_expected(view);
  std::vector<std::string> evidence{"dlopen(\"libcuda.so.1\"): " + text(driver, k::kError)};
  if (!nv.expected)
    return not_applicable(
        "no NVIDIA GPU here (PCI bus, nvidia module, /dev/nvidia*) and no libcuda.so.1", evidence);
  evidence.insert(evidence.end(), nv.evidence.begin(), nv.evidence.end());
  return fail("GC-DRIVER-LIBCUDA-MISSING"_gc,
              "libcuda.so.1 does not load, though this system has an NVIDIA GPU: no CUDA program "
              "can run",
              "install the NVIDIA driver's user-space libraries (Debian/Ubuntu: sudo apt install "
              "libnvidia-compute-<branch> or the nvidia-driver package; in a container start it "
              "with --gpus all so the runtime mounts the driver in)",
              evidence);
}

// ---- cuda_driver_stub ----

CheckResult check_cuda_driver_stub(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  const Json& driver = driver_of(cuda);
  if (!driver.value(k::kLoaded, false))
    return not_applicable("libcuda.so.1 did not load at all (see cuda_driver_library)",
                          {"dlopen(\"libcuda.so.1\"): " + text(driver, k::kError)});
  std::vector<std::string> evidence{"dlopen(\"libcuda.so.1\") resolved " + loaded_from(driver)};
  if (driver.contains(k::kInitResult))
    evidence.push_back(fmt::format("cuInit(0) = {}", driver[std::string(k::kInitResult)].dump()));
  if (!is_stub(driver))
    return pass("the driver's libcuda.so.1 is loaded, not the toolkit's stub", evidence);
  for (const auto& s : stub_sources(view)) evidence.push_back(s);
  return fail(
      "GC-DRIVER-STUB-LOADED"_gc,
      fmt::format("the CUDA driver library loaded is the toolkit's stub ({}): it exists only "
                  "for linking, and every CUDA call fails with CUDA_ERROR_STUB_LIBRARY",
                  loaded_from(driver)),
      "remove the stubs directory (/usr/local/cuda/lib64/stubs) from LD_LIBRARY_PATH and "
      "from /etc/ld.so.conf.d (then sudo ldconfig), so the driver's libcuda.so.1 is found; "
      "if no driver is installed, install it",
      evidence);
}

// ---- nvidia_driver_versions ----

CheckResult check_nvidia_driver_versions(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  const Json& driver = driver_of(cuda);
  const Json nvml = cuda.value(k::kNvml, Json::object());
  std::vector<std::string> evidence;
  std::optional<std::string> module = kernel_module_version(view);
  if (module) evidence.push_back("/proc/driver/nvidia/version: kernel module " + *module);
  // NVML reports the kernel driver's version; it refuses to start when the two differ.
  const std::string nvml_error = text(nvml, k::kError);
  if (nvml_error.find("LIB_RM_VERSION_MISMATCH") != std::string::npos)
    evidence.push_back("NVML: " + nvml_error);
  if (!module && !text(nvml, k::kDriverVersion).empty()) {
    module = text(nvml, k::kDriverVersion);
    evidence.push_back("nvmlSystemGetDriverVersion: " + *module + " (the kernel driver's)");
  }
  if (!driver.value(k::kLoaded, false))
    return not_applicable("libcuda.so.1 did not load (see cuda_driver_library)", evidence);
  const std::string real = text(driver, k::kRealPath);
  const std::string library = libcuda_file_version(real.empty() ? text(driver, k::kPath) : real);
  evidence.push_back(fmt::format("dlopen(\"libcuda.so.1\") resolved {} (version {})",
                                 loaded_from(driver),
                                 library.empty() ? "not in its name" : library));
  std::vector<std::string> others;
  for (const auto& p : libcuda_locations(view)) {
    auto target = view.read_link(p);
    const std::string v = libcuda_file_version(target.value_or(p));
    if (v.empty() || v == library) continue;
    others.push_back(fmt::format("{} -> {}", p, target.value_or("?")));
    evidence.push_back(
        fmt::format("another copy: {} -> {} (version {})", p, target.value_or("?"), v));
  }
  if (!module)
    throw NotObservable(
        "the kernel module's version: /proc/driver/nvidia/version cannot be read and NVML gave no "
        "driver version");
  if (library.empty() && !is_stub(driver))
    throw NotObservable("the version of the loaded libcuda (" + loaded_from(driver) +
                        ") is not in its file name");
  if (is_stub(driver))
    return not_applicable("the loaded libcuda.so.1 is the toolkit's stub (see cuda_driver_stub)",
                          evidence);
  if (library != *module)
    return fail(
        "GC-DRIVER-VERSION-MISMATCH"_gc,
        fmt::format("the kernel module is {} but the driver library libcuda.so.1 resolves to "
                    "{} ({}): CUDA fails with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH and "
                    "nvidia-smi with \"Driver/library version mismatch\"",
                    *module, library, loaded_from(driver)),
        "reboot if the driver was just upgraded (the old module is still loaded); else "
        "reinstall one driver version for both (sudo apt install --reinstall "
        "nvidia-driver-<branch>) and remove stray libcuda copies",
        evidence);
  if (!others.empty())
    return info(fmt::format("kernel module and libcuda.so.1 are both {}; other libcuda copies with "
                            "other versions exist ({}), unused by this process",
                            *module, join(others, ", ")),
                evidence);
  return pass(fmt::format("kernel module and libcuda.so.1 are both {}", *module), evidence);
}

// ---- cuda_driver_runtime ----

CheckResult check_cuda_driver_runtime(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  auto drv = driver_cuda_version(view);
  std::vector<std::string> evidence;
  if (!drv) {
    const std::string why = text(driver_of(cuda), k::kError);
    throw NotObservable(
        fmt::format("the driver's CUDA version: neither cuDriverGetVersion ({}) nor NVML answered",
                    why.empty() ? "libcuda.so.1" : why));
  }
  evidence.push_back(
      fmt::format("driver supports CUDA {} ({})", cuda_version_text(drv->encoded), drv->source));
  struct Need {
    std::string who;
    int encoded;
  };
  std::vector<Need> needs{{"this gpucheck's CUDA runtime", cuda::kRequiredDriverCudaVersion}};
  if (auto rt = cuda.find(k::kRuntime); rt != cuda.end())
    if (auto v = parse_cuda_version(text(*rt, k::kVersion))) needs.front().encoded = *v;
  for (const auto& t : toolkits(view))
    if (auto v = parse_cuda_version(t.version))
      needs.push_back({fmt::format("the CUDA toolkit {} ({})", t.version, t.path), *v});
  std::vector<std::string> too_new_major, too_new_minor;
  for (const auto& n : needs) {
    evidence.push_back(fmt::format("{} needs CUDA {}", n.who, cuda_version_text(n.encoded)));
    if (n.encoded / 1000 > drv->encoded / 1000)
      too_new_major.push_back(fmt::format("{} (CUDA {})", n.who, cuda_version_text(n.encoded)));
    else if (n.encoded > drv->encoded)
      too_new_minor.push_back(fmt::format("{} (CUDA {})", n.who, cuda_version_text(n.encoded)));
  }
  const std::string driver = cuda_version_text(drv->encoded);
  if (!too_new_major.empty())
    return fail(
        "GC-DRIVER-TOO-OLD"_gc,
        fmt::format("the driver supports CUDA {} but {} need{} a newer major: programs "
                    "fail with cudaErrorInsufficientDriver",
                    driver, join(too_new_major, ", "), too_new_major.size() == 1 ? "s" : ""),
        fmt::format("update the NVIDIA driver (CUDA 13 needs branch {} or newer), or use "
                    "a CUDA {} toolkit",
                    cuda::kRequiredDriverBranch, drv->encoded / 1000),
        evidence);
  if (!too_new_minor.empty())
    return warn("GC-DRIVER-MINOR-COMPAT"_gc,
                fmt::format("the driver supports CUDA {}, older than {}: it runs through minor "
                            "version compatibility, but PTX JIT of newer code and newer APIs fail",
                            driver, join(too_new_minor, ", ")),
                "update the NVIDIA driver to one that supports the newest toolkit installed",
                evidence);
  return pass(
      fmt::format("the driver supports CUDA {}: every CUDA runtime found needs at most that",
                  driver),
      evidence);
}

// ---- cuda_devices ----

namespace {

// "0000:17:00.0" from NVML's "00000000:17:00.0" or sysfs's "0000:17:00.0", lower case.
std::string short_bus_id(std::string id) {
  for (auto& ch : id) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  return id.size() > 12 ? id.substr(id.size() - 12) : id;
}

// NVIDIA GPUs on the PCI bus that no CUDA device stands for: a GPU fallen off the bus (Xid 79)
// or one the driver failed to bring up. Empty when a visibility variable narrows CUDA's view on
// purpose (a container given some GPUs still sees them all in /sys) or sysfs is not readable.
std::vector<std::string> gpus_missing_from_cuda(const SystemView& view, const Json& devices) {
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"})
    if (auto v = view.env_value(var); v && *v != "all") return {};
  std::set<std::string> seen;
  for (const auto& d : devices)
    if (std::string id = text(d, k::kPciBusId); !id.empty()) seen.insert(short_bus_id(id));
  if (seen.empty()) return {};  // nothing to match against (an older probe)
  std::vector<std::string> missing;
  try {
    for (const auto& g : nvidia_pci_gpus(view))
      if (!seen.contains(short_bus_id(g.address))) missing.push_back(g.address);
  } catch (const NotObservable&) {
  }
  return missing;
}

}  // namespace

CheckResult check_cuda_devices(const SystemView& view) {
  const Json& cuda = cuda_section(view);
  const Json& driver = driver_of(cuda);
  const std::string finding = text(cuda, k::kFinding);
  const std::string reason = text(cuda, k::kReason);
  std::vector<std::string> evidence;
  for (const char* var : {"CUDA_VISIBLE_DEVICES", "NVIDIA_VISIBLE_DEVICES"})
    if (auto v = view.env_value(var)) evidence.push_back(fmt::format("{}='{}'", var, *v));
  std::vector<std::string> nodes;
  for (const auto& n : array_at(driver, k::kDevNodes)) nodes.push_back(n.get<std::string>());
  evidence.push_back("device nodes the probe saw: " + (nodes.empty() ? "none" : join(nodes, ", ")));
  if (driver.contains(k::kInitResult))
    evidence.push_back(fmt::format("cuInit(0) = {}", driver[std::string(k::kInitResult)].dump()));
  if (finding == "ok" || text(cuda, k::kStatus) == "available") {
    const Json& devices = array_at(cuda, k::kDevices);
    std::vector<std::string> names;
    for (const auto& d : devices)
      names.push_back(fmt::format("{} {}", text(d, k::kDevice), text(d, k::kDeviceName)));
    if (devices.empty())
      return fail("GC-CUDA-NO-DEVICE"_gc, "the CUDA runtime found no device: " + reason,
                  "see the reason; nvidia-smi shows whether the driver sees the GPUs", evidence);
    if (const auto missing = gpus_missing_from_cuda(view, devices); !missing.empty()) {
      evidence.push_back(fmt::format("CUDA devices: {}", join(names, ", ")));
      return fail("GC-CUDA-GPU-MISSING"_gc,
                  fmt::format("GPU missing: {} on the PCI bus but not among CUDA's {} device{}",
                              join(missing, ", "), devices.size(), devices.size() == 1 ? "" : "s"),
                  "sudo dmesg | grep -i -e NVRM -e Xid tells why (Xid 79: fallen off the bus); "
                  "drain the node, reseat or replace the GPU; a reboot brings back one the "
                  "driver failed to start",
                  evidence);
    }
    return pass(fmt::format("CUDA sees {} device{}: {}", devices.size(),
                            devices.size() == 1 ? "" : "s", join(names, ", ")),
                evidence);
  }
  if (finding == "no_driver" || finding == "stub" || finding == "too_old")
    return not_applicable(fmt::format("the driver is not usable ({}: see cuda_driver_library, "
                                      "cuda_driver_stub, cuda_driver_runtime)",
                                      finding),
                          evidence);
  if (finding == "hidden")
    return fail("GC-CUDA-NO-DEVICE"_gc, reason,
                "unset CUDA_VISIBLE_DEVICES, or set it to indices or UUIDs that exist (nvidia-smi "
                "-L lists them)",
                evidence);
  if (finding == "no_device") {
    if (nodes.empty())
      return fail("GC-CUDA-NO-DEVICE"_gc, reason,
                  "load the driver (sudo modprobe nvidia; nvidia-smi); in a container start it "
                  "with the GPUs (docker run --gpus all; NVIDIA_VISIBLE_DEVICES acts only when "
                  "the container starts)",
                  evidence);
    return fail("GC-CUDA-NO-DEVICE"_gc, reason,
                "nvidia-smi shows what the driver sees; check dmesg for NVRM errors", evidence);
  }
  if (driver.value(k::kInitResult, 0) == kCudaErrorSystemNotReady)
    return fail("GC-CUDA-FABRIC-NOT-READY"_gc,
                reason +
                    " (CUDA_ERROR_SYSTEM_NOT_READY: on NVSwitch systems Fabric Manager is "
                    "not running)",
                "sudo systemctl enable --now nvidia-fabricmanager (its version must match the "
                "driver's)",
                evidence);
  return fail("GC-CUDA-INIT-FAILED"_gc,
              reason.empty() ? "the CUDA driver did not initialise" : reason,
              "run nvidia-smi; check dmesg for NVRM and Xid messages; a reboot clears a driver "
              "left in a bad state",
              evidence);
}

}  // namespace gpucheck::doctor

// The OpenCL checks: loader and its copies, the vendors directory, .icd libraries, vendor
// libraries nobody registered, enumeration, platforms without devices, CPU-only OpenCL,
// duplicated devices and each platform's family. All read the OpenCL probe's section.
#include "core/files.h"
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

constexpr std::string_view kVendorsDir = "/etc/OpenCL/vendors";
constexpr std::string_view kInstallLoader =
    "sudo apt install ocl-icd-libopencl1 (Debian/Ubuntu; Fedora/RHEL: sudo dnf install ocl-icd)";

std::string loader_label(const Json& loader) {
  std::string kind = text(loader, k::kKind);
  std::string version = text(loader, k::kVersion);
  return version.empty() ? kind : kind + " " + version;
}

bool is_ocl_icd(const Json& loader) {
  return text(loader, k::kKind) == "ocl-icd";
}

// The .icd file name a vendor's package would install.
std::string icd_file_name(std::string_view vendor) {
  static const std::map<std::string_view, std::string_view> kNames{
      {"nvidia", "nvidia.icd"},    {"amd", "amdocl64.icd"},         {"intel", "intel.icd"},
      {"mesa_clover", "mesa.icd"}, {"mesa_rusticl", "rusticl.icd"}, {"pocl", "pocl.icd"}};
  auto it = kNames.find(vendor);
  return std::string(it == kNames.end() ? std::string_view("vendor.icd") : it->second);
}

// The exact command that registers a library (run as root).
std::string register_command(const SystemView& view, std::string_view vendor,
                             const std::string& icd_line) {
  std::string cmd = fmt::format("echo {} > {}/{}", icd_line, kVendorsDir, icd_file_name(vendor));
  if (!view.is_dir(kVendorsDir)) cmd = fmt::format("mkdir -p {} && {}", kVendorsDir, cmd);
  return cmd;
}

std::string family_label(const Json& platform) {
  const std::string family = text(platform, k::kFamily);
  const std::string name = text(platform, k::kName);
  const std::string version = text(platform, k::kVersion);
  if (family == "nvidia") return "NVIDIA";
  if (family == "amd") return "AMD (ROCm or AMDGPU-PRO)";
  if (family == "mesa_clover") return "Mesa Clover";
  if (family == "mesa_rusticl") return "Mesa rusticl";
  if (family == "pocl") return "pocl";
  if (family == "apple") return "Apple";
  if (family == "intel") {
    std::string all = name + " " + version;
    std::transform(all.begin(), all.end(), all.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return all.find("beignet") != std::string::npos || all.find("gen ocl") != std::string::npos
               ? "Intel Beignet"
               : "Intel NEO (compute-runtime)";
  }
  return "other";
}

bool device_is_gpu(const Json& device) {
  const Json props = device.value(k::kProperties, Json::object());
  const Json type = props.value("cl_device_type", Json::object());
  for (const auto& flag : array_at(type, k::kFlags)) {
    if (!flag.is_string()) continue;
    const auto f = flag.get<std::string>();
    if (f == "CL_DEVICE_TYPE_GPU" || f == "CL_DEVICE_TYPE_ACCELERATOR") return true;
  }
  return false;
}

// Whether a GPU Mesa's OpenCL could drive (AMD, Intel) is on the PCI bus; true where the bus
// cannot be read, so the advice stays.
bool mesa_has_a_gpu_here(const SystemView& view) {
  try {
    for (const auto& g : pci_gpus(view))
      if (g.vendor == "amd" || g.vendor == "intel") return true;
    return false;
  } catch (const NotObservable&) {
    return true;
  }
}

// Clover's .icd: a package's file is turned off with dpkg-divert (a plain rm comes back with the
// next upgrade, and deletes what dpkg keeps track of); a file of no package may be removed.
std::string clover_icd_fix(const SystemView& view) {
  const std::string icd = "/etc/OpenCL/vendors/mesa.icd";
  if (auto owner = dpkg_owner(view, icd))
    return fmt::format(
        "turn Clover's .icd off without touching the {} package's files: sudo dpkg-divert "
        "--local --rename --divert {}.disabled --add {}",
        *owner, icd, icd);
  return "remove Clover's .icd: sudo rm " + icd;
}

// Why a platform of this family may list no device, and what to do.
std::pair<std::string, std::string> no_device_advice(std::string_view family) {
  if (family == "nvidia")
    return {
        "the NVIDIA driver sees no GPU (kernel module not loaded, /dev/nvidia* missing or "
        "not accessible)",
        "run nvidia-smi; load the module (sudo modprobe nvidia) or reinstall the driver; in a "
        "container start it with --gpus all"};
  if (family == "amd")
    return {"ROCm sees no GPU (/dev/kfd missing or not accessible, or the GPU is unsupported)",
            "add yourself to the render and video groups (sudo usermod -aG render,video $USER) "
            "and check rocminfo"};
  if (family == "intel")
    return {"the Intel driver sees no GPU (/dev/dri/renderD* missing or not accessible)",
            "add yourself to the render group (sudo usermod -aG render $USER) and log in again"};
  if (family == "mesa_rusticl")
    return {"rusticl enables no driver by default",
            "set RUSTICL_ENABLE=radeonsi (AMD) or iris (Intel), e.g. in /etc/environment"};
  if (family == "mesa_clover")
    return {"Clover supports only some AMD GPUs (r600/radeonsi) and found none",
            "use the vendor's driver or Mesa rusticl instead of Clover"};
  if (family == "pocl")
    return {"pocl found no device (POCL_DEVICES may name a device kind that is not there)",
            "unset POCL_DEVICES or set it to pthread"};
  return {"the driver found no device", "check the driver's own tools, or remove its .icd file"};
}

// The CUDA toolkit ships a Khronos loader beside cuBLAS and the runtime in
// /usr/local/cuda*/targets/*/lib. When it is one of the copies, the fix removes that file, never
// the directory from the linker's path (which would hide the CUDA libraries too), and names
// the ld.so.conf.d lines that put it first as evidence. "" when no toolkit copy is seen.
std::string toolkit_loader_fix(const SystemView& view, const Json& loader, const Json& copies,
                               std::vector<std::string>* evidence) {
  std::vector<std::string> dirs, files;
  auto add = [&](const Json& entry) {
    for (auto key : {k::kPath, k::kRealPath}) {
      const std::string p = text(entry, key);
      if (!p.starts_with("/usr/local/cuda")) continue;
      dirs.push_back(dirname_of(p));
      if (key == k::kRealPath) {
        files.push_back(dirname_of(p) + "/libOpenCL.so.1");
        if (files.back() != p) files.push_back(p);
      }
    }
  };
  add(loader);
  for (const auto& c : copies) add(c);
  if (files.empty()) return {};
  std::vector<std::string> owners;
  for (const auto& f : files)
    if (auto owner = dpkg_owner(view, f)) {
      evidence->push_back(fmt::format("{} belongs to the package {} (dpkg -S)", f, *owner));
      if (std::find(owners.begin(), owners.end(), *owner) == owners.end()) owners.push_back(*owner);
    }
  // A line puts the toolkit's loader on the path when it names a directory seen above, or any
  // toolkit directory holding a libOpenCL.so.1 (/usr/local/cuda-13 is /usr/local/cuda-13.0).
  for (const auto& conf : view.glob("/etc/ld.so.conf.d/*.conf")) {
    auto t = view.read_file(conf);
    if (!t) continue;
    std::istringstream lines(*t);
    for (std::string line; std::getline(lines, line);) {
      while (!line.empty() &&
             (line.back() == '/' || std::isspace(static_cast<unsigned char>(line.back()))))
        line.pop_back();
      if (std::find(dirs.begin(), dirs.end(), line) != dirs.end() ||
          (line.starts_with("/usr/local/cuda") && view.exists(line + "/libOpenCL.so.1")))
        evidence->push_back(
            fmt::format("{} names {} (the CUDA toolkit's libOpenCL.so.1)", conf, line));
    }
  }
  const std::string either_way =
      "but keep its directory on the linker's path (cuBLAS and the CUDA runtime live there); or "
      "keep both and register every ICD in /etc/OpenCL/vendors, which both loaders read";
  if (!owners.empty()) {
    // A package's file removed with rm comes back with the next upgrade, and dpkg --verify
    // reports it: a diversion moves it aside for good, the package manager's own way.
    std::vector<std::string> divert;
    for (const auto& f : files)
      divert.push_back(
          fmt::format("sudo dpkg-divert --local --rename --divert {}.disabled --add {}", f, f));
    return fmt::format(
        "keep one loader for every program: the CUDA toolkit's copy belongs to the package {} "
        "(do not rm it: the package manager owns it); set it aside with a diversion ({}; sudo "
        "ldconfig) {}",
        join(owners, ", "), join(divert, "; "), either_way);
  }
  return fmt::format(
      "keep one loader for every program: remove the CUDA toolkit's copy (sudo rm {}; sudo "
      "ldconfig) {}",
      join(files, " "), either_way);
}

}  // namespace

// ---- opencl_loader ----

CheckResult check_opencl_loader(const SystemView& view) {
  const Json& s = opencl_section(view);
  const std::string status = text(s, k::kStatus);
  if (status == "unavailable") {
    std::vector<std::string> evidence{"reason: " + text(s, k::kReason)};
    std::vector<std::string> drivers;
    for (const auto& lib : array_at(s, k::kUnregisteredVendorLibraries)) {
      drivers.push_back(vendor_display_name(text(lib, k::kVendor)));
      evidence.push_back("vendor library: " + text(lib, k::kPath));
    }
    if (!drivers.empty())
      return fail("GC-OPENCL-LOADER-MISSING"_gc,
                  fmt::format("no OpenCL ICD loader (libOpenCL.so.1), though {} OpenCL drivers "
                              "are installed: no OpenCL program can reach them",
                              join(drivers, ", ")),
                  std::string(kInstallLoader), evidence);
    return info(fmt::format("OpenCL is not installed: no ICD loader (libOpenCL.so.1) and no vendor "
                            "driver; to use OpenCL: {}",
                            kInstallLoader),
                evidence);
  }
  const Json& loader = opencl_field(view, k::kLoader);
  if (!loader.contains(k::kKind))
    throw NotObservable("the OpenCL probe did not say which loader it loaded");
  std::vector<std::string> evidence{"path: " + text(loader, k::kPath),
                                    "real path: " + text(loader, k::kRealPath)};
  if (loader.contains(k::kVendor)) evidence.push_back("vendor: " + text(loader, k::kVendor));
  for (const auto& e : array_at(loader, k::kErrors))
    evidence.push_back("error: " + (e.is_string() ? e.get<std::string>() : e.dump()));
  const std::string kind = text(loader, k::kKind);
  std::string how;
  if (kind == "ocl-icd")
    how = "ocl-icd reads OCL_ICD_VENDORS and OPENCL_VENDOR_PATH, and ignores OCL_ICD_FILENAMES";
  else if (kind.starts_with("khronos"))
    how = "the Khronos loader reads OCL_ICD_FILENAMES and OCL_ICD_VENDORS (a directory only)";
  else
    how = "an unknown loader: how it treats OCL_ICD_* variables is not known";
  evidence.push_back(how);
  std::string version = text(loader, k::kOpenclVersion);
  return pass(fmt::format("ICD loader: {}{} from {}", loader_label(loader),
                          version.empty() ? "" : " (" + version + ")", text(loader, k::kPath)),
              evidence);
}

// ---- opencl_loader_copies ----

CheckResult check_opencl_loader_copies(const SystemView& view) {
  const Json& loader = opencl_field(view, k::kLoader);
  const Json& copies = array_at(loader, k::kOtherCopies);
  const bool loaded = loader.contains(k::kKind);
  if (copies.empty())
    return pass("no other libOpenCL.so copy on the library search path",
                {"loaded: " + (loaded ? text(loader, k::kRealPath) : std::string("none"))});
  std::vector<std::string> evidence;
  std::vector<std::string> paths;
  bool other_kind = false;
  bool dangling = false;
  for (const auto& c : copies) {
    const std::string path = text(c, k::kPath);
    paths.push_back(path);
    if (c.contains(k::kError)) {
      dangling = true;
      evidence.push_back(fmt::format("{}: {}", path, text(c, k::kError)));
      continue;
    }
    const std::string kind = text(c, k::kKind);
    if (loaded && !text(loader, k::kKind).starts_with(kind)) other_kind = true;
    evidence.push_back(fmt::format("{} -> {} ({})", path, text(c, k::kRealPath), kind));
  }
  if (loaded) evidence.insert(evidence.begin(), "loaded: " + text(loader, k::kRealPath));
  std::string finding = fmt::format(
      "{} other libOpenCL.so cop{} on the search path{}: which loader a program gets depends on "
      "its RPATH and LD_LIBRARY_PATH",
      copies.size(), copies.size() == 1 ? "y" : "ies",
      other_kind ? " of a different loader kind (OCL_ICD_* variables then act differently per "
                   "program)"
                 : "");
  if (!loaded)
    finding = fmt::format(
        "{} libOpenCL.so cop{} on disk, but the dynamic linker loaded none: their directory is "
        "not in the linker's cache",
        copies.size(), copies.size() == 1 ? "y" : "ies");
  std::string fix;
  if (!loaded) {
    fix = std::string(kInstallLoader);
  } else {
    std::vector<std::string> owners;
    for (const auto& p : paths)
      if (auto owner = dpkg_owner(view, p)) {
        evidence.push_back(fmt::format("{} belongs to the package {} (dpkg -S)", p, *owner));
        if (std::find(owners.begin(), owners.end(), *owner) == owners.end())
          owners.push_back(*owner);
      }
    if (dangling && !other_kind) {
      fix = owners.empty()
                ? "remove the dangling link: sudo rm " + join(paths, " ")
                : fmt::format(
                      "the dangling link belongs to the package {}: reinstall it (sudo apt "
                      "install --reinstall {}) rather than removing its files",
                      join(owners, ", "), join(owners, " "));
    } else {
      fix = toolkit_loader_fix(view, loader, copies, &evidence);
      if (fix.empty() && !owners.empty())
        fix = fmt::format(
            "keep one loader: {} belongs to the package {}: remove the package if no program "
            "needs it (sudo apt remove {}), or take its directory out of ld.so.conf.d and "
            "LD_LIBRARY_PATH; then sudo ldconfig (never rm a package's files)",
            join(paths, ", "), join(owners, ", "), join(owners, " "));
      if (fix.empty())
        fix = fmt::format(
            "keep one loader: remove {} or its directory from ld.so.conf.d and "
            "LD_LIBRARY_PATH, then sudo ldconfig",
            join(paths, ", "));
    }
  }
  return warn("GC-OPENCL-LOADER-SHADOWED"_gc, finding, fix, evidence);
}

// ---- opencl_vendors_dir ----

CheckResult check_opencl_vendors_dir(const SystemView& view) {
  const Json& source = opencl_field(view, k::kIcdSource);
  const Json& files = opencl_field(view, k::kIcdFiles);
  const std::string path = text(source, k::kPath);
  const std::string type = text(source, k::kType);
  const std::string origin = text(source, k::kSource);
  std::vector<std::string> evidence{fmt::format("{} ({}, from {})", path, type, origin)};
  std::size_t in_dir = 0;
  for (const auto& f : files) {
    if (text(f, k::kSource) == "vendors_directory") {
      ++in_dir;
      evidence.push_back(fmt::format("{}: {}", text(f, k::kPath), text(f, k::kLibrary)));
    }
  }
  if (type != "directory")
    return pass(fmt::format("{} names {} instead of a vendors directory", origin, path), evidence);
  const bool exists = source.value(k::kExists, false);
  const std::string install =
      "install an OpenCL driver package, which writes its .icd there (e.g. sudo apt install "
      "nvidia-opencl-icd, intel-opencl-icd, mesa-opencl-icd or pocl-opencl-icd), or register an "
      "installed driver (see opencl_vendor_registration)";
  if (!exists) {
    if (origin != "default")
      return warn("GC-OPENCL-VENDORS-MISSING"_gc,
                  fmt::format("{}={} names a directory that does not exist: the loader finds no "
                              "ICD",
                              origin, path),
                  "unset " + origin + " or point it at a directory of .icd files", evidence);
    return warn("GC-OPENCL-VENDORS-MISSING"_gc,
                fmt::format("vendors directory {} does not exist: the loader finds no ICD", path),
                fmt::format("sudo mkdir -p {}; then {}", path, install), evidence);
  }
  if (in_dir == 0)
    return warn("GC-OPENCL-VENDORS-EMPTY"_gc,
                fmt::format("vendors directory {} holds no .icd file: the loader finds no ICD "
                            "there",
                            path),
                install, evidence);
  return pass(fmt::format("{} .icd file{} in {}", in_dir, in_dir == 1 ? "" : "s", path), evidence);
}

// ---- opencl_icd_loads ----

CheckResult check_opencl_icd_loads(const SystemView& view) {
  const Json& files = opencl_field(view, k::kIcdFiles);
  if (files.empty()) return not_applicable("no .icd file is registered (see opencl_vendors_dir)");
  CheckStatus worst = CheckStatus::kPass;
  std::vector<std::string> findings, fixes, evidence;
  for (const auto& f : files) {
    const std::string who = f.contains(k::kPath) ? text(f, k::kPath) : text(f, k::kSource);
    const std::string library = text(f, k::kLibrary);
    if (f.contains(k::kError) && library.empty()) {
      worst = worse(worst, CheckStatus::kFail);
      findings.push_back(fmt::format("{}: {}", who, text(f, k::kError)));
      // A FIFO, device or directory named *.icd (icd_inventory's "not a regular file"): no
      // library path can be written into it.
      if (text(f, k::kError).find("not a regular file") != std::string::npos)
        fixes.push_back(fmt::format(
            "remove it (an .icd must be a regular file naming a library): sudo rm -r {}", who));
      else
        fixes.push_back(
            fmt::format("write the library's path into {} or remove it: sudo rm {}", who, who));
      evidence.push_back(fmt::format("{}: {}", who, text(f, k::kError)));
      continue;
    }
    if (!f.value(k::kLoads, false)) {
      const std::string error = text(f, k::kError);
      worst = worse(worst, CheckStatus::kFail);
      findings.push_back(fmt::format("{} names {}, which does not load", who, library));
      evidence.push_back(fmt::format("{}: {} -> {}", who, library, error));
      if (error.find("wrong ELF class") != std::string::npos)
        fixes.push_back(
            fmt::format("{} names a library of the wrong architecture (32/64-bit): "
                        "point it at the 64-bit one",
                        who));
      else if (error.find("undefined symbol") != std::string::npos ||
               error.find("version `") != std::string::npos)
        fixes.push_back(
            fmt::format("{} does not match the installed driver or libraries: "
                        "reinstall the driver package that owns it",
                        library));
      else if (f.contains(k::kPath))
        fixes.push_back(
            fmt::format("install the driver that provides {}, or remove the stale "
                        "registration: sudo rm {}",
                        library, who));
      else
        fixes.push_back(fmt::format("install {} or drop it from {}", library, who));
      continue;
    }
    evidence.push_back(fmt::format("{}: {} -> {}", who, library, text(f, k::kResolvedPath)));
    if (!f.value(k::kIcdEntryPoints, false)) {
      worst = worse(worst, CheckStatus::kWarn);
      findings.push_back(
          fmt::format("{} loads but exports no ICD entry point "
                      "(clIcdGetPlatformIDsKHR): it is not an OpenCL driver",
                      library));
      fixes.push_back(
          fmt::format("make {} name the vendor's ICD library, not a loader or another "
                      "library",
                      who));
    }
  }
  if (worst == CheckStatus::kPass)
    return pass(fmt::format("every registered ICD library loads ({})", files.size()), evidence);
  CheckResult r = worst == CheckStatus::kFail
                      ? fail("GC-OPENCL-ICD-BROKEN"_gc, join(findings, "; "), join(fixes, "; "))
                      : warn("GC-OPENCL-ICD-NOT-ICD"_gc, join(findings, "; "), join(fixes, "; "));
  r.evidence = evidence;
  return r;
}

// ---- opencl_vendor_registration ----

CheckResult check_opencl_vendor_registration(const SystemView& view) {
  const Json& libs = opencl_field(view, k::kUnregisteredVendorLibraries);
  const Json loader = opencl_section(view).value(k::kLoader, Json::object());
  if (libs.empty())
    return not_applicable("no vendor OpenCL library (NVIDIA, AMD, Intel, Mesa, pocl) is installed");
  CheckStatus worst = CheckStatus::kPass;
  std::vector<std::string> findings, fixes, evidence, ok;
  for (const auto& lib : libs) {
    const std::string vendor = text(lib, k::kVendor);
    const std::string who = vendor_display_name(vendor) + "'s";
    const std::string path = text(lib, k::kPath);
    const std::string registered = text(lib, k::kRegistered);
    const std::string by = text(lib, k::kRegisteredBy);
    const std::string line = lib.contains(k::kIcdLine) ? text(lib, k::kIcdLine) : path;
    evidence.push_back(fmt::format("{} {}: registered {}{}", vendor, path, registered,
                                   by.empty() ? "" : " by " + by));
    if (registered == "icd") {
      ok.push_back(fmt::format("{} ({})", vendor, by));
      continue;
    }
    const std::string cmd = register_command(view, vendor, line);
    if (registered == "environment") {
      const bool filenames = by.starts_with("OCL_ICD_FILENAMES");
      if (filenames && is_ocl_icd(loader)) {
        // ocl-icd does not read OCL_ICD_FILENAMES: the library is not loaded at all.
        worst = worse(worst, CheckStatus::kFail);
        findings.push_back(fmt::format(
            "{} OpenCL library {} is registered only through OCL_ICD_FILENAMES, which the loaded "
            "{} ignores: OpenCL programs do not see it",
            who, path, loader_label(loader)));
      } else {
        worst = worse(worst, CheckStatus::kWarn);
        findings.push_back(fmt::format(
            "{} OpenCL library {} is registered only through {}: {}sudo, systemd services and "
            "programs using ocl-icd (which ignores OCL_ICD_FILENAMES) lose it",
            who, path, by,
            filenames ? "the Khronos loader honours it, but " : "this shell sees it, but "));
      }
      fixes.push_back(fmt::format("register it for every program (as root): {}", cmd));
      continue;
    }
    worst = worse(worst, CheckStatus::kFail);
    findings.push_back(
        fmt::format("{} OpenCL library {} is installed but registered by nothing: "
                    "OpenCL programs do not see it",
                    who, path));
    fixes.push_back(fmt::format("register it (as root): {}", cmd));
  }
  if (worst == CheckStatus::kPass)
    return pass("every installed vendor OpenCL library has an .icd file: " + join(ok, ", "),
                evidence);
  CheckResult r =
      worst == CheckStatus::kFail
          ? fail("GC-OPENCL-UNREGISTERED"_gc, join(findings, "; "), join(fixes, "; "))
          : warn("GC-OPENCL-ENV-REGISTERED"_gc, join(findings, "; "), join(fixes, "; "));
  r.evidence = evidence;
  return r;
}

// ---- opencl_enumeration ----

CheckResult check_opencl_enumeration(const SystemView& view) {
  const Json& s = opencl_section(view);
  const std::string status = text(s, k::kStatus);
  const std::string reason = text(s, k::kReason);
  if (status == "unavailable") return not_applicable("no OpenCL ICD loader (see opencl_loader)");
  std::vector<std::string> icds;
  std::size_t loadable = 0;
  for (const auto& f : array_at(s, k::kIcdFiles)) {
    icds.push_back(f.contains(k::kPath) ? text(f, k::kPath) : text(f, k::kLibrary));
    if (f.value(k::kLoads, false)) ++loadable;
  }
  if (status == "failed") {
    std::vector<std::string> evidence{"reason: " + reason};
    for (const auto& i : icds) evidence.push_back("ICD: " + i);
    const bool crashed =
        reason.find("signal") != std::string::npos || reason.find("timed out") != std::string::npos;
    const std::string finding = fmt::format(
        "OpenCL enumeration {}: {}", crashed ? "crashed or hung in a driver" : "failed", reason);
    // The parent probed each ICD alone after the failure: the ones that failed alone are named.
    const Json isolation = s.value(k::kIcdIsolation, Json::object());
    std::vector<std::string> culprit_fixes;
    for (const auto& e : array_at(isolation, k::kIcds)) {
      const std::string icd = text(e, k::kIcd);
      evidence.push_back(fmt::format("alone: {} ({}): {}, {}", icd, text(e, k::kLibrary),
                                     text(e, k::kOutcome), text(e, k::kWhat)));
      if (text(e, k::kOutcome) == "ok") continue;
      culprit_fixes.push_back(
          icd.ends_with(".icd")
              ? fmt::format("reinstall the driver {} names, or remove it: sudo rm {}", icd, icd)
              : fmt::format("reinstall {}, or drop it from OCL_ICD_FILENAMES / OCL_ICD_VENDORS",
                            icd));
    }
    if (!culprit_fixes.empty())
      return fail("GC-OPENCL-ENUM-FAILED"_gc, finding, join(culprit_fixes, "; "), evidence);
    return fail("GC-OPENCL-ENUM-FAILED"_gc, finding,
                fmt::format("find the ICD that breaks it, one at a time: for f in {}/*.icd; do "
                            "d=$(mktemp -d); cp \"$f\" \"$d\"; echo \"$f\"; OCL_ICD_VENDORS=$d "
                            "clinfo -l; done; then reinstall or remove that driver's .icd",
                            kVendorsDir),
                evidence);
  }
  const Json& platforms = array_at(s, k::kPlatforms);
  const Json& devices = array_at(s, k::kDevices);
  if (platforms.empty()) {
    std::vector<std::string> evidence{"reason: " + reason};
    for (const auto& i : icds) evidence.push_back("ICD: " + i);
    if (loadable > 0)
      return fail("GC-OPENCL-DRIVER-NO-HW"_gc,
                  fmt::format("{} ICD librar{} load{}, but the loader got 0 platforms: the "
                              "drivers found no hardware or failed to initialise",
                              loadable, loadable == 1 ? "y" : "ies", loadable == 1 ? "s" : ""),
                  "check each driver's own tool (nvidia-smi, rocminfo, clinfo with one .icd at a "
                  "time) and its device nodes (see gpu_node_access, container_gpu_devices)",
                  evidence);
    return warn("GC-OPENCL-NO-PLATFORM"_gc,
                "the loader found 0 OpenCL platforms: no ICD is registered or none loads",
                "register a driver (see opencl_vendors_dir, opencl_icd_loads, "
                "opencl_vendor_registration)",
                evidence);
  }
  std::vector<std::string> evidence;
  for (const auto& p : platforms)
    evidence.push_back(fmt::format("platform {}: {} ({} devices)", p.value(k::kIndex, -1),
                                   text(p, k::kName), array_at(p, k::kDevices).size()));
  return pass(
      fmt::format("{} platform{} and {} device{} enumerated", platforms.size(),
                  platforms.size() == 1 ? "" : "s", devices.size(), devices.size() == 1 ? "" : "s"),
      evidence);
}

// ---- opencl_platform_devices ----

CheckResult check_opencl_platform_devices(const SystemView& view) {
  const Json& platforms = opencl_field(view, k::kPlatforms);
  if (platforms.empty()) return not_applicable("no OpenCL platform (see opencl_enumeration)");
  std::vector<std::string> findings, fixes, evidence, idle;
  for (const auto& p : platforms) {
    const std::string name = text(p, k::kName);
    const std::string family = text(p, k::kFamily);
    const std::size_t n = array_at(p, k::kDevices).size();
    evidence.push_back(fmt::format("platform {} '{}' ({}): {} device{}{}", p.value(k::kIndex, -1),
                                   name, family, n, n == 1 ? "" : "s",
                                   p.contains(k::kError) ? ", " + text(p, k::kError) : ""));
    if (n > 0) continue;
    // Mesa's platforms drive AMD and Intel GPUs only: with none on the bus, an empty one is
    // what it should be (mesa-opencl-icd installed beside pocl, say), not a fault.
    if (family.starts_with("mesa") && !mesa_has_a_gpu_here(view)) {
      idle.push_back(
          fmt::format("platform '{}' has no devices: nothing for it to drive here (no "
                      "AMD or Intel GPU on the PCI bus)",
                      name));
      continue;
    }
    auto [why, fix] = no_device_advice(family);
    findings.push_back(fmt::format("platform '{}' has no devices{}: {}", name,
                                   p.contains(k::kError) ? " (" + text(p, k::kError) + ")" : "",
                                   why));
    fixes.push_back(fix);
  }
  if (findings.empty() && idle.empty())
    return pass(fmt::format("every platform ({}) has at least one device", platforms.size()),
                evidence);
  if (findings.empty()) return info(join(idle, "; "), evidence);
  findings.insert(findings.end(), idle.begin(), idle.end());
  return warn("GC-OPENCL-EMPTY-PLATFORM"_gc, join(findings, "; "), join(fixes, "; "), evidence);
}

// ---- opencl_gpu_devices ----

CheckResult check_opencl_gpu_devices(const SystemView& view) {
  const Json& devices = opencl_field(view, k::kDevices);
  if (devices.empty()) return not_applicable("no OpenCL device (see opencl_enumeration)");
  std::vector<std::string> gpus, others;
  for (const auto& d : devices) {
    const std::string label = fmt::format("{} {}", text(d, k::kDevice), text(d, k::kDeviceName));
    (device_is_gpu(d) ? gpus : others).push_back(label);
  }
  if (!gpus.empty()) return pass("OpenCL reaches a GPU: " + join(gpus, ", "), others);
  GpuExpectation expected = expected_gpu_vendors(view);
  std::vector<std::string> evidence = others;
  for (const auto& e : expected.evidence) evidence.push_back("GPU expected: " + e);
  std::string finding =
      "OpenCL works, but not on a GPU: only CPU implementations (" + join(others, ", ") + ")";
  if (expected.vendors.empty())
    return info(finding + "; no GPU driver is installed here", evidence);
  return warn("GC-OPENCL-NO-GPU"_gc,
              finding + fmt::format(", though this system is set up for {} GPUs",
                                    vendor_display_names(expected.vendors)),
              "install or register the GPU vendor's OpenCL driver (see opencl_vendor_registration "
              "and opencl_platform_devices; NVIDIA: sudo apt install nvidia-opencl-icd)",
              evidence);
}

// ---- opencl_duplicate_devices ----

CheckResult check_opencl_duplicate_devices(const SystemView& view) {
  const Json& devices = opencl_field(view, k::kDevices);
  const Json& platforms = opencl_field(view, k::kPlatforms);
  const Json& files = opencl_field(view, k::kIcdFiles);
  if (devices.empty() && files.empty()) return not_applicable("no OpenCL device and no .icd file");
  std::vector<std::string> icd_findings, seen, fixes, evidence;
  for (const auto& f : files) {
    if (!f.contains(k::kDuplicateOf)) continue;
    const std::string who = f.contains(k::kPath) ? text(f, k::kPath) : text(f, k::kSource);
    const std::string first = text(f, k::kDuplicateOf);
    const std::string library = text(f, k::kLibrary);
    icd_findings.push_back(fmt::format("{} names the same library as {}", who, first));
    evidence.push_back(fmt::format("{}: {} -> {}", who, library, text(f, k::kResolvedPath)));
    // Keep the registration that survives sudo and systemd: the .icd file.
    if (!first.starts_with('/'))
      fixes.push_back(
          fmt::format("drop {} from {} ({} registers it already)", library, first, who));
    else if (f.contains(k::kPath))
      fixes.push_back("remove the second registration: sudo rm " + who);
    else
      fixes.push_back(
          fmt::format("drop {} from {} ({} registers it already)", library, who, first));
  }
  for (const auto& p : platforms) {
    if (!p.contains(k::kDuplicateOf)) continue;
    seen.push_back(fmt::format("platform {} '{}' is platform {} again", p.value(k::kIndex, -1),
                               text(p, k::kName), p[k::kDuplicateOf].dump()));
  }
  for (const auto& d : devices) {
    if (!d.contains(k::kDuplicateOf)) continue;
    seen.push_back(fmt::format("{} ({}) is {} again", text(d, k::kDevice), text(d, k::kDeviceName),
                               text(d, k::kDuplicateOf)));
    evidence.push_back(fmt::format("{}: {}", text(d, k::kDevice), text(d, k::kStableId)));
  }
  if (seen.empty() && icd_findings.empty())
    return pass(fmt::format("no device listed twice ({} device{})", devices.size(),
                            devices.size() == 1 ? "" : "s"));
  if (seen.empty())
    return info(join(icd_findings, "; ") +
                    ", but the loader listed its platform once: no device appears twice here",
                evidence);
  if (fixes.empty())
    fixes.push_back(
        "one GPU is served by two drivers: remove one driver's .icd from /etc/OpenCL/vendors, "
        "or pick devices by stable id (opencl:<pci-bus-id>) rather than by index");
  std::vector<std::string> findings = icd_findings;
  findings.insert(findings.end(), seen.begin(), seen.end());
  return warn("GC-OPENCL-DUPLICATE"_gc,
              join(findings, "; ") +
                  ": programs that take every device use one device twice, and indices shift",
              join(fixes, "; "), evidence);
}

// ---- opencl_platform_family ----

CheckResult check_opencl_platform_family(const SystemView& view) {
  const Json& platforms = opencl_field(view, k::kPlatforms);
  if (platforms.empty()) return not_applicable("no OpenCL platform (see opencl_enumeration)");
  std::vector<std::string> labels, evidence, findings, fixes, idle;
  for (const auto& p : platforms) {
    const std::string label = family_label(p);
    labels.push_back(fmt::format("{} ({})", label, text(p, k::kName)));
    evidence.push_back(fmt::format("platform {}: name '{}', vendor '{}', version '{}', family {}",
                                   p.value(k::kIndex, -1), text(p, k::kName), text(p, k::kVendor),
                                   text(p, k::kVersion), text(p, k::kFamily)));
    if (label == "Mesa Clover") {
      // Clover with no GPU to drive lists nothing and harms nothing: worth knowing, no fault.
      if (!mesa_has_a_gpu_here(view)) {
        idle.push_back(
            "Mesa Clover is deprecated (removed in Mesa 25.2); it has no AMD GPU to drive here");
        continue;
      }
      findings.push_back(
          "Mesa Clover is deprecated (removed in Mesa 25.2), stops at OpenCL 1.1 and is slow");
      fixes.push_back(
          "use Mesa rusticl (mesa-opencl-icd from Mesa 23+ with RUSTICL_ENABLE=radeonsi or iris) "
          "or the vendor's driver; " +
          clover_icd_fix(view));
    } else if (label == "Intel Beignet") {
      findings.push_back("Beignet is unmaintained since 2018 and knows only Gen7-Gen9 GPUs");
      fixes.push_back(
          "switch to Intel's compute-runtime (NEO): sudo apt install intel-opencl-icd && sudo apt "
          "remove beignet-opencl-icd");
    }
  }
  std::string families = "OpenCL platforms: " + join(labels, "; ");
  if (!idle.empty()) families += "; " + join(idle, "; ");
  if (findings.empty()) return info(families, evidence);
  return warn("GC-OPENCL-OBSOLETE-DRIVER"_gc, families + "; " + join(findings, "; "),
              join(fixes, "; "), evidence);
}

}  // namespace gpucheck::doctor

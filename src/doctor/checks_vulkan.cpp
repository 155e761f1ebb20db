// The Vulkan checks: the loader (and the package that brings it), driver manifests whose
// library does not load or does not initialise, CPU-only Vulkan beside a GPU, render nodes a Mesa
// driver cannot open, and VK_DRIVER_FILES/VK_ICD_FILENAMES hiding a GPU's driver. All read the
// Vulkan probe's section, the PCI bus under /sys and the environment the view carries.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/framework_gpus.h"

#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

// The standard manifest directories the loader reads on a distribution's system.
constexpr std::string_view kStandardDirs[] = {"/etc/vulkan/icd.d", "/usr/local/share/vulkan/icd.d",
                                              "/usr/share/vulkan/icd.d"};

const Json& vulkan_section(const SystemView& view) {
  const Json& s = view.require_backend("vulkan");
  if (text(s, k::kStatus) == "not_built")
    throw NotObservable("gpucheck was built without Vulkan (" + text(s, k::kReason) + ")");
  if (!s.contains(k::kIcdFiles))
    throw NotObservable(fmt::format("the Vulkan probe {} before it listed the driver manifests: {}",
                                    text(s, k::kStatus), text(s, k::kReason)));
  return s;
}

std::string base_name(const std::string& path) {
  const auto slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// "nvidia", "amd", "intel" for a GPU vendor's driver, "cpu" for lavapipe and SwiftShader, ""
// otherwise; judged from the manifest's and the library's file names.
std::string manifest_vendor(const Json& m) {
  const std::string names =
      lower(base_name(text(m, k::kPath)) + " " + base_name(text(m, k::kLibraryPath)));
  auto has = [&](std::string_view s) { return names.find(s) != std::string::npos; };
  if (has("nvidia")) return "nvidia";
  if (has("radeon") || has("amd")) return "amd";
  if (has("intel")) return "intel";
  if (has("lvp") || has("lavapipe") || has("swiftshader")) return "cpu";
  return {};
}

// Mesa's GPU drivers open /dev/dri/renderD*; NVIDIA's proprietary one opens /dev/nvidia*.
bool is_mesa_gpu_driver(const Json& m) {
  const std::string lib = base_name(text(m, k::kLibraryPath));
  return lib.starts_with("libvulkan_") && manifest_vendor(m) != "cpu";
}

// The command that installs a package here, from /etc/os-release's ID and ID_LIKE.
std::string install_command(const SystemView& view, std::string_view debian,
                            std::string_view rhel) {
  std::string ids;
  if (auto os = view.read_file("/etc/os-release")) {
    std::istringstream lines(*os);
    for (std::string line; std::getline(lines, line);)
      if (line.starts_with("ID=") || line.starts_with("ID_LIKE=")) ids += " " + lower(line);
  }
  auto has = [&](std::string_view s) { return ids.find(s) != std::string::npos; };
  if (has("debian") || has("ubuntu")) return fmt::format("sudo apt install {}", debian);
  if (has("rhel") || has("fedora") || has("centos"))
    return fmt::format("sudo dnf install {}", rhel);
  return fmt::format(
      "install {} (Debian/Ubuntu: sudo apt install {}; RHEL/Fedora: sudo dnf "
      "install {})",
      debian, debian, rhel);
}

std::string manifest_label(const Json& m) {
  return fmt::format("{} ({})", text(m, k::kPath), text(m, k::kLibraryPath));
}

bool initialised(const Json& m) {
  const Json init = m.value(k::kInit, Json::object());
  return text(init, k::kResult).starts_with("VK_SUCCESS");
}

bool in_container(const SystemView& view) {
  const Json host = view.facts.value(k::kHost, Json::object());
  return text(host, k::kVirtualization) == "container";
}

// What NVIDIA's Vulkan driver needs that this system lacks, and the fix for each.
std::vector<Finding> nvidia_vulkan_needs(const SystemView& view, std::vector<std::string>* ev) {
  std::vector<Finding> needs;
  const bool container = in_container(view);
  if (!view.exists("/dev/nvidia-modeset")) {
    ev->push_back("/dev/nvidia-modeset is missing");
    needs.push_back(
        {CheckStatus::kFail, "GC-VULKAN-ICD-INIT-FAILED"_gc, "/dev/nvidia-modeset is missing",
         container ? "pass the node into the container (docker run --device /dev/nvidia-modeset, "
                     "or NVIDIA_DRIVER_CAPABILITIES=all so the NVIDIA container toolkit mounts it)"
                   : "load the module that creates it: sudo modprobe nvidia-modeset"});
  }
  if (auto caps = view.env_value("NVIDIA_DRIVER_CAPABILITIES")) {
    ev->push_back("NVIDIA_DRIVER_CAPABILITIES=" + *caps);
    if (caps->find("graphics") == std::string::npos && caps->find("all") == std::string::npos)
      needs.push_back({CheckStatus::kFail, "GC-VULKAN-ICD-INIT-FAILED"_gc,
                       "NVIDIA_DRIVER_CAPABILITIES=" + *caps + " has no graphics capability",
                       "start the container with NVIDIA_DRIVER_CAPABILITIES=all (or add "
                       "graphics: the Vulkan driver is part of NVIDIA's graphics libraries)"});
  }
  return needs;
}

}  // namespace

// ---- vulkan_loader ----

CheckResult check_vulkan_loader(const SystemView& view) {
  const Json& s = vulkan_section(view);
  const Json loader = s.value(k::kLoader, Json::object());
  if (text(s, k::kStatus) != "unavailable")
    return pass(fmt::format("Vulkan loader {} from {}", text(loader, k::kInstanceVersion),
                            text(loader, k::kPath)),
                {"real path: " + text(loader, k::kRealPath)});
  std::vector<std::string> evidence{"reason: " + text(s, k::kReason)};
  std::vector<std::string> drivers;
  for (const auto& m : array_at(s, k::kIcdFiles)) {
    evidence.push_back("manifest: " + manifest_label(m));
    const std::string v = manifest_vendor(m);
    if (v == "nvidia" || v == "amd" || v == "intel") drivers.push_back(vendor_display_name(v));
  }
  const std::string fix = install_command(view, "libvulkan1", "vulkan-loader");
  std::vector<PciGpu> gpus;
  if (view.is_dir("/sys/bus/pci/devices")) gpus = pci_gpus(view);
  if (!gpus.empty()) evidence.push_back("GPUs on the PCI bus: " + gpu_list(gpus));
  if (array_at(s, k::kIcdFiles).empty())
    return info(fmt::format("Vulkan is not installed: no loader (libvulkan.so.1) and no driver "
                            "manifest; to use Vulkan: {}",
                            fix),
                evidence);
  std::sort(drivers.begin(), drivers.end());
  drivers.erase(std::unique(drivers.begin(), drivers.end()), drivers.end());
  return fail("GC-VULKAN-NO-LOADER"_gc,
              fmt::format("no Vulkan loader (libvulkan.so.1), though {} driver manifest{} {} "
                          "installed{}{}: no Vulkan program can reach {}",
                          array_at(s, k::kIcdFiles).size(),
                          array_at(s, k::kIcdFiles).size() == 1 ? "" : "s",
                          array_at(s, k::kIcdFiles).size() == 1 ? "is" : "are",
                          drivers.empty() ? "" : " (" + join(drivers, ", ") + ")",
                          gpus.empty() ? "" : " for the " + gpu_list(gpus),
                          gpus.empty() ? "the drivers" : "the GPU"),
              fix, evidence);
}

// ---- vulkan_icd_loads ----

CheckResult check_vulkan_icd_loads(const SystemView& view) {
  const Json& s = vulkan_section(view);
  const Json& files = array_at(s, k::kIcdFiles);
  if (files.empty()) return not_applicable("no Vulkan driver manifest in the loader's search path");
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  for (const auto& m : files) {
    const std::string path = text(m, k::kPath);
    // An error without "loads" is the manifest's own (unreadable, no JSON, a field missing).
    if (m.contains(k::kError) && !m.contains(k::kLoads)) {
      evidence.push_back(fmt::format("{}: {}", path, text(m, k::kError)));
      findings.push_back({CheckStatus::kWarn, "GC-VULKAN-ICD-INVALID"_gc,
                          fmt::format("{} is no usable driver manifest ({}): the loader skips it",
                                      path, text(m, k::kError)),
                          fmt::format("fix or remove {}", path)});
      continue;
    }
    if (m.value(k::kLoads, true)) {
      evidence.push_back(fmt::format("{} -> {}: loads", path, text(m, k::kResolvedPath)));
      const Json& entry = array_at(m, k::kEntryPoints);
      if (m.contains(k::kEntryPoints) && entry.empty())
        findings.push_back(
            {CheckStatus::kWarn, "GC-VULKAN-ICD-INVALID"_gc,
             fmt::format("{} names {}, which loads but exports no Vulkan driver entry point", path,
                         text(m, k::kLibrary)),
             fmt::format("remove {}: its library is no Vulkan driver", path)});
      continue;
    }
    evidence.push_back(fmt::format("{} -> {}: {}", path, text(m, k::kLibrary), text(m, k::kError)));
    std::string fix;
    if (auto owner = dpkg_owner(view, path))
      fix = fmt::format(
          "{} belongs to the package {}: reinstall it (sudo apt install --reinstall {}) so its "
          "library is there, or remove the package",
          path, *owner, *owner);
    else if (manifest_vendor(m) == "nvidia")
      fix = fmt::format(
          "install the NVIDIA driver's GL/Vulkan libraries of the running driver's version "
          "(they provide {}), or remove the stale manifest: sudo rm {}",
          text(m, k::kLibraryPath), path);
    else
      fix = fmt::format(
          "install the driver that provides {}, or remove the stale manifest: sudo "
          "rm {}",
          text(m, k::kLibraryPath), path);
    findings.push_back({CheckStatus::kFail, "GC-VULKAN-ICD-BROKEN"_gc,
                        fmt::format("{} names {}, which does not load ({})", path,
                                    text(m, k::kLibrary), text(m, k::kError)),
                        fix});
  }
  return combine(findings, evidence,
                 fmt::format("every Vulkan driver manifest's library loads ({})", files.size()));
}

// ---- vulkan_icd_init ----

CheckResult check_vulkan_icd_init(const SystemView& view) {
  const Json& s = vulkan_section(view);
  std::vector<Finding> findings;
  std::vector<std::string> evidence;
  int loaded = 0;
  for (const auto& m : array_at(s, k::kIcdFiles)) {
    if (!m.value(k::kLoads, false) || !m.contains(k::kInit)) continue;
    ++loaded;
    const Json& init = m[k::kInit];
    evidence.push_back(fmt::format("{}: {} returned {}", text(m, k::kLibrary), text(init, k::kStep),
                                   text(init, k::kResult)));
    if (initialised(m)) continue;
    const std::string what =
        fmt::format("{} loads but refuses to initialise: {} returned {}", text(m, k::kLibrary),
                    text(init, k::kStep), text(init, k::kResult));
    if (manifest_vendor(m) == "nvidia" &&
        text(init, k::kStep) == "vk_icdGetInstanceProcAddr(vkCreateInstance)" &&
        !linker_search(view).find(view, "libGLdispatch.so.0")) {
      // Seen on an H200 in a container (driver 580): libGLX_nvidia.so.0 loads, but without
      // libglvnd's dispatch library its vk_icdGetInstanceProcAddr hands out no vkCreateInstance
      // ("Found no drivers"); with libglvnd0 unpacked beside it, Vulkan ran, with no
      // /dev/nvidia-modeset there.
      evidence.push_back("libGLdispatch.so.0 is on no linker search path");
      findings.push_back({CheckStatus::kFail, "GC-VULKAN-ICD-INIT-FAILED"_gc,
                          what + ": NVIDIA's Vulkan driver needs libglvnd's libGLdispatch.so.0, "
                                 "which the linker does not find",
                          install_command(view, "libglvnd0", "libglvnd")});
      continue;
    }
    if (manifest_vendor(m) == "nvidia") {
      auto needs = nvidia_vulkan_needs(view, &evidence);
      if (!needs.empty()) {
        for (auto& n : needs) n.text = what + ": NVIDIA's Vulkan driver needs it (" + n.text + ")";
        findings.insert(findings.end(), needs.begin(), needs.end());
        continue;
      }
    }
    findings.push_back({CheckStatus::kFail, "GC-VULKAN-ICD-INIT-FAILED"_gc, what,
                        "run VK_LOADER_DEBUG=driver,error vulkaninfo --summary to see the "
                        "driver's own reason"});
  }
  if (loaded == 0) return not_applicable("no Vulkan driver library loads here");
  return combine(findings, evidence,
                 fmt::format("every Vulkan driver that loads initialises ({})", loaded));
}

// ---- vulkan_gpu_devices ----

CheckResult check_vulkan_gpu_devices(const SystemView& view) {
  const Json& s = vulkan_section(view);
  if (text(s, k::kStatus) != "available")
    return not_applicable("no Vulkan enumeration (" + text(s, k::kReason) + ")");
  const auto gpus = pci_gpus(view);
  if (gpus.empty()) return not_applicable("no NVIDIA, AMD or Intel GPU on the PCI bus");
  static const std::map<std::uint32_t, std::string> kIds{
      {0x10de, "nvidia"}, {0x1002, "amd"}, {0x8086, "intel"}};
  std::set<std::string> reached;
  std::vector<std::string> evidence{"GPUs on the PCI bus: " + gpu_list(gpus)};
  for (const auto& d : array_at(s, k::kDevices)) {
    const Json p = d.value(k::kProperties, Json::object());
    const std::string type = text(p, k::kDeviceType);
    evidence.push_back(
        fmt::format("{}: {} ({})", text(d, k::kDevice), text(d, k::kDeviceName), type));
    auto it = kIds.find(p.value(k::kVendorId, 0u));
    if (it != kIds.end() && type.find("_GPU") != std::string::npos) reached.insert(it->second);
  }
  std::vector<PciGpu> missing;
  for (const auto& g : gpus)
    if (!reached.contains(g.vendor)) missing.push_back(g);
  if (missing.empty()) return pass(fmt::format("Vulkan reaches the {}", gpu_list(gpus)), evidence);
  std::vector<std::string> fixes;
  for (const auto& g : missing) {
    std::string f = g.vendor == "nvidia"
                        ? "NVIDIA: install the driver's Vulkan ICD (nvidia_icd.json and "
                          "libGLX_nvidia.so.0 of the running driver's version); if it is "
                          "there, see vulkan_icd_init"
                        : vendor_display_name(g.vendor) + ": " +
                              install_command(view, "mesa-vulkan-drivers", "mesa-vulkan-drivers") +
                              " and see vulkan_render_node_access";
    if (std::find(fixes.begin(), fixes.end(), f) == fixes.end()) fixes.push_back(f);
  }
  const bool cpu_only = reached.empty() && !array_at(s, k::kDevices).empty();
  return warn("GC-VULKAN-ONLY-CPU"_gc,
              fmt::format("Vulkan reaches {} but not the {}",
                          cpu_only ? "only a CPU implementation (lavapipe)"
                                   : (reached.empty() ? "no device" : "some GPUs"),
                          gpu_list(missing)),
              join(fixes, "; "), evidence);
}

// ---- vulkan_render_node_access ----

CheckResult check_vulkan_render_node_access(const SystemView& view) {
  const Json& s = vulkan_section(view);
  std::vector<std::string> mesa;
  for (const auto& m : array_at(s, k::kIcdFiles))
    if (is_mesa_gpu_driver(m)) mesa.push_back(base_name(text(m, k::kPath)));
  if (mesa.empty()) return not_applicable("no Mesa GPU driver manifest (radeon, intel, nouveau)");
  const auto nodes = device_nodes(view, "/dev/dri/renderD*");
  if (nodes.empty()) return not_applicable("no /dev/dri/renderD* node (no AMD or Intel GPU here)");
  const auto groups = read_groups(view);
  const auto user = user_name(view, view.identity.uid);
  std::vector<std::string> evidence{"Mesa drivers: " + join(mesa, ", ")};
  std::vector<std::string> denied;
  std::set<std::string> need;
  for (const auto& n : nodes) {
    auto st = view.stat(n);
    if (!st) continue;
    evidence.push_back(fmt::format("{} {} gid {}", n, mode_text(st->mode), st->gid));
    if (may_read_write(*st, view.identity)) continue;
    denied.push_back(n);
    std::string group = std::to_string(st->gid);
    for (const auto& g : groups)
      if (g.gid == st->gid) group = g.name;
    need.insert(group);
  }
  if (denied.empty())
    return pass(fmt::format("the Mesa Vulkan drivers may open {}", join(nodes, ", ")), evidence);
  const std::vector<std::string> need_list(need.begin(), need.end());
  return fail("GC-VULKAN-RENDER-NODE-DENIED"_gc,
              fmt::format("uid {} cannot open {}: the Mesa Vulkan drivers ({}) see no GPU and "
                          "only lavapipe remains",
                          view.identity.uid, join(denied, ", "), join(mesa, ", ")),
              fmt::format("sudo usermod -aG {} {}, then log out and in again (in a container: "
                          "--group-add {})",
                          join(need_list, ","), user.value_or("$USER"), need_list.front()),
              evidence);
}

// ---- vulkan_env_driver_files ----

CheckResult check_vulkan_env_driver_files(const SystemView& view) {
  std::string var;
  for (const char* name : {"VK_DRIVER_FILES", "VK_ICD_FILENAMES"})
    if (view.env_set(name)) {
      var = name;
      break;
    }
  if (var.empty())
    return pass(
        "neither VK_DRIVER_FILES nor VK_ICD_FILENAMES is set: the loader reads every "
        "standard manifest directory");
  const std::string value = *view.env_value(var);
  std::vector<std::string> evidence{var + "=" + value};
  if (var == "VK_DRIVER_FILES" && view.env_set("VK_ICD_FILENAMES"))
    evidence.push_back("VK_ICD_FILENAMES is set too and ignored (VK_DRIVER_FILES wins)");
  // What the variable names, as given and by file name (a copy elsewhere counts too).
  std::set<std::string> named;
  std::stringstream ss(value);
  for (std::string item; std::getline(ss, item, ':');)
    if (!item.empty()) {
      named.insert(item);
      named.insert(base_name(item));
      if (view.is_dir(item))
        for (const auto& f : view.list_dir(item)) named.insert(f);
    }
  // A hidden driver matters where its vendor's GPU is on the bus (RADV hidden on a machine
  // without an AMD GPU costs nothing); without a readable bus every GPU driver counts.
  std::set<std::string> on_bus{"nvidia", "amd", "intel"};
  if (view.is_dir("/sys/bus/pci/devices")) {
    on_bus.clear();
    for (const auto& g : pci_gpus(view)) on_bus.insert(g.vendor);
  }
  std::vector<std::string> hidden;
  for (auto dir : kStandardDirs)
    for (const auto& f : view.list_dir(dir)) {
      const std::string path = std::string(dir) + "/" + f;
      if (!f.ends_with(".json") || named.contains(path) || named.contains(f)) continue;
      if (on_bus.contains(manifest_vendor(Json{{k::kPath, path}}))) hidden.push_back(path);
    }
  if (hidden.empty())
    return pass(fmt::format("{} is set but hides no driver of a GPU on the bus", var), evidence);
  for (const auto& h : hidden) evidence.push_back("hidden: " + h);
  return warn("GC-VULKAN-DRIVER-HIDDEN"_gc,
              fmt::format("{} limits the loader to {}, hiding the GPU driver{} {}", var, value,
                          hidden.size() == 1 ? "" : "s", join(hidden, ", ")),
              fmt::format("unset {} (or add {} to it)", var, join(hidden, ":")), evidence);
}

}  // namespace gpucheck::doctor

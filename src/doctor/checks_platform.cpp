// Where the GPU comes from: device nodes and driver libraries mounted into a container, WSL2's
// GPU passthrough, and whether this user may open AMD/Intel device nodes (judged from stat
// results against an injectable uid/gids: root passes every access(), so access() tells nothing).
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::string virtualization(const SystemView& view) {
  const Json& host = view.require_facts(k::kHost);
  auto it = host.find(k::kVirtualization);
  if (it == host.end() || !it->is_string())
    throw NotObservable("the probe's host facts do not say whether this is a container or WSL");
  return it->get<std::string>();
}

std::string group_name(const std::vector<GroupEntry>& groups, std::uint32_t gid) {
  for (const auto& g : groups)
    if (g.gid == gid) return g.name;
  return std::to_string(gid);
}

}  // namespace

// ---- container_gpu_devices ----

CheckResult check_container_gpu_devices(const SystemView& view) {
  const std::string virt = virtualization(view);
  if (virt != "container") return not_applicable("not in a container (" + virt + ")");
  const std::string runtime =
      text(view.facts.value(k::kHost, Json::object()), k::kContainerRuntime);
  const std::string where = runtime.empty() ? "this container" : "this " + runtime + " container";
  GpuExpectation expected = expected_gpu_vendors(view);
  std::vector<std::string> evidence;
  for (const auto& e : expected.evidence) evidence.push_back("GPU expected: " + e);
  std::vector<std::string> findings, fixes;

  if (expected.vendors.contains("nvidia")) {
    const auto nodes = device_nodes(view, "/dev/nvidia[0-9]*");
    const bool ctl = view.exists("/dev/nvidiactl");
    const auto libs = libcuda_locations(view);
    for (const auto& n : nodes) evidence.push_back("node: " + n);
    if (nodes.empty() || !ctl) {
      findings.push_back(
          fmt::format("{} expects an NVIDIA GPU, but /dev/nvidia0 and /dev/nvidiactl "
                      "are not mounted in",
                      where));
      fixes.push_back(
          "start the container with the GPUs: docker run --gpus all ... (needs "
          "nvidia-container-toolkit on the host; Kubernetes: request nvidia.com/gpu)");
    } else if (libs.empty()) {
      findings.push_back(
          fmt::format("{} has the NVIDIA device nodes but not the driver library "
                      "libcuda.so.1",
                      where));
      fixes.push_back(
          "let the NVIDIA runtime mount the driver: docker run --gpus all with "
          "NVIDIA_DRIVER_CAPABILITIES=compute,utility (not --device /dev/nvidia0 alone)");
    }
  }
  if (expected.vendors.contains("amd")) {
    const bool kfd = view.exists("/dev/kfd");
    const auto render = device_nodes(view, "/dev/dri/renderD*");
    if (!kfd || render.empty()) {
      findings.push_back(fmt::format("{} expects an AMD GPU, but {} not mounted in", where,
                                     !kfd && render.empty() ? "/dev/kfd and /dev/dri are"
                                     : !kfd                 ? "/dev/kfd is"
                                                            : "/dev/dri/renderD* is"));
      fixes.push_back(
          "docker run --device=/dev/kfd --device=/dev/dri --group-add video --group-add render "
          "...");
    }
  }
  if (expected.vendors.contains("intel") && device_nodes(view, "/dev/dri/renderD*").empty()) {
    findings.push_back(
        fmt::format("{} expects an Intel GPU, but /dev/dri/renderD* is not mounted in", where));
    fixes.push_back("docker run --device=/dev/dri --group-add render ...");
  }
  if (!findings.empty())
    return fail("GC-CONTAINER-NO-GPU"_gc, join(findings, "; "), join(fixes, "; "), evidence);
  if (!expected.vendors.empty())
    return pass(fmt::format("{}: the {} device nodes and driver libraries are mounted in", where,
                            vendor_display_names(expected.vendors)),
                evidence);
  if (view.exists("/usr/local/cuda"))
    return info(fmt::format("{} has a CUDA toolkit (/usr/local/cuda) but no GPU driver or device "
                            "node: CUDA code builds here but runs on no GPU (start it with --gpus "
                            "all to use one)",
                            where),
                {"/usr/local/cuda"});
  return pass(where +
              " expects no GPU: no GPU driver library, vendor OpenCL library, ROCm or "
              "NVIDIA_VISIBLE_DEVICES");
}

// ---- wsl_gpu ----

CheckResult check_wsl_gpu(const SystemView& view) {
  const std::string virt = virtualization(view);
  if (virt != "wsl") return not_applicable("not WSL (" + virt + ")");
  std::vector<std::string> evidence;
  const bool dxg = view.exists("/dev/dxg");
  evidence.push_back(std::string("/dev/dxg: ") + (dxg ? "present" : "missing"));
  if (!dxg)
    return fail("GC-WSL-NO-DXG"_gc,
                "no /dev/dxg: the Windows GPU driver is not passed into WSL (WSL 1, or an old "
                "Windows or WSL)",
                "in PowerShell: wsl --update; wsl --set-version <distro> 2; install the current "
                "Windows GPU driver; then wsl --shutdown",
                evidence);
  const std::string lib_dir = "/usr/lib/wsl/lib";
  const auto libs = view.list_dir(lib_dir);
  evidence.push_back(lib_dir + ": " + (libs.empty() ? "missing or empty" : join(libs, ", ")));
  const bool dxcore = std::find(libs.begin(), libs.end(), "libdxcore.so") != libs.end();
  if (libs.empty() || !dxcore)
    return fail("GC-WSL-NO-LIBS"_gc,
                "the Windows driver libraries are not mounted at /usr/lib/wsl/lib",
                "restart WSL (wsl --shutdown in PowerShell) and check that /etc/wsl.conf does not "
                "disable [automount]",
                evidence);
  // A Linux NVIDIA driver installed inside the distro shadows the Windows driver's libcuda.
  std::vector<std::string> shadows;
  for (const char* p : {"/usr/lib/x86_64-linux-gnu/libcuda.so.1", "/usr/lib64/libcuda.so.1"}) {
    if (!view.exists(p)) continue;
    auto target = view.read_link(p);
    if (target && target->starts_with(lib_dir)) continue;
    shadows.emplace_back(p);
    evidence.push_back(fmt::format("{} -> {}", p, target.value_or("(a file)")));
  }
  if (!shadows.empty())
    return warn("GC-WSL-LINUX-DRIVER"_gc,
                fmt::format("a Linux NVIDIA driver library ({}) is installed inside WSL: it "
                            "shadows the Windows driver's {}/libcuda.so.1",
                            join(shadows, ", "), lib_dir),
                "remove the Linux driver from the distro (sudo apt remove --purge "
                "'libnvidia-compute-*' 'nvidia-driver-*'); install only a CUDA toolkit package "
                "(cuda-toolkit-12-x, never 'cuda' or 'cuda-drivers')",
                evidence);
  bool on_path = false;
  for (const auto& conf : view.glob("/etc/ld.so.conf.d/*.conf")) {
    auto t = view.read_file(conf);
    if (t && t->find(lib_dir) != std::string::npos) {
      on_path = true;
      evidence.push_back(conf + " names " + lib_dir);
    }
  }
  if (auto ld = view.env_value("LD_LIBRARY_PATH"); ld && ld->find(lib_dir) != std::string::npos)
    on_path = true;
  if (!on_path)
    return warn(
        "GC-WSL-NO-LIBS"_gc,
        lib_dir + " is not on the dynamic linker's path: programs do not find libcuda.so.1",
        fmt::format("echo {} | sudo tee /etc/ld.so.conf.d/ld.wsl.conf && sudo ldconfig", lib_dir),
        evidence);
  return pass("WSL2 GPU passthrough: /dev/dxg and the Windows driver libraries in " + lib_dir,
              evidence);
}

// ---- gpu_node_access ----

CheckResult check_gpu_node_access(const SystemView& view) {
  std::vector<std::string> nodes;
  if (view.exists("/dev/kfd")) nodes.emplace_back("/dev/kfd");
  for (const auto& n : device_nodes(view, "/dev/dri/renderD*")) nodes.push_back(n);
  if (nodes.empty())
    return not_applicable(
        "no /dev/kfd or /dev/dri/renderD* node (no AMD or Intel GPU driver, or "
        "not mounted into a container)");
  const Identity& who = view.identity;
  const auto groups = read_groups(view);
  const auto user = user_name(view, who.uid);
  std::vector<std::string> gid_names;
  for (auto g : who.gids) gid_names.push_back(group_name(groups, g));
  const std::string me = fmt::format("uid {} ({}groups {})", who.uid,
                                     user ? *user + ", " : std::string(), join(gid_names, ","));
  std::vector<std::string> evidence{"identity: " + me};
  std::vector<std::string> denied, need_groups;
  bool listed_but_not_active = false;
  for (const auto& n : nodes) {
    auto st = view.stat(n);
    if (!st) {
      evidence.push_back(n + ": cannot stat");
      continue;
    }
    const std::string group = group_name(groups, st->gid);
    evidence.push_back(
        fmt::format("{} {} uid {} group {}", n, mode_text(st->mode), st->uid, group));
    if (may_read_write(*st, who)) continue;
    denied.push_back(fmt::format("{} ({} {})", n, mode_text(st->mode), group));
    if (std::find(need_groups.begin(), need_groups.end(), group) == need_groups.end())
      need_groups.push_back(group);
    for (const auto& g : groups)
      if (g.gid == st->gid && user &&
          std::find(g.members.begin(), g.members.end(), *user) != g.members.end())
        listed_but_not_active = true;
  }
  if (denied.empty())
    return pass(fmt::format("{} may open {}", who.uid == 0 ? "root" : me, join(nodes, ", ")),
                evidence);
  std::string fix =
      listed_but_not_active
          ? fmt::format(
                "/etc/group already lists {} in {}, but this session started before: log "
                "out and in again (or run newgrp {})",
                user.value_or("you"), join(need_groups, ","), need_groups.front())
          : fmt::format("sudo usermod -aG {} {}, then log out and in again", join(need_groups, ","),
                        user.value_or("$USER"));
  return fail("GC-GPU-NODE-DENIED"_gc,
              fmt::format("{} cannot open {}: ROCm, OpenCL and Vulkan drivers see no GPU", me,
                          join(denied, ", ")),
              fix, evidence);
}

}  // namespace gpucheck::doctor

// The kernel's side of an NVIDIA GPU, read from files under the root: the GPUs and NVSwitches on
// the PCI bus (sysfs), nouveau and the nvidia module (/proc/modules), the /dev/nvidia* nodes and
// whether this user may open them, Xid errors in the kernel log, and Fabric Manager.
#include "doctor/check_defs.h"
#include "doctor/check_util.h"
#include "doctor/checks.h"
#include "doctor/cuda_facts.h"
#include "doctor/nvidia_gpu_ids.h"
#include "host/kernel_log.h"

#include "core/json_keys.h"
#include "core/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdint>
#include <map>
#include <set>
#include <sstream>

namespace gpucheck::doctor {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::vector<std::string> gpu_evidence(const std::vector<NvidiaPciDevice>& gpus,
                                      const SystemView& view) {
  std::vector<std::string> out;
  for (const auto& g : gpus) {
    auto drv = view.read_link("/sys/bus/pci/devices/" + g.address + "/driver");
    const std::string bound = drv ? drv->substr(drv->rfind('/') + 1) : std::string("none");
    out.push_back(fmt::format("NVIDIA GPU {} (PCI class {:06x}), kernel driver bound: {}",
                              g.address, g.pci_class, bound));
  }
  return out;
}

// Xids that mean the hardware or its memory failed (NVIDIA's Xid catalogue), and those that are
// usually a program's own fault (an illegal address, a killed context).
const std::set<int> kHardwareXids{48, 61, 62, 63, 64, 74, 79, 92, 94, 95, 119, 120, 121, 140};
const std::set<int> kProgramXids{13, 31, 43, 45, 68, 69};

// The host-side repair for containers that lose their GPUs after systemctl daemon-reload: the
// links runc needs to find the nodes when systemd re-applies a container's device rules
// (NVIDIA Container Toolkit troubleshooting: "Containers losing access to GPUs").
constexpr std::string_view kDevCharFix =
    "on the host: sudo nvidia-ctk system create-dev-char-symlinks --create-all (and keep them: "
    "a udev rule ACTION==\"add\", DEVPATH==\"/bus/pci/drivers/nvidia\", RUN+=\"/usr/bin/"
    "nvidia-ctk system create-dev-char-symlinks --create-all\" in "
    "/lib/udev/rules.d/71-nvidia-dev-char.rules)";

std::string errno_name(int e) {
  switch (e) {
    case EPERM:
      return "EPERM (Operation not permitted)";
    case EACCES:
      return "EACCES (Permission denied)";
    case ENXIO:
      return "ENXIO (No such device or address)";
    case ENOENT:
      return "ENOENT (No such file or directory)";
    default:
      return fmt::format("errno {}", e);
  }
}

bool container_of(const SystemView& view) {
  return text(view.facts.value(k::kHost, Json::object()), k::kVirtualization) == "container";
}

// Where the NVIDIA Container Toolkit is installed on a host whose numbered /dev/nvidia* nodes
// have no /dev/char/195:<minor> link: the evidence (empty when the links are there, the
// toolkit is absent, or /dev/char is not kept at all).
std::vector<std::string> dev_char_links_missing(const SystemView& view,
                                                const std::vector<std::string>& numbered) {
  std::vector<std::string> toolkit;
  for (const char* p : {"/usr/bin/nvidia-ctk", "/usr/bin/nvidia-container-runtime",
                        "/etc/nvidia-container-runtime/config.toml"})
    if (view.exists(p)) toolkit.emplace_back(p);
  if (toolkit.empty() || !view.is_dir("/dev/char") || numbered.empty()) return {};
  std::vector<std::string> missing;
  for (const auto& n : numbered) {
    const std::string minor = n.substr(std::string_view("/dev/nvidia").size());
    if (minor.empty() || minor.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string link = "/dev/char/195:" + minor;
    if (!view.exists(link) && !view.read_link(link)) missing.push_back(link + " (" + n + ")");
  }
  if (!view.exists("/dev/char/195:255") && !view.read_link("/dev/char/195:255"))
    missing.emplace_back("/dev/char/195:255 (/dev/nvidiactl)");
  if (missing.empty()) return {};
  std::vector<std::string> evidence{"NVIDIA Container Toolkit: " + join(toolkit, ", ")};
  evidence.push_back("no link " + join(missing, ", "));
  return evidence;
}

// A Blackwell GPU under the proprietary module, and a BAR1 left at its small legacy size while
// the card offers more (Resizable BAR or Above 4G Decoding off): both leave nvidia-smi with "No
// devices were found" (NVIDIA/open-gpu-kernel-modules #862, #872) or the GPU slower to reach.
std::vector<Finding> module_findings(const SystemView& view,
                                     const std::vector<NvidiaPciDevice>& gpus,
                                     std::vector<std::string>& evidence) {
  std::vector<Finding> out;
  const auto flavor = kernel_module_flavor(view);
  if (flavor) evidence.push_back("kernel module flavour: " + *flavor);
  const Json* cuda = view.backend("cuda");
  const bool cuda_sees_none = cuda == nullptr || text(*cuda, k::kStatus) != "available" ||
                              array_at(*cuda, "devices").empty();
  for (const auto& g : gpus) {
    const auto blackwell = blackwell_name(g.device_id);
    const std::string who =
        fmt::format("{} ({}, 10de:{:04x})", blackwell ? std::string(*blackwell) : "the GPU",
                    g.address, g.device_id);
    if (blackwell && flavor == "proprietary")
      out.push_back(
          {CheckStatus::kFail, "GC-DRIVER-BLACKWELL-PROPRIETARY"_gc,
           who + " is a Blackwell GPU, which only NVIDIA's open kernel module drives, but the "
                 "proprietary module is loaded: CUDA and nvidia-smi find no device",
           "install the open flavour of the same driver branch and reboot: sudo apt install "
           "nvidia-open (NVIDIA's repository), nvidia-driver-<branch>-open (Ubuntu) or "
           "nvidia-open-kernel-dkms (Debian)"});
    const auto bar = read_bar1(view, g.address);
    if (!bar) continue;
    evidence.push_back(fmt::format(
        "{} BAR1 {} MiB{}", g.address, bar->bytes >> 20,
        bar->largest_offered == 0
            ? std::string()
            : fmt::format(", offers up to {} MiB (resource1_resize)", bar->largest_offered >> 20)));
    constexpr std::uint64_t kLegacyBar = std::uint64_t{256} << 20;
    if (bar->bytes > kLegacyBar || bar->largest_offered <= bar->bytes) continue;
    const bool fatal = blackwell && cuda_sees_none;
    out.push_back(
        {fatal ? CheckStatus::kFail : CheckStatus::kWarn, "GC-PCI-BAR1-SMALL"_gc,
         fmt::format("{} has a {} MiB BAR1 though it offers {} MiB: Resizable BAR or Above 4G "
                     "Decoding is off in the firmware{}",
                     who, bar->bytes >> 20, bar->largest_offered >> 20,
                     fatal ? ", and this Blackwell GPU then fails to initialise (RmInitAdapter "
                             "failed; \"No devices were found\")"
                           : ", so the CPU reaches GPU memory through a small window"),
         "in the firmware (BIOS/UEFI) setup enable Above 4G Decoding and Resizable BAR (turn "
         "CSM off if it asks), reboot; the driver resizes BAR1 itself with options nvidia "
         "NVreg_EnableResizableBar=1 in /etc/modprobe.d"});
  }
  return out;
}

}  // namespace

// ---- nouveau_module ----

CheckResult check_nouveau_module(const SystemView& view) {
  const auto gpus = nvidia_pci_gpus(view);
  if (gpus.empty()) return not_applicable("no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices)");
  const auto modules = loaded_modules(view);
  std::vector<std::string> evidence = gpu_evidence(gpus, view);
  if (!modules.contains("nouveau")) return pass("nouveau is not loaded (/proc/modules)", evidence);
  evidence.emplace_back("/proc/modules lists nouveau");
  return fail(
      "GC-NOUVEAU-LOADED"_gc,
      "the open-source nouveau driver is loaded: it holds the NVIDIA GPU, so the NVIDIA driver "
      "(and CUDA) cannot use it",
      "blacklist nouveau: printf 'blacklist nouveau\\noptions nouveau modeset=0\\n' | sudo tee "
      "/etc/modprobe.d/blacklist-nouveau.conf && sudo update-initramfs -u && sudo reboot; then "
      "install the NVIDIA driver",
      evidence);
}

// ---- nvidia_kernel_module ----

CheckResult check_nvidia_kernel_module(const SystemView& view) {
  const auto gpus = nvidia_pci_gpus(view);
  if (gpus.empty()) return not_applicable("no NVIDIA GPU on the PCI bus (/sys/bus/pci/devices)");
  const auto modules = loaded_modules(view);
  std::vector<std::string> evidence = gpu_evidence(gpus, view);
  for (const char* m : {"nvidia", "nvidia_uvm", "nvidia_modeset", "nouveau"})
    if (modules.contains(m)) evidence.push_back(fmt::format("/proc/modules lists {}", m));
  const auto version = kernel_module_version(view);
  if (version) evidence.push_back("/proc/driver/nvidia/version: " + *version);
  if (modules.contains("nvidia"))
    return combine(module_findings(view, gpus, evidence), evidence,
                   fmt::format("the nvidia kernel module is loaded{}",
                               version ? " (" + *version + ")" : std::string()));
  return fail(
      "GC-DRIVER-MODULE-MISSING"_gc,
      fmt::format(
          "{} NVIDIA GPU{} on the PCI bus but the nvidia kernel module is not "
          "loaded{}",
          gpus.size(), gpus.size() == 1 ? " is" : "s are",
          modules.contains("nouveau") ? " (nouveau holds the GPU: see nouveau_module)" : ""),
      "sudo modprobe nvidia and read why it fails in sudo dmesg (a module not built for "
      "this kernel: sudo dkms autoinstall; Secure Boot refusing an unsigned module: sign "
      "it or enrol the MOK); no driver installed: install the nvidia-driver package",
      evidence);
}

// ---- nvidia_device_nodes ----

CheckResult check_nvidia_device_nodes(const SystemView& view) {
  const NvidiaExpectation nv = nvidia_expected(view);
  std::vector<std::string> nodes;
  for (const char* n : {"/dev/nvidiactl", "/dev/nvidia-uvm"})
    if (view.exists(n)) nodes.emplace_back(n);
  const auto numbered = device_nodes(view, "/dev/nvidia[0-9]*");
  nodes.insert(nodes.end(), numbered.begin(), numbered.end());
  if (!nv.expected && nodes.empty())
    return not_applicable("no NVIDIA GPU, driver or /dev/nvidia* node here");
  std::vector<std::string> evidence = nv.evidence;
  std::vector<std::string> missing;
  if (!view.exists("/dev/nvidiactl")) missing.emplace_back("/dev/nvidiactl");
  if (numbered.empty()) missing.emplace_back("/dev/nvidia0 (no /dev/nvidia[0-9]*)");
  if (!view.exists("/dev/nvidia-uvm")) missing.emplace_back("/dev/nvidia-uvm");
  const Identity& who = view.identity;
  const auto groups = read_groups(view);
  std::vector<std::string> denied;
  std::set<std::string> need_groups;
  for (const auto& n : nodes) {
    auto st = view.stat(n);
    if (!st) continue;
    std::string group = std::to_string(st->gid);
    for (const auto& g : groups)
      if (g.gid == st->gid) group = g.name;
    evidence.push_back(
        fmt::format("{} {} uid {} group {}", n, mode_text(st->mode), st->uid, group));
    if (!may_read_write(*st, who)) {
      denied.push_back(fmt::format("{} ({} {})", n, mode_text(st->mode), group));
      need_groups.insert(group);
    }
  }
  evidence.push_back(fmt::format("identity: uid {}, gids {}", who.uid, [&] {
    std::vector<std::string> g;
    for (auto id : who.gids) g.push_back(std::to_string(id));
    return join(g, ",");
  }()));
  // The mode allows it, and still the kernel may refuse: a container's device cgroup that lost
  // its GPU rules when the host's systemd re-applied the unit (systemctl daemon-reload) refuses
  // with EPERM, and NVML says only "Unknown Error" (nvidia-container-toolkit #48, #1227).
  std::vector<std::string> refused;
  for (const auto& n : nodes) {
    if (std::find_if(denied.begin(), denied.end(),
                     [&](const std::string& d) { return d.starts_with(n + " "); }) != denied.end())
      continue;
    const auto err = view.open_error(n);
    if (!err || *err == 0) continue;
    evidence.push_back(fmt::format("open({}) = {}", n, errno_name(*err)));
    if (*err == EPERM || *err == EACCES) refused.push_back(n);
  }
  const bool in_container = container_of(view);
  std::vector<std::string> findings, fixes;
  if (!missing.empty()) {
    findings.push_back("missing device node" + std::string(missing.size() == 1 ? "" : "s") + ": " +
                       join(missing, ", "));
    fixes.emplace_back(
        "the nodes appear when the driver loads (sudo modprobe nvidia nvidia-uvm, or run "
        "nvidia-smi as root, or sudo nvidia-modprobe -u -c=0); in a container start it with "
        "--gpus all");
  }
  if (!denied.empty()) {
    findings.push_back(fmt::format("uid {} cannot open {}", who.uid, join(denied, ", ")));
    std::vector<std::string> g(need_groups.begin(), need_groups.end());
    fixes.push_back(
        fmt::format("sudo usermod -aG {} $USER and log in again (or restore mode 0666 "
                    "on the nodes: the driver's NVreg_DeviceFileMode)",
                    join(g, ",")));
  }
  if (!findings.empty())
    return fail("GC-DRIVER-DEVICE-NODES"_gc, join(findings, "; ") + ": CUDA cannot reach the GPU",
                join(fixes, "; "), evidence);
  if (!refused.empty())
    return fail(
        "GC-DEVICE-CGROUP-DENIED"_gc,
        fmt::format("the kernel refuses to open {} although its mode allows uid {}: {}; "
                    "CUDA sees no GPU and NVML says \"Unknown Error\"",
                    join(refused, ", "), who.uid,
                    in_container ? "this container's device cgroup no longer lets it in (what a "
                                   "systemctl daemon-reload on the host does to containers of "
                                   "the systemd cgroup driver)"
                                 : "a device cgroup or security module denies it"),
        in_container ? std::string(kDevCharFix) +
                           ", then restart this container; or run Docker with the cgroupfs "
                           "driver (\"exec-opts\": [\"native.cgroupdriver=cgroupfs\"] in "
                           "/etc/docker/daemon.json)"
                     : "find what denies it: the unit's DeviceAllow= (systemctl show -p "
                       "DeviceAllow <unit>), an AppArmor or SELinux denial in the kernel log",
        evidence);
  const std::string usable =
      fmt::format("{} present and usable by uid {}", join(nodes, ", "), who.uid);
  if (!in_container) {
    if (auto missing_links = dev_char_links_missing(view, numbered); !missing_links.empty()) {
      for (const auto& e : missing_links) evidence.push_back(e);
      return warn("GC-DEV-CHAR-LINKS"_gc,
                  usable +
                      ", but the NVIDIA Container Toolkit is installed and /dev/char holds "
                      "no links to them: containers of the systemd cgroup driver lose "
                      "their GPUs at the next systemctl daemon-reload",
                  std::string(kDevCharFix), evidence);
    }
  }
  return pass(usable, evidence);
}

// ---- nvidia_xid ----

namespace {

// The newest Xid line a run judged, kept in the state file: the lines after it are new. A count
// per GPU and code alone cannot tell once the log wraps (3 new lines where 3 old ones were
// dropped keep the count), nor when the log holds fewer lines than were counted.
constexpr std::size_t kMaxKeptLineBytes = 512;

std::string kept_line(const std::string& line) {
  return line.size() <= kMaxKeptLineBytes ? line : line.substr(0, kMaxKeptLineBytes);
}

// Which of the log's Xid lines an earlier run of this boot did not judge. `last` is what that
// run kept (kept_state_problem checked its shape); `counts` the per-key counts of a state file
// written before `last` was kept.
std::vector<bool> unjudged_xids(const std::vector<host::XidEvent>& xids, const std::string& source,
                                const Json& last, const Json& counts) {
  std::vector<bool> fresh(xids.size(), true);
  if (!last.is_null()) {
    const std::string line = last.value("line", std::string());
    // Searched from the end: the remembered line and every line before it were judged.
    for (std::size_t i = xids.size(); i-- > 0;)
      if (kept_line(xids[i].line) == line) {
        std::fill(fresh.begin(), fresh.begin() + static_cast<std::ptrdiff_t>(i) + 1, false);
        return fresh;
      }
    // The line is gone: the log dropped it, and all older lines with it, so what it holds is
    // newer, unless positions of the same log kind say otherwise.
    const auto pos = last.find("position");
    if (pos != last.end() && last.value("source", std::string()) == source) {
      const auto before = pos->get<std::uint64_t>();
      for (std::size_t i = 0; i < xids.size(); ++i)
        fresh[i] = !xids[i].position || *xids[i].position > before;
    }
    return fresh;
  }
  // A state file of an older gpucheck: per key, that many of the oldest lines were judged. A
  // count above the lines the log holds means it dropped lines since: none of the key's lines
  // is known to be old, so all are judged.
  std::map<std::string, std::uint64_t> judged, held;
  for (const auto& x : xids) ++held[x.pci + " " + std::to_string(x.code)];
  for (const auto& [key, n] : counts.items())
    if (n.get<std::uint64_t>() <= held[key]) judged[key] = n.get<std::uint64_t>();
  for (std::size_t i = 0; i < xids.size(); ++i) {
    auto it = judged.find(xids[i].pci + " " + std::to_string(xids[i].code));
    if (it != judged.end() && it->second > 0) {
      --it->second;
      fresh[i] = false;
    }
  }
  return fresh;
}

}  // namespace

std::string xid_summary(const std::map<int, long long>& per_code) {
  std::vector<std::string> parts;
  for (const auto& [code, n] : per_code) parts.push_back(fmt::format("Xid {} ×{}", code, n));
  return join(parts, ", ");
}

CheckResult judge_xids(const std::map<int, long long>& per_code, const std::string& found,
                       const std::string& unread, std::vector<std::string> evidence) {
  bool hardware = false, other = false;
  for (const auto& [code, n] : per_code) {
    hardware = hardware || kHardwareXids.contains(code);
    other = other || !kProgramXids.contains(code);
  }
  const std::string fix =
      "look the codes up in NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors); "
      "for memory, NVLink or fallen-off-the-bus Xids drain the node, reset the GPU (nvidia-smi "
      "-r) or reboot, and have the GPU checked if they return";
  if (hardware)
    return fail("GC-XID-HARDWARE"_gc,
                found + ", some of which mean a hardware or memory fault" + unread, fix,
                std::move(evidence));
  if (other) return warn("GC-XID-DRIVER"_gc, found + unread, fix, std::move(evidence));
  return info(found + " (programs' own faults: an illegal address, a killed context)" + unread,
              std::move(evidence));
}

CheckResult check_nvidia_xid(const SystemView& view) {
  const host::KernelLog log = host::read_kernel_log(view.root.string());
  if (!log.text)
    throw NotObservable("the kernel log: " + join(log.unreadable, " and ") +
                        " (run as root, or sudo sysctl kernel.dmesg_restrict=0)");
  const std::vector<host::XidEvent> xids = host::parse_xids(*log.text);
  // With a state file (doctor --state), lines judged on an earlier run of this boot were
  // reported then: only the lines after them are judged, so one event fails the node once (the
  // state layer keeps it failing until acknowledged). Another boot starts afresh.
  std::string boot = view.read_file("/proc/sys/kernel/random/boot_id").value_or("");
  while (!boot.empty() && std::isspace(static_cast<unsigned char>(boot.back()))) boot.pop_back();
  const Json saved = view.saved_state.value("nvidia_xid", Json::object());
  const bool same_boot = !boot.empty() && saved.value("boot_id", std::string()) == boot;
  const std::vector<bool> fresh = same_boot
                                      ? unjudged_xids(xids, log.source, saved.value("last", Json()),
                                                      saved.value("counts", Json::object()))
                                      : std::vector<bool>(xids.size(), true);
  std::map<int, long long> new_per_code, old_per_code;
  std::map<std::string, std::uint64_t> lines_per_key;  // "<pci> <code>": lines in the log
  std::vector<std::string> last;
  for (std::size_t i = 0; i < xids.size(); ++i) {
    const host::XidEvent& x = xids[i];
    ++lines_per_key[x.pci + " " + std::to_string(x.code)];
    ++(fresh[i] ? new_per_code : old_per_code)[x.code];
    last.push_back(fmt::format("Xid {} on {}:{}", x.code, x.pci, x.detail));
    if (last.size() > 8) last.erase(last.begin());
  }
  Json counts = Json::object();
  for (const auto& [key, n] : lines_per_key) counts[key] = n;
  std::vector<std::string> evidence{"read " + log.source};
  // A saved log longer than is read: its older part is said, never silently dropped.
  const std::string unread =
      log.skipped_bytes == 0
          ? std::string()
          : fmt::format("; its oldest {} bytes were not judged (only the newest {} MiB are read)",
                        log.skipped_bytes, host::kMaxKernelLogBytes >> 20);
  if (!unread.empty()) evidence.push_back(unread.substr(2));
  evidence.insert(evidence.end(), last.begin(), last.end());
  if (!old_per_code.empty())
    evidence.push_back("reported on an earlier run (state file): " + xid_summary(old_per_code));
  CheckResult r;
  if (new_per_code.empty()) {
    r = pass(old_per_code.empty()
                 ? "no NVIDIA Xid error in the kernel log (" + log.source + ")" + unread
                 : "no new NVIDIA Xid error in the kernel log (" + log.source +
                       ") since the last run; earlier ones: " + xid_summary(old_per_code) + unread,
             evidence);
  } else {
    // The codes first: a drain reason or a node condition shows the start of the finding.
    r = judge_xids(
        new_per_code,
        fmt::format("{}: {}NVIDIA Xid errors in the kernel log ({})", xid_summary(new_per_code),
                    old_per_code.empty() ? "" : "new ", log.source),
        unread, evidence);
  }
  r.state = {{"boot_id", boot}, {"counts", std::move(counts)}};
  if (!xids.empty()) {
    Json kept{{"line", kept_line(xids.back().line)}, {"source", log.source}};
    if (xids.back().position) kept["position"] = *xids.back().position;
    r.state["last"] = std::move(kept);
  } else if (same_boot && saved.contains("last")) {
    // A log that no longer holds any Xid line: the last one judged stays the mark.
    r.state["last"] = saved["last"];
  }
  return r;
}

// ---- nvswitch_fabric_manager ----

namespace {

// Processes of this PID namespace whose name starts with `name` ("process 812: nvidia-imex").
std::vector<std::string> processes_named(const SystemView& view, std::string_view name) {
  std::vector<std::string> out;
  for (const auto& pid : view.list_dir("/proc")) {
    if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) continue;
    auto comm = view.read_file("/proc/" + pid + "/comm", 64);
    if (comm && comm->rfind(name, 0) == 0)
      out.push_back("process " + pid + ": " + std::string(trim_space(*comm)));
  }
  return out;
}

// The cluster of a multi-node NVLink domain (GB200/GB300 NVL72) a GPU's fabric registration
// names; empty for a single node's fabric (an all-zero cluster UUID) or none.
std::string nvlink_domain(const SystemView& view) {
  const Json* cuda = view.backend("cuda");
  if (cuda == nullptr) return {};
  for (const auto& d : array_at(*cuda, "devices")) {
    const Json nvml = d.value("properties", Json::object()).value("nvml", Json::object());
    const std::string uuid = text(nvml.value("fabric", Json::object()), "cluster_uuid");
    if (!uuid.empty() && uuid.find_first_not_of('0') != std::string::npos) return uuid;
  }
  return {};
}

// What multi-node NVLink needs besides Fabric Manager: the IMEX channel device CUDA's fabric
// memory is shared through (the driver registers its major, never the node) and, across nodes,
// the nvidia-imex service. Empty when IMEX is not in use here.
std::vector<Finding> imex_findings(const SystemView& view, std::vector<std::string>& evidence) {
  const std::string domain = nvlink_domain(view);
  const bool configured = view.exists("/etc/nvidia-imex/nodes_config.cfg");
  if (domain.empty() && !configured) return {};
  if (!domain.empty()) evidence.push_back("multi-node NVLink domain: cluster " + domain);
  if (configured) evidence.emplace_back("/etc/nvidia-imex/nodes_config.cfg present");
  std::string major;
  if (auto devices = view.read_file("/proc/devices", 64u << 10)) {
    std::istringstream lines(*devices);
    for (std::string line; std::getline(lines, line);) {
      std::istringstream f(line);
      std::string num, name;
      if (f >> num >> name && name == "nvidia-caps-imex-channels") major = num;
    }
  }
  evidence.push_back(major.empty() ? "/proc/devices: no nvidia-caps-imex-channels"
                                   : "/proc/devices: " + major + " nvidia-caps-imex-channels");
  std::vector<Finding> out;
  const auto channels = device_nodes(view, "/dev/nvidia-caps-imex-channels/channel*");
  for (const auto& c : channels) evidence.push_back("channel: " + c);
  if (channels.empty())
    out.push_back(
        {CheckStatus::kFail, "GC-IMEX-CHANNEL-MISSING"_gc,
         "no IMEX channel (/dev/nvidia-caps-imex-channels/channel0) for GPUs that share memory "
         "over multi-node NVLink: cuMemCreate of fabric memory (NCCL's MNNVL, nvbandwidth -p "
         "multinode) fails with CUDA_ERROR_NOT_PERMITTED",
         "sudo mkdir -p /dev/nvidia-caps-imex-channels && sudo mknod "
         "/dev/nvidia-caps-imex-channels/channel0 c $(awk '$2==\"nvidia-caps-imex-channels\""
         "{print $1}' /proc/devices) 0 (lost at reboot; options nvidia "
         "NVreg_CreateImexChannel0=1 in /etc/modprobe.d makes it at load, on trusted nodes); in "
         "a container set NVIDIA_IMEX_CHANNELS=0"});
  const auto imex = processes_named(view, "nvidia-imex");
  evidence.insert(evidence.end(), imex.begin(), imex.end());
  if (!domain.empty() && imex.empty() &&
      text(view.facts.value(k::kHost, Json::object()), k::kVirtualization) != "container")
    out.push_back({CheckStatus::kFail, "GC-IMEX-DOWN"_gc,
                   "the GPUs are in a multi-node NVLink domain but no nvidia-imex process runs: "
                   "memory shared with other nodes cannot be imported",
                   "list every node of the domain in /etc/nvidia-imex/nodes_config.cfg, then sudo "
                   "systemctl enable --now nvidia-imex (nvidia-imex-ctl -q says READY)"});
  return out;
}

CheckResult fabric_manager(const SystemView& view);

}  // namespace

CheckResult check_nvswitch_fabric_manager(const SystemView& view) {
  std::vector<std::string> imex_evidence;
  const std::vector<Finding> imex = imex_findings(view, imex_evidence);
  CheckResult r = fabric_manager(view);
  r.evidence.insert(r.evidence.end(), imex_evidence.begin(), imex_evidence.end());
  if (imex.empty()) return r;
  // Fabric Manager's own result leads when it failed (its code stays); IMEX's findings follow.
  if (r.status == CheckStatus::kFail || r.status == CheckStatus::kWarn) {
    for (const auto& f : imex) {
      r.status = worse(r.status, f.status);
      r.finding += "; " + f.text;
      r.fix += "; " + f.fix;
    }
    return r;
  }
  CheckResult out = combine(imex, r.evidence, r.finding);
  out.finding = r.finding + "; " + out.finding;
  return out;
}

namespace {

CheckResult fabric_manager(const SystemView& view) {
  std::vector<std::string> switches;
  for (const auto& d : nvidia_pci_devices(view))
    if (d.is_nvswitch()) switches.push_back(d.address);
  for (const auto& n : device_nodes(view, "/dev/nvidia-nvswitch[0-9]*")) switches.push_back(n);
  if (switches.empty())
    return pass(
        "no NVSwitch (PCI class 0680 of vendor 10de in /sys/bus/pci/devices, "
        "/dev/nvidia-nvswitch*): Fabric Manager is not needed");
  std::vector<std::string> evidence{"NVSwitch: " + join(switches, ", ")};
  const auto fm = processes_named(view, "nv-fabricmanager");
  const bool running = !fm.empty();
  evidence.insert(evidence.end(), fm.begin(), fm.end());
  if (running) return pass("NVSwitch present and nv-fabricmanager is running", evidence);
  const Json* cuda = view.backend("cuda");
  const bool cuda_ok = cuda != nullptr && text(*cuda, k::kStatus) == "available";
  if (cuda != nullptr && cuda->contains(k::kDriver))
    evidence.push_back(
        fmt::format("cuInit(0) = {}", (*cuda)[std::string(k::kDriver)].value(k::kInitResult, -1)));
  if (cuda_ok)
    return info(
        "NVSwitch present and no nv-fabricmanager process visible here (another PID "
        "namespace?), but CUDA initialised, so the fabric is up",
        evidence);
  return fail("GC-FABRIC-MANAGER-DOWN"_gc,
              "NVSwitch present but nv-fabricmanager is not running: CUDA fails to initialise "
              "(CUDA_ERROR_SYSTEM_NOT_READY) until it has set up the fabric",
              "sudo apt install nvidia-fabricmanager-<driver branch> (same version as the "
              "driver) && sudo systemctl enable --now nvidia-fabricmanager",
              evidence);
}

}  // namespace

}  // namespace gpucheck::doctor

// Reads hostname, os-release, kernel release and container/WSL markers under a root prefix.
#include "host/host_info.h"
#include "core/json_access.h"
#include "core/text.h"

#include <sys/utsname.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <fstream>
#include <utility>

#include "core/files.h"
#include "core/json_keys.h"
#include "core/sanitize.h"
#include "host/cpu_info.h"

namespace gpucheck::host {

namespace fs = std::filesystem;

namespace {

// Every file read here is a line or a few KiB; reading stops well past that.
constexpr std::size_t kHostFileBytes = std::size_t{1} << 20;

std::optional<std::string> read_host_file(const fs::path& p) {
  return read_text_file(p, kHostFileBytes);
}

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(fs::symlink_status(p, ec)) && !ec;
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// The first non-empty, non-comment line of a file, trimmed and sanitised.
std::optional<std::string> read_first_line(const fs::path& p) {
  const auto text = read_host_file(p);
  if (!text) return std::nullopt;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view line = trim_space(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (!line.empty() && line.front() != '#') return sanitize(line);
  }
  return std::nullopt;
}

// os-release value: shell-like quoting, "..." with backslash escapes or '...' verbatim.
std::string unquote(std::string_view v) {
  v = trim_space(v);
  if (v.size() >= 1 && (v.front() == '"' || v.front() == '\'')) {
    const char q = v.front();
    std::string out;
    for (std::size_t i = 1; i < v.size(); ++i) {
      const char c = v[i];
      if (c == q) break;
      if (q == '"' && c == '\\' && i + 1 < v.size()) {
        out.push_back(v[++i]);
        continue;
      }
      out.push_back(c);
    }
    return out;
  }
  return std::string(v);
}

struct OsRelease {
  std::optional<std::string> pretty_name, name, id, version_id;
};

std::optional<OsRelease> read_os_release(const fs::path& root) {
  auto text = read_host_file(under_root(root, "etc/os-release"));
  if (!text) text = read_host_file(under_root(root, "usr/lib/os-release"));
  if (!text) return std::nullopt;
  OsRelease r;
  std::string_view rest(*text);
  while (!rest.empty()) {
    const auto nl = rest.find('\n');
    const std::string_view line = trim_space(rest.substr(0, nl));
    rest = nl == std::string_view::npos ? std::string_view{} : rest.substr(nl + 1);
    if (line.empty() || line.front() == '#') continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = trim_space(line.substr(0, eq));
    std::optional<std::string>* slot = nullptr;
    if (key == "PRETTY_NAME")
      slot = &r.pretty_name;
    else if (key == "NAME")
      slot = &r.name;
    else if (key == "ID")
      slot = &r.id;
    else if (key == "VERSION_ID")
      slot = &r.version_id;
    if (!slot) continue;
    std::string value = sanitize(unquote(line.substr(eq + 1)));
    if (!value.empty()) *slot = std::move(value);
  }
  return r;
}

bool mentions_wsl(const std::optional<std::string>& text) {
  return text && (lower(*text).find("microsoft") != std::string::npos ||
                  text->find("WSL") != std::string::npos);
}

struct ContainerFinding {
  bool found = false;
  std::optional<std::string> runtime;
};

// The runtime a cgroup path names, most specific first (a Kubernetes pod on Docker says both).
std::optional<std::string> runtime_from_cgroup(std::string_view text) {
  const std::string t = lower(text);
  constexpr std::array<std::pair<std::string_view, std::string_view>, 5> kMarkers{{
      {"kubepods", "kubernetes"},
      {"libpod", "podman"},
      {"docker", "docker"},
      {"containerd", "containerd"},
      {"lxc", "lxc"},
  }};
  for (const auto& [marker, runtime] : kMarkers)
    if (t.find(marker) != std::string::npos) return std::string(runtime);
  return std::nullopt;
}

ContainerFinding detect_container(const fs::path& root) {
  // proc/1/environ: NUL-separated; container= is set by podman, lxc, systemd-nspawn and others.
  std::optional<std::string> env_runtime;
  bool env_kubernetes = false;
  if (const auto env = read_host_file(under_root(root, "proc/1/environ"))) {
    std::string_view rest(*env);
    while (!rest.empty()) {
      const auto nul = rest.find('\0');
      const std::string_view entry = rest.substr(0, nul);
      rest = nul == std::string_view::npos ? std::string_view{} : rest.substr(nul + 1);
      constexpr std::string_view kContainer = "container=";
      if (entry.substr(0, kContainer.size()) == kContainer) {
        const std::string value = lower(trim_space(entry.substr(kContainer.size())));
        if (!value.empty()) env_runtime = sanitize(value);
      } else if (entry.substr(0, 24) == "KUBERNETES_SERVICE_HOST=") {
        env_kubernetes = true;
      }
    }
  }
  if (env_runtime && env_runtime->substr(0, 3) == "lxc") env_runtime = "lxc";  // lxc-libvirt

  std::optional<std::string> cgroup_runtime;
  if (const auto cg = read_host_file(under_root(root, "proc/1/cgroup")))
    cgroup_runtime = runtime_from_cgroup(*cg);
  const bool dockerenv = path_exists(under_root(root, ".dockerenv"));
  const bool containerenv = path_exists(under_root(root, "run/.containerenv"));

  ContainerFinding f;
  f.found = env_runtime || env_kubernetes || cgroup_runtime || dockerenv || containerenv;
  if (env_kubernetes || cgroup_runtime == "kubernetes")
    f.runtime = "kubernetes";
  else if (env_runtime)
    f.runtime = env_runtime;
  else if (containerenv)
    f.runtime = "podman";
  else if (dockerenv)
    f.runtime = "docker";
  else
    f.runtime = cgroup_runtime;
  return f;
}

}  // namespace

std::string_view to_string(Virtualization v) {
  switch (v) {
    case Virtualization::kContainer:
      return "container";
    case Virtualization::kWsl:
      return "wsl";
    case Virtualization::kBareMetal:
      break;
  }
  return "bare_metal";
}

// The display-class functions under sys/bus/pci/devices, in the folder's order; nullopt when
// it cannot be listed. A machine has a few hundred PCI functions at most; more is not a bus.
std::optional<std::vector<DisplayDevice>> read_display_devices(const fs::path& root) {
  const fs::path bus = under_root(root, "sys/bus/pci/devices");
  std::error_code ec;
  fs::directory_iterator it(bus, ec);
  if (ec) return std::nullopt;
  std::vector<std::string> addresses;
  for (; it != fs::directory_iterator() && addresses.size() < 4096; it.increment(ec)) {
    if (ec) return std::nullopt;
    addresses.push_back(it->path().filename().string());
  }
  std::sort(addresses.begin(), addresses.end());
  std::vector<DisplayDevice> out;
  for (const auto& address : addresses) {
    const auto cls = read_first_line(bus / address / "class");
    const auto vendor = read_first_line(bus / address / "vendor");
    if (!cls || !vendor || !cls->starts_with("0x03")) continue;
    const std::string id = lower(trim_space(*vendor));
    out.push_back({sanitize(address), id == "0x10de"   ? "nvidia"
                                      : id == "0x1002" ? "amd"
                                      : id == "0x8086" ? "intel"
                                                       : "other"});
  }
  return out;
}

HostFacts read_host_facts(const fs::path& root) {
  HostFacts h;
  h.hostname = read_first_line(under_root(root, "proc/sys/kernel/hostname"));
  if (!h.hostname) h.hostname = read_first_line(under_root(root, "etc/hostname"));

  if (const auto os = read_os_release(root)) {
    h.os = os->pretty_name ? os->pretty_name : os->name;
    h.os_id = os->id;
    h.os_version = os->version_id;
  }

  const auto osrelease = read_host_file(under_root(root, "proc/sys/kernel/osrelease"));
  if (osrelease && !trim_space(*osrelease).empty()) h.kernel = sanitize(trim_space(*osrelease));
  if (!h.kernel && is_live_root(root)) {
    struct utsname u {};
    if (uname(&u) == 0) h.kernel = sanitize_c_buffer(u.release, sizeof u.release);
  }

  const CpuFacts cpu = read_cpu_facts(root);
  h.arch = cpu.arch;
  // The isa map holds sse4_2 exactly when an x86 flags line was parsed.
  if (cpu.isa.count(std::string(keys::kIsaSse4_2)) != 0)
    h.hypervisor = std::find(cpu.flags.begin(), cpu.flags.end(), "hypervisor") != cpu.flags.end();

  const ContainerFinding container = detect_container(root);
  h.container_runtime = container.runtime;
  if (mentions_wsl(osrelease) || mentions_wsl(read_host_file(under_root(root, "proc/version"))))
    h.virtualization = Virtualization::kWsl;
  else if (container.found)
    h.virtualization = Virtualization::kContainer;
  h.display_devices = read_display_devices(root);
  return h;
}

nlohmann::json to_json(const HostFacts& h) {
  nlohmann::json j = nlohmann::json::object();
  put_if(j, keys::kHostname, h.hostname);
  put_if(j, keys::kOs, h.os);
  put_if(j, keys::kOsId, h.os_id);
  put_if(j, keys::kOsVersion, h.os_version);
  put_if(j, keys::kKernel, h.kernel);
  put_if(j, keys::kArch, h.arch);
  j[std::string(keys::kVirtualization)] = std::string(to_string(h.virtualization));
  put_if(j, keys::kContainerRuntime, h.container_runtime);
  put_if(j, keys::kHypervisor, h.hypervisor);
  if (h.display_devices) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& d : *h.display_devices)
      list.push_back({{keys::kPciBusId, d.pci_bus_id}, {keys::kVendor, d.vendor}});
    j[std::string(keys::kDisplayDevices)] = std::move(list);
  }
  return j;
}

}  // namespace gpucheck::host

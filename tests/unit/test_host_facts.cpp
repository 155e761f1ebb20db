// read_host_facts() and read_memory_facts() on fabricated sysroots and on the live system.
#include <gtest/gtest.h>

#include "scratch_root.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "core/json_keys.h"
#include "host/host_info.h"
#include "host/memory_info.h"

namespace fs = std::filesystem;
namespace keys = gpucheck::keys;
using gpucheck::host::HostFacts;
using gpucheck::host::MemoryFacts;
using gpucheck::host::read_host_facts;
using gpucheck::host::read_memory_facts;
using gpucheck::host::to_json;
using gpucheck::host::Virtualization;

namespace {

fs::path sysroot(const char* name) {
  return fs::path(GPUCHECK_FIXTURES_DIR) / "sysroots" / name;
}

constexpr std::uint64_t kKiB = 1024;

// A string literal with embedded NULs, as proc/1/environ holds them.
template <std::size_t N>
std::string with_nuls(const char (&s)[N]) {
  return std::string(s, N - 1);
}

// Hand-made trees for the host readers.
class HostScratchRoot : public gpucheck::testing::ScratchRoot {};

}  // namespace

TEST(HostFacts, EpycFixture) {
  const HostFacts h = read_host_facts(sysroot("x86_64-epyc"));
  EXPECT_EQ(h.hostname, "epyc-build-01");
  EXPECT_EQ(h.os, "Debian GNU/Linux 12 (bookworm)");
  EXPECT_EQ(h.os_id, "debian");
  EXPECT_EQ(h.os_version, "12");
  EXPECT_EQ(h.kernel, "6.18.44-fc-v669");
  EXPECT_EQ(h.arch, "x86_64");
  EXPECT_EQ(h.virtualization, Virtualization::kBareMetal);
  EXPECT_FALSE(h.container_runtime);
  EXPECT_EQ(h.hypervisor, true);  // the development VM's cpuinfo says "hypervisor"

  const auto j = to_json(h);
  EXPECT_EQ(j.at(std::string(keys::kVirtualization)), "bare_metal");
  EXPECT_EQ(j.at(std::string(keys::kOsId)), "debian");
  EXPECT_EQ(j.at(std::string(keys::kHypervisor)), true);
  EXPECT_FALSE(j.contains(std::string(keys::kContainerRuntime)));
}

TEST(HostFacts, Graviton3UsesUsrLibOsRelease) {
  const HostFacts h = read_host_facts(sysroot("arm64-graviton3"));
  EXPECT_EQ(h.os, "Amazon Linux 2023.4.20240513");
  EXPECT_EQ(h.os_id, "amzn");
  EXPECT_EQ(h.os_version, "2023");
  EXPECT_EQ(h.kernel, "6.1.90-99.173.amzn2023.aarch64");
  EXPECT_EQ(h.hostname, "ip-172-31-20-7.us-west-2.compute.internal");
  EXPECT_EQ(h.arch, "aarch64");
  EXPECT_FALSE(h.hypervisor);  // Arm cpuinfo cannot say
  EXPECT_EQ(h.virtualization, Virtualization::kBareMetal);
}

TEST(HostFacts, XeonWithoutOsRelease) {
  const HostFacts h = read_host_facts(sysroot("x86_64-xeon-2socket"));
  EXPECT_EQ(h.hostname, "gpu-node-17");
  EXPECT_EQ(h.kernel, "5.14.0-427.13.1.el9_4.x86_64");
  EXPECT_EQ(h.arch, "x86_64");
  EXPECT_EQ(h.hypervisor, false);
  EXPECT_FALSE(h.os);
  EXPECT_FALSE(h.os_id);
  const auto j = to_json(h);
  EXPECT_FALSE(j.contains(std::string(keys::kOs)));
  EXPECT_FALSE(j.contains(std::string(keys::kOsVersion)));
}

TEST(HostFacts, Wsl2Fixture) {
  const HostFacts h = read_host_facts(sysroot("wsl2-ubuntu"));
  EXPECT_EQ(h.virtualization, Virtualization::kWsl);
  EXPECT_EQ(h.hostname, "DESKTOP-7Q4K2LM");  // from etc/hostname
  EXPECT_EQ(h.kernel, "5.15.153.1-microsoft-standard-WSL2");
  EXPECT_EQ(h.os, "Ubuntu 22.04.4 LTS");
  EXPECT_EQ(h.os_version, "22.04");
  EXPECT_FALSE(h.arch);  // no cpuinfo in this tree
  EXPECT_FALSE(h.container_runtime);
  EXPECT_EQ(to_json(h).at(std::string(keys::kVirtualization)), "wsl");
}

TEST(HostFacts, DockerFixture) {
  const HostFacts h = read_host_facts(sysroot("container-docker"));
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "docker");
  EXPECT_EQ(h.hostname, "3f2a9c1e5b7d");
  const auto j = to_json(h);
  EXPECT_EQ(j.at(std::string(keys::kVirtualization)), "container");
  EXPECT_EQ(j.at(std::string(keys::kContainerRuntime)), "docker");
}

TEST(HostFacts, PodmanFixture) {
  const HostFacts h = read_host_facts(sysroot("container-podman"));
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "podman");
  EXPECT_EQ(h.os, "Red Hat Enterprise Linux 9.4 (Plow)");
  EXPECT_EQ(h.os_id, "rhel");
  EXPECT_FALSE(h.hostname);  // neither proc/sys/kernel/hostname nor etc/hostname
}

TEST(HostFacts, KubernetesFixture) {
  const HostFacts h = read_host_facts(sysroot("container-kubernetes"));
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "kubernetes");
  EXPECT_EQ(h.hostname, "trainer-0");
}

TEST_F(HostScratchRoot, ContainerRuntimeFromCgroupAndEnviron) {
  write("proc/1/cgroup", "0::/lxc.payload.web01\n");
  HostFacts h = read_host_facts(root_);
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "lxc");

  write("proc/1/cgroup", "0::/system.slice/cri-containerd-0123abcd.scope\n");
  EXPECT_EQ(read_host_facts(root_).container_runtime, "containerd");

  write("proc/1/cgroup", "0::/machine.slice/libpod-0123abcd.scope/container\n");
  EXPECT_EQ(read_host_facts(root_).container_runtime, "podman");

  write("proc/1/cgroup", "0::/init.scope\n");
  EXPECT_EQ(read_host_facts(root_).virtualization, Virtualization::kBareMetal);

  write("proc/1/environ", with_nuls("HOME=/\0container=systemd-nspawn\0"));
  h = read_host_facts(root_);
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "systemd-nspawn");

  write("proc/1/environ", with_nuls("container=lxc-libvirt\0"));
  EXPECT_EQ(read_host_facts(root_).container_runtime, "lxc");
}

TEST_F(HostScratchRoot, DockerenvAloneMeansDocker) {
  write(".dockerenv", "");
  const HostFacts h = read_host_facts(root_);
  EXPECT_EQ(h.virtualization, Virtualization::kContainer);
  EXPECT_EQ(h.container_runtime, "docker");
}

TEST_F(HostScratchRoot, WslWinsOverContainerButKeepsRuntime) {
  write("proc/sys/kernel/osrelease", "4.4.0-19041-Microsoft\n");  // WSL1 spelling
  write(".dockerenv", "");
  const HostFacts h = read_host_facts(root_);
  EXPECT_EQ(h.virtualization, Virtualization::kWsl);
  EXPECT_EQ(h.container_runtime, "docker");
}

TEST_F(HostScratchRoot, WslFromProcVersion) {
  write("proc/version", "Linux version 5.10.16.3-WSL2-custom (gcc 9.3)\n");
  EXPECT_EQ(read_host_facts(root_).virtualization, Virtualization::kWsl);
}

TEST_F(HostScratchRoot, OsReleaseQuotingAndFallbacks) {
  write("etc/os-release",
        "# comment line\n"
        "NAME='Gentoo'\n"
        "ID=gentoo\n"
        "VERSION_ID=\"2.15 \\\"rolling\\\"\"\n"
        "garbage without equals\n");
  write("usr/lib/os-release", "PRETTY_NAME=\"not read: etc/os-release exists\"\n");
  write("etc/hostname", "# managed by cloud-init\n\n  box-1  \n");
  const HostFacts h = read_host_facts(root_);
  EXPECT_EQ(h.os, "Gentoo");  // NAME when there is no PRETTY_NAME
  EXPECT_EQ(h.os_id, "gentoo");
  EXPECT_EQ(h.os_version, "2.15 \"rolling\"");
  EXPECT_EQ(h.hostname, "box-1");
}

TEST_F(HostScratchRoot, StringsAreSanitised) {
  write("proc/sys/kernel/hostname", "evil\x1b[31mhost\n");
  write("etc/os-release", "PRETTY_NAME=\"Bad\xFF OS\"\n");
  const HostFacts h = read_host_facts(root_);
  EXPECT_EQ(h.hostname, "evil\\x1b[31mhost");
  EXPECT_EQ(h.os, "Bad\xEF\xBF\xBD OS");
  EXPECT_NO_THROW((void)to_json(h).dump());
}

TEST(HostFacts, MissingRootHasOnlyVirtualization) {
  const auto j = to_json(read_host_facts(sysroot("does-not-exist")));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j.at(std::string(keys::kVirtualization)), "bare_metal");
}

TEST(HostFacts, LiveRootParses) {
  HostFacts h;
  ASSERT_NO_THROW(h = read_host_facts("/"));
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(h.arch, std::string(u.machine));
  EXPECT_TRUE(h.kernel);
  EXPECT_NO_THROW((void)to_json(h).dump());
}

TEST(MemoryFacts, EpycFixture) {
  const MemoryFacts m = read_memory_facts(sysroot("x86_64-epyc"));
  EXPECT_EQ(m.total_bytes, 24684084 * kKiB);
  EXPECT_EQ(m.available_bytes, 23776524 * kKiB);
  EXPECT_EQ(m.free_bytes, 23433336 * kKiB);
  EXPECT_EQ(m.swap_total_bytes, 0u);  // a real 0: the line says so
  const auto j = to_json(m);
  EXPECT_EQ(j.at(std::string(keys::kTotalBytes)), 24684084 * kKiB);
  EXPECT_EQ(j.at(std::string(keys::kSwapTotalBytes)), 0u);
}

TEST(MemoryFacts, Graviton3AndWslFixtures) {
  const MemoryFacts g = read_memory_facts(sysroot("arm64-graviton3"));
  EXPECT_EQ(g.total_bytes, 15896940 * kKiB);
  EXPECT_EQ(g.available_bytes, 15153316 * kKiB);
  const MemoryFacts w = read_memory_facts(sysroot("wsl2-ubuntu"));
  EXPECT_EQ(w.swap_total_bytes, 4194304 * kKiB);
}

TEST(MemoryFacts, MissingMeminfoHasNoKeys) {
  const MemoryFacts m = read_memory_facts(sysroot("x86_64-xeon-2socket"));
  EXPECT_FALSE(m.total_bytes || m.available_bytes || m.free_bytes || m.swap_total_bytes);
  EXPECT_TRUE(to_json(m).empty());
}

TEST_F(HostScratchRoot, MemoryMalformedLinesAreAbsent) {
  write("proc/meminfo",
        "MemTotal:       abc kB\n"
        "MemFree:        18446744073709551615 kB\n"  // overflows as bytes
        "MemAvailable:   12 MB\n"                    // not a unit meminfo uses
        "Cached:  100 kB\n"
        "SwapTotal:      2048 kB");  // last line without newline
  MemoryFacts m;
  ASSERT_NO_THROW(m = read_memory_facts(root_));
  EXPECT_FALSE(m.total_bytes);
  EXPECT_FALSE(m.free_bytes);
  EXPECT_FALSE(m.available_bytes);
  EXPECT_EQ(m.swap_total_bytes, 2048 * kKiB);
  EXPECT_EQ(to_json(m).size(), 1u);
}

TEST(MemoryFacts, LiveRootParses) {
  MemoryFacts m;
  ASSERT_NO_THROW(m = read_memory_facts("/"));
  ASSERT_TRUE(m.total_bytes);
  EXPECT_GT(*m.total_bytes, 0u);
  if (m.available_bytes) {
    EXPECT_LE(*m.available_bytes, *m.total_bytes);
  }
}

// The GPUs on the PCI bus are its display-class functions, named by vendor; a root without the
// bus says nothing, rather than "no GPU".
TEST_F(HostScratchRoot, DisplayDevicesAreTheDisplayClassFunctionsOfTheBus) {
  EXPECT_FALSE(read_host_facts(root_).display_devices);
  EXPECT_FALSE(to_json(read_host_facts(root_)).contains(std::string(keys::kDisplayDevices)));
  const auto function = [&](const std::string& address, const char* cls, const char* vendor) {
    write("sys/bus/pci/devices/" + address + "/class", cls);
    write("sys/bus/pci/devices/" + address + "/vendor", vendor);
  };
  function("0000:00:00.0", "0x060000\n", "0x8086\n");  // an Intel host bridge: no GPU
  EXPECT_EQ(read_host_facts(root_).display_devices->size(), 0u);
  function("0000:65:00.0", "0x030000\n", "0x8086\n");
  function("0000:17:00.0", "0x030200\n", "0x10DE\n");  // a 3D controller (H100), upper case
  function("0000:03:00.0", "0x038000\n", "0x1002\n");
  function("0000:04:00.0", "0x030000\n", "0x1a03\n");  // an ASPEED BMC's VGA
  const auto devices = *read_host_facts(root_).display_devices;
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[0].pci_bus_id, "0000:03:00.0");
  EXPECT_EQ(devices[0].vendor, "amd");
  EXPECT_EQ(devices[1].vendor, "other");
  EXPECT_EQ(devices[2].vendor, "nvidia");
  EXPECT_EQ(devices[3].vendor, "intel");
  const auto j = to_json(read_host_facts(root_))[std::string(keys::kDisplayDevices)];
  EXPECT_EQ(j[2], (nlohmann::json{{"pci_bus_id", "0000:17:00.0"}, {"vendor", "nvidia"}}));
}

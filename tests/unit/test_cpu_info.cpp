// read_cpu_facts() on fabricated sysroots (tests/fixtures/sysroots) and on the live system.
#include <gtest/gtest.h>

#include "scratch_root.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/json_keys.h"
#include "host/cpu_info.h"

namespace fs = std::filesystem;
namespace keys = gpucheck::keys;
using gpucheck::host::CpuFacts;
using gpucheck::host::read_cpu_facts;
using gpucheck::host::to_json;

namespace {

fs::path sysroot(const char* name) {
  return fs::path(GPUCHECK_FIXTURES_DIR) / "sysroots" / name;
}

// Hand-made trees for the CPU readers.
class CpuScratchRoot : public gpucheck::testing::ScratchRoot {};

bool has_flag(const CpuFacts& f, const std::string& flag) {
  return std::find(f.flags.begin(), f.flags.end(), flag) != f.flags.end();
}

}  // namespace

TEST(CpuInfo, EpycFixtureTopologyAndModel) {
  const CpuFacts f = read_cpu_facts(sysroot("x86_64-epyc"));
  EXPECT_EQ(f.model, "AMD EPYC");
  EXPECT_EQ(f.vendor, "AuthenticAMD");
  EXPECT_EQ(f.arch, "x86_64");
  EXPECT_EQ(f.threads, 2);
  EXPECT_EQ(f.sockets, 1);
  EXPECT_EQ(f.cores, 2);
  EXPECT_EQ(f.numa_nodes, 1);
  ASSERT_TRUE(f.mhz_current);
  EXPECT_DOUBLE_EQ(*f.mhz_current, 2596.138);
  EXPECT_EQ(f.mhz_max, 3700.0);
  EXPECT_EQ(f.mhz_min, 1500.0);
}

TEST(CpuInfo, EpycFixtureCaches) {
  const CpuFacts f = read_cpu_facts(sysroot("x86_64-epyc"));
  ASSERT_EQ(f.caches.size(), 4u);
  EXPECT_EQ(f.caches[0].level, 1);
  EXPECT_EQ(f.caches[0].type, "data");
  EXPECT_EQ(f.caches[0].size_bytes, 32u * 1024);
  EXPECT_EQ(f.caches[0].shared_by_threads, 1);
  EXPECT_EQ(f.caches[1].type, "instruction");
  EXPECT_EQ(f.caches[2].level, 2);
  EXPECT_EQ(f.caches[2].size_bytes, 1024u * 1024);
  EXPECT_EQ(f.caches[3].level, 3);
  EXPECT_EQ(f.caches[3].type, "unified");
  EXPECT_EQ(f.caches[3].size_bytes, 32u * 1024 * 1024);
  EXPECT_EQ(f.caches[3].shared_by_threads, 2);
}

TEST(CpuInfo, EpycFixtureIsa) {
  const CpuFacts f = read_cpu_facts(sysroot("x86_64-epyc"));
  EXPECT_EQ(f.isa.size(), 16u);
  EXPECT_TRUE(f.isa.at("sse4_2"));
  EXPECT_TRUE(f.isa.at("avx"));
  EXPECT_TRUE(f.isa.at("avx2"));
  EXPECT_TRUE(f.isa.at("fma"));
  EXPECT_TRUE(f.isa.at("f16c"));
  EXPECT_TRUE(f.isa.at("avx512f"));
  EXPECT_TRUE(f.isa.at("avx512vl"));
  EXPECT_TRUE(f.isa.at("avx512_vnni"));
  EXPECT_TRUE(f.isa.at("avx512_bf16"));
  EXPECT_FALSE(f.isa.at("avx512_fp16"));
  EXPECT_FALSE(f.isa.at("amx_tile"));
  EXPECT_FALSE(f.isa.at("amx_int8"));
  EXPECT_FALSE(f.isa.at("amx_bf16"));
  EXPECT_EQ(f.isa.count("neon"), 0u);
  EXPECT_EQ(f.isa.count("sve"), 0u);
  EXPECT_TRUE(has_flag(f, "hypervisor"));
  EXPECT_TRUE(has_flag(f, "fpu"));
  EXPECT_EQ(f.flags.back(), "fsrm");
}

TEST(CpuInfo, EpycFixtureJson) {
  const auto j = to_json(read_cpu_facts(sysroot("x86_64-epyc")));
  EXPECT_EQ(j.at(std::string(keys::kModel)), "AMD EPYC");
  EXPECT_EQ(j.at(std::string(keys::kThreads)), 2);
  EXPECT_EQ(j.at(std::string(keys::kMhzMax)), 3700.0);
  const auto& caches = j.at(std::string(keys::kCaches));
  ASSERT_EQ(caches.size(), 4u);
  EXPECT_EQ(caches[3].at(std::string(keys::kSizeBytes)), 33554432u);
  EXPECT_EQ(caches[3].at(std::string(keys::kSharedByThreads)), 2);
  EXPECT_EQ(caches[3].at(std::string(keys::kType)), "unified");
  EXPECT_EQ(j.at(std::string(keys::kIsa)).at(std::string(keys::kIsaAvx2)), true);
  EXPECT_EQ(j.at(std::string(keys::kIsa)).at(std::string(keys::kIsaAmxTile)), false);
  EXPECT_TRUE(j.at(std::string(keys::kFlags)).is_array());
}

TEST(CpuInfo, Graviton3Fixture) {
  const CpuFacts f = read_cpu_facts(sysroot("arm64-graviton3"));
  EXPECT_EQ(f.model, "Neoverse-V1");
  EXPECT_EQ(f.vendor, "ARM");
  EXPECT_EQ(f.arch, "aarch64");
  EXPECT_EQ(f.threads, 8);
  EXPECT_EQ(f.sockets, 1);  // from sysfs topology: Arm cpuinfo has no physical id
  EXPECT_EQ(f.cores, 8);
  EXPECT_EQ(f.numa_nodes, 1);
  // No "cpu MHz" on Arm and no cpufreq on this instance: unknown, not 0.
  EXPECT_FALSE(f.mhz_current);
  EXPECT_FALSE(f.mhz_max);
  EXPECT_FALSE(f.mhz_min);
  ASSERT_EQ(f.caches.size(), 4u);
  EXPECT_EQ(f.caches[0].size_bytes, 64u * 1024);
  EXPECT_EQ(f.caches[3].size_bytes, 32u * 1024 * 1024);
  EXPECT_EQ(f.caches[3].shared_by_threads, 8);

  EXPECT_EQ(f.isa.size(), 6u);
  EXPECT_TRUE(f.isa.at("neon"));
  EXPECT_TRUE(f.isa.at("sve"));
  EXPECT_FALSE(f.isa.at("sve2"));  // Neoverse-V1 is SVE1 only
  EXPECT_TRUE(f.isa.at("asimdhp"));
  EXPECT_TRUE(f.isa.at("bf16"));
  EXPECT_TRUE(f.isa.at("i8mm"));
  EXPECT_EQ(f.isa.count("avx"), 0u);
  EXPECT_EQ(f.isa.count("sse4_2"), 0u);
  EXPECT_TRUE(has_flag(f, "svebf16"));

  const auto j = to_json(f);
  EXPECT_FALSE(j.contains(std::string(keys::kMhzCurrent)));
  EXPECT_FALSE(j.contains(std::string(keys::kMhzMax)));
  EXPECT_EQ(j.at(std::string(keys::kIsa)).at(std::string(keys::kIsaNeon)), true);
}

TEST(CpuInfo, TwoSocketXeonCountsDistinctPairs) {
  const CpuFacts f = read_cpu_facts(sysroot("x86_64-xeon-2socket"));
  EXPECT_EQ(f.model, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_EQ(f.vendor, "GenuineIntel");
  EXPECT_EQ(f.threads, 8);
  EXPECT_EQ(f.sockets, 2);
  EXPECT_EQ(f.cores, 4);  // core ids 0 and 1 on each socket: four (physical id, core id) pairs
  EXPECT_EQ(f.mhz_current, 2000.0);
  EXPECT_TRUE(f.isa.at("amx_tile"));
  EXPECT_TRUE(f.isa.at("amx_int8"));
  EXPECT_TRUE(f.isa.at("amx_bf16"));
  EXPECT_TRUE(f.isa.at("avx512_fp16"));
  EXPECT_FALSE(has_flag(f, "hypervisor"));

  // No sysfs in this tree: caches, NUMA nodes and cpufreq limits have no key at all.
  EXPECT_TRUE(f.caches.empty());
  const auto j = to_json(f);
  EXPECT_FALSE(j.contains(std::string(keys::kCaches)));
  EXPECT_FALSE(j.contains(std::string(keys::kNumaNodes)));
  EXPECT_FALSE(j.contains(std::string(keys::kMhzMax)));
  EXPECT_FALSE(j.contains(std::string(keys::kMhzMin)));
  EXPECT_EQ(j.at(std::string(keys::kSockets)), 2);
}

TEST(CpuInfo, MissingRootHasNoKeys) {
  const CpuFacts f = read_cpu_facts(sysroot("does-not-exist"));
  EXPECT_FALSE(f.model || f.vendor || f.arch || f.threads || f.sockets || f.cores);
  EXPECT_TRUE(f.isa.empty());
  EXPECT_TRUE(f.flags.empty());
  EXPECT_TRUE(to_json(f).empty());
}

TEST_F(CpuScratchRoot, CoresFromCpuCoresTimesSockets) {
  std::string text;
  for (int i = 0; i < 4; ++i)
    text += "processor\t: " + std::to_string(i) +
            "\nvendor_id\t: GenuineIntel\nphysical id\t: " + std::to_string(i / 2) +
            "\ncpu cores\t: 6\nflags\t\t: fpu sse4_2\n\n";
  write("proc/cpuinfo", text);
  const CpuFacts f = read_cpu_facts(root_);
  EXPECT_EQ(f.threads, 4);
  EXPECT_EQ(f.sockets, 2);
  EXPECT_EQ(f.cores, 12);
  EXPECT_TRUE(f.isa.at("sse4_2"));
  EXPECT_FALSE(f.isa.at("avx"));
}

TEST_F(CpuScratchRoot, ProcessorsWithoutBlankLinesBetween) {
  write("proc/cpuinfo",
        "processor : 0\nvendor_id : AuthenticAMD\nphysical id : 0\ncore id : 0\n"
        "processor : 1\nvendor_id : AuthenticAMD\nphysical id : 0\ncore id : 0\n");
  const CpuFacts f = read_cpu_facts(root_);
  EXPECT_EQ(f.threads, 2);
  EXPECT_EQ(f.cores, 1);
  EXPECT_TRUE(f.isa.empty());  // x86 without a flags line: the ISA is unknown, not all false
}

TEST_F(CpuScratchRoot, MalformedFilesLeaveKeysAbsent) {
  write("proc/cpuinfo",
        "processor : 0\nvendor_id : Genuine\x01Intel\nmodel name : Bad\xFFName\ncpu MHz : fast\n"
        "physical id : zero\ncore id : 0\nflags : avx2\n\nthis line has no colon\n\n");
  const std::string cache = "sys/devices/system/cpu/cpu0/cache/";
  write(cache + "index0/level", "one\n");
  write(cache + "index0/type", "Data\n");
  write(cache + "index0/size", "lots\n");
  write(cache + "index0/shared_cpu_list", "3-1\n");
  write(cache + "index1/size", "18446744073709551615K\n");  // would overflow as bytes
  write(cache + "indexfoo/size", "32K\n");                  // not an indexN directory
  write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq", "abc\n");
  write("sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_min_freq", "0\n");
  fs::create_directories(root_ / "sys/devices/system/node/has_memory");

  CpuFacts f;
  ASSERT_NO_THROW(f = read_cpu_facts(root_));
  EXPECT_EQ(f.threads, 1);
  EXPECT_EQ(f.vendor, "Genuine\\x01Intel");
  EXPECT_EQ(f.model, "Bad\xEF\xBF\xBDName");
  EXPECT_FALSE(f.mhz_current);
  EXPECT_FALSE(f.sockets);
  EXPECT_FALSE(f.cores);
  EXPECT_FALSE(f.mhz_max);
  EXPECT_FALSE(f.mhz_min);
  EXPECT_FALSE(f.numa_nodes);
  ASSERT_EQ(f.caches.size(), 1u);  // index1 has nothing usable left, indexfoo is skipped
  EXPECT_FALSE(f.caches[0].level);
  EXPECT_EQ(f.caches[0].type, "data");
  EXPECT_FALSE(f.caches[0].size_bytes);
  EXPECT_FALSE(f.caches[0].shared_by_threads);
  EXPECT_TRUE(f.isa.at("avx2"));
  EXPECT_NO_THROW((void)to_json(f).dump());
}

TEST_F(CpuScratchRoot, CpuinfoThatIsADirectory) {
  fs::create_directories(root_ / "proc/cpuinfo");
  write("sys/devices/system/cpu/online", "0-3,6\n");
  CpuFacts f;
  ASSERT_NO_THROW(f = read_cpu_facts(root_));
  EXPECT_EQ(f.threads, 5);  // from the online list when cpuinfo cannot be read
  EXPECT_FALSE(f.arch);
  EXPECT_FALSE(f.model);
}

TEST_F(CpuScratchRoot, ArmNamesForUnknownParts) {
  write("proc/cpuinfo",
        "processor : 0\nFeatures : fp asimd sve2\nCPU implementer : 0x41\nCPU part : 0xfff\n\n"
        "processor : 1\nFeatures : fp asimd sve2\nCPU implementer : 0x41\nCPU part : 0xfff\n");
  CpuFacts f = read_cpu_facts(root_);
  EXPECT_EQ(f.vendor, "ARM");
  EXPECT_EQ(f.model, "0x41 part 0xfff");
  EXPECT_EQ(f.arch, "aarch64");
  EXPECT_TRUE(f.isa.at("sve2"));
  EXPECT_FALSE(f.isa.at("sve"));
  EXPECT_FALSE(f.sockets);  // neither cpuinfo nor sysfs says

  write("proc/cpuinfo", "processor : 0\nFeatures : fp\nCPU implementer : 0x99\nCPU part : 0x1\n");
  f = read_cpu_facts(root_);
  EXPECT_EQ(f.vendor, "0x99");
  EXPECT_EQ(f.model, "0x99 part 0x1");
  EXPECT_FALSE(f.isa.at("neon"));
}

TEST(CpuInfo, LiveRootParses) {
  CpuFacts f;
  ASSERT_NO_THROW(f = read_cpu_facts("/"));
  ASSERT_TRUE(f.threads);
  EXPECT_GE(*f.threads, 1);
  struct utsname u {};
  ASSERT_EQ(uname(&u), 0);
  EXPECT_EQ(f.arch, std::string(u.machine));
  EXPECT_EQ(gpucheck::host::detect_arch("/"), std::string(u.machine));
  EXPECT_NO_THROW((void)to_json(f).dump());
}

// The OpenCL probe end to end: opencl_probe_driver started with posix_spawn and a made-up
// environment (ocl-icd reads OCL_ICD_VENDORS once per process), against the fake ICD, pocl and
// broken vendors directories.
#if GPUCHECK_HAVE_OPENCL

#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include "backends/opencl/opencl_probe.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <vector>

extern char** environ;

namespace gpucheck::opencl {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

const Json kInvalidValue = {{"error", "CL_INVALID_VALUE (-30)"}};

struct ChildRun {
  bool timed_out = false;
  int status = 0;  // from waitpid
  std::string out;
  bool exited_ok() const { return !timed_out && WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// This process's environment without anything that steers OpenCL, plus `extra`.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const std::string name = entry.substr(0, entry.find('='));
    if (name.starts_with("OCL_ICD_") || name.starts_with("OPENCL_") ||
        name.starts_with("FAKE_ICD_"))
      continue;
    env.push_back(entry);
  }
  for (const auto& [k, v] : extra) env.push_back(k + "=" + v);
  return env;
}

// Runs a program with the given environment; kills it after `timeout`.
ChildRun run_program(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                     std::chrono::seconds timeout = std::chrono::seconds(120)) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& e : env) envp.push_back(const_cast<char*>(e.c_str()));
  envp.push_back(nullptr);
  pid_t pid = 0;
  const int rc = ::posix_spawn(&pid, args[0], &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(fds[1]);
  if (rc != 0) {
    ::close(fds[0]);
    throw std::runtime_error("posix_spawn failed for " + argv[0]);
  }
  ChildRun run;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  bool open = true;
  while (open) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) {
      run.timed_out = true;
      ::kill(pid, SIGKILL);
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), 200))) <= 0) continue;
    char buf[65536];
    const ssize_t n = ::read(fds[0], buf, sizeof buf);
    if (n > 0) {
      run.out.append(buf, static_cast<std::size_t>(n));
    } else {
      open = false;
    }
  }
  ::close(fds[0]);
  ::waitpid(pid, &run.status, 0);
  return run;
}

ChildRun run_probe(const std::map<std::string, std::string>& env,
                   std::chrono::seconds timeout = std::chrono::seconds(120)) {
  return run_program({GPUCHECK_OPENCL_PROBE_DRIVER}, child_environment(env), timeout);
}

Json probe_json(const std::map<std::string, std::string>& env) {
  const ChildRun run = run_probe(env);
  EXPECT_TRUE(run.exited_ok()) << "status " << run.status << "\n" << run.out;
  return Json::parse(run.out);
}

// A vendors directory made for one test.
class VendorsDir {
 public:
  VendorsDir() {
    std::string tmpl = (fs::temp_directory_path() / "gpucheck-ocl-vendors-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    dir_ = tmpl;
  }
  ~VendorsDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  const std::string& path() const { return dir_; }
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(file(name), std::ios::binary) << text;
  }

 private:
  std::string dir_;
};

// The library pocl's own .icd names, when pocl is installed.
std::optional<std::string> pocl_library() {
  std::ifstream in("/etc/OpenCL/vendors/pocl.icd");
  std::string line;
  if (!in || !std::getline(in, line) || line.empty()) return std::nullopt;
  return line;
}

const Json* icd_entry(const Json& probe, const std::string& path) {
  for (const auto& f : probe["icd_files"])
    if (f.value("path", "") == path) return &f;
  return nullptr;
}

TEST(OpenClProbe, FakeIcdPlatformsAndDevicesInOrder) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const Json j = probe_json(
      {{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_PLATFORMS", "2"}, {"FAKE_ICD_DEVICES", "3"}});
  EXPECT_EQ(j["name"], "opencl");
  EXPECT_EQ(j["status"], "available");
  ASSERT_EQ(j["platforms"].size(), 2u) << j.dump(1);
  ASSERT_EQ(j["devices"].size(), 6u);
  for (int i = 0; i < 6; ++i) {
    const Json& d = j["devices"][i];
    EXPECT_EQ(d["device"], "opencl" + std::to_string(i));
    EXPECT_EQ(d["platform"], i / 3);
    EXPECT_EQ(d["device_name"],
              "Fake device " + std::to_string(i / 3) + "." + std::to_string(i % 3));
    EXPECT_EQ(d["stable_id"], "opencl:Fake ICD platform " + std::to_string(i / 3) + "/" +
                                  d["device_name"].get<std::string>());
    EXPECT_FALSE(d.contains("pci_bus_id"));
    EXPECT_FALSE(d.contains("device_uuid"));
  }
  const Json& p = j["platforms"][1];
  EXPECT_EQ(p["name"], "Fake ICD platform 1");
  EXPECT_EQ(p["vendor"], "gpucheck fake ICD");
  EXPECT_EQ(p["profile"], "FULL_PROFILE");
  EXPECT_EQ(p["extensions"], "cl_khr_icd");
  EXPECT_EQ(p["icd_suffix"], "FAKE");
  EXPECT_EQ(p["family"], "other");
  EXPECT_EQ(p["devices"], Json::parse(R"(["opencl3", "opencl4", "opencl5"])"));
  EXPECT_FALSE(p.contains("host_timer_resolution_ns"));  // an OpenCL 1.2 platform
  const Json* fake = icd_entry(j, v.file("fake.icd"));
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ((*fake)["loads"], true);
  EXPECT_EQ((*fake)["icd_entry_points"], true);
  EXPECT_EQ(j["icd_source"]["source"], "OCL_ICD_VENDORS");
  EXPECT_FALSE(j["loader"]["path"].get<std::string>().empty());
}

TEST(OpenClProbe, DeviceFieldsFollowTheDeviceVersion) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const Json j = probe_json({{"OCL_ICD_VENDORS", v.path()}});
  ASSERT_EQ(j["devices"].size(), 1u) << j.dump(1);
  const Json& props = j["devices"][0]["properties"];
  EXPECT_EQ(props["cl_device_max_compute_units"], 4);
  EXPECT_EQ(props["cl_device_global_mem_size"], 1u << 30);
  EXPECT_EQ(props["cl_device_max_work_item_sizes"], Json::parse("[1024, 1024, 64]"));
  EXPECT_EQ(props["cl_device_type"]["flags"], Json::parse(R"(["CL_DEVICE_TYPE_GPU"])"));
  EXPECT_EQ(props["cl_device_local_mem_type"], "CL_LOCAL");
  // A 1.2 device is asked 1.2 fields (this fake does not answer all of them) but no 2.0+ ones.
  EXPECT_EQ(props["cl_device_linker_available"], kInvalidValue);
  EXPECT_FALSE(props.contains("cl_device_numeric_version"));
  EXPECT_FALSE(props.contains("cl_device_svm_capabilities"));
  EXPECT_FALSE(props.contains("cl_device_pci_bus_info_khr"));  // extension not listed
}

TEST(OpenClProbe, FailingQueryShowsItsErrorAndTheOthersStillShow) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const Json j = probe_json(
      {{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_FAIL_QUERY", "CL_DEVICE_MAX_COMPUTE_UNITS"}});
  ASSERT_EQ(j["devices"].size(), 1u);
  const Json& props = j["devices"][0]["properties"];
  EXPECT_EQ(props["cl_device_max_compute_units"], kInvalidValue);
  EXPECT_EQ(props["cl_device_max_clock_frequency"], 1000);
  EXPECT_EQ(props["cl_device_name"], "Fake device 0.0");
  EXPECT_EQ(j["status"], "available");
}

TEST(OpenClProbe, DriverStringsAreSanitized) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const Json j = probe_json(
      {{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_DEVICE_NAME", "My \"GPU\" \xff\xfe\x01 \\ end"}});
  ASSERT_EQ(j["devices"].size(), 1u);
  const std::string want = "My \"GPU\" \xEF\xBF\xBD\xEF\xBF\xBD\\x01 \\ end";
  EXPECT_EQ(j["devices"][0]["device_name"], want);
  EXPECT_EQ(j["devices"][0]["properties"]["cl_device_name"], want);
  EXPECT_EQ(j["devices"][0]["stable_id"], "opencl:Fake ICD platform 0/" + want);
}

TEST(OpenClProbe, PciBusIdAndUuidMakeTheStableId) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  Json j = probe_json({{"OCL_ICD_VENDORS", v.path()},
                       {"FAKE_ICD_DEVICES", "2"},
                       {"FAKE_ICD_PCI_BUS_ID", "0000:17:00.0"},
                       {"FAKE_ICD_UUID", "00112233-4455-6677-8899-aabbccddee10"}});
  ASSERT_EQ(j["devices"].size(), 2u);
  EXPECT_EQ(j["devices"][0]["pci_bus_id"], "0000:17:00.0");
  EXPECT_EQ(j["devices"][0]["stable_id"], "opencl:0000:17:00.0");
  EXPECT_EQ(j["devices"][0]["device_uuid"], "00112233-4455-6677-8899-aabbccddee10");
  EXPECT_EQ(j["devices"][1]["pci_bus_id"], "0000:18:00.0");
  EXPECT_EQ(j["devices"][1]["device_uuid"], "00112233-4455-6677-8899-aabbccddee11");
  EXPECT_EQ(j["devices"][0]["properties"]["cl_device_pci_bus_info_khr"], "0000:17:00.0");

  j = probe_json(
      {{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_UUID", "00112233445566778899aabbccddeeff"}});
  ASSERT_EQ(j["devices"].size(), 1u);
  EXPECT_EQ(j["devices"][0]["stable_id"], "opencl:00112233-4455-6677-8899-aabbccddeeff");
  EXPECT_FALSE(j["devices"][0].contains("pci_bus_id"));
}

TEST(OpenClProbe, ZeroPlatformsIsAFindingNotAnError) {
  VendorsDir empty;
  Json j = probe_json({{"OCL_ICD_VENDORS", empty.path()}});
  EXPECT_EQ(j["status"], "available");
  EXPECT_EQ(j["reason"], "0 platforms");
  EXPECT_TRUE(j["platforms"].empty());
  EXPECT_TRUE(j["devices"].empty());
  EXPECT_TRUE(j["icd_files"].empty());

  // An ICD that loads but has no platform.
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  j = probe_json({{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_PLATFORMS", "0"}});
  EXPECT_EQ(j["status"], "available");
  EXPECT_EQ(j["reason"], "0 platforms");
  ASSERT_EQ(j["icd_files"].size(), 1u);
  EXPECT_EQ(j["icd_files"][0]["loads"], true);
}

TEST(OpenClProbe, PlatformWithoutDevices) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const Json j = probe_json({{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_DEVICES", "0"}});
  ASSERT_EQ(j["platforms"].size(), 1u);
  EXPECT_TRUE(j["platforms"][0]["devices"].empty());
  EXPECT_FALSE(j["platforms"][0].contains("error"));  // CL_DEVICE_NOT_FOUND is "none"
  EXPECT_TRUE(j["devices"].empty());
}

TEST(OpenClProbe, BrokenVendorsDirectoryIsReportedAndTheRestStillEnumerates) {
  VendorsDir v;
  const std::string fake = GPUCHECK_FAKE_ICD;
  v.write("a_fake.icd", fake + "\n");
  v.write("b_fake_again.icd", fake + "\n");
  v.write("d_missing.icd", "/nonexistent/gpucheck/libmissing.so\n");
  v.write("not_a_library.txt", std::string(4096, 'x'));
  v.write("e_not_a_library.icd", v.file("not_a_library.txt") + "\n");
  const auto pocl = pocl_library();
  if (pocl) v.write("c_pocl.icd", *pocl + "\n");
  const Json j = probe_json({{"OCL_ICD_VENDORS", v.path()}});
  EXPECT_EQ(j["status"], "available");

  const Json* a = icd_entry(j, v.file("a_fake.icd"));
  const Json* b = icd_entry(j, v.file("b_fake_again.icd"));
  const Json* missing = icd_entry(j, v.file("d_missing.icd"));
  const Json* junk = icd_entry(j, v.file("e_not_a_library.icd"));
  ASSERT_TRUE(a && b && missing && junk) << j["icd_files"].dump(1);
  EXPECT_EQ((*a)["loads"], true);
  EXPECT_FALSE(a->contains("duplicate_of"));
  EXPECT_EQ((*b)["loads"], true);
  EXPECT_EQ((*b)["duplicate_of"], v.file("a_fake.icd"));
  EXPECT_EQ((*missing)["loads"], false);
  EXPECT_EQ((*missing)["error"],
            "/nonexistent/gpucheck/libmissing.so: cannot open shared object file: No such file "
            "or directory");
  EXPECT_EQ((*junk)["loads"], false);
  EXPECT_NE((*junk)["error"].get<std::string>().find("not_a_library.txt"), std::string::npos);

  // Both .icd files name one library: the loader lists its platform twice, and so do we,
  // marking the second.
  int fake_platforms = 0;
  for (const auto& p : j["platforms"]) {
    if (p["name"] != "Fake ICD platform 0") continue;
    if (++fake_platforms == 2) {
      EXPECT_TRUE(p.contains("duplicate_of")) << p.dump();
    }
  }
  EXPECT_EQ(fake_platforms, 2) << j["platforms"].dump(1);
  int duplicates = 0;
  for (const auto& d : j["devices"]) duplicates += d.contains("duplicate_of") ? 1 : 0;
  EXPECT_EQ(duplicates, 1);

  if (!pocl)
    GTEST_SKIP() << "pocl is not installed (/etc/OpenCL/vendors/pocl.icd): its part skipped";
  const Json* c = icd_entry(j, v.file("c_pocl.icd"));
  ASSERT_NE(c, nullptr);
  EXPECT_EQ((*c)["loads"], true);
  bool pocl_platform = false;
  for (const auto& p : j["platforms"]) pocl_platform |= p["family"] == "pocl";
  EXPECT_TRUE(pocl_platform) << j["platforms"].dump(1);
}

TEST(OpenClProbe, OclIcdVendorsNamingOneIcdFileOrALibrary) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  Json j = probe_json({{"OCL_ICD_VENDORS", v.file("fake.icd")}});
  if (j["loader"]["kind"] != "ocl-icd") GTEST_SKIP() << "the loader here is not ocl-icd";
  EXPECT_EQ(j["icd_source"]["type"], "icd_file");
  EXPECT_EQ(j["platforms"].size(), 1u);

  j = probe_json({{"OCL_ICD_VENDORS", GPUCHECK_FAKE_ICD}});
  EXPECT_EQ(j["icd_source"]["type"], "library");
  ASSERT_EQ(j["icd_files"].size(), 1u);
  EXPECT_EQ(j["icd_files"][0]["source"], "OCL_ICD_VENDORS");
  EXPECT_EQ(j["platforms"].size(), 1u);
  EXPECT_EQ(j["env"]["OCL_ICD_VENDORS"]["effect"],
            "loaded directly as the only ICD library (no .icd file is read)");
}

TEST(OpenClProbe, OclIcdIgnoresIcdFilenames) {
  VendorsDir empty;
  const Json j =
      probe_json({{"OCL_ICD_VENDORS", empty.path()}, {"OCL_ICD_FILENAMES", GPUCHECK_FAKE_ICD}});
  if (j["loader"]["kind"] != "ocl-icd") GTEST_SKIP() << "the loader here is not ocl-icd";
  EXPECT_TRUE(j["platforms"].empty()) << "ocl-icd 2.3 loaded OCL_ICD_FILENAMES after all";
  EXPECT_TRUE(j["env"]["OCL_ICD_FILENAMES"]["effect"].get<std::string>().starts_with("ignored"));
}

TEST(OpenClProbe, MissingLoaderIsUnavailableWithTheDlerror) {
  ProbeOptions options;
  options.loader = "libOpenCL-gpucheck-missing.so.1";
  const Json j = probe_opencl(options);
  EXPECT_EQ(j["status"], "unavailable");
  EXPECT_EQ(j["reason"],
            "libOpenCL-gpucheck-missing.so.1: cannot open shared object file: No such file or "
            "directory");
  EXPECT_FALSE(j["loader"].contains("kind"));
  EXPECT_TRUE(j["platforms"].empty());
  EXPECT_TRUE(j.contains("icd_files"));  // the files are still read
  EXPECT_TRUE(j.contains("unregistered_vendor_libraries"));
}

TEST(OpenClProbe, PoclThroughTheSystemVendorsDirectory) {
  if (!pocl_library()) GTEST_SKIP() << "pocl is not installed (/etc/OpenCL/vendors/pocl.icd)";
  const Json j = probe_json({});
  EXPECT_EQ(j["status"], "available");
  EXPECT_EQ(j["icd_source"]["path"], "/etc/OpenCL/vendors");
  const Json* pocl = nullptr;
  for (const auto& p : j["platforms"])
    if (p["family"] == "pocl") pocl = &p;
  ASSERT_NE(pocl, nullptr) << j["platforms"].dump(1);
  ASSERT_FALSE((*pocl)["devices"].empty());
  const std::string id = (*pocl)["devices"][0];
  for (const auto& d : j["devices"]) {
    if (d["device"] != id) continue;
    EXPECT_EQ(d["stable_id"],
              "opencl:Portable Computing Language/" + d["device_name"].get<std::string>());
    EXPECT_GE(d["properties"].size(), 90u);
    for (const auto& [key, value] : d["properties"].items())
      EXPECT_FALSE(value.is_object() && value.contains("error")) << key << ": " << value;
  }
  bool registered = false;
  for (const auto& l : j["unregistered_vendor_libraries"])
    if (l["vendor"] == "pocl") registered = l["registered"] == "icd";
  EXPECT_TRUE(registered) << j["unregistered_vendor_libraries"].dump(1);
}

// What the lead's isolation has to catch: the fake can crash or hang enumeration.
TEST(OpenClProbe, FakeIcdCanCrashOrHangTheProbeProcess) {
  VendorsDir v;
  v.write("fake.icd", std::string(GPUCHECK_FAKE_ICD) + "\n");
  const ChildRun crash = run_probe({{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_CRASH", "1"}});
  ASSERT_FALSE(crash.timed_out);
  EXPECT_TRUE(WIFSIGNALED(crash.status) && WTERMSIG(crash.status) == SIGSEGV) << crash.status;
  const ChildRun hang =
      run_probe({{"OCL_ICD_VENDORS", v.path()}, {"FAKE_ICD_HANG", "1"}}, std::chrono::seconds(3));
  EXPECT_TRUE(hang.timed_out);
}

// DESIGN.md: the binary needs nothing at load time that a broken GPU stack can lack.
TEST(OpenClProbe, BinariesDoNotLinkOpenClOrClblast) {
  for (const char* binary : {GPUCHECK_BINARY, GPUCHECK_OPENCL_PROBE_DRIVER}) {
    const ChildRun r = run_program({"/usr/bin/readelf", "-d", binary}, child_environment({}));
    if (!r.exited_ok()) GTEST_SKIP() << "readelf -d did not run";
    EXPECT_NE(r.out.find("(NEEDED)"), std::string::npos) << binary;
    EXPECT_EQ(r.out.find("libOpenCL"), std::string::npos) << binary << "\n" << r.out;
    EXPECT_EQ(r.out.find("libclblast"), std::string::npos) << binary << "\n" << r.out;
  }
}

}  // namespace
}  // namespace gpucheck::opencl

#endif  // GPUCHECK_HAVE_OPENCL

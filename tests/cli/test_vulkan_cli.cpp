// The Vulkan probe against vulkaninfo on the same machine (lavapipe in CI): every field both
// report, from `vulkaninfo --json` (the profile file it writes into its working directory) and
// `vulkaninfo --summary`. Skips, saying why, where vulkaninfo or a Vulkan device is absent.
#include "run_gpucheck.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

namespace gpucheck::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

Json vulkan_section(const Json& doc) {
  for (const auto& b : doc.at("backends"))
    if (b.value("name", "") == "vulkan") return b;
  return Json();
}

// One `gpucheck probe --json` for every test here (a probe runs every backend: seconds).
const RunResult& probe_run() {
  static const RunResult r = run_gpucheck({"probe", "--json"});
  return r;
}

// The probe's vulkan section, or a reason to skip.
std::string probe_or_skip(Json* section) {
  const RunResult& r = probe_run();
  if (r.exit_code != 0) return "gpucheck probe --json failed: " + r.err;
  *section = vulkan_section(Json::parse(r.out));
  if (section->is_null() || section->value("status", "") == "not_built")
    return "gpucheck was built without the Vulkan backend";
  if (section->value("status", "") != "available")
    return "no Vulkan here: " + section->value("reason", std::string());
  if (section->at("devices").empty()) return "the Vulkan loader finds no physical device";
  return {};
}

// vulkaninfo's profile of the first device, written into a fresh directory.
std::string vulkaninfo_profile_or_skip(Json* profile) {
  if (!have_program("vulkaninfo")) return "vulkaninfo is not installed (Debian: vulkan-tools)";
  const fs::path dir = fs::path(write_temp_file("vulkaninfo/.keep", "")).parent_path();
  const RunResult r =
      run_program("sh", {"-c", "cd \"$0\" && vulkaninfo --json=0 >/dev/null 2>&1", dir.string()});
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") {
      std::ifstream in(e.path());
      *profile = Json::parse(in);
      return {};
    }
  return "vulkaninfo --json wrote no profile (exit " + std::to_string(r.exit_code) + ")";
}

std::set<std::string> as_set(const Json& list) {
  std::set<std::string> out;
  for (const auto& x : list) out.insert(x.get<std::string>());
  return out;
}

std::string uuid_of(const Json& bytes) {
  std::string hex;
  for (const auto& b : bytes) {
    char buf[3];
    std::snprintf(buf, sizeof buf, "%02x", b.get<unsigned>());
    hex += buf;
  }
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" +
         hex.substr(16, 4) + "-" + hex.substr(20);
}

TEST(VulkanProbe, FieldsEqualVulkaninfosProfile) {
  Json section, profile;
  if (auto why = probe_or_skip(&section); !why.empty()) GTEST_SKIP() << why;
  if (auto why = vulkaninfo_profile_or_skip(&profile); !why.empty()) GTEST_SKIP() << why;
  const Json& caps = profile.at("capabilities").at("device");
  const Json& props = caps.at("properties");
  const Json& base = props.at("VkPhysicalDeviceProperties");
  const Json& dev = section.at("devices").at(0);
  const Json& p = dev.at("properties");
  SCOPED_TRACE(p.dump(1));

  EXPECT_EQ(dev.at("device"), "vulkan0");
  EXPECT_EQ(p.at("device_name"), base.at("deviceName"));
  EXPECT_EQ(dev.at("device_name"), base.at("deviceName"));
  EXPECT_EQ(p.at("vendor_id"), base.at("vendorID"));
  EXPECT_EQ(p.at("device_id"), base.at("deviceID"));
  EXPECT_EQ(p.at("device_type"), base.at("deviceType"));
  EXPECT_EQ(p.at("api_version_raw"), base.at("apiVersion"));
  EXPECT_EQ(p.at("driver_version_raw"), base.at("driverVersion"));

  if (props.contains("VkPhysicalDeviceDriverProperties")) {
    const Json& d = props["VkPhysicalDeviceDriverProperties"];
    EXPECT_EQ(p.at("driver_id"), d.at("driverID"));
    EXPECT_EQ(p.at("driver_name"), d.at("driverName"));
    EXPECT_EQ(p.at("driver_info"), d.at("driverInfo"));
    const Json& c = d.at("conformanceVersion");
    EXPECT_EQ(p.at("conformance_version"), std::to_string(c.at("major").get<int>()) + "." +
                                               std::to_string(c.at("minor").get<int>()) + "." +
                                               std::to_string(c.at("subminor").get<int>()) + "." +
                                               std::to_string(c.at("patch").get<int>()));
  }
  if (props.contains("VkPhysicalDeviceIDProperties")) {
    const Json& id = props["VkPhysicalDeviceIDProperties"];
    EXPECT_EQ(p.at("device_uuid"), uuid_of(id.at("deviceUUID")));
    EXPECT_EQ(p.at("driver_uuid"), uuid_of(id.at("driverUUID")));
  }
  if (props.contains("VkPhysicalDevicePCIBusInfoPropertiesEXT")) {
    const Json& b = props["VkPhysicalDevicePCIBusInfoPropertiesEXT"];
    char bus[32];
    std::snprintf(bus, sizeof bus, "%04x:%02x:%02x.%x", b.at("pciDomain").get<unsigned>(),
                  b.at("pciBus").get<unsigned>(), b.at("pciDevice").get<unsigned>(),
                  b.at("pciFunction").get<unsigned>());
    EXPECT_EQ(dev.at("pci_bus_id"), bus);
  }
  if (props.contains("VkPhysicalDeviceSubgroupProperties")) {
    const Json& s = props["VkPhysicalDeviceSubgroupProperties"];
    EXPECT_EQ(p.at("subgroup").at("size"), s.at("subgroupSize"));
    // Operations newer than Debian 12's vulkaninfo (1.3.239), which drops the bits it does not
    // know; the probe names them (NVIDIA's 580 driver sets both).
    const auto theirs = as_set(s.at("supportedOperations"));
    auto ours = as_set(p.at("subgroup").at("supported_operations"));
    for (const char* newer :
         {"VK_SUBGROUP_FEATURE_ROTATE_BIT", "VK_SUBGROUP_FEATURE_ROTATE_CLUSTERED_BIT"})
      if (!theirs.contains(newer)) ours.erase(newer);
    EXPECT_EQ(ours, theirs);
    EXPECT_EQ(as_set(p.at("subgroup").at("supported_stages")), as_set(s.at("supportedStages")));
  }
  const Json& lim = base.at("limits");
  const Json& cl = p.at("compute_limits");
  EXPECT_EQ(cl.at("max_compute_work_group_size"), lim.at("maxComputeWorkGroupSize"));
  EXPECT_EQ(cl.at("max_compute_work_group_count"), lim.at("maxComputeWorkGroupCount"));
  EXPECT_EQ(cl.at("max_compute_work_group_invocations"), lim.at("maxComputeWorkGroupInvocations"));
  EXPECT_EQ(cl.at("max_compute_shared_memory_size"), lim.at("maxComputeSharedMemorySize"));

  const Json& feats = caps.at("features");
  const Json& sf = p.at("shader_features");
  auto feature = [&](const char* structure, const char* member, const char* ours) {
    if (!feats.contains(structure)) return;
    SCOPED_TRACE(std::string(structure) + "." + member);
    EXPECT_EQ(sf.at(ours), feats[structure].at(member));
  };
  feature("VkPhysicalDeviceShaderFloat16Int8Features", "shaderFloat16", "shader_float16");
  feature("VkPhysicalDeviceShaderFloat16Int8Features", "shaderInt8", "shader_int8");
  feature("VkPhysicalDevice16BitStorageFeatures", "storageBuffer16BitAccess",
          "storage_buffer_16bit_access");
  feature("VkPhysicalDevice16BitStorageFeatures", "storagePushConstant16",
          "storage_push_constant16");
  feature("VkPhysicalDevice8BitStorageFeatures", "storageBuffer8BitAccess",
          "storage_buffer_8bit_access");
  feature("VkPhysicalDeviceFeatures", "shaderFloat64", "shader_float64");
  feature("VkPhysicalDeviceFeatures", "shaderInt16", "shader_int16");

  const Json& qf = caps.at("queueFamiliesProperties");
  ASSERT_EQ(p.at("queue_families").size(), qf.size());
  for (std::size_t i = 0; i < qf.size(); ++i) {
    const Json& q = qf[i].at("VkQueueFamilyProperties");
    EXPECT_EQ(p["queue_families"][i].at("queue_count"), q.at("queueCount"));
    EXPECT_EQ(as_set(p["queue_families"][i].at("flags")), as_set(q.at("queueFlags")));
    EXPECT_EQ(p["queue_families"][i].at("timestamp_valid_bits"), q.at("timestampValidBits"));
  }
  std::set<std::string> ext_ours, ext_theirs;
  for (const auto& [name, v] : p.at("extensions").items()) ext_ours.insert(name);
  for (const auto& [name, v] : caps.at("extensions").items()) ext_theirs.insert(name);
  EXPECT_EQ(ext_ours, ext_theirs);
}

TEST(VulkanProbe, LoaderVersionLayersAndDevicesEqualVulkaninfosSummary) {
  Json section;
  if (auto why = probe_or_skip(&section); !why.empty()) GTEST_SKIP() << why;
  if (!have_program("vulkaninfo")) GTEST_SKIP() << "vulkaninfo is not installed";
  const RunResult r = run_program("vulkaninfo", {"--summary"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.out, m, std::regex(R"(Vulkan Instance Version: (\S+))")))
      << r.out;
  EXPECT_EQ(section.at("loader").at("instance_version"), m[1].str());
  std::set<std::string> layers;
  for (const auto& l : section.at("loader").at("layers")) layers.insert(l.at("name"));
  std::set<std::string> theirs;
  const std::regex layer_line(R"(\n(VK_LAYER_\S+))");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), layer_line);
       it != std::sregex_iterator(); ++it)
    theirs.insert((*it)[1].str());
  EXPECT_EQ(layers, theirs);
  std::vector<std::string> names;
  const std::regex name_line(R"(deviceName\s+= (.+))");
  for (auto it = std::sregex_iterator(r.out.begin(), r.out.end(), name_line);
       it != std::sregex_iterator(); ++it)
    names.push_back((*it)[1].str());
  ASSERT_EQ(section.at("devices").size(), names.size()) << r.out;
  for (std::size_t i = 0; i < names.size(); ++i)
    EXPECT_EQ(section["devices"][i].at("device_name"), names[i]);
  // Every driver the loader used initialised alone too.
  for (const auto& f : section.at("icd_files")) {
    if (f.value("loads", false)) {
      EXPECT_EQ(f.at("init").at("result"), "VK_SUCCESS (0)") << f.dump();
    }
  }
}

TEST(VulkanProbe, TextViewShowsTheBackendAndTheDevice) {
  Json section;
  if (auto why = probe_or_skip(&section); !why.empty()) GTEST_SKIP() << why;
  const std::string saved = write_temp_file("probe.json", probe_run().out);
  const RunResult r = run_gpucheck({"report", "show", saved});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("vulkan"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("loader " + section["loader"]["instance_version"].get<std::string>()),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find(section["devices"][0]["device_name"].get<std::string>()), std::string::npos)
      << r.out;
  const RunResult full = run_gpucheck({"report", "show", "--full", saved});
  ASSERT_EQ(full.exit_code, 0) << full.err;
  EXPECT_NE(full.out.find("backend vulkan"), std::string::npos);
  EXPECT_NE(full.out.find("device vulkan0"), std::string::npos);
}

}  // namespace
}  // namespace gpucheck::testing

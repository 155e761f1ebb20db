// The Vulkan driver manifests: the loader's search order and its variables, the parser against
// hostile files (bad JSON, deep nesting, a FIFO, a huge file, missing and mistyped fields), and
// the inventory a doctor check reads, over fabricated trees with a fake library checker.
#if GPUCHECK_HAVE_VULKAN

#include "backends/vulkan/icd_manifests.h"
#include "backends/vulkan/vk_names.h"
#include "backends/vulkan/vulkan_probe.h"
#include "core/json_keys.h"
#include "core/json_keys_vulkan.h"
#include "scratch_root.h"

#include <sys/stat.h>

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace gpucheck::vulkan {
namespace {

namespace k = keys;
using Json = nlohmann::json;

constexpr const char* kGood =
    R"({"file_format_version": "1.0.0", "ICD": {"library_path": "libvulkan_lvp.so",
        "api_version": "1.3.230"}})";

std::vector<std::string> paths(const std::vector<SearchEntry>& list) {
  std::vector<std::string> out;
  for (const auto& e : list) out.push_back(e.path + " " + e.source);
  return out;
}

TEST(VulkanManifestParse, ReadsTheFields) {
  const Manifest m = parse_manifest(
      R"({"file_format_version": "1.0.1", "ICD": {"library_path": "../lib/x.so",
          "api_version": "1.3.2", "is_portability_driver": true, "library_arch": "64"}})");
  EXPECT_EQ(m.error, "");
  EXPECT_EQ(m.file_format_version, "1.0.1");
  EXPECT_EQ(m.library_path, "../lib/x.so");
  EXPECT_EQ(m.api_version, "1.3.2");
  EXPECT_EQ(m.is_portability_driver, true);
  EXPECT_EQ(m.library_arch, "64");
}

TEST(VulkanManifestParse, NamesWhatIsWrong) {
  EXPECT_EQ(parse_manifest("{\"ICD\": ").error, "not valid JSON");
  EXPECT_EQ(parse_manifest("").error, "not valid JSON");
  EXPECT_EQ(parse_manifest("[1, 2]").error, "not a JSON object");
  EXPECT_EQ(parse_manifest(R"({"file_format_version": "1.0.0"})").error,
            "no \"ICD\" object (a layer manifest, or not a driver's)");
  EXPECT_EQ(parse_manifest(R"({"file_format_version": "1.0.0", "ICD": []})").error,
            "\"ICD\" is not an object");
  EXPECT_EQ(parse_manifest(R"({"file_format_version": "1.0.0", "ICD": {}})").error,
            "no \"ICD\".\"library_path\"");
  EXPECT_EQ(parse_manifest(R"({"ICD": {"library_path": "x.so"}})").error,
            "no \"file_format_version\"");
  EXPECT_EQ(parse_manifest(R"({"file_format_version": 1, "ICD": {"library_path": "x.so"}})").error,
            "\"file_format_version\" is not a string");
  EXPECT_EQ(parse_manifest(R"({"file_format_version": "1.0.0", "ICD": {"library_path": ["x.so"]}})")
                .error,
            "\"library_path\" is not a string");
  // A layer manifest is no driver's.
  EXPECT_NE(parse_manifest(R"({"file_format_version": "1.0.0", "layer": {"name": "L"}})").error,
            "");
}

TEST(VulkanManifestParse, RefusesDeepNestingBeforeParsing) {
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_EQ(parse_manifest(deep).error, "nested deeper than 32 levels: not a driver manifest");
  const std::string objects = R"({"a":)" + std::string(100, '{') + std::string(101, '}');
  EXPECT_NE(parse_manifest(objects).error.find("nested deeper"), std::string::npos);
  // Brackets inside strings do not count.
  const std::string in_string = std::string(R"({"file_format_version": "1.0.0", "x": ")") +
                                std::string(100, '[') + R"(", "ICD": {"library_path": "a.so"}})";
  EXPECT_EQ(parse_manifest(in_string).error, "");
}

TEST(VulkanManifestPaths, LibraryIsResolvedAgainstTheManifestsDirectory) {
  EXPECT_EQ(library_to_open("/usr/share/vulkan/icd.d/a.json", "libGLX_nvidia.so.0"),
            "libGLX_nvidia.so.0");
  EXPECT_EQ(library_to_open("/usr/share/vulkan/icd.d/a.json", "/opt/x/libv.so"), "/opt/x/libv.so");
  EXPECT_EQ(library_to_open("/opt/sdk/etc/a.json", "../lib/libv.so"),
            "/opt/sdk/etc/../lib/libv.so");
}

TEST(VulkanSearchOrder, StandardDirectoriesInTheLoadersOrder) {
  ManifestFacts f;
  f.env = {{"HOME", "/home/me"}};
  EXPECT_EQ(
      paths(driver_search_list(f)),
      (std::vector<std::string>{
          "/home/me/.config/vulkan/icd.d XDG_CONFIG_HOME", "/etc/xdg/vulkan/icd.d XDG_CONFIG_DIRS",
          "/etc/vulkan/icd.d SYSCONFDIR", "/home/me/.local/share/vulkan/icd.d XDG_DATA_HOME",
          "/usr/local/share/vulkan/icd.d XDG_DATA_DIRS", "/usr/share/vulkan/icd.d XDG_DATA_DIRS"}));
  f.env = {{"XDG_CONFIG_HOME", "/c"}, {"XDG_DATA_DIRS", "/d1::/d2"}, {"XDG_DATA_HOME", "/h"}};
  EXPECT_EQ(paths(driver_search_list(f)),
            (std::vector<std::string>{
                "/c/vulkan/icd.d XDG_CONFIG_HOME", "/etc/xdg/vulkan/icd.d XDG_CONFIG_DIRS",
                "/etc/vulkan/icd.d SYSCONFDIR", "/h/vulkan/icd.d XDG_DATA_HOME",
                "/d1/vulkan/icd.d XDG_DATA_DIRS", "/d2/vulkan/icd.d XDG_DATA_DIRS"}));
}

TEST(VulkanSearchOrder, VariablesReplaceOrPrecedeTheDirectories) {
  ManifestFacts f;
  f.env = {{"VK_ICD_FILENAMES", "/a.json:/b.json"}, {"VK_ADD_DRIVER_FILES", "/add.json"}};
  EXPECT_EQ(paths(driver_search_list(f)),
            (std::vector<std::string>{"/add.json VK_ADD_DRIVER_FILES", "/a.json VK_ICD_FILENAMES",
                                      "/b.json VK_ICD_FILENAMES"}));
  // VK_DRIVER_FILES wins over the older name.
  f.env = {{"VK_ICD_FILENAMES", "/a.json"}, {"VK_DRIVER_FILES", "/n.json"}};
  EXPECT_EQ(paths(driver_search_list(f)), (std::vector<std::string>{"/n.json VK_DRIVER_FILES"}));
  // With elevated privileges every variable is ignored and $HOME's directories are skipped.
  f.env = {{"VK_DRIVER_FILES", "/n.json"}, {"HOME", "/home/me"}};
  f.elevated = true;
  EXPECT_EQ(paths(driver_search_list(f)).front(), "/etc/xdg/vulkan/icd.d XDG_CONFIG_DIRS");
  EXPECT_EQ(driver_search_list(f).size(), 4u);
}

class VulkanInventory : public gpucheck::testing::ScratchRoot {
 protected:
  ManifestInventory run(EnvMap env = {}) {
    ManifestFacts f;
    f.root = root_.string();
    f.env = std::move(env);
    return manifest_inventory(f, [this](const std::string& library) {
      checked.push_back(library);
      return Json{{k::kLoads, library.find("missing") == std::string::npos}};
    });
  }
  std::vector<std::string> checked;
};

TEST_F(VulkanInventory, ListsParsesAndChecksEveryManifestInOrder) {
  write("etc/vulkan/icd.d/z.json", kGood);
  write("usr/share/vulkan/icd.d/nvidia_icd.json",
        R"({"file_format_version": "1.0.0", "ICD": {"library_path": "libmissing.so.0"}})");
  write("usr/share/vulkan/icd.d/broken.json", "{not json");
  write("usr/share/vulkan/icd.d/readme.txt", "not a manifest: wrong suffix");
  const auto inv = run();
  ASSERT_EQ(inv.files.size(), 3u) << inv.files.dump(1);
  EXPECT_EQ(inv.files[0][k::kPath], "/etc/vulkan/icd.d/z.json");
  EXPECT_EQ(inv.files[0][k::kSource], "SYSCONFDIR");
  EXPECT_EQ(inv.files[0][k::kApiVersion], "1.3.230");
  EXPECT_EQ(inv.files[0][k::kLoads], true);
  EXPECT_EQ(inv.files[1][k::kPath], "/usr/share/vulkan/icd.d/broken.json");
  EXPECT_EQ(inv.files[1][k::kError], "not valid JSON");
  EXPECT_FALSE(inv.files[1].contains(k::kLoads));
  EXPECT_EQ(inv.files[2][k::kLoads], false);
  EXPECT_EQ(checked, (std::vector<std::string>{"libvulkan_lvp.so", "libmissing.so.0"}));
  EXPECT_EQ(inv.overridden_by, "");
}

TEST_F(VulkanInventory, AFifoAndAHugeFileAreRefusedWithoutBlocking) {
  std::filesystem::create_directories(root_ / "etc/vulkan/icd.d");
  ASSERT_EQ(::mkfifo((root_ / "etc/vulkan/icd.d/fifo.json").c_str(), 0600), 0);
  write("etc/vulkan/icd.d/huge.json", std::string(2u << 20, ' '));
  const auto inv = run();
  ASSERT_EQ(inv.files.size(), 2u) << inv.files.dump(1);
  EXPECT_NE(inv.files[0][k::kError].get<std::string>().find("FIFO"), std::string::npos)
      << inv.files.dump(1);
  EXPECT_NE(inv.files[1][k::kError].get<std::string>().find("limit"), std::string::npos)
      << inv.files.dump(1);
  EXPECT_TRUE(checked.empty());
}

TEST_F(VulkanInventory, AnOverrideIsTheOnlySourceAndAMissingFileIsReported) {
  write("usr/share/vulkan/icd.d/nvidia_icd.json", kGood);
  write("opt/lvp.json", kGood);
  const auto inv = run({{"VK_ICD_FILENAMES", "/opt/lvp.json:/opt/gone.json"}});
  EXPECT_EQ(inv.overridden_by, "VK_ICD_FILENAMES");
  ASSERT_EQ(inv.files.size(), 2u) << inv.files.dump(1);
  EXPECT_EQ(inv.files[0][k::kPath], "/opt/lvp.json");
  EXPECT_EQ(inv.files[1][k::kPath], "/opt/gone.json");
  EXPECT_TRUE(inv.files[1].contains(k::kError));
  EXPECT_EQ(inv.source[1][k::kExists], false);
}

TEST_F(VulkanInventory, AMissingLoaderIsAFindingAndTheManifestsAreStillListed) {
  write("usr/share/vulkan/icd.d/nvidia_icd.json",
        R"({"file_format_version": "1.0.0", "ICD": {"library_path": "libGLX_nvidia.so.0"}})");
  ProbeOptions o;
  o.facts.root = root_.string();
  o.facts.env = {};
  o.loader = "libvulkan_gpucheck_absent.so.1";
  o.check_icd = [](const std::string&) { return Json{{k::kLoads, true}}; };
  const Json s = probe_vulkan(o);
  EXPECT_EQ(s[k::kStatus], "unavailable");
  EXPECT_TRUE(s[k::kReason].get<std::string>().starts_with("libvulkan_gpucheck_absent.so.1: "))
      << s.dump(1);
  ASSERT_EQ(s[k::kIcdFiles].size(), 1u);
  EXPECT_EQ(s[k::kIcdFiles][0][k::kLibrary], "libGLX_nvidia.so.0");
  EXPECT_TRUE(s[k::kDevices].empty());
}

TEST(VulkanNames, CodesVersionsAndUuids) {
  EXPECT_EQ(vk_result_text(-3), "VK_ERROR_INITIALIZATION_FAILED (-3)");
  EXPECT_EQ(vk_result_name(12345), "VK_RESULT_UNKNOWN");
  EXPECT_EQ(driver_id_name(13), "VK_DRIVER_ID_MESA_LLVMPIPE");
  EXPECT_EQ(driver_id_name(4), "VK_DRIVER_ID_NVIDIA_PROPRIETARY");
  EXPECT_EQ(driver_id_name(999), "VK_DRIVER_ID_UNKNOWN_999");
  EXPECT_EQ(api_version_text(VK_MAKE_API_VERSION(0, 1, 3, 239)), "1.3.239");
  // NVIDIA 580.159.04 packs 10.8.8.6 bits.
  const std::uint32_t nv = (580u << 22) | (159u << 14) | (4u << 6);
  EXPECT_EQ(driver_version_text(0x10de, 4, nv), "580.159.4.0");
  // Intel's Windows driver 101.4953 packs 18.14 bits; Mesa's Intel driver is VK_VERSION.
  EXPECT_EQ(driver_version_text(0x8086, 5, (101u << 14) | 4953u), "101.4953");
  EXPECT_EQ(driver_version_text(0x8086, 6, VK_MAKE_API_VERSION(0, 23, 1, 2)), "23.1.2");
  const std::uint8_t bytes[16] = {0x6d, 0x65, 0x73, 0x61, 0x32, 0x32, 0x2e, 0x33,
                                  0x2e, 0x36, 0,    0,    0,    0,    0,    0};
  EXPECT_EQ(uuid_text(bytes), "6d657361-3232-2e33-2e36-000000000000");
  EXPECT_EQ(queue_flag_names(0x3 | 0x200),
            (std::vector<std::string>{"VK_QUEUE_GRAPHICS_BIT", "VK_QUEUE_COMPUTE_BIT", "0x200"}));
}

}  // namespace
}  // namespace gpucheck::vulkan

#endif  // GPUCHECK_HAVE_VULKAN

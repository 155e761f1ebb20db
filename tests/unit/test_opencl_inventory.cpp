// The OpenCL loader's view of a system from files alone, on fabricated trees: ld.so.conf, loader
// copies, .icd files under each loader's rules, vendor libraries and the environment report.
#if GPUCHECK_HAVE_OPENCL

#include <gtest/gtest.h>

#include "backends/opencl/icd_inventory.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace gpucheck::opencl {
namespace {

using Json = nlohmann::json;
namespace fs = std::filesystem;

// A fabricated system root, removed at the end of the test.
class FakeRoot {
 public:
  FakeRoot() {
    std::string tmpl = (fs::temp_directory_path() / "gpucheck-ocl-root-XXXXXX").string();
    if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    root_ = tmpl;
  }
  ~FakeRoot() {
    std::error_code ec;
    fs::remove_all(root_, ec);
  }
  const std::string& root() const { return root_; }
  void write(const std::string& path, const std::string& text) const {
    fs::create_directories(fs::path(root_ + path).parent_path());
    std::ofstream(root_ + path, std::ios::binary) << text;
  }
  void link(const std::string& path, const std::string& target) const {
    fs::create_directories(fs::path(root_ + path).parent_path());
    fs::create_symlink(target, root_ + path);
  }
  SystemFacts facts(EnvMap env = {}) const { return SystemFacts{root_, std::move(env)}; }

 private:
  std::string root_;
};

const std::string kElf = std::string(
                             "\x7f"
                             "ELF",
                             4) +
                         std::string(60, '\0');

const Json* find_by(const Json& list, const char* key, const std::string& value) {
  for (const auto& item : list)
    if (item.value(key, "") == value) return &item;
  return nullptr;
}

TEST(OpenClInventory, LdSoConfFollowsIncludes) {
  FakeRoot r;
  r.write("/etc/ld.so.conf", "include /etc/ld.so.conf.d/*.conf\n/opt/a/lib # trailing comment\n");
  r.write("/etc/ld.so.conf.d/10-b.conf", "# comment\n/opt/b/lib\n\n/opt/c/lib=FLAG /opt/d/lib\n");
  r.write("/etc/ld.so.conf.d/20-rel.conf", "include more.d/*.conf\n");
  r.write("/etc/ld.so.conf.d/more.d/x.conf", "/opt/e/lib\n");
  EXPECT_EQ(ld_so_conf_dirs(r.facts()),
            (std::vector<std::string>{"/opt/b/lib", "/opt/c/lib", "/opt/d/lib", "/opt/e/lib",
                                      "/opt/a/lib"}));
}

TEST(OpenClInventory, SearchDirsInLinkerOrderThenCudaTargets) {
  FakeRoot r;
  r.write("/etc/ld.so.conf", "/opt/conf/lib\n");
  r.write("/usr/local/cuda-12.2/targets/x86_64-linux/lib/.keep", "");
  const auto dirs = library_search_dirs(r.facts({{"LD_LIBRARY_PATH", "/ld/one::/ld/two"}}));
  ASSERT_GE(dirs.size(), 4u);
  EXPECT_EQ(dirs[0], "/ld/one");
  EXPECT_EQ(dirs[1], "/ld/two");
  EXPECT_EQ(dirs[2], "/opt/conf/lib");
  EXPECT_EQ(dirs.back(), "/usr/local/cuda-12.2/targets/x86_64-linux/lib");
  EXPECT_NE(std::find(dirs.begin(), dirs.end(), "/usr/local/lib"), dirs.end());
}

TEST(OpenClInventory, LoaderCopiesAreReadNotLoaded) {
  FakeRoot r;
  r.write("/ld/one/libOpenCL.so.1.0.0", kElf + "OCL Icd free software");
  r.link("/ld/one/libOpenCL.so.1", "libOpenCL.so.1.0.0");
  r.link("/ld/one/libOpenCL.so", "libOpenCL.so.1");
  r.write("/usr/local/cuda-12.2/targets/x86_64-linux/lib/libOpenCL.so.1", kElf + "Khronos Group");
  r.write("/opt/junk/libOpenCL.so.1", "not a library");
  r.link("/opt/junk/libOpenCL.so", "missing-target");
  r.write("/etc/ld.so.conf", "/opt/junk\n");
  const auto facts = r.facts({{"LD_LIBRARY_PATH", "/ld/one"}});

  const Json all = loader_copies(facts, "");
  const Json* ocl = find_by(all, "real_path", "/ld/one/libOpenCL.so.1.0.0");
  ASSERT_NE(ocl, nullptr) << all.dump(1);
  EXPECT_EQ((*ocl)["kind"], "ocl-icd");
  EXPECT_EQ((*ocl)["path"], "/ld/one/libOpenCL.so");  // first name met; symlinks collapse
  const Json* cuda =
      find_by(all, "path", "/usr/local/cuda-12.2/targets/x86_64-linux/lib/libOpenCL.so.1");
  ASSERT_NE(cuda, nullptr);
  EXPECT_EQ((*cuda)["kind"], "khronos");
  const Json* junk = find_by(all, "path", "/opt/junk/libOpenCL.so.1");
  ASSERT_NE(junk, nullptr);
  EXPECT_EQ((*junk)["error"], "not an ELF file");
  const Json* dangling = find_by(all, "path", "/opt/junk/libOpenCL.so");
  ASSERT_NE(dangling, nullptr);
  EXPECT_EQ((*dangling)["error"], "dangling symbolic link");

  // The first libOpenCL.so.1 on the search path decides the kind a parent can expect.
  EXPECT_EQ(loader_kind_from_files(facts), LoaderKind::kOclIcd);
  EXPECT_EQ(loader_kind_from_files(r.facts()), LoaderKind::kOther);  // /opt/junk's comes first
  EXPECT_EQ(loader_kind_from_files(FakeRoot().facts()), LoaderKind::kNone);

  // The loaded copy is not an "other" copy.
  const Json others = loader_copies(facts, "/ld/one/libOpenCL.so.1.0.0");
  EXPECT_EQ(find_by(others, "real_path", "/ld/one/libOpenCL.so.1.0.0"), nullptr);
  EXPECT_EQ(others.size(), all.size() - 1);
}

TEST(OpenClInventory, VendorLibrariesAndHowTheyAreRegistered) {
  FakeRoot r;
  const std::string lib = "/usr/lib/x86_64-linux-gnu";
  r.write(lib + "/libnvidia-opencl.so.550.54.15", kElf);
  r.link(lib + "/libnvidia-opencl.so.1", "libnvidia-opencl.so.550.54.15");
  r.write("/etc/OpenCL/vendors/nvidia.icd", "libnvidia-opencl.so.1\n");
  r.write(lib + "/intel-opencl/libigdrcl.so", kElf);
  r.write("/etc/OpenCL/vendors/intel.icd", lib + "/intel-opencl/libigdrcl.so\n");
  r.write("/opt/rocm-6.0.2/lib/libamdocl64.so", kElf);
  r.write(lib + "/libMesaOpenCL.so.1", kElf);
  r.write(lib + "/libRusticlOpenCL.so.1", kElf);
  r.write("/custom/vendors/rusticl.icd", "libRusticlOpenCL.so.1\n");
  r.write(lib + "/libcl.so", kElf);  // Beignet's name, but outside its directory: not OpenCL
  r.write(lib + "/beignet/libcl.so", kElf);
  const auto facts = r.facts({{"OCL_ICD_FILENAMES", "/opt/rocm-6.0.2/lib/libamdocl64.so"},
                              {"OCL_ICD_VENDORS", "/custom/vendors"}});
  const Json libs = vendor_libraries(facts);

  const Json* nv = find_by(libs, "vendor", "nvidia");
  ASSERT_NE(nv, nullptr) << libs.dump(1);
  EXPECT_EQ((*nv)["path"], lib + "/libnvidia-opencl.so.1");
  EXPECT_EQ((*nv)["real_path"], lib + "/libnvidia-opencl.so.550.54.15");
  EXPECT_EQ((*nv)["registered"], "icd");
  EXPECT_EQ((*nv)["registered_by"], "/etc/OpenCL/vendors/nvidia.icd");

  const Json* amd = find_by(libs, "vendor", "amd");
  ASSERT_NE(amd, nullptr);
  EXPECT_EQ((*amd)["registered"], "environment");
  EXPECT_EQ((*amd)["registered_by"], "OCL_ICD_FILENAMES");

  const Json* rusticl = find_by(libs, "vendor", "mesa_rusticl");
  ASSERT_NE(rusticl, nullptr);
  EXPECT_EQ((*rusticl)["registered"], "environment");
  EXPECT_EQ((*rusticl)["registered_by"], "OCL_ICD_VENDORS (/custom/vendors/rusticl.icd)");

  const Json* clover = find_by(libs, "vendor", "mesa_clover");
  ASSERT_NE(clover, nullptr);
  EXPECT_EQ((*clover)["registered"], "none");
  EXPECT_EQ((*clover)["icd_line"], lib + "/libMesaOpenCL.so.1");

  int intel = 0;
  for (const auto& l : libs) {
    if (l["vendor"] != "intel") continue;
    ++intel;
    if (l["path"] == lib + "/intel-opencl/libigdrcl.so") {
      EXPECT_EQ(l["registered"], "icd");
    } else {
      EXPECT_EQ(l["path"], lib + "/beignet/libcl.so");
      EXPECT_EQ(l["registered"], "none");
    }
  }
  EXPECT_EQ(intel, 2) << libs.dump(1);
}

// A library check that loads nothing: names ending in ".so" "load".
struct RecordingChecker {
  std::vector<std::string>* seen;
  LibraryCheck operator()(const std::string& name) const {
    seen->push_back(name);
    LibraryCheck c;
    c.loads = name.ends_with(".so");
    if (!c.loads) c.error = name + ": cannot open shared object file";
    return c;
  }
};

class IcdRules : public ::testing::Test {
 protected:
  void SetUp() override {
    r_.write("/etc/OpenCL/vendors/a.icd", "liba.so\n");
    r_.write("/etc/OpenCL/vendors/b.icd", "/opt/b/libb.so");
    r_.write("/etc/OpenCL/vendors/c.icd", "libc.so.1\n");
    r_.write("/etc/OpenCL/vendors/readme.txt", "not an icd\n");
    r_.write("/etc/OpenCL/vendors/.icd", "too short a name for ocl-icd\n");
    r_.write("/custom/x.icd", "libx.so\n");
    r_.write("/opt/b/libb.so", kElf);
  }
  IcdInventory run(LoaderKind kind, EnvMap env) {
    seen_.clear();
    return icd_inventory(r_.facts(std::move(env)), kind, RecordingChecker{&seen_});
  }
  FakeRoot r_;
  std::vector<std::string> seen_;
};

TEST_F(IcdRules, OclIcdReadsTheVendorsDirectory) {
  const auto inv = run(LoaderKind::kOclIcd, {});
  EXPECT_EQ(inv.source["path"], "/etc/OpenCL/vendors");
  EXPECT_EQ(inv.source["type"], "directory");
  EXPECT_EQ(inv.source["source"], "default");
  ASSERT_EQ(inv.files.size(), 3u) << inv.files.dump(1);
  EXPECT_EQ(inv.files[0]["path"], "/etc/OpenCL/vendors/a.icd");
  EXPECT_EQ(inv.files[0]["library"], "liba.so");
  EXPECT_EQ(inv.files[0]["loads"], true);
  EXPECT_EQ(inv.files[2]["loads"], false);
  EXPECT_EQ(inv.files[2]["error"], "libc.so.1: cannot open shared object file");
  // Absolute names are files of the described system; bare names go to the dynamic linker.
  EXPECT_EQ(seen_,
            (std::vector<std::string>{"liba.so", r_.root() + "/opt/b/libb.so", "libc.so.1"}));
}

TEST_F(IcdRules, OclIcdVendorsAsDirectoryIcdFileOrLibrary) {
  auto inv = run(LoaderKind::kOclIcd, {{"OCL_ICD_VENDORS", "/custom"}});
  EXPECT_EQ(inv.source["source"], "OCL_ICD_VENDORS");
  ASSERT_EQ(inv.files.size(), 1u);
  EXPECT_EQ(inv.files[0]["library"], "libx.so");

  // A bare .icd name is looked up in the vendors directory first.
  inv = run(LoaderKind::kOclIcd, {{"OCL_ICD_VENDORS", "b.icd"}});
  EXPECT_EQ(inv.source["type"], "icd_file");
  EXPECT_EQ(inv.source["path"], "/etc/OpenCL/vendors/b.icd");
  ASSERT_EQ(inv.files.size(), 1u);
  EXPECT_EQ(inv.files[0]["library"], "/opt/b/libb.so");

  inv = run(LoaderKind::kOclIcd, {{"OCL_ICD_VENDORS", "/opt/direct/libdirect.so"}});
  EXPECT_EQ(inv.source["type"], "library");
  ASSERT_EQ(inv.files.size(), 1u);
  EXPECT_EQ(inv.files[0]["source"], "OCL_ICD_VENDORS");
  EXPECT_FALSE(inv.files[0].contains("path"));

  // OPENCL_VENDOR_PATH replaces the directory only while OCL_ICD_VENDORS is unset or empty.
  inv = run(LoaderKind::kOclIcd, {{"OPENCL_VENDOR_PATH", "/custom"}, {"OCL_ICD_VENDORS", ""}});
  EXPECT_EQ(inv.source["path"], "/custom");
  EXPECT_EQ(inv.source["source"], "OPENCL_VENDOR_PATH");
}

TEST_F(IcdRules, OclIcdIgnoresIcdFilenames) {
  const auto inv = run(LoaderKind::kOclIcd, {{"OCL_ICD_FILENAMES", "/opt/f1.so"}});
  EXPECT_EQ(inv.files.size(), 3u);
  EXPECT_EQ(std::count(seen_.begin(), seen_.end(), r_.root() + "/opt/f1.so"), 0);
}

TEST_F(IcdRules, KhronosLoadsIcdFilenamesFirstAndTakesOnlyDirectories) {
  auto inv = run(LoaderKind::kKhronos, {{"OCL_ICD_FILENAMES", "/opt/f1.so:/opt/f2.so"}});
  ASSERT_EQ(inv.files.size(), 5u) << inv.files.dump(1);
  EXPECT_EQ(inv.files[0]["source"], "OCL_ICD_FILENAMES");
  EXPECT_EQ(inv.files[0]["library"], "/opt/f1.so");
  EXPECT_EQ(inv.files[1]["library"], "/opt/f2.so");
  EXPECT_EQ(inv.files[2]["source"], "vendors_directory");

  inv = run(LoaderKind::kKhronos, {{"OCL_ICD_VENDORS", "/etc/OpenCL/vendors/a.icd"}});
  EXPECT_EQ(inv.source["type"], "directory");
  EXPECT_TRUE(inv.files.empty());
}

TEST_F(IcdRules, TwoIcdFilesNamingOneLibraryAreMarked) {
  r_.write("/etc/OpenCL/vendors/z.icd", "liba.so\n");
  const auto inv = run(LoaderKind::kOclIcd, {});
  ASSERT_EQ(inv.files.size(), 4u);
  EXPECT_EQ(inv.files[3]["path"], "/etc/OpenCL/vendors/z.icd");
  EXPECT_EQ(inv.files[3]["duplicate_of"], "/etc/OpenCL/vendors/a.icd");
  EXPECT_FALSE(inv.files[0].contains("duplicate_of"));
}

TEST_F(IcdRules, BrokenIcdFilesSayWhy) {
  r_.write("/etc/OpenCL/vendors/empty.icd", "");
  r_.write("/etc/OpenCL/vendors/newline.icd", "\nlibafter.so\n");
  const auto inv = run(LoaderKind::kOclIcd, {});
  bool empty = false;
  bool newline = false;
  for (const auto& f : inv.files) {
    if (f["path"] == "/etc/OpenCL/vendors/empty.icd") {
      empty = true;
      EXPECT_EQ(f["error"], "empty .icd file");
      EXPECT_EQ(f["loads"], false);
    }
    if (f["path"] == "/etc/OpenCL/vendors/newline.icd") {
      newline = true;
      EXPECT_EQ(f["error"], "the .icd file's first line is empty");
    }
  }
  EXPECT_TRUE(empty && newline) << inv.files.dump(1);
}

TEST(OpenClEnvironment, WhatEachLoaderDoesWithEachVariable) {
  FakeRoot r;
  r.write("/vendors/x.icd", "libx.so\n");
  const EnvMap env{{"OCL_ICD_FILENAMES", "/opt/a.so"},
                   {"OCL_ICD_VENDORS", "/vendors"},
                   {"OPENCL_VENDOR_PATH", "/elsewhere"},
                   {"OCL_ICD_PLATFORM_SORT", "none"},
                   {"HOME", "/root"}};
  const Json ocl = describe_environment(r.facts(env), LoaderKind::kOclIcd, "2.3.1");
  EXPECT_EQ(ocl.size(), 4u) << ocl.dump(1);
  EXPECT_EQ(ocl["OCL_ICD_FILENAMES"]["value"], "/opt/a.so");
  EXPECT_TRUE(ocl["OCL_ICD_FILENAMES"]["effect"].get<std::string>().starts_with(
      "ignored: ocl-icd 2.3.1 does not read it"));
  EXPECT_EQ(ocl["OCL_ICD_VENDORS"]["effect"],
            "replaces the vendors directory: .icd files are read from /vendors");
  EXPECT_TRUE(ocl["OPENCL_VENDOR_PATH"]["effect"].get<std::string>().starts_with(
      "overridden by OCL_ICD_VENDORS"));
  EXPECT_TRUE(ocl["OCL_ICD_PLATFORM_SORT"]["effect"].get<std::string>().starts_with(
      "platforms are not sorted"));

  const Json khr = describe_environment(r.facts(env), LoaderKind::kKhronos, "");
  EXPECT_TRUE(khr["OCL_ICD_FILENAMES"]["effect"].get<std::string>().find("before the .icd files") !=
              std::string::npos);
  EXPECT_EQ(khr["OPENCL_VENDOR_PATH"]["effect"], "ignored: the Khronos loader does not read it");
  EXPECT_TRUE(khr["OCL_ICD_PLATFORM_SORT"]["effect"].get<std::string>().starts_with("ignored"));

  const Json none = describe_environment(r.facts(env), LoaderKind::kNone, "");
  EXPECT_EQ(none["OCL_ICD_VENDORS"]["effect"], "no effect here: no ICD loader was loaded");
  EXPECT_TRUE(describe_environment(r.facts({}), LoaderKind::kOclIcd, "2.3.1").empty());
}

TEST(OpenClInventory, LibraryCheckRoundTripsThroughJson) {
  LibraryCheck c;
  c.loads = true;
  c.resolved_path = "/usr/lib/libx.so";
  c.icd_entry_points = true;
  const LibraryCheck back = LibraryCheck::from_json(c.to_json());
  EXPECT_EQ(back.loads, true);
  EXPECT_EQ(back.resolved_path, "/usr/lib/libx.so");
  EXPECT_EQ(back.icd_entry_points, true);
  const LibraryCheck missing = check_library_here("libgpucheck-no-such-library.so.7");
  EXPECT_FALSE(missing.loads);
  EXPECT_NE(missing.error.find("libgpucheck-no-such-library.so.7"), std::string::npos);
}

}  // namespace
}  // namespace gpucheck::opencl

#endif  // GPUCHECK_HAVE_OPENCL

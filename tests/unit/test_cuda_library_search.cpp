// The cuBLAS/cuDNN search order, version suffixes and the ld.so cache reader, on made-up trees.
#if GPUCHECK_HAVE_CUDA

#include "backends/cuda/library_search.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

namespace fs = std::filesystem;
using namespace gpucheck::cuda;

namespace {

class LibrarySearch : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ =
        fs::temp_directory_path() /
        ("gpucheck_libsearch_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) +
         "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A regular file plus the soname link to it, as packages install them.
  fs::path lib(const std::string& dir, const std::string& file, const std::string& link = "") {
    fs::path d = root_ / dir;
    fs::create_directories(d);
    std::ofstream(d / file) << "x";
    if (!link.empty()) fs::create_symlink(file, d / link);
    return d;
  }
  fs::path root_;
};

}  // namespace

TEST_F(LibrarySearch, OrderAndMajors) {
  auto ld = lib("ld", "libcublas.so.12.8.4.1", "libcublas.so.12");
  auto tk = lib("usr_local/cuda-13.0/targets/x86_64-linux/lib", "libcublas.so.13.0.2.14",
                "libcublas.so.13");
  auto conda = lib("conda/lib", "libcublas.so.13.1.0.3", "libcublas.so.13");
  auto wheel = lib("site/nvidia/cu13/lib", "libcublas.so.13.2.0.9", "libcublas.so.13");
  SearchRoots r;
  r.ld_library_path = {ld.string()};
  r.ld_cache_file = (root_ / "no-cache").string();
  r.usr_local = (root_ / "usr_local").string();
  r.conda_prefix = (root_ / "conda").string();
  r.site_packages = {(root_ / "site").string()};
  auto copies = find_copies(cublas_spec(), r);
  ASSERT_EQ(copies.size(), 4u);
  EXPECT_EQ(copies[0].source, "LD_LIBRARY_PATH");
  EXPECT_EQ(copies[0].file_version, "12.8.4.1");
  EXPECT_FALSE(copies[0].usable);  // a wrong major: found, not usable by this build
  EXPECT_EQ(copies[1].source, "toolkit");
  EXPECT_EQ(copies[1].file_version, "13.0.2.14");
  EXPECT_TRUE(copies[1].usable);
  EXPECT_EQ(copies[2].source, "conda");
  EXPECT_EQ(copies[3].source, "wheel");
  EXPECT_EQ(copies[3].file_version, "13.2.0.9");
}

TEST_F(LibrarySearch, ExplicitFirstAndEachFileOnce) {
  auto d = lib("a", "libcudnn.so.9.14.0", "libcudnn.so.9");
  SearchRoots r;
  r.explicit_path = (d / "libcudnn.so.9").string();
  r.ld_library_path = {d.string(), d.string()};
  r.ld_cache_file = (root_ / "no-cache").string();
  r.usr_local = (root_ / "none").string();
  auto copies = find_copies(cudnn_spec(), r);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].source, "explicit");
  EXPECT_EQ(copies[0].major, 9);
  EXPECT_EQ(copies[0].file_version, "9.14.0");
}

// torch in a venv that is not activated but first on PATH (as on many GPU machines): its
// cuDNN wheel is a copy the search reports.
TEST_F(LibrarySearch, WheelsOfThePythonOnPath) {
  fs::create_directories(root_ / "venv/bin");
  std::ofstream(root_ / "venv/bin/python3") << "#!/bin/sh\n";
  auto wheel = lib("venv/lib/python3.12/site-packages/nvidia/cudnn/lib", "libcudnn.so.9");
  fs::create_directories(root_ / "nopython/bin");
  gpucheck::EnvMap env{
      {"PATH", (root_ / "nopython/bin").string() + ":" + (root_ / "venv/bin").string()}};
  auto r = search_roots(cudnn_spec(), env);
  const auto site = (root_ / "venv/lib/python3.12/site-packages").string();
  EXPECT_NE(std::find(r.site_packages.begin(), r.site_packages.end(), site), r.site_packages.end());
  r.ld_cache_file = (root_ / "no-cache").string();
  r.usr_local = (root_ / "none").string();
  r.ld_library_path.clear();
  r.site_packages = {site};
  auto copies = find_copies(cudnn_spec(), r);
  ASSERT_EQ(copies.size(), 1u);
  EXPECT_EQ(copies[0].source, "wheel");
  EXPECT_EQ(fs::path(copies[0].path).parent_path(), wheel);
}

// A wheel's "libcudnn.so.9" says only its major; the header installed beside it says which 9.
TEST_F(LibrarySearch, WheelVersionFromTheHeaderBesideIt) {
  auto dir = lib("site/nvidia/cudnn/lib", "libcudnn.so.9");
  fs::create_directories(root_ / "site/nvidia/cudnn/include");
  std::ofstream(root_ / "site/nvidia/cudnn/include/cudnn_version.h")
      << "#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 19\n#define CUDNN_PATCHLEVEL 0\n";
  auto bare = lib("bare/nvidia/cudnn/lib", "libcudnn.so.9");
  SearchRoots r;
  r.ld_cache_file = (root_ / "no-cache").string();
  r.usr_local = (root_ / "none").string();
  r.site_packages = {(root_ / "site").string(), (root_ / "bare").string()};
  auto copies = find_copies(cudnn_spec(), r);
  ASSERT_EQ(copies.size(), 2u);
  EXPECT_EQ(copies[0].file_version, "9.19.0");
  EXPECT_EQ(copies[0].major, 9);
  EXPECT_EQ(copies[1].file_version, "9");  // no header: the file name's major is all there is
}

TEST_F(LibrarySearch, LdCacheStringsAreRead) {
  auto d = lib("cache", "libcublas.so.13.0.2.14", "libcublas.so.13");
  std::string blob = std::string("glibc-ld.so.cache1.1\0\0libcublas.so.13\0", 39) +
                     (d / "libcublas.so.13").string() +
                     std::string("\0libfoo.so.1\0/x/libfoo.so.1\0", 28);
  std::ofstream(root_ / "ld.so.cache", std::ios::binary) << blob;
  auto entries = ld_cache_entries((root_ / "ld.so.cache").string(), "libcublas.so");
  ASSERT_EQ(entries.size(), 1u);
  EXPECT_EQ(entries[0], (d / "libcublas.so.13").string());
}

TEST(LibrarySearchText, VersionSuffixAndCudnnHeader) {
  EXPECT_EQ(version_suffix("/x/libcublas.so.13.0.2.14", "libcublas.so"), "13.0.2.14");
  EXPECT_EQ(version_suffix("/x/libcublasLt.so.13", "libcublas.so"), "");
  EXPECT_EQ(parse_cudnn_version_header("#define CUDNN_MAJOR 9\n#define CUDNN_MINOR 14\n"
                                       "#define CUDNN_PATCHLEVEL 0\n"),
            "9.14.0");
  EXPECT_FALSE(parse_cudnn_version_header("nothing").has_value());
}

#endif  // GPUCHECK_HAVE_CUDA

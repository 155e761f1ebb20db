// The paths an opened library reports: where the dynamic linker loaded it from (link map) and
// that path with its symlinks resolved, as the CUDA driver, the OpenCL loader and the CPU's BLAS
// all report them.
#include "core/dynamic_library.h"

#include "scratch_root.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace fs = std::filesystem;
using gpucheck::link_map_path;
using gpucheck::OpenedLibrary;
using gpucheck::resolved_path;

class ResolvedPath : public gpucheck::testing::ScratchRoot {};

TEST_F(ResolvedPath, FollowsSymlinksToTheFile) {
  write("lib/libfoo.so.1.2.3", "x");
  fs::create_symlink("libfoo.so.1.2.3", root_ / "lib/libfoo.so.1");
  fs::create_symlink("lib", root_ / "alias");
  EXPECT_EQ(resolved_path((root_ / "alias/libfoo.so.1").string()),
            fs::canonical(root_ / "lib/libfoo.so.1.2.3").string());
}

TEST_F(ResolvedPath, KeepsAPathItCannotResolve) {
  fs::create_symlink("gone.so", root_ / "dangling.so");
  EXPECT_EQ(resolved_path((root_ / "dangling.so").string()), (root_ / "dangling.so").string());
  EXPECT_EQ(resolved_path((root_ / "missing.so").string()), (root_ / "missing.so").string());
  EXPECT_EQ(resolved_path(""), "");
}

TEST(OpenLibrary, ReportsTheLinkMapPathAndItsResolvedFile) {
  OpenedLibrary lib;
  std::vector<std::string> errors;
  ASSERT_TRUE(gpucheck::open_library("libc.so.6", "test", &lib, &errors))
      << gpucheck::join_errors(errors);
  EXPECT_EQ(lib.path, link_map_path(lib.handle));
  EXPECT_TRUE(fs::path(lib.path).is_absolute()) << lib.path;
  EXPECT_EQ(lib.real_path, fs::canonical(lib.path).string());
  EXPECT_EQ(lib.source, "test");
}

TEST(OpenLibrary, AMissingLibraryLeavesItsReason) {
  OpenedLibrary lib;
  std::vector<std::string> errors;
  EXPECT_FALSE(gpucheck::open_library("libgpucheck-no-such-library.so.7", "test", &lib, &errors));
  EXPECT_FALSE(lib.ok());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("libgpucheck-no-such-library.so.7"), std::string::npos) << errors[0];
}

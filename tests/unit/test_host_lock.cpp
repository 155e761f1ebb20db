// The host transfer lock of concurrent bench children (bench/host_lock.h): a second holder
// waits for the first, an empty path locks nothing, a missing file is an error naming the call,
// and the wave's lock file is gone with its owner.
#include "bench/host_lock.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

namespace {

using gpucheck::bench::HostLock;
using gpucheck::bench::HostLockFile;
using namespace std::chrono_literals;

TEST(HostLock, ASecondHolderWaitsForTheFirst) {
  HostLockFile file;
  HostLock first(file.path()), second(file.path());  // two opens: two children's descriptors
  std::atomic<bool> second_has_it{false};
  std::thread sibling;
  {
    auto held = first.hold();
    sibling = std::thread([&] {
      auto mine = second.hold();
      second_has_it = true;
    });
    std::this_thread::sleep_for(200ms);
    EXPECT_FALSE(second_has_it) << "the sibling got the lock while the first held it";
  }
  sibling.join();
  EXPECT_TRUE(second_has_it);
  auto again = first.hold();  // released by the sibling's guard
}

TEST(HostLock, AnEmptyPathLocksNothing) {
  HostLock none("");
  EXPECT_FALSE(none.active());
  auto a = none.hold();
  auto b = none.hold();  // would deadlock if it locked anything
}

TEST(HostLock, AMissingFileIsAnErrorNamingTheCall) {
  HostLock lock("/nonexistent-dir/gpucheck-lock");
  EXPECT_TRUE(lock.active());
  try {
    auto g = lock.hold();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("open(2)"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("No such file or directory"));
  }
}

TEST(HostLock, TheWavesFileGoesWithItsOwner) {
  std::string path;
  {
    HostLockFile file;
    path = file.path();
    EXPECT_TRUE(std::filesystem::is_regular_file(path));
  }
  EXPECT_FALSE(std::filesystem::exists(path));
}

}  // namespace

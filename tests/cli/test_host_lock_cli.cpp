// A bench child given a host lock (concurrent GPU waves, bench/host_lock.h) times its host-bound
// copy only while it holds the lock, and its record says so; without one it never waits.
#include "run_gpucheck.h"

#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

namespace {

using gpucheck::testing::run_gpucheck;
using gpucheck::testing::write_temp_file;
using namespace std::chrono_literals;

std::string h2h_plan(const std::string& lock) {
  std::string plan =
      R"({"device":"cpu","backend":"cpu","cells":[{"op":"copy","dtype":"f32",)"
      R"("shape":{"bytes":1048576,"direction":"h2h"}}],"policy":{"warmup":1,"min_time_s":0,)"
      R"("max_time_s":1,"rounds":1,"reps":3},"seed":1,"threads":1,"tuning":{"mode":"off"})";
  if (!lock.empty()) plan += R"(,"host_lock":")" + lock + "\"";
  return plan + "}";
}

TEST(HostLockCli, TheChildWaitsForItsSiblingAndSaysItRanAlone) {
  const std::string lock = write_temp_file("host.lock", "");
  const int fd = ::open(lock.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX), 0);  // a sibling's host copy in progress
  auto child = std::async(std::launch::async, [&] {
    return run_gpucheck({"__child", "bench", "--plan", h2h_plan(lock)});
  });
  EXPECT_EQ(child.wait_for(1500ms), std::future_status::timeout)
      << "the child timed its copy while the sibling held the host lock";
  ::flock(fd, LOCK_UN);
  ::close(fd);
  const auto r = child.get();
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("host_transfers_alone":true)"), std::string::npos) << r.out;
}

TEST(HostLockCli, WithoutALockNothingWaitsOrIsClaimed) {
  const auto r = run_gpucheck({"__child", "bench", "--plan", h2h_plan("")});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(R"("status":"ok")"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("host_transfers_alone"), std::string::npos);
}

// --host-copies-together drops the lock of concurrent waves; --serial has none to drop.
TEST(HostLockCli, HostCopiesTogetherWithSerialIsABadFlag) {
  const auto r = run_gpucheck({"bench", "--device", "cpu", "--ops", "copy", "--serial",
                               "--host-copies-together", "--json"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--host-copies-together"), std::string::npos) << r.err;
}

}  // namespace

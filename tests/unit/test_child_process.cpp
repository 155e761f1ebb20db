// core/child_process: a child that ends while something it started still holds its pipes is
// seen ending, and what it started ends with it (its whole process group, on every path).
#include "core/child_process.h"

#include "../process_gone.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace gpucheck {
namespace {

TEST(ChildProcess, AChildThatEndsLeavingAGrandchildOnItsPipesEndsAndTakesItAlong) {
  ChildSpec spec({"-c", "sleep 1000 & echo $!; echo bye >&2; exit 3"});
  spec.program = "/bin/sh";
  ChildLimits limits;
  limits.timeout = std::chrono::seconds(60);
  const auto t0 = std::chrono::steady_clock::now();
  const ChildResult r = run_children({spec}, limits).front();
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 20) << "waited for the grandchild that holds the pipes";
  EXPECT_EQ(r.end, ChildResult::End::kExited) << r.describe(limits.timeout, limits.max_output);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_THAT(r.err, ::testing::HasSubstr("bye"));
  const int grandchild = std::atoi(r.out.c_str());
  ASSERT_GT(grandchild, 0) << r.out;
  for (int i = 0; i < 200 && !gpucheck::testing::process_gone(grandchild); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(gpucheck::testing::process_gone(grandchild));
}

}  // namespace
}  // namespace gpucheck

// bench's multi-process all-reduce without a GPU: two gpucheck processes meet through a file and
// through TCP (the hidden `__child rendezvous`, a stand-in for NCCL's id), a rank left alone or a
// stale file ends with exit 2 naming what it waited for, and bad rank flags are usage errors
// before any work.
#include "run_gpucheck.h"

#include "../free_port.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <future>

namespace {

using gpucheck::testing::free_port;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using Env = std::map<std::string, std::optional<std::string>>;

// No Slurm around the test (a CI runner inside a Slurm job must not become a rank).
const Env kNoSlurm = {{"SLURM_PROCID", std::nullopt},
                      {"SLURM_NTASKS", std::nullopt},
                      {"SLURM_LOCALID", std::nullopt},
                      {"SLURM_JOB_ID", std::nullopt},
                      {"SLURM_STEP_ID", std::nullopt}};

std::string rendezvous_file(const std::string& name) {
  const std::string marker = write_temp_file(name + ".dir/keep", "");
  return std::filesystem::path(marker).parent_path() / name;
}

RunResult rank(const std::string& where, int r, int world, const std::string& timeout) {
  return run_gpucheck({"__child", "rendezvous", "--rank", std::to_string(r), "--world-size",
                       std::to_string(world), "--rendezvous", where, "--rendezvous-timeout",
                       timeout, "--identity", "node-" + std::to_string(r)},
                      kNoSlurm);
}

void two_processes_meet(const std::string& where) {
  auto zero = std::async(std::launch::async, [&] { return rank(where, 0, 2, "20"); });
  const RunResult one = rank(where, 1, 2, "20");
  const RunResult r0 = zero.get();
  ASSERT_EQ(r0.exit_code, 0) << r0.err;
  ASSERT_EQ(one.exit_code, 0) << one.err;
  const Json a = Json::parse(r0.out), b = Json::parse(one.out);
  EXPECT_EQ(a["identities"], Json::array({"node-0", "node-1"}));
  EXPECT_EQ(a["answer"], Json::array({"node-0", "node-1"}).dump());
  EXPECT_EQ(b["answer"], a["answer"]);
}

TEST(RendezvousCli, TwoProcessesMeetThroughAFile) {
  const std::string file = rendezvous_file("rdv");
  two_processes_meet(file);
  EXPECT_FALSE(std::filesystem::exists(file)) << "rank 0 leaves no file for a later run";
}

TEST(RendezvousCli, TwoProcessesMeetThroughTcp) {
  two_processes_meet("127.0.0.1:" + std::to_string(free_port()));
}

TEST(RendezvousCli, ARankLeftAloneEndsWithExit2NamingWhatItWaitedFor) {
  const RunResult one = rank(rendezvous_file("rdv"), 1, 2, "0.5");
  EXPECT_EQ(one.exit_code, 2) << one.err;
  EXPECT_THAT(one.err, HasSubstr("rank 1 of 2 waited 0.5 s for rank 0"));
  const RunResult zero = rank("127.0.0.1:" + std::to_string(free_port()), 0, 3, "0.5");
  EXPECT_EQ(zero.exit_code, 2) << zero.err;
  EXPECT_THAT(zero.err, HasSubstr("rank 0 of 3 waited 0.5 s on port"));
  EXPECT_THAT(zero.err, HasSubstr("for rank(s) 1, 2"));
}

TEST(RendezvousCli, AStaleFileIsRefused) {
  const std::string file = rendezvous_file("rdv");
  std::ofstream(file) << Json{
      {"magic", "gpucheck-rendezvous/1"},
      {"token", "t"},
      {"world_size", 2},
      {"session", ""},
      {"created", 1000.0},
      {"host", "old-node"},
      {"pid", 99},
      {"phase", "meet"}}.dump();
  const RunResult one = rank(file, 1, 2, "0.5");
  EXPECT_EQ(one.exit_code, 2) << one.err;
  EXPECT_THAT(one.err, HasSubstr("is stale: written by old-node (pid 99)"));
}

TEST(RendezvousCli, BadRankFlagsAreUsageErrors) {
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"--rank", "2", "--world-size", "2", "--rendezvous", "f"}, "rank 2 is outside a world of 2"},
      {{"--rank", "-1", "--world-size", "2", "--rendezvous", "f"}, "rank -1 is outside"},
      {{"--rank", "0", "--world-size", "2"}, "needs --rendezvous"},
      {{"--rendezvous", "f"}, "Give --rank and --world-size, or start the ranks with srun"},
      {{"--rank", "0", "--world-size", "2", "--rendezvous", "h:0"}, "port must be 1 to 65535"},
      {{"--rank", "0", "--world-size", "2", "--rendezvous", "f", "--rendezvous-timeout", "-3"},
       "--rendezvous-timeout"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"bench", "--ops", "allreduce"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    const RunResult r = run_gpucheck(args, kNoSlurm);
    EXPECT_EQ(r.exit_code, 2) << c.says << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
  }
  const RunResult gemm = run_gpucheck(
      {"bench", "--ops", "gemm", "--rank", "0", "--world-size", "2", "--rendezvous", "f"},
      kNoSlurm);
  EXPECT_EQ(gemm.exit_code, 2);
  EXPECT_THAT(gemm.err, HasSubstr("does the all-reduce only"));
  const RunResult net = run_gpucheck({"bench", "--ops", "gemm", "--transport", "net"}, kNoSlurm);
  EXPECT_EQ(net.exit_code, 2);
  EXPECT_THAT(net.err, HasSubstr("add allreduce to --ops"));
  const RunResult bogus =
      run_gpucheck({"bench", "--ops", "allreduce", "--transport", "nvlink"}, kNoSlurm);
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_THAT(bogus.err, HasSubstr("--transport"));
}

}  // namespace

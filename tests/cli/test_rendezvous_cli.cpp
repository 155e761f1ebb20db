// bench's multi-process all-reduce without a GPU: two gpucheck processes meet through a file and
// through TCP (the hidden `__child rendezvous`, a stand-in for NCCL's id), a rank left alone or a
// stale file ends with exit 2 naming what it waited for, and bad rank flags are usage errors
// before any work.
#include "run_gpucheck.h"

#include "../free_port.h"

#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <poll.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace {

using gpucheck::testing::free_port;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::run_program;
using gpucheck::testing::RunResult;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;
using Env = std::map<std::string, std::optional<std::string>>;

// No Slurm around the test (a CI runner inside a Slurm job must not become a rank).
const Env kNoSlurm = {{"SLURM_PROCID", std::nullopt},
                      {"SLURM_NTASKS", std::nullopt},
                      {"SLURM_LOCALID", std::nullopt},
                      {"SLURM_JOB_ID", std::nullopt},
                      {"SLURM_STEP_ID", std::nullopt}};

constexpr const char* kToken = "cli-test-secret-0123456789abcdef";

// A file in a directory only this user can write, as a rendezvous file must be.
std::string rendezvous_file(const std::string& name) {
  const std::string marker = write_temp_file(name + ".dir/keep", "");
  const auto dir = std::filesystem::path(marker).parent_path();
  std::filesystem::permissions(dir, std::filesystem::perms::owner_all);
  return dir / name;
}

std::vector<std::string> rank_args(const std::string& where, int r, int world,
                                   const std::string& timeout) {
  return {"__child",         "rendezvous",   "--rank",
          std::to_string(r), "--world-size", std::to_string(world),
          "--rendezvous",    where,          "--rendezvous-timeout",
          timeout,           "--identity",   "node-" + std::to_string(r)};
}

RunResult rank(const std::string& where, int r, int world, const std::string& timeout,
               const std::optional<std::string>& token = std::nullopt) {
  Env env = kNoSlurm;
  env["GPUCHECK_RENDEZVOUS_TOKEN"] = token;
  return run_gpucheck(rank_args(where, r, world, timeout), env);
}

// A connection to 127.0.0.1:port once something listens there (up to 10 s); -1 if never.
int connect_when_listening(std::uint16_t port) {
  for (int i = 0; i < 200; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
    ::close(fd);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return -1;
}

// One line from fd within 5 s ("" if none).
std::string read_line(int fd) {
  std::string line;
  char c = 0;
  for (int i = 0; i < 100; ++i) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, 50) <= 0) continue;
    while (::recv(fd, &c, 1, MSG_DONTWAIT) == 1) {
      if (c == '\n') return line;
      line += c;
    }
  }
  return line;
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
      {"magic", "gpucheck-rendezvous/2"},
      {"challenge", "0123456789abcdef0123456789abcdef"},
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

TEST(RendezvousCli, BadBytesToRankZeroAreRefusedNotFatal) {
  const std::uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto zero = std::async(std::launch::async, [&] { return rank(where, 0, 2, "20"); });
  for (const std::string bad :
       {R"({"magic":5})", R"({"magic":"gpucheck-rendezvous/2","rank":"1"})"}) {
    const int fd = connect_when_listening(port);
    ASSERT_GE(fd, 0);
    EXPECT_THAT(read_line(fd), HasSubstr("challenge"));
    const std::string line = bad + "\n";
    ::send(fd, line.data(), line.size(), MSG_NOSIGNAL);
    EXPECT_THAT(read_line(fd), HasSubstr("error"));
    ::close(fd);
  }
  const RunResult one = rank(where, 1, 2, "20");
  const RunResult r0 = zero.get();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(one.exit_code, 0) << one.err;
}

TEST(RendezvousCli, ABadFileIsRefusedNotFatal) {
  const std::string file = rendezvous_file("rdv");
  std::ofstream(file) << Json{
      {"magic", "gpucheck-rendezvous/2"},
      {"challenge", "0123456789abcdef0123456789abcdef"},
      {"world_size", "2"},
      {"session", ""},
      {"created", 1e12},
      {"host", "n"},
      {"pid", "1"},
      {"phase", "meet"}}.dump();
  const RunResult one = rank(file, 1, 2, "0.5");
  EXPECT_EQ(one.exit_code, 2) << one.err;
  EXPECT_THAT(one.err, HasSubstr("is no rendezvous file of this run"));
}

TEST(RendezvousCli, OtherHostsNeedATokenThatNeverShows) {
  const std::string port = std::to_string(free_port());
  const RunResult open = rank("0.0.0.0:" + port, 0, 2, "5");
  EXPECT_EQ(open.exit_code, 2) << open.err;
  EXPECT_THAT(open.err, HasSubstr("set GPUCHECK_RENDEZVOUS_TOKEN"));
  Env env = kNoSlurm;
  const RunResult bench = run_gpucheck({"bench", "--ops", "allreduce", "--rank", "0",
                                        "--world-size", "2", "--rendezvous", "0.0.0.0:" + port},
                                       env);
  EXPECT_EQ(bench.exit_code, 2) << bench.err;
  EXPECT_THAT(bench.err, HasSubstr("GPUCHECK_RENDEZVOUS_TOKEN"));
  // With the token both meet; a rank with another token does not, and no output shows either.
  const std::string where = "127.0.0.1:" + port;
  auto zero = std::async(std::launch::async, [&] { return rank(where, 0, 2, "20", kToken); });
  const RunResult one = rank(where, 1, 2, "20", kToken);
  const RunResult r0 = zero.get();
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_EQ(one.exit_code, 0) << one.err;
  const std::string other_port = std::to_string(free_port());
  const std::string there = "127.0.0.1:" + other_port;
  auto lone = std::async(std::launch::async, [&] { return rank(there, 0, 2, "1.5", kToken); });
  const RunResult wrong = rank(there, 1, 2, "1.5", "a-different-secret-of-32-chars!!");
  const RunResult alone = lone.get();
  EXPECT_EQ(wrong.exit_code, 2) << wrong.err;
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
  EXPECT_THAT(alone.err, HasSubstr("does not prove it knows this run's secret"));
  for (const RunResult* r : {&r0, &one, &wrong, &alone}) {
    EXPECT_THAT(r->out + r->err, Not(HasSubstr(kToken)));
    EXPECT_THAT(r->out + r->err, Not(HasSubstr("a-different-secret")));
  }
}

TEST(RendezvousCli, ACrowdOfIdleConnectionsDoesNotKeepTheRankOut) {
  // Rank 0 with few descriptors (ulimit -n 64) and more idle strangers than it could hold.
  const std::uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  std::vector<std::string> args = {"-c", "ulimit -n 64 && exec \"$0\" \"$@\"", GPUCHECK_BINARY};
  for (const auto& a : rank_args(where, 0, 2, "30")) args.push_back(a);
  auto zero = std::async(std::launch::async, [&] { return run_program("sh", args, kNoSlurm); });
  std::vector<int> crowd;
  for (int i = 0; i < 90; ++i) {
    const int fd = i == 0 ? connect_when_listening(port) : ::socket(AF_INET, SOCK_STREAM, 0);
    if (i > 0) {
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      ::fcntl(fd, F_SETFL, O_NONBLOCK);
      ::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    }
    crowd.push_back(fd);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const RunResult one = rank(where, 1, 2, "30");
  const auto took = std::chrono::steady_clock::now() - t0;
  const RunResult r0 = zero.get();
  for (int fd : crowd) ::close(fd);
  EXPECT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(r0.exit_code, 0) << r0.err;
  EXPECT_LT(took, std::chrono::seconds(25));
}

TEST(RendezvousCli, AFileThatWasThereIsNeitherReplacedNorRemoved) {
  const std::string notes = rendezvous_file("notes.txt");
  std::ofstream(notes) << "my notes";
  auto zero = std::async(std::launch::async, [&] { return rank(notes, 0, 2, "1"); });
  const RunResult one = rank(notes, 1, 2, "1");
  const RunResult r0 = zero.get();
  EXPECT_EQ(r0.exit_code, 2) << r0.err;
  EXPECT_THAT(r0.err, HasSubstr("exists and is not a gpucheck rendezvous file"));
  EXPECT_EQ(one.exit_code, 2) << one.err;
  std::ifstream in(notes);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "my notes");
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
  EXPECT_THAT(gemm.err, HasSubstr("does the all-reduce or the network between ranks"));
  const RunResult net = run_gpucheck({"bench", "--ops", "gemm", "--transport", "net"}, kNoSlurm);
  EXPECT_EQ(net.exit_code, 2);
  EXPECT_THAT(net.err, HasSubstr("add allreduce to --ops"));
  const RunResult bogus =
      run_gpucheck({"bench", "--ops", "allreduce", "--transport", "nvlink"}, kNoSlurm);
  EXPECT_EQ(bogus.exit_code, 2);
  EXPECT_THAT(bogus.err, HasSubstr("--transport"));
}

}  // namespace

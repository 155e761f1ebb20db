// bench --ops net between gpucheck processes on loopback, no GPU: two and three ranks meet over
// TCP with a token and measure every pair, verified; a rank killed or stopped in the middle of a
// transfer gives its partner a failed record naming it, never a hang; bad flags exit 2 before
// any meeting.
#include "run_gpucheck.h"

#include "../free_port.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <future>
#include <thread>

namespace {

using gpucheck::testing::free_port;
using gpucheck::testing::run_gpucheck;
using gpucheck::testing::RunResult;
using gpucheck::testing::spawn_gpucheck;
using gpucheck::testing::write_temp_file;
using ::testing::HasSubstr;
using Json = nlohmann::json;
using Env = std::map<std::string, std::optional<std::string>>;

constexpr const char* kToken = "net-cli-test-secret-0123456789ab";

Env rank_env() {
  return {{"SLURM_PROCID", std::nullopt},
          {"SLURM_NTASKS", std::nullopt},
          {"SLURM_JOB_ID", std::nullopt},
          {"SLURM_STEP_ID", std::nullopt},
          {"GPUCHECK_RENDEZVOUS_TOKEN", kToken}};
}

std::vector<std::string> net_args(std::uint16_t port, int r, int world, const std::string& out,
                                  const std::string& bytes = "4MiB",
                                  const std::string& timeout = "30") {
  return {"bench",
          "--ops",
          "net",
          "--rank",
          std::to_string(r),
          "--world-size",
          std::to_string(world),
          "--rendezvous",
          "127.0.0.1:" + std::to_string(port),
          "--rendezvous-timeout",
          timeout,
          "--net-bytes",
          bytes,
          "--json",
          "-o",
          out};
}

Json read_json(const std::string& path) {
  std::ifstream in(path);
  Json j = Json::parse(in, nullptr, false);
  return j;
}

// The records of the pair (a, b), both directions, from one document.
std::vector<Json> pair_records(const Json& doc, int a, int b) {
  std::vector<Json> out;
  for (const auto& r : doc.value("results", Json::array())) {
    const int s = r["src"].value("rank", -1), d = r["dst"].value("rank", -1);
    if ((s == a && d == b) || (s == b && d == a)) out.push_back(r);
  }
  return out;
}

void expect_measured(const std::vector<Json>& records, const std::string& what) {
  ASSERT_EQ(records.size(), 2u) << what;
  for (const auto& r : records) {
    SCOPED_TRACE(what + ": " + r.dump());
    EXPECT_EQ(r.value("op", ""), "net");
    EXPECT_EQ(r.value("status", ""), "ok");
    EXPECT_GT(r["throughput"].value("value", 0.0), 0);
    EXPECT_EQ(r["throughput"].value("unit", ""), "GB/s");
    EXPECT_EQ(r["verification"].value("method", ""), "exact");
    EXPECT_EQ(r["shape"].value("bytes", 0), 4 << 20);
    EXPECT_FALSE(r["src"].value("host", "").empty());
    EXPECT_FALSE(r["dst"].value("host", "").empty());
    EXPECT_GT(r["latency_us"].value("median", 0.0), 0);
    EXPECT_GE(r["latency_us"].value("p99", 0.0), r["latency_us"].value("median", 0.0));
    EXPECT_EQ(r["time_s"].value("reps", 0), 3);
    EXPECT_TRUE(r["limit"].contains("reason") || r["limit"].contains("value"));
  }
}

TEST(NetCli, TwoRanksMeasureTheirLinkBothWays) {
  const std::uint16_t port = free_port();
  const std::string out0 = write_temp_file("net0.json", ""),
                    out1 = write_temp_file("net1.json", "");
  auto one = std::async(std::launch::async,
                        [&] { return run_gpucheck(net_args(port, 1, 2, out1), rank_env()); });
  const RunResult zero = run_gpucheck(net_args(port, 0, 2, out0), rank_env());
  const RunResult r1 = one.get();
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  ASSERT_EQ(r1.exit_code, 0) << r1.err;
  const Json doc = read_json(out0);
  ASSERT_TRUE(doc.is_object()) << zero.err;
  EXPECT_EQ(doc["ranks"].size(), 2u);
  expect_measured(pair_records(doc, 0, 1), "rank 0's document");
  expect_measured(pair_records(read_json(out1), 0, 1), "rank 1's document");
  // The document is one report reads (its schema), and its table names both hosts.
  const RunResult shown = run_gpucheck({"report", "show", out0});
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("host network"));
  EXPECT_THAT(shown.out, HasSubstr("(rank 1)"));
}

TEST(NetCli, ThreeRanksMeasureEveryPair) {
  const std::uint16_t port = free_port();
  std::vector<std::string> outs;
  for (int r = 0; r < 3; ++r)
    outs.push_back(write_temp_file("net3-" + std::to_string(r) + ".json", ""));
  std::vector<std::future<RunResult>> ranks;
  for (int r = 1; r < 3; ++r)
    ranks.push_back(std::async(std::launch::async, [&, r] {
      return run_gpucheck(net_args(port, r, 3, outs[static_cast<std::size_t>(r)]), rank_env());
    }));
  const RunResult zero = run_gpucheck(net_args(port, 0, 3, outs[0]), rank_env());
  ASSERT_EQ(zero.exit_code, 0) << zero.err;
  for (auto& f : ranks) {
    const RunResult r = f.get();
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  const Json d0 = read_json(outs[0]), d1 = read_json(outs[1]), d2 = read_json(outs[2]);
  EXPECT_EQ(d0["results"].size(), 4u);
  expect_measured(pair_records(d0, 0, 1), "0-1");
  expect_measured(pair_records(d0, 0, 2), "0-2");
  expect_measured(pair_records(d1, 1, 2), "1-2");
  expect_measured(pair_records(d2, 1, 2), "1-2 in rank 2's");
}

// Rank 1 started in the background, its pid, then `hurt` done to it once the pairs are under way.
RunResult with_hurt_partner(int signal, const std::string& timeout, double* seconds) {
  const std::uint16_t port = free_port();
  for (const auto& [k, v] : rank_env()) {
    if (v)
      ::setenv(k.c_str(), v->c_str(), 1);
    else
      ::unsetenv(k.c_str());
  }
  const std::string out0 = write_temp_file("hurt0.json", ""),
                    out1 = write_temp_file("hurt1.json", "");
  // 2 GiB a repetition, 3 each way: seconds on loopback, so the signal lands mid-transfer.
  const pid_t pid =
      spawn_gpucheck(net_args(port, 1, 2, out1, "2GiB", timeout), "GPUCHECK_NET_TEST=hurt");
  EXPECT_GT(pid, 0);
  auto zero = std::async(std::launch::async, [&] {
    return run_gpucheck(net_args(port, 0, 2, out0, "2GiB", timeout), rank_env());
  });
  const auto start = std::chrono::steady_clock::now();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  ::kill(pid, signal);
  const RunResult r = zero.get();
  *seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  const Json doc = read_json(out0);
  EXPECT_TRUE(doc.is_object()) << r.err;
  bool failed_named = false;
  for (const auto& rec : doc.value("results", Json::array()))
    failed_named = failed_named || (rec.value("status", "") == "failed" &&
                                    rec.value("reason", "").find("rank 1") != std::string::npos);
  EXPECT_TRUE(failed_named) << doc.dump();
  return r;
}

TEST(NetCli, APartnerKilledMidTransferGivesAFailedRecordNotAHang) {
  double seconds = 0;
  const RunResult r = with_hurt_partner(SIGKILL, "30", &seconds);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_LT(seconds, 25) << "a closed connection is seen at once, not after the timeout";
}

TEST(NetCli, APartnerStoppedMidTransferTimesOutWithAFailedRecord) {
  double seconds = 0;
  const RunResult r = with_hurt_partner(SIGSTOP, "4", &seconds);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_THAT(r.err, HasSubstr("did not answer"));
  EXPECT_LT(seconds, 30);
}

TEST(NetCli, BadUseExitsTwoBeforeAnyMeeting) {
  const std::uint16_t port = free_port();
  const std::string out = write_temp_file("bad.json", "");
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  auto with_bytes = [&](const std::string& b) { return net_args(port, 0, 2, out, b); };
  const std::vector<Case> cases = {
      {{"bench", "--ops", "net"}, "--ops net: measures the network between two or more"},
      {{"bench", "--ops", "net,gemm", "--rendezvous", "127.0.0.1:1", "--rank", "0", "--world-size",
        "2"},
       "--ops net: runs alone"},
      {{"bench", "--net-bytes", "4MiB"}, "--net-bytes: only with --ops net"},
      {with_bytes("0"), "--net-bytes"},
      {with_bytes("-5"), "--net-bytes"},
      {with_bytes("99999999999999999999999"), "--net-bytes"},
      {with_bytes("100000000GiB"), "--net-bytes"},
      {with_bytes("128GiB"), "more than 64 GiB"},
  };
  for (const auto& c : cases) {
    const auto t0 = std::chrono::steady_clock::now();
    const RunResult r = run_gpucheck(c.args, rank_env());
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_THAT(r.err, HasSubstr(c.says));
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10)) << c.says;
  }
  // One process: nothing to measure; a world of one is refused the same way.
  const RunResult alone = run_gpucheck(net_args(port, 0, 1, out), rank_env());
  EXPECT_EQ(alone.exit_code, 2) << alone.err;
}

}  // namespace

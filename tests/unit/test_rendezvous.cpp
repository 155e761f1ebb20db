// The rendezvous of a multi-process all-reduce without a GPU: ranks meeting through a file and
// through TCP (threads here; tests/cli/test_rendezvous_cli.cpp runs processes), each way of not
// meeting (a rank missing, a stale file, a world of another size, a rank given twice) an error
// naming what was waited for, and the rank flags and Slurm variables read and checked.
#include "app/bench_ranks.h"
#include "bench/cell.h"
#include "core/errors.h"
#include "core/nccl_log.h"
#include "core/rendezvous.h"

#include "../free_port.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>

namespace {

namespace fs = std::filesystem;
using namespace gpucheck;
using gpucheck::testing::free_port;
using ::testing::HasSubstr;
using Json = nlohmann::json;

std::string temp_file(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("gpucheck-rdv-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);  // rendezvous files live where only the user writes
  return (dir / name).string();
}

RendezvousRequest request(const std::string& where, int rank, int world, double timeout = 10) {
  return {parse_rendezvous(where), rank, world, "", timeout, "id-of-" + std::to_string(rank), ""};
}

std::string join_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& i : ids) s += i + ";";
  return s;
}

// Every rank in its own thread; each one's result or error text.
std::vector<std::string> meet(const std::string& where, int world, double timeout = 10) {
  std::vector<std::future<std::string>> f;
  for (int r = 0; r < world; ++r)
    f.push_back(std::async(std::launch::async, [=] {
      try {
        auto res = rendezvous(request(where, r, world, timeout), join_ids);
        return res.answer + (r == 0 ? "|" + join_ids(res.identities) : "");
      } catch (const UsageError& e) {
        return std::string("error: ") + e.what();
      }
    }));
  std::vector<std::string> out;
  for (auto& x : f) out.push_back(x.get());
  return out;
}

TEST(Rendezvous, PlacesParse) {
  EXPECT_EQ(parse_rendezvous("/shared/rdv").file, "/shared/rdv");
  EXPECT_EQ(parse_rendezvous("rdv.json").file, "rdv.json");
  EXPECT_EQ(parse_rendezvous("./dir:2/rdv:9").file, "./dir:2/rdv:9");
  auto p = parse_rendezvous("node17:29500");
  EXPECT_TRUE(p.tcp());
  EXPECT_EQ(p.host, "node17");
  EXPECT_EQ(p.port, 29500);
  EXPECT_EQ(parse_rendezvous("[::1]:80").host, "::1");
  EXPECT_THROW(parse_rendezvous(""), UsageError);
  EXPECT_THROW(parse_rendezvous("node:0"), UsageError);
  EXPECT_THROW(parse_rendezvous("node:70000"), UsageError);
  EXPECT_THROW(parse_rendezvous(":29500"), UsageError);
}

TEST(Rendezvous, ThreeRanksMeetThroughAFile) {
  const std::string file = temp_file("rdv");
  const auto out = meet(file, 3);
  EXPECT_EQ(out[0], "id-of-0;id-of-1;id-of-2;|id-of-0;id-of-1;id-of-2;");
  EXPECT_EQ(out[1], "id-of-0;id-of-1;id-of-2;");
  EXPECT_EQ(out[2], "id-of-0;id-of-1;id-of-2;");
  // Every rank said it read the answer, so rank 0 left nothing a later run could read.
  EXPECT_FALSE(fs::exists(file + ".rank1"));
  EXPECT_FALSE(fs::exists(file));
}

TEST(Rendezvous, ThreeRanksMeetThroughTcp) {
  const auto out = meet("127.0.0.1:" + std::to_string(free_port()), 3);
  EXPECT_EQ(out[0], "id-of-0;id-of-1;id-of-2;|id-of-0;id-of-1;id-of-2;");
  EXPECT_EQ(out[1], "id-of-0;id-of-1;id-of-2;");
  EXPECT_EQ(out[2], "id-of-0;id-of-1;id-of-2;");
}

TEST(Rendezvous, RankZeroNamesTheRanksThatNeverCame) {
  const std::string file = temp_file("rdv");
  const auto t0 = std::chrono::steady_clock::now();
  try {
    rendezvous(request(file, 0, 3, 0.3), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 0 of 3 waited 0.3 s for rank(s) 1, 2"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  const std::string where = "127.0.0.1:" + std::to_string(free_port());
  try {
    rendezvous(request(where, 0, 2, 0.3), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 0 of 2 waited 0.3 s on port"));
    EXPECT_THAT(e.what(), HasSubstr("for rank(s) 1"));
  }
}

TEST(Rendezvous, ARankAloneNamesRankZero) {
  try {
    rendezvous(request(temp_file("rdv"), 1, 2, 0.3), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 of 2 waited 0.3 s for rank 0"));
    EXPECT_THAT(e.what(), HasSubstr("was written"));
  }
  try {
    rendezvous(request("127.0.0.1:" + std::to_string(free_port()), 1, 2, 0.3), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("rank 1 of 2 waited 0.3 s for rank 0 at 127.0.0.1:"));
    EXPECT_THAT(e.what(), HasSubstr("refused"));
  }
}

TEST(Rendezvous, AStaleFileIsNotMet) {
  const std::string file = temp_file("rdv");
  const double hour_ago =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count() -
      3600;
  std::ofstream(file) << Json{
      {"magic", "gpucheck-rendezvous/2"},
      {"challenge", "0123456789abcdef0123456789abcdef"},
      {"world_size", 2},
      {"session", ""},
      {"created", hour_ago},
      {"host", "n1"},
      {"pid", 4242},
      {"phase", "go"},
      {"members", {{"1", "x"}}},
      {"answer", "old id"}}.dump();
  try {
    rendezvous(request(file, 1, 2, 0.3), join_ids);
    FAIL() << "a stale file was met";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is stale: written by n1 (pid 4242) 3600 s before"));
  }
  // A fresh file of a finished run (its ranks met without this one) is stale as well.
  Json fresh = Json::parse(std::ifstream(file));
  fresh["created"] =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::ofstream(file) << fresh.dump();
  try {
    rendezvous(request(file, 1, 2, 0.3), join_ids);
    FAIL() << "a finished run's file was met";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("its ranks met without this rank"));
  }
  // Another job's file (Slurm's job.step differs).
  RendezvousRequest q = request(file, 1, 2, 0.3);
  q.session = "77.0";
  EXPECT_THROW(rendezvous(q, join_ids), UsageError);
}

TEST(Rendezvous, AWorldOfAnotherSizeEndsAtOnce) {
  const std::string file = temp_file("rdv");
  auto zero = std::async(std::launch::async, [&] {
    try {
      rendezvous(request(file, 0, 3, 1), join_ids);
    } catch (const UsageError&) {
    }
  });
  const auto t0 = std::chrono::steady_clock::now();
  try {
    rendezvous(request(file, 1, 2, 5), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("runs a world of 3 ranks, this rank was given --world-size 2"));
  }
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(3));
  zero.get();
}

TEST(Rendezvous, ARankGivenTwiceIsTurnedAway) {
  // Two processes both given --rank 1: whichever comes second is turned away, by name.
  const std::string where = "127.0.0.1:" + std::to_string(free_port());
  auto attempt = [&](int rank) {
    return std::async(std::launch::async, [&, rank] {
      try {
        rendezvous(request(where, rank, 3, 1.5), join_ids);
      } catch (const UsageError& e) {
        return std::string(e.what());
      }
      return std::string("met");
    });
  };
  auto zero = attempt(0), a = attempt(1), b = attempt(1);
  const std::string first = a.get(), second = b.get();
  const bool turned_away = first.find("rank 1 has already joined") != std::string::npos ||
                           second.find("rank 1 has already joined") != std::string::npos;
  EXPECT_TRUE(turned_away) << first << "\n" << second;
  EXPECT_THAT(zero.get(), HasSubstr("for rank(s) 2"));  // rank 2 never came
}

TEST(BenchRanks, FlagsAreChecked) {
  using app::RankOptions;
  using app::resolve_ranks;
  const EnvMap none;
  EXPECT_FALSE(resolve_ranks({}, none));
  auto msg = [&](RankOptions o, const EnvMap& env) {
    try {
      resolve_ranks(o, env);
    } catch (const UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(msg({0, 2, "", 1}, none), HasSubstr("needs --rendezvous"));
  EXPECT_THAT(msg({2, 2, "f", 1}, none), HasSubstr("rank 2 is outside a world of 2"));
  EXPECT_THAT(msg({-1, 2, "f", 1}, none), HasSubstr("rank -1 is outside"));
  EXPECT_THAT(msg({0, 0, "f", 1}, none), HasSubstr("at least 1"));
  EXPECT_THAT(msg({1, std::nullopt, "f", 1}, none), HasSubstr("give --world-size too"));
  EXPECT_THAT(msg({std::nullopt, std::nullopt, "f", 1}, none), HasSubstr("srun"));
  EXPECT_THAT(
      msg({std::nullopt, std::nullopt, "f", 1}, {{"SLURM_PROCID", "x"}, {"SLURM_NTASKS", "2"}}),
      HasSubstr("SLURM_PROCID='x'"));
  const std::string token = "a-secret-long-enough-for-the-test";
  auto slurm =
      resolve_ranks({std::nullopt, std::nullopt, "h:1", 5}, {{"SLURM_PROCID", "3"},
                                                             {"SLURM_NTASKS", "4"},
                                                             {"SLURM_JOB_ID", "77"},
                                                             {"SLURM_STEP_ID", "2"},
                                                             {"GPUCHECK_RENDEZVOUS_TOKEN", token}});
  ASSERT_TRUE(slurm);
  EXPECT_EQ(slurm->rank, 3);
  EXPECT_EQ(slurm->world_size, 4);
  EXPECT_EQ(slurm->session, "77.2");
  EXPECT_EQ(slurm->timeout_s, 5);
  EXPECT_EQ(slurm->token, token);
  EXPECT_EQ(app::rendezvous_request(*slurm, "me").token, token);
  // A place other hosts reach needs the token; a short one is refused without being shown.
  EXPECT_THAT(msg({0, 2, "10.0.0.1:29500", 1}, none), HasSubstr("set GPUCHECK_RENDEZVOUS_TOKEN"));
  EXPECT_THAT(msg({0, 2, "10.0.0.1:29500", 1}, {{"GPUCHECK_RENDEZVOUS_TOKEN", "abc"}}),
              HasSubstr("3 characters are too few"));
  EXPECT_EQ(msg({0, 2, "10.0.0.1:29500", 1}, {{"GPUCHECK_RENDEZVOUS_TOKEN", token}}), "no error");
  EXPECT_EQ(msg({0, 2, "127.0.0.1:29500", 1}, none), "no error");
}

TEST(BenchRanks, SlurmTasksTakeTheirOwnGpu) {
  const std::vector<app::BenchTarget> two = {{"cuda0", "cuda"}, {"cuda1", "cuda"}};
  EXPECT_EQ(app::rank_devices(two, false, {}), (std::vector<std::string>{"cuda0", "cuda1"}));
  EXPECT_EQ(app::rank_devices(two, false, {{"SLURM_LOCALID", "1"}}),
            std::vector<std::string>{"cuda1"});
  EXPECT_EQ(app::rank_devices(two, true, {{"SLURM_LOCALID", "1"}}),
            (std::vector<std::string>{"cuda0", "cuda1"}));
  EXPECT_EQ(app::rank_devices({{"cuda0", "cuda"}}, false, {{"SLURM_LOCALID", "3"}}),
            std::vector<std::string>{"cuda0"});  // Slurm bound the task to its one GPU
  EXPECT_THROW(app::rank_devices(two, false, {{"SLURM_LOCALID", "2"}}), UsageError);
  // One task per node (srun -N2 --ntasks-per-node=1): the task takes every GPU of its node.
  const EnvMap per_node = {
      {"SLURM_LOCALID", "0"}, {"SLURM_NODEID", "1"}, {"SLURM_STEP_TASKS_PER_NODE", "1(x2)"}};
  EXPECT_EQ(app::rank_devices(two, false, per_node), (std::vector<std::string>{"cuda0", "cuda1"}));
  const EnvMap per_gpu = {
      {"SLURM_LOCALID", "1"}, {"SLURM_NODEID", "2"}, {"SLURM_TASKS_PER_NODE", "1,2(x2)"}};
  EXPECT_EQ(app::rank_devices(two, false, per_gpu), std::vector<std::string>{"cuda1"});
}

TEST(BenchRanks, RankZeroLaysOutTheRanks) {
  const Json backends = Json::array(
      {{{"name", "cuda"},
        {"devices", {{{"device", "cuda1"}, {"device_name", "H100"}, {"device_uuid", "GPU-1"}}}}}});
  const Json id = app::rank_identity(1, {"cuda1"}, backends);
  EXPECT_EQ(id["rank"], 1);
  EXPECT_EQ(id["devices"][0]["device_uuid"], "GPU-1");
  const Json two = {{"devices", Json::array({{{"device", "cuda0"}}, {{"device", "cuda1"}}})}};
  const std::string bytes("\x01\xff\x00z", 4);
  const std::string answer = app::rank0_answer({two.dump(), id.dump()}, bytes);
  const CollectiveSpan s0 = app::span_of(answer, 0), s1 = app::span_of(answer, 1);
  EXPECT_EQ(s0.ranks, 3);
  EXPECT_EQ(s0.first_rank, 0);
  EXPECT_EQ(s1.first_rank, 2);
  EXPECT_EQ(s1.id, bytes);
  EXPECT_THROW(app::rank0_answer({"not json", id.dump()}, bytes), UsageError);
  EXPECT_THROW(app::span_of("{}", 0), UsageError);
}

TEST(BenchRanks, IdentitiesReachTheDocumentSanitized) {
  const Json evil = {{"rank", 1},
                     {"hostname", "node\x1b]0;owned\x07"},
                     {"devices", Json::array({{{"device_uuid", "GPU-\x1b[2J"}}})}};
  const Json doc = app::identities_for_document({evil.dump(), "not json \x1b[31m"});
  // The strings as a view prints them: no raw escape or bell left (dump() would escape them).
  for (const std::string& shown :
       {doc[0]["hostname"].get<std::string>(),
        doc[0]["devices"][0]["device_uuid"].get<std::string>(), doc[1].get<std::string>()}) {
    EXPECT_EQ(shown.find('\x1b'), std::string::npos) << shown;
    EXPECT_EQ(shown.find('\x07'), std::string::npos) << shown;
  }
  EXPECT_EQ(doc[0]["rank"], 1);
  EXPECT_THAT(doc[0]["hostname"].get<std::string>(), HasSubstr("node"));
  EXPECT_THAT(doc[1].get<std::string>(), HasSubstr("not json"));
}

TEST(BenchRanks, ThePlanCarriesTheSpan) {
  bench::BenchPlan p;
  p.device = "cuda0";
  p.backend = "cuda";
  p.group = {"cuda0"};
  p.collective.network_only = true;
  p.collective.span = CollectiveSpan{std::string("\x00\x7f\x80", 3), 4, 2};
  const bench::BenchPlan back = bench::plan_from_json(bench::to_json(p));
  EXPECT_TRUE(back.collective.network_only);
  ASSERT_TRUE(back.collective.span);
  EXPECT_EQ(back.collective.span->id, p.collective.span->id);
  EXPECT_EQ(back.collective.span->ranks, 4);
  EXPECT_EQ(back.collective.span->first_rank, 2);
}

TEST(NcclLog, NamesTheTransportsNcclChose) {
  const std::string socket =
      "node1:123:456 [0] NCCL INFO NET/Plugin: Could not find: libnccl-net.so\n"
      "node1:123:456 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\n"
      "node1:123:456 [0] NCCL INFO Using network Socket\n"
      "node1:123:456 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via NET/Socket/0\n"
      "node1:123:456 [1] NCCL INFO Channel 01/0 : 1[1] -> 0[0] via NET/Socket/0\n";
  const auto p = parse_nccl_log(socket);
  EXPECT_EQ(p.transports, std::vector<std::string>{"NET/Socket"});
  EXPECT_EQ(p.network, "Socket");
  EXPECT_TRUE(only_network(p));
  const auto ib = parse_nccl_log(
      "x NCCL INFO Using network IB\n"
      "x NCCL INFO Channel 00/0 : 0[0] -> 1[1] [send] via NET/IB/0/GDRDMA\n"
      "x NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/CUMEM/read\n"
      "x NCCL INFO Channel 01/0 : 1[1] -> 0[0] via SHM/direct/direct\n");
  EXPECT_EQ(ib.transports, (std::vector<std::string>{"NET/IB", "P2P/CUMEM", "SHM"}));
  EXPECT_EQ(ib.network, "IB");
  EXPECT_FALSE(only_network(ib));
  EXPECT_FALSE(only_network(parse_nccl_log("")));
}

}  // namespace

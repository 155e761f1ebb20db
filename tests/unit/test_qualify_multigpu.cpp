// qualify's multi-GPU requirements: p2p per pair, all-reduce busbw, siblings through the shared
// outlier function; parsed strictly, judged on fabricated sections, with the plan of the group
// child a profile asks for.
#include "qualify/bench_plan.h"
#include "qualify/judge.h"
#include "qualify/profile.h"
#include "qualify/skus.h"

#include "core/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace {

namespace q = gpucheck::qualify;
using ::testing::HasSubstr;
using Json = nlohmann::json;

Json backends(int gpus, Json figures1 = Json()) {
  Json devices = Json::array();
  Json load = Json::array();
  for (int i = 0; i < gpus; ++i) {
    devices.push_back({{"device", "cuda" + std::to_string(i)},
                       {"device_name", "NVIDIA H100 80GB HBM3"},
                       {"stable_id", "cuda:GPU-" + std::to_string(i)},
                       {"pci_bus_id", "0000:0" + std::to_string(i) + ":00.0"}});
    Json figs = {{{"name", "gemm f16 4096x4096x4096"},
                  {"value", 630.0 + i},
                  {"unit", "TFLOP/s"},
                  {"spread", 0.004}}};
    if (i == 1 && !figures1.is_null()) figs = figures1;
    load.push_back({{"device", "cuda" + std::to_string(i)}, {"status", "ok"}, {"figures", figs}});
  }
  return Json::array(
      {{{"name", "cpu"},
        {"status", "available"},
        {"devices", {{{"device", "cpu"}, {"device_name", "CPU"}, {"stable_id", "cpu"}}}}},
       {{"name", "cuda"}, {"status", "available"}, {"devices", devices}, {"under_load", load}}});
}

Json p2p_record(const std::string& src, const std::string& dst, double gbps, bool bi = false,
                const std::string& status = "ok") {
  Json r = {{"device", src},
            {"backend", "cuda"},
            {"op", "p2p"},
            {"impl", "cudaMemcpyPeerAsync"},
            {"shape",
             {{"bytes", 268435456},
              {"direction", "p2p"},
              {"bidirectional", bi},
              {"src", src},
              {"dst", dst},
              {"peer_access", true},
              {"engine", "ce"}}},
            {"transfers", "excluded"},
            {"status", status}};
  if (status == "ok")
    r["throughput"] = {{"value", gbps}, {"unit", "GB/s"}};
  else
    r["reason"] = "verification failed (first bad index 7): bytes differ";
  return r;
}

Json allreduce_record(std::uint64_t bytes, std::vector<std::string> devices, double busbw) {
  return {{"device", devices.front()},
          {"backend", "cuda"},
          {"op", "allreduce"},
          {"impl", "nccl"},
          {"dtype", "f32"},
          {"shape", {{"bytes", bytes}, {"devices", devices}}},
          {"transfers", "excluded"},
          {"status", "ok"},
          {"throughput", {{"value", busbw}, {"unit", "GB/s"}}},
          {"busbw", busbw}};
}

q::Requirement one(const std::string& body) {
  return q::parse_profile("[[require]]\n" + body, "p.toml").requirements.at(0);
}

TEST(QualifyMultiGpu, ParsesTheThreeKinds) {
  auto p = one("kind = \"p2p\"\nmin = 300\nunit = \"GB/s\"\ndirection = \"bi\"\n");
  EXPECT_EQ(p.kind, q::Kind::kP2p);
  EXPECT_TRUE(p.bidirectional);
  EXPECT_EQ(p.bytes, 268435456u);
  EXPECT_TRUE(p.pairs.empty());
  auto l =
      one("kind = \"p2p\"\npairs = [\"cuda1->cuda0\"]\nbytes = 1073741824\n"
          "min_fraction_of_reference = 0.9\n");
  ASSERT_EQ(l.pairs.size(), 1u);
  EXPECT_EQ(l.pairs[0].first, "cuda1");
  EXPECT_EQ(l.criterion, q::Criterion::kFractionOfReference);
  auto a = one("kind = \"allreduce\"\nbytes = 268435456\nmin = 250\nunit = \"GB/s\"\n");
  EXPECT_EQ(a.kind, q::Kind::kAllreduce);
  auto s = one("kind = \"siblings\"\nmax_deviation = 0.05\n");
  EXPECT_EQ(s.kind, q::Kind::kSiblings);
  EXPECT_DOUBLE_EQ(s.value, 0.05);
}

TEST(QualifyMultiGpu, BadProfilesNameTheKey) {
  auto err = [](const std::string& body) {
    try {
      one(body);
    } catch (const gpucheck::UsageError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(err("kind = \"p2p\"\npairs = [\"cuda0->cuda0\"]\nmin = 1\nunit = \"GB/s\"\n"),
              HasSubstr("pairs"));
  EXPECT_THAT(err("kind = \"p2p\"\nmin = 1\n"), HasSubstr("unit"));
  EXPECT_THAT(
      err("kind = \"p2p\"\nengine = \"sm\"\npeer_access = false\nmin = 1\nunit = \"GB/s\"\n"),
      HasSubstr("peer_access"));
  EXPECT_THAT(err("kind = \"allreduce\"\nbytes = 1001\nmin = 1\nunit = \"GB/s\"\n"),
              HasSubstr("4-byte"));
  EXPECT_THAT(err("kind = \"allreduce\"\nmin = 1\nunit = \"GB/s\"\ndevice = \"cuda0\"\n"),
              HasSubstr("device"));
  EXPECT_THAT(err("kind = \"siblings\"\n"), HasSubstr("max_deviation"));
  EXPECT_THAT(err("kind = \"siblings\"\nmax_deviation = 1.5\n"), HasSubstr("max_deviation"));
}

TEST(QualifyMultiGpu, P2pEveryPairMetAndUnmet) {
  q::Observations o;
  o.backends = backends(2);
  o.results = Json::array({p2p_record("cuda0", "cuda1", 390), p2p_record("cuda1", "cuda0", 250)});
  auto v = q::judge(one("kind = \"p2p\"\nmin = 300\nunit = \"GB/s\"\n"), o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].device, "cuda0->cuda1");
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(v[1].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[1].reason, HasSubstr("measured 250"));
}

// A floor as a share of each record's limit (qualify/limits.h), for pairs and the all-reduce.
TEST(QualifyMultiGpu, FractionOfTheLimit) {
  q::Observations o;
  o.backends = backends(2);
  Json fast = p2p_record("cuda0", "cuda1", 390), slow = p2p_record("cuda1", "cuda0", 250);
  fast["limit"] = {{"value", 450}, {"unit", "GB/s"}, {"fraction", 390.0 / 450}};
  slow["limit"] = {{"reason", "no NVLink figure"}};
  o.results = Json::array({fast, slow});
  auto v = q::judge(one("kind = \"p2p\"\nmin_fraction_of_limit = 0.8\n"), o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_EQ(v[1].outcome, q::Outcome::kSkip);
  EXPECT_THAT(v[1].reason, HasSubstr("no NVLink figure"));
  v = q::judge(one("kind = \"p2p\"\nmin_fraction_of_limit = 0.9\n"), o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("of the hardware's limit"));
  Json ar = allreduce_record(268435456, {"cuda0", "cuda1"}, 360.0);
  ar["limit"] = {{"value", 450}, {"unit", "GB/s"}, {"fraction", 0.8}};
  o.results = Json::array({ar});
  v = q::judge(one("kind = \"allreduce\"\nmin_fraction_of_limit = 0.75\n"), o);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet);
  EXPECT_THROW(one("kind = \"allreduce\"\ntransport = \"net\"\nmin_fraction_of_limit = 0.5\n"),
               gpucheck::UsageError);
  EXPECT_THROW(one("kind = \"p2p\"\nmin_fraction_of_limit = 2\n"), gpucheck::UsageError);
}

TEST(QualifyMultiGpu, P2pMismatchIsUnmetAndMissingRecordSaysSo) {
  q::Observations o;
  o.backends = backends(2);
  o.results = Json::array({p2p_record("cuda0", "cuda1", 0, false, "mismatch")});
  auto v = q::judge(one("kind = \"p2p\"\nmin = 1\nunit = \"GB/s\"\n"), o);
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("VERIFICATION FAILED"));
  EXPECT_EQ(v[1].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[1].reason, HasSubstr("no record"));
}

TEST(QualifyMultiGpu, BidirectionalIsOneVerdictPerUnorderedPair) {
  q::Observations o;
  o.backends = backends(3);
  o.results =
      Json::array({p2p_record("cuda0", "cuda1", 760, true), p2p_record("cuda0", "cuda2", 760, true),
                   p2p_record("cuda1", "cuda2", 760, true)});
  auto v = q::judge(one("kind = \"p2p\"\ndirection = \"bi\"\nmin = 700\nunit = \"GB/s\"\n"), o);
  ASSERT_EQ(v.size(), 3u);
  for (const auto& x : v) EXPECT_EQ(x.outcome, q::Outcome::kMet) << x.device << x.reason;
}

TEST(QualifyMultiGpu, OneGpuIsUnmetWithTheReason) {
  q::Observations o;
  o.backends = backends(1);
  auto v = q::judge(one("kind = \"p2p\"\nmin = 1\nunit = \"GB/s\"\n"), o);
  ASSERT_EQ(v.size(), 1u);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("1 CUDA device(s)"));
  auto a = q::judge(one("kind = \"allreduce\"\nmin = 1\nunit = \"GB/s\"\n"), o);
  EXPECT_EQ(a[0].outcome, q::Outcome::kUnmet);
}

TEST(QualifyMultiGpu, AllreduceBusbwAndReference) {
  q::Observations o;
  o.backends = backends(2);
  o.results = Json::array({allreduce_record(268435456, {"cuda0", "cuda1"}, 285.0)});
  auto met = q::judge(one("kind = \"allreduce\"\nmin = 250\nunit = \"GB/s\"\n"), o);
  EXPECT_EQ(met[0].outcome, q::Outcome::kMet);
  EXPECT_DOUBLE_EQ(met[0].measured.get<double>(), 285.0);
  auto other_size =
      q::judge(one("kind = \"allreduce\"\nbytes = 1073741824\nmin = 1\nunit = \"GB/s\"\n"), o);
  EXPECT_EQ(other_size[0].outcome, q::Outcome::kUnmet);
  const auto skus = q::parse_skus(R"([[sku]]
model = "H100"
names = ["NVIDIA H100 80GB HBM3"]
[[sku.reference]]
source = "measured"
op = "allreduce"
dtype = "f32"
shape = { bytes = 268435456 }
value = 300.0
unit = "GB/s"
card = "NVIDIA H100 80GB HBM3"
date = "test"
command = "test"
[[sku.reference]]
source = "datasheet"
op = "p2p"
shape = { bytes = 268435456, bidirectional = false, peer_access = true, engine = "ce" }
value = 450.0
unit = "GB/s"
datasheet = "test"
)",
                                  "s.toml");
  o.skus = &skus;
  auto frac = q::judge(one("kind = \"allreduce\"\nmin_fraction_of_reference = 0.9\n"), o);
  EXPECT_EQ(frac[0].outcome, q::Outcome::kMet);
  EXPECT_NEAR(frac[0].measured.get<double>(), 0.95, 1e-12);
  o.results.push_back(p2p_record("cuda0", "cuda1", 400));
  auto p = q::judge(one("kind = \"p2p\"\npairs = [\"cuda0->cuda1\"]\n"
                        "min_fraction_of_reference = 0.85\nreference = \"datasheet\"\n"),
                    o);
  EXPECT_EQ(p[0].outcome, q::Outcome::kMet);
  EXPECT_NEAR(p[0].measured.get<double>(), 400.0 / 450.0, 1e-12);
}

TEST(QualifyMultiGpu, P2pAgainstTheNvlinkLineRate) {
  q::Observations o;
  o.backends = backends(2);
  // 18 links of 26.562 GB/s from cuda0 to cuda1: 478.116 GB/s one way.
  Json links = Json::array();
  for (int l = 0; l < 18; ++l)
    links.push_back({{"link", l},
                     {"state", "active"},
                     {"remote_pci_bus_id", "0000:01:00.0"},
                     {"speed_mbps", 26562}});
  o.backends[1]["devices"][0]["properties"] = {{"nvml", {{"nvlink", {{"links", links}}}}}};
  o.results = Json::array({p2p_record("cuda0", "cuda1", 390.0), p2p_record("cuda1", "cuda0", 390.0),
                           p2p_record("cuda0", "cuda1", 700.0, true)});
  auto uni = q::judge(one("kind = \"p2p\"\nmin_fraction_of_line_rate = 0.8\n"), o);
  ASSERT_EQ(uni.size(), 2u);
  EXPECT_EQ(uni[0].outcome, q::Outcome::kMet);
  EXPECT_NEAR(uni[0].measured.get<double>(), 390.0 / 478.116, 1e-9);
  EXPECT_EQ(uni[1].outcome, q::Outcome::kSkip);  // cuda1 lists no link in this fixture
  EXPECT_THAT(uni[1].reason, HasSubstr("no active NVLink"));
  auto bi =
      q::judge(one("kind = \"p2p\"\ndirection = \"bi\"\nmin_fraction_of_line_rate = 0.8\n"), o);
  ASSERT_EQ(bi.size(), 1u);
  EXPECT_NEAR(bi[0].measured.get<double>(), 700.0 / (2 * 478.116), 1e-9);
  EXPECT_EQ(bi[0].outcome, q::Outcome::kUnmet);  // 0.73
}

TEST(QualifyMultiGpu, SiblingsThroughTheOutlierFunction) {
  q::Observations o;
  o.backends = backends(2);
  auto ok = q::judge(one("kind = \"siblings\"\nmax_deviation = 0.05\n"), o);
  EXPECT_EQ(ok[0].outcome, q::Outcome::kMet) << ok[0].reason;
  o.backends = backends(2, Json::array({{{"name", "gemm f16 4096x4096x4096"},
                                         {"value", 560.0},
                                         {"unit", "TFLOP/s"},
                                         {"spread", 0.004}}}));
  auto slow = q::judge(one("kind = \"siblings\"\nmax_deviation = 0.05\n"), o);
  EXPECT_EQ(slow[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(slow[0].reason, HasSubstr("cuda1 gemm f16"));
  // 630 and 560: the median is 595, cuda1 5.9 % below it.
  EXPECT_NEAR(slow[0].measured.get<double>(), 35.0 / 595.0, 1e-12);
  o.backends = backends(1);
  EXPECT_EQ(q::judge(one("kind = \"siblings\"\nmax_deviation = 0.05\n"), o)[0].outcome,
            q::Outcome::kSkip);
}

TEST(QualifyMultiGpu, GroupPlanHoldsTheRequestedCellsOnce) {
  auto p = q::parse_profile(R"([[require]]
kind = "p2p"
min = 300
unit = "GB/s"
[[require]]
kind = "p2p"
pairs = ["cuda0->cuda1"]
min = 350
unit = "GB/s"
[[require]]
kind = "allreduce"
bytes = 1073741824
min = 300
unit = "GB/s"
)",
                            "p.toml");
  q::Observations o;
  o.backends = backends(2);
  auto plan = q::plan_group_bench(p, q::list_devices(o.backends));
  ASSERT_TRUE(plan);
  EXPECT_EQ(plan->group, std::vector<std::string>({"cuda0", "cuda1"}));
  ASSERT_EQ(plan->cells.size(),
            3u);  // two pairs (the second requirement's is a repeat), one all-reduce
  EXPECT_EQ(plan->cells[2].op, gpucheck::Op::kAllreduce);
  o.backends = backends(1);
  EXPECT_FALSE(q::plan_group_bench(p, q::list_devices(o.backends)));
}

// A profile asks for bench children where a requirement is on a bench cell or a group op, and
// only then: a doctor- or device-only profile runs no bench.
TEST(QualifyMultiGpu, BenchesRunOnlyForBenchAndGroupRequirements) {
  const auto needs = [](const std::string& body) {
    return q::needs_bench(q::parse_profile("[[require]]\n" + body, "p.toml"));
  };
  EXPECT_TRUE(needs("kind = \"p2p\"\nmin = 300\nunit = \"GB/s\"\n"));
  EXPECT_TRUE(needs("kind = \"allreduce\"\nmin = 300\nunit = \"GB/s\"\n"));
  EXPECT_TRUE(
      needs("kind = \"bench\"\ndevice = \"cpu\"\nop = \"exp\"\nshape = { n = 8 }\n"
            "min = 1\nunit = \"GB/s\"\n"));
  EXPECT_FALSE(needs("kind = \"doctor\"\n"));
  EXPECT_FALSE(needs("kind = \"backend\"\nname = \"cpu\"\navailable = true\n"));
}

TEST(QualifyMultiGpu, TheNetworkAllreduceRunsAloneAndIsProvenByNcclsLog) {
  auto p = q::parse_profile(R"([[require]]
kind = "allreduce"
bytes = 1048576
min = 100
unit = "GB/s"
[[require]]
id = "net"
kind = "allreduce"
transport = "net"
bytes = 1048576
min = 2
unit = "GB/s"
)",
                            "p.toml");
  ASSERT_TRUE(p.requirements[1].network_only);
  q::Observations o;
  o.backends = backends(2);
  // Two group children: NCCL reads its transports once per process.
  auto own = q::plan_group_bench(p, q::list_devices(o.backends));
  auto net = q::plan_group_bench(p, q::list_devices(o.backends), true);
  ASSERT_TRUE(own && net);
  EXPECT_FALSE(own->collective.network_only);
  EXPECT_TRUE(net->collective.network_only);
  ASSERT_EQ(net->cells.size(), 1u);
  // Each requirement reads the record of its own transport.
  Json nvlink = allreduce_record(1048576, {"cuda0", "cuda1"}, 150.0);
  Json socket = allreduce_record(1048576, {"cuda0", "cuda1"}, 3.0);
  socket["context"] = {{"transport", "net"}, {"nccl_transports", {"NET/Socket"}}};
  o.results = Json::array({nvlink, socket});
  auto v = q::judge(p.requirements[1], o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kMet) << v[0].reason;
  EXPECT_DOUBLE_EQ(v[0].measured.get<double>(), 3.0);
  EXPECT_THAT(v[0].reason, HasSubstr("via NET/Socket"));
  EXPECT_EQ(q::judge(p.requirements[0], o)[0].outcome, q::Outcome::kMet);
  // Fast enough, but NCCL took a shared-memory path: unproven, unmet.
  o.results[1]["context"]["nccl_transports"] = {"NET/Socket", "SHM"};
  v = q::judge(p.requirements[1], o);
  EXPECT_EQ(v[0].outcome, q::Outcome::kUnmet);
  EXPECT_THAT(v[0].reason, HasSubstr("not only the network"));
  o.results[1]["context"].erase("nccl_transports");
  EXPECT_THAT(q::judge(p.requirements[1], o)[0].reason, HasSubstr("unproven"));
  // No reference for the network path.
  EXPECT_THROW(q::parse_profile("[[require]]\nkind = \"allreduce\"\ntransport = \"net\"\n"
                                "min_fraction_of_reference = 0.5\n",
                                "p.toml"),
               gpucheck::UsageError);
}

}  // namespace

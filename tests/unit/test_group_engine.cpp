// The group engine (peer copies, their latency, all-reduce) against a peer group that lives in
// host memory: every received buffer is verified, a corrupted one is a mismatch, bidirectional
// throughput sums the directions, all-reduce records give algbw and busbw, and what the group
// cannot do (no peer access, no NCCL, one device, too little memory) is a record that says why.
#include "backends/peer_group.h"
#include "bench/group_engine.h"
#include "bench/ops/allreduce.h"
#include "bench/ops/p2p.h"
#include "bench/record.h"

#include <gtest/gtest.h>

#include <condition_variable>
#include <cstring>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <set>
#include <vector>

namespace {

using namespace gpucheck;
using namespace gpucheck::bench;
using Json = nlohmann::json;

class HostMem final : public DeviceBuffer {
 public:
  explicit HostMem(std::size_t bytes) : data(bytes) {}
  std::size_t bytes() const override { return data.size(); }
  std::vector<unsigned char> data;
};

unsigned char* bytes_of(const DeviceBuffer& b) {
  return const_cast<unsigned char*>(static_cast<const HostMem&>(b).data.data());
}

// The wire between the processes of a spanning all-reduce, here threads: every rank's partial sum
// in, the total out once all have come.
class Bus {
 public:
  explicit Bus(int ranks) : ranks_(ranks) {}
  std::vector<float> reduce(const std::vector<float>& mine) {
    std::unique_lock lock(m_);
    const int generation = generation_;
    if (acc_.empty()) acc_.assign(mine.size(), 0.0f);
    for (std::size_t i = 0; i < mine.size(); ++i) acc_[i] += mine[i];
    if (++arrived_ == ranks_) {
      result_ = std::move(acc_);
      acc_.clear();
      arrived_ = 0;
      ++generation_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return generation_ != generation; });
    }
    return result_;
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  int ranks_, arrived_ = 0, generation_ = 0;
  std::vector<float> acc_, result_;
};

// Devices in host memory; copies really copy, an all-reduce really sums. Each knob makes one
// failure the engine must turn into a record.
class HostGroup final : public PeerGroup {
 public:
  explicit HostGroup(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i)
      ids_.push_back({"cuda" + std::to_string(i), "cuda", "Host GPU", "GPU-" + std::to_string(i),
                      "0000:0" + std::to_string(i) + ":00.0"});
  }
  std::size_t size() const override { return ids_.size(); }
  const DeviceIdentity& identity(std::size_t i) const override { return ids_.at(i); }
  MemoryBudget memory_budget(std::size_t) const override {
    return {budget, budget, "the test's budget"};
  }
  std::unique_ptr<DeviceBuffer> allocate(std::size_t, std::size_t bytes) override {
    return std::make_unique<HostMem>(bytes);
  }
  void upload(std::size_t, DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    std::memcpy(bytes_of(dst), src, bytes);
  }
  void download(std::size_t, void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    std::memcpy(dst, bytes_of(src), bytes);
  }
  std::optional<std::string> peer_access_unavailable(std::size_t, std::size_t) const override {
    if (no_peer_access) return std::string("no peer path in this test");
    return std::nullopt;
  }
  void set_peer_access(std::size_t a, std::size_t b, bool enabled) override {
    auto key = std::pair{std::min(a, b), std::max(a, b)};
    auto it = peer_state.find(key);
    if (it == peer_state.end() || it->second != enabled) ++peer_changes;
    peer_state[key] = enabled;
  }
  CopyTiming timed_copies(const std::vector<PeerCopy>& copies, int repeats) override {
    ++batches_timed;
    widest_batch = std::max(widest_batch, copies.size());
    std::set<std::size_t> senders, receivers;
    for (const auto& c : copies) {
      // Pairs timed together share no GPU: no device sends twice or receives twice.
      if (!senders.insert(c.src_device).second || !receivers.insert(c.dst_device).second)
        shared_a_gpu = true;
    }
    CopyTiming t;
    for (const auto& c : copies) {
      std::memcpy(bytes_of(*c.dst), bytes_of(*c.src), c.bytes);
      if (corrupt_copies) bytes_of(*c.dst)[c.bytes - 1] ^= 1;
      // Forward at 100 GB/s, reverse at 50 GB/s, per repetition.
      const double gbps = c.src_device < c.dst_device ? 100 : 50;
      t.seconds.push_back(static_cast<double>(c.bytes) / (gbps * 1e9));
      pieces_seen = c.pieces;
      (void)repeats;
    }
    return t;
  }
  std::string copy_impl(bool sm) const override { return sm ? "kernel" : "memcpy"; }
  std::optional<std::string> allreduce_unavailable() const override {
    if (!nccl_error.empty()) return nccl_error;
    return std::nullopt;
  }
  std::string allreduce_impl() const override { return "host-sum"; }
  double timed_allreduce_f32(const std::vector<const DeviceBuffer*>& send,
                             const std::vector<DeviceBuffer*>& recv, std::size_t count,
                             int) override {
    std::vector<float> sum(count, 0.0f);
    for (const auto* s : send) {
      const auto* f = reinterpret_cast<const float*>(bytes_of(*s));
      for (std::size_t i = 0; i < count; ++i) sum[i] += f[i];
    }
    if (bus) sum = bus->reduce(sum);
    for (auto* r : recv) std::memcpy(bytes_of(*r), sum.data(), count * 4);
    if (wrong_sum) reinterpret_cast<float*>(bytes_of(*recv.back()))[count / 3] += 1.0f;
    return 1e-3;  // 1 ms per all-reduce
  }

  std::optional<std::string> setup_allreduce(const CollectiveSetup& setup) override {
    setup_seen = setup;
    if (setup.span && bus == nullptr) return std::string("no bus between processes here");
    return std::nullopt;
  }

  std::size_t budget = std::size_t{1} << 30;
  Bus* bus = nullptr;  // set: the group is one process of a spanning all-reduce
  std::optional<CollectiveSetup> setup_seen;
  bool no_peer_access = false, corrupt_copies = false, wrong_sum = false;
  std::string nccl_error;
  std::map<std::pair<std::size_t, std::size_t>, bool> peer_state;  // (lower, higher) device
  std::size_t pieces_seen = 0;
  int peer_changes = 0, batches_timed = 0;
  std::size_t widest_batch = 0;
  bool shared_a_gpu = false;

 private:
  std::vector<DeviceIdentity> ids_;
};

BenchPlan plan_of(std::vector<Cell> cells, std::size_t devices) {
  BenchPlan p;
  p.backend = "cuda";
  for (std::size_t i = 0; i < devices; ++i) p.group.push_back("cuda" + std::to_string(i));
  p.device = "group";
  p.cells = std::move(cells);
  p.policy.warmup = 0;
  p.policy.reps = 3;
  p.seed = 7;
  return p;
}

Cell p2p(std::uint64_t bytes, bool bi, bool peer, CopyEngine engine = CopyEngine::kCe) {
  Cell c;
  c.op = Op::kP2p;
  c.shape = P2pShape{bytes, bi, "cuda0", "cuda1", peer, engine};
  c.explicit_request = true;
  return c;
}

Cell allreduce(std::uint64_t bytes, std::vector<std::string> devices) {
  Cell c;
  c.op = Op::kAllreduce;
  c.shape = AllreduceShape{bytes, std::move(devices)};
  c.explicit_request = true;
  return c;
}

// The records in plan order (the engine runs batches in its own order; the index places them).
std::vector<Json> run(HostGroup& g, const BenchPlan& plan, bool plant = false,
                      std::vector<std::string>* log = nullptr) {
  std::map<std::size_t, Json> by_index;
  EngineCallbacks cb;
  cb.record = [&](std::size_t i, const Json& r) {
    EXPECT_TRUE(by_index.emplace(i, r).second) << "two records for cell " << i;
  };
  if (log != nullptr) cb.tuning_log = [&](TuningLog, const std::string& m) { log->push_back(m); };
  run_group_plan(plan, g, cb, plant ? std::optional(PlantedError::kWrongValue) : std::nullopt);
  std::vector<Json> out;
  for (auto& [i, r] : by_index) out.push_back(std::move(r));
  return out;
}

Cell p2p_between(const std::string& src, const std::string& dst, bool bi, bool peer,
                 std::uint64_t bytes = 4096, CopyEngine engine = CopyEngine::kCe) {
  Cell c;
  c.op = Op::kP2p;
  c.shape = P2pShape{bytes, bi, src, dst, peer, engine};
  c.explicit_request = true;
  return c;
}

// Every ordered pair of n devices one way (peer, then staged), and every unordered pair both
// ways, as bench plans a group.
std::vector<Cell> all_pairs(std::size_t n, std::uint64_t bytes = 4096) {
  std::vector<Cell> cells;
  for (bool peer : {true, false})
    for (std::size_t s = 0; s < n; ++s)
      for (std::size_t d = 0; d < n; ++d)
        if (s != d)
          cells.push_back(p2p_between("cuda" + std::to_string(s), "cuda" + std::to_string(d), false,
                                      peer, bytes));
  for (std::size_t s = 0; s < n; ++s)
    for (std::size_t d = s + 1; d < n; ++d)
      cells.push_back(
          p2p_between("cuda" + std::to_string(s), "cuda" + std::to_string(d), true, true, bytes));
  return cells;
}

TEST(GroupEngine, UnidirectionalCopyIsVerifiedAndTimed) {
  HostGroup g(2);
  auto recs = run(g, plan_of({p2p(1 << 20, false, true)}, 2));
  ASSERT_EQ(recs.size(), 1u);
  const Json& r = recs[0];
  EXPECT_EQ(r["status"], "ok") << r.dump(1);
  EXPECT_EQ(r["op"], "p2p");
  EXPECT_EQ(r["device"], "cuda0");
  EXPECT_EQ(r["dst_uuid"], "GPU-1");
  EXPECT_EQ(r["shape"]["direction"], "p2p");
  EXPECT_EQ(r["shape"]["bidirectional"], false);
  EXPECT_EQ(r["shape"]["engine"], "ce");
  EXPECT_EQ(r["verification"]["method"], "exact");
  EXPECT_NEAR(r["throughput"]["value"].get<double>(), 100.0, 1e-6);
  EXPECT_TRUE((g.peer_state[{0, 1}]));
}

TEST(GroupEngine, BidirectionalSumsBothDirections) {
  HostGroup g(2);
  auto recs = run(g, plan_of({p2p(1 << 20, true, false)}, 2));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["status"], "ok") << recs[0].dump(1);
  // 100 GB/s one way and 50 GB/s the other: 150 GB/s over the pair (nvbandwidth's total).
  EXPECT_NEAR(recs[0]["throughput"]["value"].get<double>(), 150.0, 1e-6);
  EXPECT_NEAR(recs[0]["context"]["direction_gbps"][0].get<double>(), 100.0, 1e-6);
  EXPECT_NEAR(recs[0]["context"]["direction_gbps"][1].get<double>(), 50.0, 1e-6);
  EXPECT_FALSE((g.peer_state[{0, 1}]));  // staged: peer access off
}

TEST(GroupEngine, CorruptedCopyIsAMismatchInEitherDirection) {
  HostGroup g(2);
  g.corrupt_copies = true;
  auto recs = run(g, plan_of({p2p(4096, false, true), p2p(4096, true, true)}, 2));
  ASSERT_EQ(recs.size(), 2u);
  for (const auto& r : recs) {
    EXPECT_EQ(r["status"], "mismatch") << r.dump(1);
    EXPECT_EQ(r["verification"]["first_bad_index"], 4095);
  }
  HostGroup clean(2);
  auto planted = run(clean, plan_of({p2p(4096, false, true)}, 2), true);
  EXPECT_EQ(planted[0]["status"], "mismatch");
}

TEST(GroupEngine, LatencyIsPerSmallCopy) {
  HostGroup g(2);
  Cell c;
  c.op = Op::kLatency;
  LatencyShape l;
  l.mode = LatencyMode::kP2p;
  l.src = "cuda1", l.dst = "cuda0", l.peer_access = true, l.bytes = 4;
  c.shape = l;
  c.explicit_request = true;
  auto recs = run(g, plan_of({c}, 2));
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["status"], "ok") << recs[0].dump(1);
  EXPECT_EQ(recs[0]["device"], "cuda1");
  EXPECT_EQ(g.pieces_seen, static_cast<std::size_t>(kLatencyCopiesPerRep));
  // 400 bytes at 50 GB/s (reverse) = 8 ns a batch, over 100 copies.
  EXPECT_NEAR(recs[0]["time_s"]["median"].get<double>(), 400.0 / 50e9 / kLatencyCopiesPerRep,
              1e-18);
  EXPECT_FALSE(recs[0].contains("throughput"));
}

TEST(GroupEngine, WhatCannotRunSaysWhy) {
  HostGroup g(2);
  g.no_peer_access = true;
  g.nccl_error = "NCCL (libnccl.so.2) not loadable: no copy found; searched LD_LIBRARY_PATH";
  auto recs = run(
      g, plan_of({p2p(4096, false, true), p2p(4096, false, true, CopyEngine::kSm),
                  p2p(4096, false, false, CopyEngine::kSm), allreduce(4096, {"cuda0", "cuda1"})},
                 2));
  ASSERT_EQ(recs.size(), 4u);
  EXPECT_EQ(recs[0]["status"], "unsupported");
  EXPECT_EQ(recs[0]["reason"], "no peer path in this test");
  EXPECT_EQ(recs[1]["status"], "unsupported");
  EXPECT_EQ(recs[2]["status"], "unsupported");
  EXPECT_NE(recs[2]["reason"].get<std::string>().find("needs peer access"), std::string::npos);
  EXPECT_EQ(recs[3]["status"], "unsupported");
  EXPECT_NE(recs[3]["reason"].get<std::string>().find("searched"), std::string::npos);
  // Staged copies need no peer access.
  auto staged = run(g, plan_of({p2p(4096, false, false)}, 2));
  EXPECT_EQ(staged[0]["status"], "ok");
}

TEST(GroupEngine, MemoryRuleScalesPresetsAndSkipsExplicitSizes) {
  HostGroup g(2);
  g.budget = 1 << 20;
  Cell preset = p2p(std::uint64_t{4} << 20, false, true);
  preset.explicit_size = false;
  Cell given = p2p(std::uint64_t{4} << 20, false, true);
  given.explicit_size = true;
  auto recs = run(g, plan_of({preset, given}, 2));
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0]["status"], "ok") << recs[0].dump(1);
  EXPECT_EQ(recs[0]["shape"]["bytes"], 1 << 20);
  EXPECT_EQ(recs[0]["scaled_from"]["bytes"], 4 << 20);
  EXPECT_EQ(recs[1]["status"], "skipped");
  EXPECT_EQ(recs[1]["bytes_needed"], 4 << 20);
  EXPECT_EQ(recs[1]["bytes_limit"], 1 << 20);
}

TEST(GroupEngine, AllreduceGivesAlgbwAndBusbw) {
  for (std::size_t n : {2u, 4u, 8u}) {
    HostGroup g(n);
    std::vector<std::string> devices;
    for (std::size_t i = 0; i < n; ++i) devices.push_back("cuda" + std::to_string(i));
    auto recs = run(g, plan_of({allreduce(std::uint64_t{1} << 20, devices)}, n));
    ASSERT_EQ(recs.size(), 1u);
    const Json& r = recs[0];
    ASSERT_EQ(r["status"], "ok") << r.dump(1);
    // 1 MiB in 1 ms: algbw 1.048576 GB/s; busbw = algbw · 2(n−1)/n (nccl-tests).
    const double algbw = (1 << 20) / 1e-3 / 1e9;
    EXPECT_NEAR(r["algbw"].get<double>(), algbw, 1e-9);
    EXPECT_NEAR(r["busbw"].get<double>(), algbw * 2.0 * (n - 1) / n, 1e-9);
    EXPECT_NEAR(r["throughput"]["value"].get<double>(), r["busbw"].get<double>(), 1e-9);
    EXPECT_EQ(r["dtype"], "f32");
    EXPECT_EQ(r["verification"]["method"], "exact");
    EXPECT_EQ(r["shape"]["devices"].size(), n);
  }
}

TEST(GroupEngine, AllreduceWrongSumIsAMismatchNamingTheDevice) {
  HostGroup g(2);
  g.wrong_sum = true;
  auto recs = run(g, plan_of({allreduce(4096, {"cuda0", "cuda1"})}, 2));
  EXPECT_EQ(recs[0]["status"], "mismatch") << recs[0].dump(1);
  EXPECT_NE(recs[0]["reason"].get<std::string>().find("cuda1's sum"), std::string::npos);
  EXPECT_EQ(recs[0]["verification"]["first_bad_index"], 4096 / 4 / 3);
}

TEST(GroupEngine, AllreduceOverPartOfTheGroupIsRefused) {
  HostGroup g(3);
  auto recs = run(g, plan_of({allreduce(4096, {"cuda0", "cuda1"})}, 3));
  EXPECT_EQ(recs[0]["status"], "unsupported");
  auto odd = run(g, plan_of({allreduce(4098, {"cuda0", "cuda1", "cuda2"})}, 3));
  EXPECT_EQ(odd[0]["status"], "unsupported");
}

TEST(BusBandwidth, FactorAndWork) {
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(2), 1.0);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(4), 1.5);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(8), 1.75);
  EXPECT_DOUBLE_EQ(allreduce_bus_factor(1), 0.0);
  Cell c = allreduce(1000, {"cuda0", "cuda1", "cuda2", "cuda3"});
  EXPECT_DOUBLE_EQ(work_of(c).amount, 1500.0);
  EXPECT_DOUBLE_EQ(work_of(p2p(1000, true, true)).amount, 2000.0);
  EXPECT_DOUBLE_EQ(work_of(p2p(1000, false, true)).amount, 1000.0);
}

TEST(GroupPlanJson, RoundTrips) {
  BenchPlan p = plan_of(
      {p2p(1 << 20, true, false, CopyEngine::kCe), allreduce(1 << 20, {"cuda0", "cuda1"})}, 2);
  Cell lat;
  lat.op = Op::kLatency;
  LatencyShape l;
  l.mode = LatencyMode::kP2p;
  l.src = "cuda0", l.dst = "cuda1", l.peer_access = false, l.bytes = 4;
  lat.shape = l;
  p.cells.push_back(lat);
  const Json j = to_json(p);
  const BenchPlan back = plan_from_json(j);
  EXPECT_EQ(to_json(back), j);
  EXPECT_EQ(back.group, p.group);
  EXPECT_FALSE(j.contains("host_lock"));  // one child alone takes no lock
  p.host_lock = "/tmp/gpucheck-host-lock-abc";
  EXPECT_EQ(plan_from_json(to_json(p)).host_lock, p.host_lock);
  EXPECT_EQ(j["cells"][0]["shape"]["direction"], "p2p");
  EXPECT_EQ(j["cells"][2]["shape"]["mode"], "p2p");
  // --serial, the stable-median rule and a fan survive the trip to the child.
  p.serial = true;
  p.policy.stable_within = kSteadyWithin;
  Cell f = p2p(1 << 20, false, true);
  auto& fs = std::get<P2pShape>(f.shape);
  fs.fan = P2pFan::kAllToAll, fs.src = fs.dst = "all", fs.copies = 2;
  p.cells.push_back(f);
  const BenchPlan again = plan_from_json(to_json(p));
  EXPECT_TRUE(again.serial);
  EXPECT_EQ(again.policy.stable_within, kSteadyWithin);
  const auto& back_fan = std::get<P2pShape>(again.cells.back().shape);
  EXPECT_EQ(back_fan.fan, P2pFan::kAllToAll);
  EXPECT_EQ(back_fan.copies, 2u);
  EXPECT_EQ(to_json(again), to_json(p));
}

}  // namespace

namespace {

std::set<std::string> keys_of(const Json& j) {
  std::set<std::string> out;
  for (const auto& [k, v] : j.items()) out.insert(k);
  return out;
}

// The schema test validates tests/cli/multigpu_fixture_bench.json; these keep it true to what
// the engine writes, record kind by record kind.
TEST(GroupEngine, RecordsHaveTheFixturesShape) {
  std::ifstream in(std::string(GPUCHECK_SOURCE_DIR) + "/tests/cli/multigpu_fixture_bench.json");
  ASSERT_TRUE(in) << "missing tests/cli/multigpu_fixture_bench.json";
  const Json fixture = Json::parse(in);
  auto fixture_record = [&](const std::string& op, const std::string& status) {
    for (const auto& r : fixture["results"])
      if (r["op"] == op && r["status"] == status) return r;
    return Json();
  };
  HostGroup g(2);
  Cell lat;
  lat.op = Op::kLatency;
  LatencyShape l;
  l.mode = LatencyMode::kP2p;
  l.src = "cuda0", l.dst = "cuda1", l.peer_access = true, l.bytes = 4;
  lat.shape = l;
  lat.explicit_request = true;
  auto recs =
      run(g, plan_of({p2p(4096, false, true), lat, allreduce(4096, {"cuda0", "cuda1"})}, 2));
  ASSERT_EQ(recs.size(), 3u);
  for (const auto& r : recs) {
    const Json f = fixture_record(r["op"], r["status"]);
    ASSERT_FALSE(f.is_null()) << r["op"];
    std::set<std::string> ours = keys_of(r), theirs = keys_of(f);
    ours.erase("context"), theirs.erase("context");
    EXPECT_EQ(ours, theirs) << r["op"];
    EXPECT_EQ(keys_of(r["shape"]), keys_of(f["shape"])) << r["op"];
    // The context adds the group's facts (NCCL) in the real run; the engine's own keys agree.
    for (const auto& [k, v] : r["context"].items())
      EXPECT_TRUE(f["context"].contains(k)) << r["op"] << " context." << k;
  }
}

TEST(GroupBatches, PairsThatShareNoGpuRunTogetherPeerPathsFirstAllreduceLast) {
  std::vector<Cell> cells = all_pairs(4);
  cells.insert(cells.begin(), allreduce(4096, {"cuda0", "cuda1", "cuda2", "cuda3"}));
  const BenchPlan plan = plan_of(cells, 4);
  const auto batches = group_batches(plan);
  std::set<std::size_t> seen;
  int phase = 0;  // 0 peer, 1 staged, 2 all-reduce: never back
  std::size_t one_way_peer = 0, one_way_staged = 0, both_ways = 0;
  for (const auto& b : batches) {
    std::set<std::size_t> devices;
    const Cell& first = plan.cells[b.front()];
    for (std::size_t i : b) {
      EXPECT_TRUE(seen.insert(i).second);
      const Cell& c = plan.cells[i];
      EXPECT_EQ(c.op, first.op);
      if (const auto* p = std::get_if<P2pShape>(&c.shape)) {
        const auto& f = std::get<P2pShape>(first.shape);
        EXPECT_EQ(p->peer_access, f.peer_access);
        EXPECT_EQ(p->bidirectional, f.bidirectional);
        EXPECT_TRUE(devices.insert(p->src[4] - '0').second) << "a GPU twice in one batch";
        EXPECT_TRUE(devices.insert(p->dst[4] - '0').second) << "a GPU twice in one batch";
      }
    }
    int mine = 2;
    if (const auto* p = std::get_if<P2pShape>(&first.shape)) {
      mine = p->peer_access ? 0 : 1;
      // Staged copies share the host's PCIe root and memory: one pair at a time.
      EXPECT_EQ(b.size(), p->peer_access ? 2u : 1u) << "four GPUs: two pairs at once over peers";
      (p->bidirectional ? both_ways : p->peer_access ? one_way_peer : one_way_staged)++;
    }
    EXPECT_GE(mine, phase);
    phase = mine;
  }
  EXPECT_EQ(seen.size(), plan.cells.size());
  EXPECT_EQ(one_way_peer, 6u);     // 12 ordered pairs, two at a time
  EXPECT_EQ(one_way_staged, 12u);  // one at a time
  EXPECT_EQ(both_ways, 3u);        // 6 pairs
  EXPECT_EQ(plan.cells[batches.back().front()].op, Op::kAllreduce);
}

TEST(GroupBatches, SerialRunsEveryCellAloneAndASizeNamedTwiceNeverSharesABatch) {
  BenchPlan plan = plan_of(all_pairs(4), 4);
  plan.serial = true;
  for (const auto& b : group_batches(plan)) EXPECT_EQ(b.size(), 1u);
  plan.serial = false;
  plan.cells = {p2p_between("cuda0", "cuda1", false, true),
                p2p_between("cuda0", "cuda1", false, true),
                p2p_between("cuda2", "cuda3", false, true)};
  // cuda0→cuda1 and cuda2→cuda3 meet in one round of the tournament; the second cuda0→cuda1
  // cannot join the first, so it opens the round's next batch, which cuda2→cuda3 then joins.
  const auto batches = group_batches(plan);
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(batches[0], (std::vector<std::size_t>{0}));
  EXPECT_EQ(batches[1], (std::vector<std::size_t>{1, 2}));
}

TEST(GroupEngine, FourGpusCopyTwoPairsAtOnceEachVerifiedWithTheirOwnFigures) {
  HostGroup g(4);
  const BenchPlan plan = plan_of(all_pairs(4), 4);
  std::vector<std::string> log;
  const auto recs = run(g, plan, false, &log);
  ASSERT_EQ(recs.size(), plan.cells.size());
  EXPECT_EQ(g.widest_batch, 4u);  // two pairs both ways
  EXPECT_FALSE(g.shared_a_gpu);
  for (std::size_t i = 0; i < recs.size(); ++i) {
    const Json& r = recs[i];
    const auto& s = std::get<P2pShape>(plan.cells[i].shape);
    EXPECT_EQ(r["status"], "ok") << r.dump();
    EXPECT_EQ(r["shape"]["src"], s.src);
    EXPECT_EQ(r["shape"]["dst"], s.dst);
    EXPECT_EQ(r["context"]["concurrent_pairs"], s.peer_access ? 2 : 1);  // staged: one at a time
    // The host group copies lower→higher at 100 GB/s, back at 50: each record its own pair's.
    const double want = s.bidirectional ? 150 : s.src < s.dst ? 100 : 50;
    EXPECT_NEAR(r["throughput"]["value"].get<double>(), want, want * 1e-6) << r.dump();
  }
  // Peer access went on for each of the 6 pairs, then off for the staged copies: 12 changes.
  EXPECT_EQ(g.peer_changes, 12);
  // -v: a line per batch with its set-up, timed and verification seconds, and the total.
  ASSERT_FALSE(log.empty());
  EXPECT_NE(log.front().find("set-up"), std::string::npos);
  EXPECT_NE(log.front().find("verification"), std::string::npos);
  EXPECT_NE(log.back().find("group of 4 devices"), std::string::npos);
}

Cell fan(P2pFan f, const std::string& src, const std::string& dst, std::uint64_t copies) {
  Cell c = p2p_between(src, dst, false, true);
  auto& s = std::get<P2pShape>(c.shape);
  s.fan = f;
  s.copies = copies;
  return c;
}

TEST(GroupEngine, FansLoadEveryLinkAtOnceAndSumTheirCopies) {
  HostGroup g(4);
  const BenchPlan plan =
      plan_of({fan(P2pFan::kAllToOne, "all", "cuda2", 3), fan(P2pFan::kOneToAll, "cuda0", "all", 3),
               fan(P2pFan::kAllToAll, "all", "all", 12), fan(P2pFan::kAllToOne, "all", "cuda1", 2)},
              4);
  for (const auto& b : group_batches(plan)) EXPECT_EQ(b.size(), 1u);  // each alone
  const auto recs = run(g, plan);
  ASSERT_EQ(recs.size(), 4u);
  // into cuda2: cuda0, cuda1 at 100 GB/s (lower → higher), cuda3 at 50.
  EXPECT_EQ(recs[0]["status"], "ok") << recs[0].dump();
  EXPECT_EQ(recs[0]["device"], "cuda2");
  EXPECT_EQ(recs[0]["shape"]["direction"], "all_to_one");
  EXPECT_EQ(recs[0]["shape"]["copies"], 3);
  EXPECT_NEAR(recs[0]["throughput"]["value"].get<double>(), 250.0, 1e-6);
  EXPECT_EQ(recs[0]["context"]["direction_copies"],
            Json::array({"cuda0->cuda2", "cuda1->cuda2", "cuda3->cuda2"}));
  // out of cuda0: all lower → higher.
  EXPECT_EQ(recs[1]["device"], "cuda0");
  EXPECT_NEAR(recs[1]["throughput"]["value"].get<double>(), 300.0, 1e-6);
  // every ordered pair: 6 up at 100, 6 down at 50.
  EXPECT_EQ(recs[2]["status"], "ok");
  EXPECT_NEAR(recs[2]["throughput"]["value"].get<double>(), 900.0, 1e-6);
  EXPECT_EQ(g.widest_batch, 12u);
  // A fan whose copy count does not match the group says so.
  EXPECT_EQ(recs[3]["status"], "unsupported");
  EXPECT_NE(recs[3]["reason"].get<std::string>().find("is 3 copies, not 2"), std::string::npos);
}

TEST(GroupEngine, ACorruptedCopyInABatchFailsOnlyItsOwnCell) {
  HostGroup g(4);
  const BenchPlan plan = plan_of(
      {p2p_between("cuda0", "cuda1", false, true), p2p_between("cuda2", "cuda3", false, true)}, 4);
  // A planted error corrupts what the engine reads back: every cell mismatches, each naming
  // its own pair.
  const auto recs = run(g, plan, true);
  ASSERT_EQ(recs.size(), 2u);
  EXPECT_EQ(recs[0]["status"], "mismatch");
  EXPECT_NE(recs[0]["verification"].dump().find("cuda1"), std::string::npos) << recs[0].dump();
  EXPECT_NE(recs[1]["verification"].dump().find("cuda3"), std::string::npos) << recs[1].dump();
}

TEST(GroupEngine, CopiesStopOnceTheMedianIsStable) {
  HostGroup g(2);
  BenchPlan plan = plan_of({p2p_between("cuda0", "cuda1", false, true)}, 2);
  plan.policy.reps.reset();  // min_time 0.5 s of 41 ns copies would ask for a million
  plan.policy.stable_within = kSteadyWithin;
  const auto recs = run(g, plan);
  ASSERT_EQ(recs.size(), 1u);
  EXPECT_EQ(recs[0]["status"], "ok");
  EXPECT_EQ(g.batches_timed, kMinStableReps);
  EXPECT_EQ(recs[0]["time_s"]["reps"], kMinStableReps) << recs[0]["time_s"].dump();
}

// Two processes (threads here) of one all-reduce, one GPU each: each knows every rank's seeded
// input, so each verifies the whole sum exactly; a rank seeded otherwise is a mismatch.
TEST(GroupEngine, AllreduceSpanningProcessesIsVerifiedByEveryRank) {
  for (const std::uint64_t other_seed : {7u, 8u}) {
    Bus bus(2);  // two processes
    auto rank = [&](int first, std::size_t devices, std::uint64_t seed) {
      HostGroup g(devices);
      g.bus = &bus;
      std::vector<std::string> names;
      for (std::size_t i = 0; i < devices; ++i) names.push_back("cuda" + std::to_string(i));
      BenchPlan p = plan_of({allreduce(4096, names)}, devices);
      p.seed = seed;
      p.collective.span = CollectiveSpan{std::string(128, 'x'), 3, first};
      auto recs = run(g, p);
      EXPECT_TRUE(g.setup_seen && g.setup_seen->span);
      return recs;
    };
    // Rank 0 holds one GPU (rank 0), rank 1 two (ranks 1 and 2).
    auto zero = std::async(std::launch::async, [&] { return rank(0, 1, 7); });
    const auto one = rank(1, 2, other_seed);
    const auto first = zero.get();
    ASSERT_EQ(first.size(), 1u);
    ASSERT_EQ(one.size(), 1u);
    if (other_seed == 7) {
      EXPECT_EQ(first[0]["status"], "ok") << first[0].dump(1);
      EXPECT_EQ(one[0]["status"], "ok") << one[0].dump(1);
      // busbw counts every rank of the span: 2(n-1)/n with n = 3.
      EXPECT_NEAR(first[0]["busbw"].get<double>() / first[0]["algbw"].get<double>(), 4.0 / 3,
                  1e-12);
    } else {
      EXPECT_EQ(first[0]["status"], "mismatch");
      EXPECT_EQ(one[0]["status"], "mismatch");
    }
  }
  // A group that cannot span processes says so on every all-reduce record.
  HostGroup alone(1);
  BenchPlan p = plan_of({allreduce(4096, {"cuda0"})}, 1);
  p.collective.span = CollectiveSpan{std::string(128, 'x'), 2, 0};
  auto recs = run(alone, p);
  EXPECT_EQ(recs[0]["status"], "unsupported");
  EXPECT_EQ(recs[0]["reason"], "no bus between processes here");
}

}  // namespace

// stress's copy test against queues that run as late as their events allow: nothing runs when
// it is enqueued, only when the host waits, downloads last. A wait the test forgot (an upload
// before its download, a slot reused before its checksum was read) then moves stale bytes and
// shows as a mismatch; the planted faults must still be caught and named.
#include "backends/registry.h"
#include "bench_one_cell.h"
#include "core/json_keys.h"
#include "forwarding_device.h"
#include "stress/context.h"
#include "stress/faults.h"
#include "stress/plan.h"
#include "stress/stress_tests.h"

#include <gtest/gtest.h>

#include <chrono>
#include <deque>
#include <functional>
#include <stdexcept>

namespace gpucheck::stress {
namespace {

using Queue = HostCopyQueues::Queue;

class LateQueues final : public HostCopyQueues {
 public:
  LateQueues(Device& dev, StressOps& ops, std::size_t events)
      : dev_(dev), ops_(ops), recorded_(events, 0), reached_(events, 0), at_(events) {}

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    push(Queue::kUp, [this, &dst, src, bytes] { dev_.upload(dst, src, bytes); });
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    push(Queue::kDown, [this, dst, &src, bytes] { dev_.download(dst, src, bytes); });
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums, std::size_t slot,
                std::uint64_t* host_sum) override {
    push(Queue::kCheck, [this, &src, words, &sums, slot, host_sum] {
      ops_.checksum(src, words, sums, slot);
      ops_.download_at(host_sum, sums, slot * 8, 8);
    });
  }
  void record(std::size_t event, Queue queue) override {
    const std::uint64_t g = ++recorded_.at(event);
    push(queue, [this, event, g] {
      reached_[event] = g;
      at_[event] = std::chrono::steady_clock::now();
    });
  }
  void wait(Queue queue, std::size_t event) override {
    const std::uint64_t g = recorded_.at(event);
    q(queue).push_back({[] {}, event, g});
  }
  void wait_host(std::size_t event) override {
    const std::uint64_t g = recorded_.at(event);
    while (reached_[event] < g) {
      // Checks first, downloads last: everything not needed waits as long as it can.
      bool ran = false;
      for (Queue queue : {Queue::kCheck, Queue::kUp, Queue::kDown}) {
        auto& ops = q(queue);
        if (ops.empty() || reached_[ops.front().event] < ops.front().generation) continue;
        auto op = std::move(ops.front());
        ops.pop_front();
        op.run();
        ran = true;
        break;
      }
      if (!ran) throw std::logic_error("the queues wait on each other: deadlock");
    }
  }
  double seconds_between(std::size_t from, std::size_t to) override {
    return std::chrono::duration<double>(at_.at(to) - at_.at(from)).count();
  }

 private:
  struct Op {
    std::function<void()> run;
    std::size_t event = 0;  // runnable once reached_[event] >= generation
    std::uint64_t generation = 0;
  };
  std::deque<Op>& q(Queue queue) { return queues_[static_cast<std::size_t>(queue)]; }
  void push(Queue queue, std::function<void()> f) { q(queue).push_back({std::move(f), 0, 0}); }

  Device& dev_;
  StressOps& ops_;
  std::deque<Op> queues_[3];
  std::vector<std::uint64_t> recorded_, reached_;
  std::vector<std::chrono::steady_clock::time_point> at_;
};

// Downloads that do nothing: what a broken copy engine would leave in the host buffer.
class DroppedDownloads final : public HostCopyQueues {
 public:
  explicit DroppedDownloads(std::unique_ptr<HostCopyQueues> q) : q_(std::move(q)) {}
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    q_->upload(dst, src, bytes);
  }
  void download(void*, const DeviceBuffer&, std::size_t) override {}
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums, std::size_t slot,
                std::uint64_t* host_sum) override {
    q_->checksum(src, words, sums, slot, host_sum);
  }
  void record(std::size_t event, Queue queue) override { q_->record(event, queue); }
  void wait(Queue queue, std::size_t event) override { q_->wait(queue, event); }
  void wait_host(std::size_t event) override { q_->wait_host(event); }
  double seconds_between(std::size_t from, std::size_t to) override {
    return q_->seconds_between(from, to);
  }

 private:
  std::unique_ptr<HostCopyQueues> q_;
};

// The CPU device seen as a GPU with 6 MiB free (1 MiB copies, four slots) and late queues.
class LateGpu final : public fakes::ForwardingDevice, public StressOps {
 public:
  explicit LateGpu(std::unique_ptr<Device> cpu)
      : ForwardingDevice(std::move(cpu)), s_(*inner().stress_ops()) {}
  bool is_host() const override { return false; }
  StressOps* stress_ops() override { return this; }
  MemoryInfo memory_info() const override {
    MemoryInfo m = s_.memory_info();
    m.free_bytes = std::uint64_t{6} << 20;
    m.host_memory = false;
    return m;
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    s_.upload_at(dst, offset, src, bytes);
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    s_.download_at(dst, src, offset, bytes);
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    s_.checksum(src, words, sums, slot);
  }
  void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word, MemPattern check,
               MemPattern write, DeviceBuffer& result) override {
    s_.memtest(buf, words, first_word, check, write, result);
  }
  std::unique_ptr<HostCopyQueues> host_copy_queues(std::size_t events) override {
    auto late = std::make_unique<LateQueues>(inner(), s_, events);
    if (drop_downloads) return std::make_unique<DroppedDownloads>(std::move(late));
    return late;
  }
  bool drop_downloads = false;

 private:
  StressOps& s_;
};

nlohmann::json copy_record(std::vector<Fault> faults) {
  auto backend = make_backend("cpu", {});
  LateGpu dev(backend->open_device("cpu", {}));
  StressPlan plan;
  plan.device = "cpu";
  plan.backend = "cpu";
  plan.tests = {Test::kCopy};
  plan.memory_fraction = 1.0;
  plan.threads = 1;
  StressRunContext ctx(dev, plan, std::move(faults), [](const nlohmann::json&) {});
  return run_copy_test(ctx, ctx.now_s() + 0.3);
}

TEST(StressCopyQueues, EveryRoundTripIsVerifiedWhenTheQueuesRunLate) {
  const nlohmann::json r = copy_record({});
  ASSERT_EQ(r["status"], "ok") << r.dump();
  EXPECT_EQ(r["shape"]["bytes"], 1u << 20);
  EXPECT_EQ(r["shape"]["direction"], "h2d+d2h");
  const auto& c = r["copy"];
  EXPECT_EQ(c["in_flight"], 3);
  EXPECT_EQ(c["mismatches"], 0);
  EXPECT_EQ(c["transfers_verified"], r["iterations"]);
  EXPECT_GT(c["transfers_verified"].get<int>(), 4);  // the ring went round
  EXPECT_GT(c["h2d_gbps"].get<double>(), 0.0);
  EXPECT_GT(c["d2h_gbps"].get<double>(), 0.0);
}

TEST(StressCopyQueues, APlantedFaultIsNamedAsTheDownloadsWhenTheQueuesRunLate) {
  for (FaultKind kind : {FaultKind::kCopyByte, FaultKind::kCopySkip}) {
    const nlohmann::json r = copy_record({Fault{kind, 6}});
    SCOPED_TRACE(r.dump());
    EXPECT_EQ(r["status"], "mismatch");
    const auto& c = r["copy"];
    EXPECT_EQ(c["mismatches"], 1);
    EXPECT_EQ(c["direction"], "d2h");
    EXPECT_EQ(c["iterations"], 6);
    if (kind == FaultKind::kCopyByte) {
      EXPECT_EQ(c["first_bad_offset"], (1u << 20) / 2);
    }
  }
}

// bench's copy both ways at once (the baseline of the copy test above) on the late queues: a
// wait the engine forgot would time or verify bytes not yet moved.
std::vector<nlohmann::json> both_ways_records(bool drop_downloads) {
  auto backend = make_backend("cpu", {});
  LateGpu late(backend->open_device("cpu", {}));
  late.drop_downloads = drop_downloads;
  bench::Cell cell;
  cell.op = Op::kCopy;
  cell.dtype = DType::kF32;
  cell.shape = CopyShape{1u << 20, Direction::kBoth, HostMemory::kPinned};
  cell.explicit_size = true;
  auto records = fakes::bench_one_cell(late, cell, 3, 1);
  return records;
}

TEST(BenchBothWays, CopiesBothWaysAtOnceAreVerifiedWithEachDirectionsFigure) {
  const auto records = both_ways_records(false);
  ASSERT_EQ(records.size(), 1u);
  const nlohmann::json& r = records[0];
  SCOPED_TRACE(r.dump());
  EXPECT_EQ(r["status"], "ok");
  EXPECT_EQ(r["shape"]["direction"], "both");
  EXPECT_EQ(r["shape"]["host_memory"], "pinned");
  EXPECT_GT(r["throughput"]["value"].get<double>(), 0.0);
  const auto& per = r["context"]["direction_gbps"];
  ASSERT_EQ(per.size(), 2u);
  EXPECT_GT(per[0].get<double>(), 0.0);  // h2d
  EXPECT_GT(per[1].get<double>(), 0.0);  // d2h
}

TEST(BenchBothWays, ADownloadThatMovedNothingIsAMismatch) {
  const auto records = both_ways_records(true);
  ASSERT_EQ(records.size(), 1u);
  SCOPED_TRACE(records[0].dump());
  EXPECT_EQ(records[0]["status"], "mismatch");
  EXPECT_NE(records[0]["reason"].get<std::string>().find("downloaded bytes differ"),
            std::string::npos);
}

}  // namespace
}  // namespace gpucheck::stress

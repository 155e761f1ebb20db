// stress's copy test against queues that run as late as their events allow: nothing runs when
// it is enqueued, only when the host waits, downloads last. A wait the test forgot (an upload
// before its download, a slot reused before its checksum was read) then moves stale bytes and
// shows as a mismatch; the planted faults must still be caught and named.
#include "backends/registry.h"
#include "core/json_keys.h"
#include "stress/context.h"
#include "stress/faults.h"
#include "stress/plan.h"
#include "stress/tests.h"

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
  LateQueues(Device& dev, std::size_t events)
      : dev_(dev), recorded_(events, 0), reached_(events, 0), at_(events) {}

  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    push(Queue::kUp, [this, &dst, src, bytes] { dev_.upload(dst, src, bytes); });
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    push(Queue::kDown, [this, dst, &src, bytes] { dev_.download(dst, src, bytes); });
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums, std::size_t slot,
                std::uint64_t* host_sum) override {
    push(Queue::kCheck, [this, &src, words, &sums, slot, host_sum] {
      dev_.checksum(src, words, sums, slot);
      dev_.download_at(host_sum, sums, slot * 8, 8);
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
  std::deque<Op> queues_[3];
  std::vector<std::uint64_t> recorded_, reached_;
  std::vector<std::chrono::steady_clock::time_point> at_;
};

// The CPU device seen as a GPU with 6 MiB free (1 MiB copies, four slots) and late queues.
class LateGpu final : public Device {
 public:
  explicit LateGpu(std::unique_ptr<Device> cpu) : d_(std::move(cpu)) {}
  const DeviceIdentity& identity() const override { return d_->identity(); }
  bool is_host() const override { return false; }
  MemoryBudget memory_budget() const override { return d_->memory_budget(); }
  std::optional<std::string> unsupported_reason(Op op, DType dt, Layout l) const override {
    return d_->unsupported_reason(op, dt, l);
  }
  std::string impl(Op op, DType dt) const override { return d_->impl(op, dt); }
  std::string compute_type(Op op, DType dt) const override { return d_->compute_type(op, dt); }
  std::unique_ptr<DeviceBuffer> allocate(std::size_t bytes) override { return d_->allocate(bytes); }
  std::unique_ptr<HostAllocation> allocate_host(std::size_t bytes, HostMemory kind) override {
    return d_->allocate_host(bytes, kind);
  }
  void upload(DeviceBuffer& dst, const void* src, std::size_t bytes) override {
    d_->upload(dst, src, bytes);
  }
  void download(void* dst, const DeviceBuffer& src, std::size_t bytes) override {
    d_->download(dst, src, bytes);
  }
  void copy(DeviceBuffer& dst, const DeviceBuffer& src, std::size_t bytes) override {
    d_->copy(dst, src, bytes);
  }
  void exp(DType dt, const DeviceBuffer& x, DeviceBuffer& y, std::size_t n) override {
    d_->exp(dt, x, y, n);
  }
  void gemm(DType dt, const GemmShape& s, const DeviceBuffer& a, const DeviceBuffer& b,
            DeviceBuffer& c) override {
    d_->gemm(dt, s, a, b, c);
  }
  void conv2d(DType dt, const ConvShape& s, const DeviceBuffer& x, const DeviceBuffer& w,
              DeviceBuffer& y) override {
    d_->conv2d(dt, s, x, w, y);
  }
  void launch_empty() override { d_->launch_empty(); }
  void synchronize() override { d_->synchronize(); }
  double time_on_device(const std::function<void()>& enqueue) override {
    return d_->time_on_device(enqueue);
  }
  MemoryInfo memory_info() const override {
    MemoryInfo m = d_->memory_info();
    m.free_bytes = std::uint64_t{6} << 20;
    m.host_memory = false;
    return m;
  }
  void upload_at(DeviceBuffer& dst, std::size_t offset, const void* src,
                 std::size_t bytes) override {
    d_->upload_at(dst, offset, src, bytes);
  }
  void download_at(void* dst, const DeviceBuffer& src, std::size_t offset,
                   std::size_t bytes) override {
    d_->download_at(dst, src, offset, bytes);
  }
  void checksum(const DeviceBuffer& src, std::size_t words, DeviceBuffer& sums,
                std::size_t slot) override {
    d_->checksum(src, words, sums, slot);
  }
  void memtest(DeviceBuffer& buf, std::size_t words, std::uint64_t first_word, MemPattern check,
               MemPattern write, DeviceBuffer& result) override {
    d_->memtest(buf, words, first_word, check, write, result);
  }
  std::unique_ptr<HostCopyQueues> open_host_copy_queues(std::size_t events) override {
    return std::make_unique<LateQueues>(*d_, events);
  }

 private:
  std::unique_ptr<Device> d_;
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
  RunContext ctx(dev, plan, std::move(faults), [](const nlohmann::json&) {});
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

}  // namespace
}  // namespace gpucheck::stress

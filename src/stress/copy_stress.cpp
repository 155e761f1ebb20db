// The copy stress test.
//
// Host copies, at line rate in both directions at once. Every transfer is a round trip through
// pinned host memory: a download (D2H) from one of two device buffers, each holding a random
// pattern, into a host slot, then an upload (H2D) of that slot into a device slot, whose
// checksum the device computes. The download of transfer i, the upload of transfer i-1 and the
// checksum of transfer i-2 run at once on queues of their own (open_host_copy_queues:
// on CUDA a stream each, so both copy engines work), with up to kSlots-1 transfers queued in
// each direction; the host waits only for the oldest round trip's 8-byte checksum and never
// reads the data while the copies run.
//
// The verification rule: every byte of every transfer is checked, in both directions. The upload
// carries the download's bytes to the device, so a download that corrupted its copy shows in the
// upload's checksum as much as a corrupt upload does. On a mismatch the host compares that host
// slot with the pattern byte for byte, which names the direction: the download's ("d2h", with the
// first bad offset) when the slot differs, else the upload's ("h2d"). The slots alternate the two
// patterns from one use to the next, so a copy or checksum that silently did nothing leaves the
// other pattern's bytes or sum behind and is caught too. On the CPU the copies are memory to
// memory ("h2h") and the queues run one after another.
//
// With a peer (plan.peer: several CUDA GPUs), the test's second half copies the pattern from this
// GPU to the peer (its copy engines, over NVLink or PCIe) and reads the peer's copy back to
// compare it byte for byte, so the links between GPUs carry checked load too. The halves run one
// after the other, as every GPU's child does at the same moments: the read-backs and their
// comparisons would otherwise take host bandwidth from the host copies being measured.
#include "bench/ops/copy.h"
#include "core/json_keys.h"
#include "stress/stress_tests.h"
#include "stress/throughput_windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <stdexcept>

namespace gpucheck::stress {

namespace k = keys;
namespace sm = stress_math;
using Queue = HostCopyQueues::Queue;

namespace {

constexpr std::uint64_t kGpuCopyBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kHostCopyBytes = std::uint64_t{64} << 20;
// Host slots (and device slots) of the ring: transfers in flight per direction are one fewer.
// Memory the device shares with the host runs its queues one after another: two suffice.
constexpr std::size_t kGpuSlots = 4;
constexpr std::size_t kHostSlots = 2;

std::uint64_t host_checksum(const std::uint64_t* w, std::size_t words) {
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; ++i) sum += sm::checksum_term(w[i], i);
  return sum;
}

// The first differing byte, or nullopt.
std::optional<std::uint64_t> first_difference(const void* a, const void* b, std::size_t bytes) {
  const auto* x = static_cast<const unsigned char*>(a);
  const auto* y = static_cast<const unsigned char*>(b);
  if (std::memcmp(x, y, bytes) == 0) return std::nullopt;
  return static_cast<std::uint64_t>(std::mismatch(x, x + bytes, y).first - x);
}

// The events of the queues: three per slot, then where each direction's copies began and ended.
struct Events {
  std::size_t slots;
  std::size_t downloaded(std::size_t s) const { return 3 * s; }
  std::size_t uploaded(std::size_t s) const { return 3 * s + 1; }
  std::size_t checked(std::size_t s) const { return 3 * s + 2; }
  std::size_t first_down() const { return 3 * slots; }
  std::size_t last_down() const { return 3 * slots + 1; }
  std::size_t first_up() const { return 3 * slots + 2; }
  std::size_t last_up() const { return 3 * slots + 3; }
  std::size_t count() const { return 3 * slots + 4; }
};

class CopyStress {
 public:
  CopyStress(StressRunContext& ctx, StressOps& ops, double end_s, nlohmann::json& record)
      : ctx_(ctx), dev_(ctx.device()), ops_(ops), plan_(ctx.plan()), end_s_(end_s), r_(record) {}

  void run() {
    setup();
    const bool peer = !plan_.peer.empty() && !host_;
    host_loop(peer ? ctx_.now_s() + (end_s_ - ctx_.now_s()) / 2 : end_s_);
    if (peer) peer_phase();
    finish();
  }

 private:
  void setup() {
    ctx_.heartbeat("copy", "allocating");
    const MemoryInfo mem = ops_.memory_info();
    host_ = dev_.is_host();
    slots_ = mem.host_memory ? kHostSlots : kGpuSlots;
    ev_ = Events{slots_};
    bytes_ = mem.host_memory ? kHostCopyBytes : kGpuCopyBytes;
    // The buffers of the memory fraction: the two sources and the device slots, and where the
    // device's memory is the host's, the host slots and the patterns too.
    const std::size_t buffers = 2 + slots_ + (mem.host_memory ? slots_ + 2 : 0);
    const double fraction = memory_fraction_for(plan_, mem.host_memory);
    const auto cap =
        static_cast<std::uint64_t>(fraction * static_cast<double>(mem.free_bytes) / buffers);
    bytes_ = std::max<std::uint64_t>(std::min(bytes_, cap) / 16 * 16, 4096);
    words_ = bytes_ / 8;
    for (int p = 0; p < 2; ++p) {
      pattern_[p] = dev_.allocate_host(bytes_, HostMemory::kPageable);
      auto* w = static_cast<std::uint64_t*>(pattern_[p]->data());
      const std::uint64_t seed = sm::splitmix64(plan_.seed + 977 * (p + 1));
      for (std::size_t i = 0; i < words_; ++i)
        w[i] = sm::pattern_value(sm::PatternKind::kRandom, seed, i);
      expected_[p] = host_checksum(w, words_);
      source_[p] = dev_.allocate(bytes_);
      dev_.upload(*source_[p], w, bytes_);
    }
    for (std::size_t s = 0; s < slots_; ++s) {
      host_slot_.push_back(dev_.allocate_host(bytes_, HostMemory::kPinned));
      std::memset(host_slot_.back()->data(), 0, bytes_);
      dev_slot_.push_back(dev_.allocate(bytes_));
    }
    sums_ = dev_.allocate(8 * slots_);
    host_sums_ = dev_.allocate_host(8 * slots_, HostMemory::kPinned);
    std::memset(host_sums_->data(), 0, 8 * slots_);
    dev_.synchronize();
    queues_ = open_host_copy_queues(dev_, ops_, ev_.count());
  }

  std::size_t slot(std::uint64_t transfer) const { return transfer % slots_; }
  // Each slot's next use holds the other pattern.
  int pattern(std::uint64_t transfer) const { return static_cast<int>((transfer / slots_) % 2); }
  std::uint64_t* host_sum(std::size_t s) {
    return static_cast<std::uint64_t*>(host_sums_->data()) + s;
  }

  void download(std::uint64_t t) {
    const std::size_t s = slot(t);
    if (t == 0) queues_->record(ev_.first_down(), Queue::kDown);
    if (auto f = ctx_.fault(FaultKind::kCopySkip); !f || f->at != t)
      queues_->download(host_slot_[s]->data(), *source_[pattern(t)], bytes_);
    queues_->record(ev_.downloaded(s), Queue::kDown);
  }

  // The upload of transfer t's download, and its checksum.
  void upload(std::uint64_t t) {
    const std::size_t s = slot(t);
    queues_->wait(Queue::kUp, ev_.downloaded(s));
    if (auto f = ctx_.fault(FaultKind::kCopyByte); f && f->at == t) {
      queues_->wait_host(ev_.downloaded(s));
      static_cast<unsigned char*>(host_slot_[s]->data())[bytes_ / 2] ^= 0x10;
    }
    if (t == 0) queues_->record(ev_.first_up(), Queue::kUp);
    queues_->upload(*dev_slot_[s], host_slot_[s]->data(), bytes_);
    queues_->record(ev_.uploaded(s), Queue::kUp);
    queues_->wait(Queue::kCheck, ev_.uploaded(s));
    queues_->checksum(*dev_slot_[s], words_, *sums_, s, host_sum(s));
    queues_->record(ev_.checked(s), Queue::kCheck);
  }

  // Waits for transfer t's checksum and judges it; its slots are free again after this.
  void judge(std::uint64_t t) {
    const std::size_t s = slot(t);
    const int p = pattern(t);
    queues_->wait_host(ev_.checked(s));
    ++verified_;
    if (*host_sum(s) == expected_[p]) return;
    const auto at = first_difference(host_slot_[s]->data(), pattern_[p]->data(), bytes_);
    mismatch(host_ ? "h2h" : at ? "d2h" : "h2d", t, at);
  }

  void mismatch(const char* direction, std::uint64_t iteration, std::optional<std::uint64_t> at) {
    ++mismatches_;
    if (!first_) first_ = nlohmann::json{{k::kDirection, direction}, {k::kIterations, iteration}};
    if (at && !first_->contains(k::kFirstBadOffset)) (*first_)[k::kFirstBadOffset] = *at;
  }

  void host_loop(double until_s) {
    start_s_ = ctx_.now_s();
    WindowTracker windows(start_s_, plan_.window_s);
    RateMeter meter(start_s_);
    // Both directions count (D2H + H2D); a memory-to-memory copy reads and writes.
    const double per = 2.0 * static_cast<double>(bytes_);
    auto judged = [&](std::uint64_t t) {
      judge(t);
      const double now = ctx_.now_s();
      windows.add(now, per);
      ctx_.tick({"copy", meter.add(now, per) / 1e9, "GB/s", verified_, mismatches_});
    };
    std::uint64_t t = 0;
    do {  // at least once, even when the setup used up the test's share
      if (t >= slots_) judged(t - slots_);  // frees slot(t) for this download
      download(t);
      if (t > 0) upload(t - 1);
      ++t;
    } while (!ctx_.time_up(until_s));
    queues_->record(ev_.last_down(), Queue::kDown);
    upload(t - 1);
    queues_->record(ev_.last_up(), Queue::kUp);
    for (std::uint64_t j = t > slots_ ? t - slots_ : 0; j < t; ++j) judged(j);
    queues_->wait_host(ev_.last_down());
    queues_->wait_host(ev_.last_up());
    transfers_ = t;
    down_s_ = queues_->seconds_between(ev_.first_down(), ev_.last_down());
    up_s_ = queues_->seconds_between(ev_.first_up(), ev_.last_up());
    end_actual_s_ = ctx_.now_s();
    windows_ = windows.finish(end_actual_s_);
    burst_ = windows.burst();
    total_ = windows.total();
    // The peer phase needs the memory.
    queues_.reset();
    host_slot_.clear();
    dev_slot_.clear();
    for (auto& b : source_) b.reset();
  }

  // The group of this GPU (0) and its peer (1): the two patterns on this GPU, a destination on
  // the peer, a pinned buffer for the read-back.
  void setup_peer() {
    if (!ctx_.peer_opener()) throw std::runtime_error("no peer copies in this backend");
    ctx_.heartbeat("copy", "opening the peer " + plan_.peer);
    group_ = ctx_.peer_opener()({plan_.device, plan_.peer});
    if (!group_) throw std::runtime_error("this backend opens no device groups for peer copies");
    // Over NVLink (or PCIe peer to peer) where the GPUs allow it; else the driver stages the
    // copies.
    if (!group_->peer_access_unavailable(0, 1)) group_->set_peer_access(0, 1, true);
    for (int p = 0; p < 2; ++p) {
      peer_src_[p] = group_->allocate(0, bytes_);
      group_->upload(0, *peer_src_[p], pattern_[p]->data(), bytes_);
    }
    peer_dst_ = group_->allocate(1, bytes_);
    peer_back_ = dev_.allocate_host(bytes_, HostMemory::kPinned);
  }

  // This GPU to the peer (timed by the group's events), then the peer's copy read back and
  // compared on this thread.
  void peer_copy(std::uint64_t i, int p) {
    const CopyTiming t = group_->timed_copies(
        {PeerCopy{0, 1, 0, peer_src_[p].get(), peer_dst_.get(), bytes_, 1, false}}, 1);
    if (!t.seconds.empty() && t.seconds[0] > 0) peer_seconds_ += t.seconds[0];
    peer_bytes_ += static_cast<double>(bytes_);
    group_->download(1, peer_back_->data(), *peer_dst_, bytes_);
    if (auto f = ctx_.fault(FaultKind::kPeerByte); f && f->at == peer_copies_)
      static_cast<unsigned char*>(peer_back_->data())[bytes_ / 2] ^= 0x10;
    ++peer_copies_;
    if (auto at = first_difference(peer_back_->data(), pattern_[p]->data(), bytes_)) {
      ++peer_mismatches_;
      mismatch("peer", i, at);
    }
  }

  // Two patterns alternate, so a copy that did nothing leaves the other behind.
  void peer_phase() {
    setup_peer();
    RateMeter meter(ctx_.now_s());
    std::uint64_t i = 0;
    do {
      peer_copy(i, static_cast<int>(i & 1));
      ++i;
      const double rate = meter.add(ctx_.now_s(), static_cast<double>(bytes_)) / 1e9;
      ctx_.tick({"copy", rate, "GB/s", verified_ + peer_copies_, mismatches_});
    } while (!ctx_.time_up(end_s_));
  }

  void finish() {
    r_[k::kShape] = {{k::kBytes, bytes_}, {k::kDirection, host_ ? "h2h" : "h2d+d2h"}};
    r_[k::kDurationS] = end_actual_s_ - start_s_;
    r_[k::kIterations] = transfers_;
    r_[k::kThroughput] =
        throughput_json(total_, end_actual_s_ - start_s_, windows_, 1e9, "GB/s", burst_);
    nlohmann::json c = {{k::kTransfersVerified, verified_},
                        {k::kMismatches, mismatches_},
                        {k::kInFlight, slots_ - 1}};
    const double moved = static_cast<double>(transfers_) * static_cast<double>(bytes_);
    if (!host_ && down_s_ > 0) c[k::kD2hGbps] = moved / down_s_ / 1e9;
    if (!host_ && up_s_ > 0) c[k::kH2dGbps] = moved / up_s_ / 1e9;
    if (first_) c.update(*first_);
    if (group_) {
      c[k::kPeer] = {{k::kDevice, plan_.peer},
                     {k::kTransfersVerified, peer_copies_},
                     {k::kMismatches, peer_mismatches_},
                     {k::kBytes, bytes_}};
      if (peer_seconds_ > 0) c[k::kPeer][k::kGbps] = peer_bytes_ / peer_seconds_ / 1e9;
    }
    r_[k::kCopy] = c;
    if (mismatches_ == 0) {
      r_[k::kStatus] = "ok";
      return;
    }
    r_[k::kStatus] = "mismatch";
    r_[k::kReason] = fmt::format("{} of {} verified transfers differed from the source (first: {})",
                                 mismatches_, verified_ + peer_copies_, first_->dump());
  }

  StressRunContext& ctx_;
  Device& dev_;
  StressOps& ops_;
  const StressPlan& plan_;
  double end_s_;
  nlohmann::json& r_;
  bool host_ = false;
  std::size_t slots_ = 0;
  Events ev_{0};
  std::uint64_t bytes_ = 0;
  std::size_t words_ = 0;
  std::array<std::unique_ptr<HostAllocation>, 2> pattern_;  // each pattern's bytes, pageable
  std::array<std::uint64_t, 2> expected_{};                 // and checksum
  std::array<std::unique_ptr<DeviceBuffer>, 2> source_;     // and copy on the device
  std::vector<std::unique_ptr<HostAllocation>> host_slot_;  // pinned
  std::vector<std::unique_ptr<DeviceBuffer>> dev_slot_;
  std::unique_ptr<DeviceBuffer> sums_;         // a checksum per device slot
  std::unique_ptr<HostAllocation> host_sums_;  // and its copy on the host, pinned
  std::unique_ptr<HostCopyQueues> queues_;
  std::uint64_t transfers_ = 0, verified_ = 0, mismatches_ = 0;
  double down_s_ = 0, up_s_ = 0;  // device time from each direction's first copy to its last
  std::optional<nlohmann::json> first_;
  std::unique_ptr<PeerGroup> group_;
  std::array<std::unique_ptr<DeviceBuffer>, 2> peer_src_;
  std::unique_ptr<DeviceBuffer> peer_dst_;
  std::unique_ptr<HostAllocation> peer_back_;
  std::uint64_t peer_copies_ = 0, peer_mismatches_ = 0;
  double peer_bytes_ = 0, peer_seconds_ = 0;
  double start_s_ = 0, end_actual_s_ = 0, total_ = 0;
  std::vector<Window> windows_;
  std::optional<Window> burst_;
};

}  // namespace

nlohmann::json run_copy_test(StressRunContext& ctx, double end_s) {
  Device& dev = ctx.device();
  nlohmann::json r = record_base(dev, Test::kCopy);
  r[k::kImpl] = bench::copy_impl(dev);
  StressOps* ops = stress_ops_or_refuse(ctx, r);
  if (ops == nullptr) return r;
  run_guarded(ctx, r, [&] { CopyStress(ctx, *ops, end_s, r).run(); });
  return r;
}

}  // namespace gpucheck::stress

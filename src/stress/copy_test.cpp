// The copy stress test: host-to-device and device-to-host copies back to back from pinned
// memory, each verified. Uploads are checked on the device (Device::checksum against the host's
// checksum of the pattern), downloads byte for byte on the host, on a second thread while the
// next copies run. Two patterns alternate in pairs of iterations while the two destination
// buffers alternate every iteration, so a copy that silently did nothing leaves the other
// pattern behind and is caught. On the CPU the copy is memory to memory, checked by checksum.
// With a peer (plan.peer: several CUDA GPUs), every iteration also copies the pattern from this
// GPU to the peer (its copy engines, over NVLink or PCIe) and reads the peer's copy back to
// compare it byte for byte, so the links between GPUs carry checked load too.
#include "core/json_keys.h"
#include "stress/tests.h"
#include "stress/windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <future>
#include <stdexcept>

namespace gpucheck::stress {

namespace k = keys;
namespace sm = stress_math;

namespace {

constexpr std::uint64_t kGpuCopyBytes = std::uint64_t{256} << 20;
constexpr std::uint64_t kHostCopyBytes = std::uint64_t{64} << 20;

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

class CopyStress {
 public:
  CopyStress(RunContext& ctx, double end_s, nlohmann::json& record)
      : ctx_(ctx), dev_(ctx.device()), plan_(ctx.plan()), end_s_(end_s), r_(record) {}

  void run() {
    setup();
    loop();
    finish();
  }

 private:
  void setup() {
    ctx_.heartbeat("copy", "allocating");
    const MemoryInfo mem = dev_.memory_info();
    host_ = dev_.is_host();
    bytes_ = host_ ? kHostCopyBytes : kGpuCopyBytes;
    // Never more than a quarter of what the memory fraction allows (two patterns, two copies).
    const double fraction = memory_fraction_for(plan_, mem.host_memory);
    const auto cap = static_cast<std::uint64_t>(fraction * static_cast<double>(mem.free_bytes) / 4);
    bytes_ = std::max<std::uint64_t>(std::min(bytes_, cap) / 16 * 16, 4096);
    words_ = bytes_ / 8;
    for (int p = 0; p < 2; ++p) {
      src_[p] = dev_.allocate_host(bytes_, HostMemory::kPinned);
      auto* w = static_cast<std::uint64_t*>(src_[p]->data());
      const std::uint64_t seed = sm::splitmix64(plan_.seed + 977 * (p + 1));
      for (std::size_t i = 0; i < words_; ++i)
        w[i] = sm::pattern_value(sm::PatternKind::kRandom, seed, i);
      expected_[p] = host_checksum(w, words_);
    }
    sums_ = dev_.allocate(8);
    dst_ = dev_.allocate(bytes_);
    if (host_) {
      for (int p = 0; p < 2; ++p) {
        from_[p] = dev_.allocate(bytes_);
        dev_.upload(*from_[p], src_[p]->data(), bytes_);
      }
    } else {
      for (auto& b : back_) b = dev_.allocate_host(bytes_, HostMemory::kPinned);
    }
    dev_.synchronize();
    if (!host_ && !plan_.peer.empty()) setup_peer();
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
      group_->upload(0, *peer_src_[p], src_[p]->data(), bytes_);
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
    if (auto at = first_difference(peer_back_->data(), src_[p]->data(), bytes_)) {
      ++peer_mismatches_;
      mismatch("peer", i, at);
    }
  }

  void mismatch(const char* direction, std::uint64_t iteration, std::optional<std::uint64_t> at) {
    ++mismatches_;
    if (!first_) first_ = nlohmann::json{{k::kDirection, direction}, {k::kIterations, iteration}};
    if (at && !first_->contains(k::kFirstBadOffset)) (*first_)[k::kFirstBadOffset] = *at;
  }

  // The download of `iteration` into back_[q] against pattern p, on the comparing thread.
  void start_compare(std::uint64_t iteration, int p, int q) {
    pending_ = std::async(std::launch::async, [this, iteration, p, q] {
      return std::pair{iteration, first_difference(back_[q]->data(), src_[p]->data(), bytes_)};
    });
  }
  void finish_compare() {
    if (!pending_.valid()) return;
    auto [iteration, at] = pending_.get();
    ++verified_;
    if (at) mismatch("d2h", iteration, at);
  }

  void one(std::uint64_t i) {
    const int p = static_cast<int>((i >> 1) & 1), q = static_cast<int>(i & 1);
    if (host_) {
      dev_.copy(*dst_, *from_[p], bytes_);
    } else {
      dev_.upload(*dst_, src_[p]->data(), bytes_);
    }
    dev_.checksum(*dst_, words_, *sums_, 0);
    if (!host_) dev_.download(back_[q]->data(), *dst_, bytes_);
    dev_.synchronize();
    std::uint64_t sum = 0;
    dev_.download(&sum, *sums_, 8);
    dev_.synchronize();
    ++verified_;
    if (sum != expected_[p]) mismatch(host_ ? "h2h" : "h2d", i, std::nullopt);
    if (host_) return;
    finish_compare();  // the previous download, compared while this iteration's copies ran
    start_compare(i, p, q);
    if (group_) peer_copy(i, p);
  }

  void loop() {
    start_s_ = ctx_.now_s();
    WindowTracker windows(start_s_, plan_.window_s);
    RateMeter meter(start_s_);
    // Both directions count (H2D + D2H); a memory-to-memory copy reads and writes.
    const double per = 2.0 * static_cast<double>(bytes_);
    do {  // at least once, even when the setup used up the test's share
      one(iterations_++);
      const double t = ctx_.now_s();
      windows.add(t, per);
      ctx_.tick({"copy", meter.add(t, per) / 1e9, "GB/s", iterations_, mismatches_});
    } while (!ctx_.time_up(end_s_));
    finish_compare();
    end_actual_s_ = ctx_.now_s();
    windows_ = windows.finish(end_actual_s_);
    total_ = windows.total();
  }

  void finish() {
    r_[k::kShape] = {{k::kBytes, bytes_}, {k::kDirection, host_ ? "h2h" : "h2d+d2h"}};
    r_[k::kDurationS] = end_actual_s_ - start_s_;
    r_[k::kIterations] = iterations_;
    r_[k::kThroughput] = throughput_json(total_, end_actual_s_ - start_s_, windows_, 1e9, "GB/s");
    nlohmann::json c = {{k::kTransfersVerified, verified_}, {k::kMismatches, mismatches_}};
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
                                 mismatches_, verified_, first_->dump());
  }

  RunContext& ctx_;
  Device& dev_;
  const StressPlan& plan_;
  double end_s_;
  nlohmann::json& r_;
  bool host_ = false;
  std::uint64_t bytes_ = 0;
  std::size_t words_ = 0;
  std::array<std::unique_ptr<HostAllocation>, 2> src_, back_;
  std::array<std::unique_ptr<DeviceBuffer>, 2> from_;
  std::array<std::uint64_t, 2> expected_{};
  std::unique_ptr<DeviceBuffer> sums_, dst_;
  std::future<std::pair<std::uint64_t, std::optional<std::uint64_t>>> pending_;
  std::uint64_t iterations_ = 0, verified_ = 0, mismatches_ = 0;
  std::optional<nlohmann::json> first_;
  std::unique_ptr<PeerGroup> group_;
  std::array<std::unique_ptr<DeviceBuffer>, 2> peer_src_;
  std::unique_ptr<DeviceBuffer> peer_dst_;
  std::unique_ptr<HostAllocation> peer_back_;
  std::uint64_t peer_copies_ = 0, peer_mismatches_ = 0;
  double peer_bytes_ = 0, peer_seconds_ = 0;
  double start_s_ = 0, end_actual_s_ = 0, total_ = 0;
  std::vector<Window> windows_;
};

}  // namespace

nlohmann::json run_copy_test(RunContext& ctx, double end_s) {
  Device& dev = ctx.device();
  nlohmann::json r = record_base(dev, Test::kCopy);
  r[k::kImpl] = dev.impl(Op::kCopy, DType::kF32);
  run_guarded(ctx, r, [&] { CopyStress(ctx, end_s, r).run(); });
  return r;
}

}  // namespace gpucheck::stress

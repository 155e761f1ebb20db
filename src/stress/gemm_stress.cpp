// The GEMM stress test: gpu-burn's load with every result checked.
//
// Results cycle through as many device buffers as fit, so the load touches most of the memory.
// Every result's checksum (StressOps::checksum, on the device) is compared with the first
// result's; a differing one is brought back and compared element by element to count what is
// wrong. About every k-th result is also brought back whole and checked on a host thread, bit
// for bit against the first result and by Freivalds' test against float64 (bench/verify), so a
// fault that repeats in every result, the first included, is caught too. The first result
// itself passes the same float64 check before the loop starts.
#include "bench/cell.h"
#include "bench/inputs.h"
#include "bench/ops/gemm.h"
#include "bench/verify.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "stress/result_match.h"
#include "stress/stress_tests.h"
#include "stress/throughput_windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <thread>

namespace gpucheck::stress {

namespace k = keys;
using bench::HostBuffer;

namespace {

constexpr double kBatchTargetS = 0.1;  // GEMMs enqueued between two looks at their checksums
constexpr std::size_t kMaxBatch = 256;
constexpr std::size_t kMaxResultBuffers = 4096;
// Full checks bring a whole result back: at most this share of the time goes to that copy.
constexpr double kDownloadShare = 0.003;
// Device memory left beside the result buffers (library workspaces, the context's growth).
constexpr std::uint64_t kSlackBytes = std::uint64_t{256} << 20;

std::uint64_t gemm_host_checksum(const void* data, std::size_t words) {
  const auto* w = static_cast<const std::uint64_t*>(data);
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < words; ++i) sum += stress_math::checksum_term(w[i], i);
  return sum;
}

// Checks whole results on its own thread, one at a time: element by element against the first
// result and by Freivalds' test against the inputs.
class FullChecker {
 public:
  struct Outcome {
    std::uint64_t iteration = 0;
    ElementDiff diff;
    bench::Verification verification;
  };

  FullChecker(const GemmShape& shape, const HostBuffer& a, const HostBuffer& b,
              const HostBuffer& reference, DType compute, const ToleranceCompare* tolerance,
              std::uint64_t seed)
      : shape_(shape),
        a_(a),
        b_(b),
        ref_(reference),
        compute_(compute),
        tolerance_(tolerance),
        got_(reference.dtype(), reference.size()) {
    opt_.seed = seed;
    thread_ = std::thread([this] { loop(); });
  }
  ~FullChecker() {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }
  FullChecker(const FullChecker&) = delete;
  FullChecker& operator=(const FullChecker&) = delete;

  bool busy() const {
    std::lock_guard lock(mu_);
    return pending_;
  }
  // data (the result's bytes) must stay untouched until busy() is false again.
  void submit(std::uint64_t iteration, const void* data) {
    {
      std::lock_guard lock(mu_);
      pending_ = true;
      iteration_ = iteration;
      data_ = data;
    }
    cv_.notify_all();
  }
  std::vector<Outcome> collect() {
    std::lock_guard lock(mu_);
    return std::exchange(done_, {});
  }
  void drain() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return !pending_; });
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    while (true) {
      cv_.wait(lock, [&] { return stop_ || (pending_ && data_ != nullptr); });
      if (stop_) return;
      const std::uint64_t it = iteration_;
      const void* data = std::exchange(data_, nullptr);
      lock.unlock();
      Outcome o;
      o.iteration = it;
      try {
        std::memcpy(got_.data(), data, got_.size_bytes());
        o.diff = tolerance_ != nullptr ? tolerance_->compare(ref_, got_)
                                       : compare_bitwise(ref_.data(), got_.data(), got_.size(),
                                                         element_size(got_.dtype()));
        o.verification = bench::verify_gemm(shape_, a_, b_, got_, compute_, opt_);
      } catch (const std::exception& e) {
        o.verification.ok = false;
        o.verification.detail = e.what();
      }
      lock.lock();
      done_.push_back(std::move(o));
      pending_ = false;
      cv_.notify_all();
    }
  }

  GemmShape shape_;
  const HostBuffer& a_;
  const HostBuffer& b_;
  const HostBuffer& ref_;
  DType compute_;
  const ToleranceCompare* tolerance_;
  bench::VerifyOptions opt_;
  HostBuffer got_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stop_ = false, pending_ = false;
  std::uint64_t iteration_ = 0;
  const void* data_ = nullptr;
  std::vector<Outcome> done_;
  std::thread thread_;
};

// What the checks found, for the record and the verdict.
struct Findings {
  std::uint64_t checksummed = 0, mismatched_results = 0, mismatched_elements = 0;
  std::optional<std::uint64_t> first_bad_iteration, first_bad_index;
  std::uint64_t full_checks = 0, full_skipped = 0, full_failed = 0;
  std::string first_full_failure;

  void mismatch(std::uint64_t iteration, const ElementDiff& d) {
    ++mismatched_results;
    mismatched_elements += d.count;
    if (!first_bad_iteration) {
      first_bad_iteration = iteration;
      first_bad_index = d.first_index;
    }
  }
};

// A device in host memory (StressOps says so: the CPU, pocl, lavapipe) computes its first result
// and the host checks it in float64 before the loop starts: at 1024 that took 8 s of a 3.3 s
// share on lavapipe. The size follows the share, so a short run keeps to --duration.
std::uint64_t host_gemm_size(double share_s) {
  if (share_s >= 15) return kHostGemmSize;
  return share_s >= 5 ? kHostGemmSize / 2 : kHostGemmSize / 4;
}

class GemmStress {
 public:
  GemmStress(StressRunContext& ctx, StressOps& ops, DType dtype, double end_s,
             nlohmann::json& record)
      : ctx_(ctx),
        dev_(ctx.device()),
        ops_(ops),
        plan_(ctx.plan()),
        dtype_(dtype),
        end_s_(end_s),
        r_(record) {}

  void run() {
    setup();
    reference();
    time_one();
    loop();
    finish();
  }

 private:
  void setup() {
    const MemoryInfo mem = ops_.memory_info();
    const std::uint64_t n = plan_.gemm_size != 0 ? plan_.gemm_size
                            : mem.host_memory    ? host_gemm_size(end_s_ - ctx_.now_s())
                                                 : kGpuGemmSize;
    shape_ = {n, n, n};
    r_[k::kShape] = bench::shape_to_json(shape_);
    ctx_.heartbeat("gemm", "making the inputs");
    in_ = bench::make_gemm_inputs(dtype_, shape_, plan_.seed);
    elements_ = static_cast<std::size_t>(n * n);
    bytes_ = elements_ * element_size(gemm_output_dtype(dtype_));
    padded_ = (bytes_ + 7) / 8 * 8;
    a_ = dev_.allocate(in_.a.size_bytes());
    b_ = dev_.allocate(in_.device_b().size_bytes());
    dev_.upload(*a_, in_.a.data(), in_.a.size_bytes());
    dev_.upload(*b_, in_.device_b().data(), in_.device_b().size_bytes());
    ref_ = new_result_buffer();
    sums_ = dev_.allocate(kMaxBatch * 8);
    sums_host_.assign(kMaxBatch, 0);
    const double fraction = memory_fraction_for(plan_, mem.host_memory);
    const double used = static_cast<double>(2 * in_.a.size_bytes() + padded_ + kSlackBytes);
    const double budget = std::max(0.0, fraction * static_cast<double>(mem.free_bytes) - used);
    const std::size_t want = std::clamp<std::size_t>(
        static_cast<std::size_t>(budget / static_cast<double>(padded_)), 1, kMaxResultBuffers);
    double last_beat = ctx_.now_s();
    for (std::size_t i = 0; i < want; ++i) {
      try {
        c_.push_back(new_result_buffer());
      } catch (const DeviceLostError&) {
        throw;
      } catch (const std::exception&) {
        if (c_.empty()) throw;
        break;  // as many as fit: the free memory was less than the device said
      }
      if (ctx_.now_s() - last_beat > 1) {
        ctx_.heartbeat("gemm", fmt::format("allocated {} result buffers", c_.size()));
        last_beat = ctx_.now_s();
      }
    }
    bitwise_ = ops_.gemm_reproducible(dtype_);
    compute_ = bench::gemm_check_compute(dev_, dtype_);
    if (!bitwise_) tolerance_ = std::make_unique<ToleranceCompare>(shape_, in_.a, in_.b, compute_);
  }

  std::unique_ptr<DeviceBuffer> new_result_buffer() {
    auto buf = dev_.allocate(padded_);
    if (padded_ > bytes_) {  // the checksum reads whole words: the pad must hold the same bytes
      const std::uint64_t zero = 0;
      ops_.upload_at(*buf, bytes_, &zero, padded_ - bytes_);
    }
    return buf;
  }

  void enqueue(std::uint64_t iteration, DeviceBuffer& c, std::size_t slot) {
    dev_.gemm(dtype_, shape_, *a_, *b_, c);
    if (auto f = ctx_.fault(FaultKind::kGemmBit);
        f && iteration == std::max<std::uint64_t>(f->at, 2))
      flip_bit(c);
    if (!plan_.no_check) ops_.checksum(c, padded_ / 8, *sums_, slot);
  }

  // The planted fault: one bit of the middle word of a result, as a flaky unit would leave it.
  void flip_bit(DeviceBuffer& c) {
    dev_.synchronize();
    const std::size_t offset = padded_ / 16 * 8;
    std::uint64_t word = 0;
    ops_.download_at(&word, c, offset, 8);
    dev_.synchronize();
    word ^= std::uint64_t{1} << 3;
    ops_.upload_at(c, offset, &word, 8);
    dev_.synchronize();
  }

  std::uint64_t read_sum(std::size_t slot_count, std::size_t slot) {
    if (slot == 0) {
      dev_.download(sums_host_.data(), *sums_, slot_count * 8);
      dev_.synchronize();
    }
    return sums_host_[slot];
  }

  // Iteration 0: its result is the reference, checked against float64 before anything else.
  void reference() {
    ctx_.heartbeat("gemm", "the first result");
    enqueue(0, *ref_, 0);
    if (plan_.no_check) {
      dev_.synchronize();
      return;
    }
    dev_.synchronize();
    ref_sum_ = read_sum(1, 0);
    pinned_ = dev_.allocate_host(padded_, HostMemory::kPinned);
    const double t0 = ctx_.now_s();
    dev_.download(pinned_->data(), *ref_, padded_);
    dev_.synchronize();
    t_download_ = ctx_.now_s() - t0;
    ref_host_ = bench::make_gemm_output(dtype_, shape_);
    std::memcpy(ref_host_.data(), pinned_->data(), bytes_);
    const std::uint64_t host_sum = gemm_host_checksum(pinned_->data(), padded_ / 8);
    if (host_sum != ref_sum_)
      throw std::runtime_error(fmt::format(
          "the device's checksum of the first result ({:#x}) differs from the host's of the same "
          "bytes ({:#x}): the checksum kernel or the copy back is broken",
          ref_sum_, host_sum));
    ctx_.heartbeat("gemm", "checking the first result against float64");
    bench::VerifyOptions vo;
    vo.seed = plan_.seed;
    const double t1 = ctx_.now_s();
    reference_ = bench::verify_gemm(shape_, in_.a, in_.b, ref_host_, compute_, vo);
    t_verify_ = ctx_.now_s() - t1;
    found_.checksummed = 1;
    checker_ = std::make_unique<FullChecker>(shape_, in_.a, in_.b, ref_host_, compute_,
                                             tolerance_.get(), plan_.seed);
  }

  // Iteration 1 alone, timed: sizes the batch and the full checks' spacing.
  void time_one() {
    const double t0 = ctx_.now_s();
    enqueue(1, *c_[0], 0);
    dev_.synchronize();
    const double t_iter = std::max(ctx_.now_s() - t0, 1e-6);
    if (!plan_.no_check) check_sums(1, 1);
    batch_ = std::clamp<std::size_t>(static_cast<std::size_t>(std::lround(kBatchTargetS / t_iter)),
                                     1, std::min(kMaxBatch, std::max<std::size_t>(1, c_.size())));
    std::uint64_t k = plan_.check_every;
    if (k == 0) {
      const double by_copy = t_download_ / (kDownloadShare * t_iter);
      const double by_host = 1.5 * t_verify_ / t_iter;  // the host thread keeps up
      k = static_cast<std::uint64_t>(std::ceil(std::max({by_copy, by_host, 1.0})));
    }
    check_every_ = std::max<std::uint64_t>(k, batch_);
    iteration_ = 2;
  }

  // Compares the checksums of iterations [first, first + count) with the reference's; a
  // differing result is brought back and compared element by element.
  void check_sums(std::uint64_t first, std::size_t count) {
    for (std::size_t j = 0; j < count; ++j) {
      const std::uint64_t it = first + j;
      ++found_.checksummed;
      if (read_sum(count, j) == ref_sum_) continue;
      DeviceBuffer& c = *c_[it % c_.size()];
      if (scratch_.size() == 0) scratch_ = bench::make_gemm_output(dtype_, shape_);
      dev_.download(scratch_.data(), c, bytes_);
      dev_.synchronize();
      ElementDiff d = tolerance_ ? tolerance_->compare(ref_host_, scratch_)
                                 : compare_bitwise(ref_host_.data(), scratch_.data(), elements_,
                                                   element_size(ref_host_.dtype()));
      if (d.count == 0 && !tolerance_) d.count = 1;  // only the pad can differ: count the word
      if (d.count > 0) found_.mismatch(it, d);
    }
  }

  void collect() {
    for (auto& o : checker_->collect()) {
      ++found_.full_checks;
      if (o.diff.count > 0) found_.mismatch(o.iteration, o.diff);
      if (!o.verification.ok) {
        if (found_.full_failed++ == 0)
          found_.first_full_failure =
              fmt::format("result {}: {}", o.iteration, o.verification.detail);
      }
    }
  }

  void loop() {
    const double flop = 2.0 * static_cast<double>(shape_.m) * static_cast<double>(shape_.n) *
                        static_cast<double>(shape_.k);
    loop_start_s_ = ctx_.now_s();
    WindowTracker windows(loop_start_s_, plan_.window_s);
    RateMeter meter(loop_start_s_);
    // At least one batch, even when the setup used up the test's share: a record always measures.
    do {
      const std::uint64_t first = iteration_;
      for (std::size_t j = 0; j < batch_; ++j, ++iteration_)
        enqueue(iteration_, *c_[iteration_ % c_.size()], j);
      dev_.synchronize();
      if (!plan_.no_check) {
        check_sums(first, batch_);
        // The batch holding a multiple of k: its last result is checked in full.
        if ((iteration_ - 1) / check_every_ != (first - 1) / check_every_) {
          if (checker_->busy()) {
            ++found_.full_skipped;
          } else {
            dev_.download(pinned_->data(), *c_[(iteration_ - 1) % c_.size()], bytes_);
            dev_.synchronize();
            checker_->submit(iteration_ - 1, pinned_->data());
          }
        }
        collect();
      }
      const double t = ctx_.now_s();
      windows.add(t, flop * static_cast<double>(batch_));
      ctx_.tick({"gemm", meter.add(t, flop * static_cast<double>(batch_)) / 1e12, "TFLOP/s",
                 iteration_, found_.mismatched_results});
    } while (!ctx_.time_up(end_s_));
    loop_end_s_ = ctx_.now_s();
    if (checker_) {
      checker_->drain();
      collect();
      // A run too short for its k-th result still gets one full check: its last result.
      if (found_.full_checks == 0) {
        dev_.download(pinned_->data(), *c_[(iteration_ - 1) % c_.size()], bytes_);
        dev_.synchronize();
        checker_->submit(iteration_ - 1, pinned_->data());
        checker_->drain();
        collect();
      }
    }
    windows_ = windows.finish(loop_end_s_);
    burst_ = windows.burst();
    total_flop_ = windows.total();
  }

  void finish() {
    annotate_clocks(windows_, ctx_.samples());
    r_[k::kDurationS] = loop_end_s_ - loop_start_s_;
    r_[k::kIterations] = iteration_;
    r_[k::kThroughput] = throughput_json(total_flop_, loop_end_s_ - loop_start_s_, windows_, 1e12,
                                         "TFLOP/s", burst_);
    nlohmann::json c = {{k::kResultBuffers, c_.size()}, {k::kBatch, batch_}};
    if (plan_.no_check) {
      c[k::kNoCheck] = true;
      r_[k::kChecking] = c;
      r_[k::kStatus] = "ok";
      return;
    }
    c[k::kBitwise] = bitwise_;
    c[k::kResultsChecksummed] = found_.checksummed;
    c[k::kCheckEvery] = check_every_;
    c[k::kFullChecks] = found_.full_checks;
    c[k::kFullChecksSkipped] = found_.full_skipped;
    c[k::kMismatchedResults] = found_.mismatched_results;
    c[k::kMismatchedElements] = found_.mismatched_elements;
    if (found_.first_bad_iteration) c[k::kFirstBadIteration] = *found_.first_bad_iteration;
    if (found_.first_bad_index) c[k::kFirstBadIndex] = *found_.first_bad_index;
    c[k::kReference] = bench::verification_json(reference_);
    r_[k::kChecking] = c;
    std::vector<std::string> why;
    if (!reference_.ok)
      why.push_back("the first result is wrong against float64: " + reference_.detail);
    if (found_.mismatched_results > 0) {
      const std::uint64_t e = found_.first_bad_index.value_or(0);
      why.push_back(fmt::format(
          "{} of {} results differed from the first ({} elements; first in result {}, element {} "
          "= C[{},{}])",
          found_.mismatched_results, found_.checksummed, found_.mismatched_elements,
          found_.first_bad_iteration.value_or(0), e, e / shape_.n, e % shape_.n));
    }
    if (found_.full_failed > 0)
      why.push_back(fmt::format("{} full checks failed against float64; first: {}",
                                found_.full_failed, found_.first_full_failure));
    r_[k::kStatus] = why.empty() ? "ok" : "mismatch";
    if (!why.empty()) {
      std::string reason;
      for (const auto& w : why) reason += (reason.empty() ? "" : "; ") + w;
      r_[k::kReason] = reason;
    }
  }

  StressRunContext& ctx_;
  Device& dev_;
  StressOps& ops_;
  const StressPlan& plan_;
  DType dtype_;
  double end_s_;
  nlohmann::json& r_;
  GemmShape shape_;
  bench::GemmInputs in_;
  std::size_t elements_ = 0, bytes_ = 0, padded_ = 0;
  std::unique_ptr<DeviceBuffer> a_, b_, ref_, sums_;
  std::vector<std::unique_ptr<DeviceBuffer>> c_;
  std::vector<std::uint64_t> sums_host_;
  std::unique_ptr<HostAllocation> pinned_;
  HostBuffer ref_host_, scratch_;
  bool bitwise_ = true;
  DType compute_ = DType::kF32;
  std::unique_ptr<ToleranceCompare> tolerance_;
  std::unique_ptr<FullChecker> checker_;
  bench::Verification reference_;
  std::uint64_t ref_sum_ = 0;
  double t_download_ = 0, t_verify_ = 0;
  std::size_t batch_ = 1;
  std::uint64_t check_every_ = 1, iteration_ = 0;
  Findings found_;
  double loop_start_s_ = 0, loop_end_s_ = 0, total_flop_ = 0;
  std::vector<Window> windows_;
  std::optional<Window> burst_;
};

}  // namespace

nlohmann::json run_gemm_test(StressRunContext& ctx, DType dtype, double end_s) {
  Device& dev = ctx.device();
  nlohmann::json r = record_base(dev, Test::kGemm);
  r[k::kImpl] = bench::gemm_impl(dev, dtype);
  r[k::kDtype] = to_string(dtype);
  r[k::kComputeType] = bench::gemm_compute_type(dev, dtype);
  if (auto why = bench::gemm_unsupported(dev, dtype)) {
    r[k::kStatus] = "unsupported";
    r[k::kReason] = *why;
    return r;
  }
  StressOps* ops = stress_ops_or_refuse(ctx, r);
  if (ops == nullptr) return r;
  run_guarded(ctx, r, [&] { GemmStress(ctx, *ops, dtype, end_s, r).run(); });
  return r;
}

}  // namespace gpucheck::stress

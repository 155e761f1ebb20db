// The memory stress test: the memory fraction of the device's free memory in chunks, tested in
// rounds of passes (StressOps::memtest kernels) until the end:
//   walking ones   one bit b (a new one each round) set in every word, checked, inverted,
//                  checked again;
//   address        every word holds its own index, then the complement;
//   moving inv.    a pattern p, checked and inverted chunk by chunk upwards, checked and
//                  inverted back downwards (memtest86's test 3/4, chunk-ordered on a GPU);
//   random         seeded random words (a new seed each round), checked and replaced.
// A pass that checks and writes reads and writes each word once; throughput counts both, as a
// device-to-device copy does.
#include "core/errors.h"
#include "core/json_keys.h"
#include "stress/stress_tests.h"
#include "stress/throughput_windows.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>

namespace gpucheck::stress {

namespace k = keys;
namespace sm = stress_math;

namespace {

constexpr std::uint64_t kMaxChunkBytes = std::uint64_t{1} << 30;
constexpr std::uint64_t kMinChunkBytes = std::uint64_t{16} << 20;
constexpr std::uint64_t kProbeBytes = std::uint64_t{64} << 20;  // the timed write of fit_to_share
constexpr double kShareUsed = 0.7;  // of what is left: the later groups and the verdict need time

struct Pass {
  const char* name;
  MemPattern check, write;
  bool descending = false;  // chunks from the last to the first
};

MemPattern constant(std::uint64_t v) {
  return {sm::PatternKind::kConstant, v};
}
MemPattern address(std::uint64_t v) {
  return {sm::PatternKind::kAddress, v};
}
MemPattern random(std::uint64_t seed) {
  return {sm::PatternKind::kRandom, seed};
}

// The passes of round r: each starts by writing what the next pass checks.
std::vector<Pass> round_passes(std::uint64_t r, std::uint64_t seed) {
  const std::uint64_t bit = std::uint64_t{1} << (r % 64);
  const std::uint64_t p = sm::splitmix64(seed + r);
  const std::uint64_t s1 = sm::splitmix64(seed ^ (2 * r + 1)),
                      s2 = sm::splitmix64(seed ^ (2 * r + 2));
  const MemPattern none{};
  return {
      {"walking ones", none, constant(bit)},
      {"walking ones", constant(bit), constant(~bit)},
      {"walking ones", constant(~bit), none},
      {"address in address", none, address(0)},
      {"address in address", address(0), address(~std::uint64_t{0})},
      {"address in address", address(~std::uint64_t{0}), none},
      {"moving inversions", none, constant(p)},
      {"moving inversions", constant(p), constant(~p)},
      {"moving inversions", constant(~p), constant(p), true},
      {"moving inversions", constant(p), none},
      {"random", none, random(s1)},
      {"random", random(s1), random(s2)},
      {"random", random(s2), none},
  };
}

std::string pattern_text(const MemPattern& m) {
  switch (m.kind) {
    case sm::PatternKind::kConstant:
      return fmt::format("constant {:#018x}", m.param);
    case sm::PatternKind::kAddress:
      return fmt::format("word index xor {:#018x}", m.param);
    case sm::PatternKind::kRandom:
      return fmt::format("random, seed {:#018x}", m.param);
    default:
      return "none";
  }
}

struct Chunk {
  std::unique_ptr<DeviceBuffer> buf;
  std::uint64_t words = 0, first_word = 0;
};

class MemoryStress {
 public:
  MemoryStress(StressRunContext& ctx, StressOps& ops, double end_s, nlohmann::json& record)
      : ctx_(ctx), dev_(ctx.device()), ops_(ops), plan_(ctx.plan()), end_s_(end_s), r_(record) {}

  void run() {
    allocate();
    fit_to_share();
    loop();
    finish();
  }

 private:
  void allocate() {
    ctx_.heartbeat("memory", "allocating");
    const MemoryInfo mem = ops_.memory_info();
    free_ = mem.free_bytes;
    fraction_ = memory_fraction_for(plan_, mem.host_memory);
    const auto target = static_cast<std::uint64_t>(fraction_ * static_cast<double>(free_));
    std::uint64_t chunk =
        std::min<std::uint64_t>({kMaxChunkBytes, std::max<std::uint64_t>(mem.max_allocation, 16),
                                 std::max<std::uint64_t>(target, 16)});
    chunk = chunk / 16 * 16;
    double last_beat = ctx_.now_s();
    while (tested_ < target && chunk >= 16) {
      const std::uint64_t size =
          std::max<std::uint64_t>(16, std::min(chunk, (target - tested_ + 15) / 16 * 16));
      try {
        chunks_.push_back({dev_.allocate(size), size / 8, tested_ / 8});
        tested_ += size;
      } catch (const DeviceLostError&) {
        throw;
      } catch (const std::exception& e) {
        // Less than the device said is free, or fragmented: smaller chunks, down to a floor.
        if (chunk / 2 < kMinChunkBytes) {
          if (chunks_.empty()) throw;
          shortfall_ = e.what();
          break;
        }
        chunk = chunk / 2 / 16 * 16;
      }
      if (ctx_.now_s() - last_beat > 1) {
        ctx_.heartbeat("memory", fmt::format("allocated {} bytes", tested_));
        last_beat = ctx_.now_s();
      }
    }
    result_ = dev_.allocate(16);
    const std::array<std::uint64_t, 2> init{0, std::numeric_limits<std::uint64_t>::max()};
    dev_.upload(*result_, init.data(), 16);
    dev_.synchronize();
  }

  // The first group of passes always runs whole (every pattern written is checked), so where
  // it would not fit the test's share of --duration (a CPU implementation of a GPU API tests its
  // gigabytes at a hundredth of a GPU's rate: 12.8 s for a 3.3 s share), the passes test the
  // part of the allocation they can. A write over the start of the first chunk, timed, gives
  // the rate; a pass that checks and writes costs two of those.
  void fit_to_share() {
    if (chunks_.empty() || plan_.memory_fraction) return;  // a fraction asked for is tested whole
    const std::vector<Pass> passes = round_passes(0, plan_.seed);
    double units = 0;
    for (std::size_t i = 0; i < passes.size(); ++i) {
      if (i > 0 && passes[i].check.kind == sm::PatternKind::kNone) break;
      units += (passes[i].check.kind != sm::PatternKind::kNone ? 1.0 : 0.0) +
               (passes[i].write.kind != sm::PatternKind::kNone ? 1.0 : 0.0);
    }
    Chunk& first = chunks_.front();
    const std::uint64_t probe = std::min<std::uint64_t>(first.words, kProbeBytes / 8);
    const double t0 = ctx_.now_s();
    ops_.memtest(*first.buf, probe, first.first_word, MemPattern{}, passes.front().write, *result_);
    dev_.synchronize();
    const double per_word = std::max(ctx_.now_s() - t0, 1e-9) / static_cast<double>(probe);
    const double left = std::max(0.0, end_s_ - ctx_.now_s());
    const auto fit = static_cast<std::uint64_t>(kShareUsed * left / (units * per_word));
    const std::uint64_t words = std::max<std::uint64_t>(fit, probe) / 2 * 2;
    if (words >= tested_ / 8) return;
    std::uint64_t kept = 0;
    std::size_t n = 0;
    for (; n < chunks_.size() && kept < words; ++n) {
      chunks_[n].words = std::min(chunks_[n].words, words - kept);
      kept += chunks_[n].words;
    }
    chunks_.resize(n);  // the rest is freed
    fitted_ = fmt::format(
        "{} of {} bytes allocated: a group of passes over all of them would take "
        "about {:.0f} s of this test's {:.0f} s",
        kept * 8, tested_, units * per_word * static_cast<double>(tested_ / 8), left);
    tested_ = kept * 8;
  }

  void run_pass(const Pass& p) {
    const std::size_t n = chunks_.size();
    for (std::size_t i = 0; i < n; ++i) {
      Chunk& c = chunks_[p.descending ? n - 1 - i : i];
      ops_.memtest(*c.buf, c.words, c.first_word, p.check, p.write, *result_);
    }
    dev_.synchronize();
    ++passes_;
    if (auto f = ctx_.fault(FaultKind::kMemoryWord);
        f && passes_ == std::max<std::uint64_t>(f->at, 1))
      flip_word();
  }

  // The planted fault: one bit of the middle word of the first chunk flips between passes.
  void flip_word() {
    Chunk& c = chunks_.front();
    const std::size_t offset = c.words / 2 * 8;
    std::uint64_t w = 0;
    ops_.download_at(&w, *c.buf, offset, 8);
    dev_.synchronize();
    w ^= 1;
    ops_.upload_at(*c.buf, offset, &w, 8);
    dev_.synchronize();
  }

  // Reads the running count; the first time it is not zero, says where and in which pass.
  void look(const Pass& p) {
    std::array<std::uint64_t, 2> res{};
    dev_.download(res.data(), *result_, 16);
    dev_.synchronize();
    mismatches_ = res[0];
    if (mismatches_ == 0 || first_bad_) return;
    first_bad_ = res[1];
    nlohmann::json where = {
        {k::kFirstBadOffset, res[1] * 8},
        {k::kInPass, p.name},
        {k::kPattern, pattern_text(p.check)},
        {k::kExpected,
         fmt::format("{:#018x}", sm::pattern_value(p.check.kind, p.check.param, res[1]))}};
    if (p.write.kind == sm::PatternKind::kNone) {  // the pass left the word as it read it
      for (auto& c : chunks_)
        if (res[1] >= c.first_word && res[1] < c.first_word + c.words) {
          std::uint64_t w = 0;
          ops_.download_at(&w, *c.buf, (res[1] - c.first_word) * 8, 8);
          dev_.synchronize();
          where[k::kRead] = fmt::format("{:#018x}", w);
        }
    }
    first_bad_where_ = where;
  }

  void loop() {
    start_s_ = ctx_.now_s();
    WindowTracker windows(start_s_, plan_.window_s);
    RateMeter meter(start_s_);
    // Every pattern written is checked before the test ends: a group of passes (a write, then
    // checks) is started only when it is expected to end in time, or when none ran yet; and the
    // test stops after a check-only pass once its time is up.
    std::size_t groups = 0;
    for (bool done = false; !done; ++rounds_) {
      const std::vector<Pass> passes = round_passes(rounds_, plan_.seed);
      for (std::size_t i = 0; i < passes.size(); ++i) {
        const Pass& p = passes[i];
        if (p.check.kind == sm::PatternKind::kNone) {
          std::size_t len = 1;
          while (i + len < passes.size() && passes[i + len].check.kind != sm::PatternKind::kNone)
            ++len;
          const double per_pass =
              passes_ > 0 ? (ctx_.now_s() - start_s_) / static_cast<double>(passes_) : 0;
          if (groups > 0 &&
              (ctx_.stopping() || ctx_.now_s() + per_pass * static_cast<double>(len) > end_s_)) {
            done = true;
            break;
          }
          ++groups;
        }
        run_pass(p);
        look(p);
        const double bytes =
            static_cast<double>(tested_) * ((p.check.kind != sm::PatternKind::kNone ? 1.0 : 0.0) +
                                            (p.write.kind != sm::PatternKind::kNone ? 1.0 : 0.0));
        const double t = ctx_.now_s();
        windows.add(t, bytes);
        ctx_.tick({"memory", meter.add(t, bytes) / 1e9, "GB/s", passes_, mismatches_});
        if (p.write.kind == sm::PatternKind::kNone && ctx_.time_up(end_s_)) {
          done = true;
          break;
        }
      }
    }
    end_s_actual_ = ctx_.now_s();
    windows_ = windows.finish(end_s_actual_);
    burst_ = windows.burst();
    total_ = windows.total();
  }

  void finish() {
    r_[k::kShape] = {{k::kBytes, tested_}};
    r_[k::kDurationS] = end_s_actual_ - start_s_;
    r_[k::kIterations] = passes_;
    r_[k::kThroughput] =
        throughput_json(total_, end_s_actual_ - start_s_, windows_, 1e9, "GB/s", burst_);
    nlohmann::json m = {
        {k::kBytesTested, tested_},
        {k::kFreeBytesAtStart, free_},
        {k::kMemoryFraction, fraction_},
        {k::kFractionOfFree,
         free_ > 0 ? static_cast<double>(tested_) / static_cast<double>(free_) : 0.0},
        {k::kChunks, chunks_.size()},
        {k::kPasses, passes_},
        {k::kRounds, rounds_},
        {k::kMismatches, mismatches_}};
    if (!shortfall_.empty()) m[k::kAllocationStopped] = shortfall_;
    if (!fitted_.empty()) m[k::kFittedToDuration] = fitted_;
    if (first_bad_) m.update(first_bad_where_);
    r_[k::kMemory] = m;
    if (mismatches_ == 0) {
      r_[k::kStatus] = "ok";
      return;
    }
    r_[k::kStatus] = "mismatch";
    std::string reason = fmt::format(
        "{} words read back wrong; first bad address: byte {:#x} of the tested memory, in a {} "
        "pass ({}), expected {}",
        mismatches_, first_bad_where_[k::kFirstBadOffset].get<std::uint64_t>(),
        first_bad_where_[k::kInPass].get<std::string>(),
        first_bad_where_[k::kPattern].get<std::string>(),
        first_bad_where_[k::kExpected].get<std::string>());
    if (first_bad_where_.contains(k::kRead))
      reason += ", read " + first_bad_where_[k::kRead].get<std::string>();
    r_[k::kReason] = reason;
  }

  StressRunContext& ctx_;
  Device& dev_;
  StressOps& ops_;
  const StressPlan& plan_;
  double end_s_;
  nlohmann::json& r_;
  std::vector<Chunk> chunks_;
  std::unique_ptr<DeviceBuffer> result_;
  std::uint64_t free_ = 0, tested_ = 0, passes_ = 0, rounds_ = 0, mismatches_ = 0;
  double fraction_ = 0, start_s_ = 0, end_s_actual_ = 0, total_ = 0;
  std::optional<std::uint64_t> first_bad_;
  nlohmann::json first_bad_where_;
  std::string shortfall_;
  std::string fitted_;  // what fit_to_share left out, or empty
  std::vector<Window> windows_;
  std::optional<Window> burst_;
};

}  // namespace

nlohmann::json run_memory_test(StressRunContext& ctx, double end_s) {
  Device& dev = ctx.device();
  nlohmann::json r = record_base(dev, Test::kMemory);
  r[k::kImpl] = "kernel";
  StressOps* ops = stress_ops_or_refuse(ctx, r);
  if (ops == nullptr) return r;
  run_guarded(ctx, r, [&] { MemoryStress(ctx, *ops, end_s, r).run(); });
  return r;
}

}  // namespace gpucheck::stress

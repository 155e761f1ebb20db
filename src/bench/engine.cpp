// Cell execution: inputs → device → timed runs → results back → verification → records; the
// op's own steps are its unit's (bench/ops/), reached through RunContext.
#include "bench/engine.h"

#include "bench/gemm_trial.h"
#include "bench/host_lock.h"
#include "bench/host_pool.h"
#include "bench/inputs.h"
#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "bench/output_digest.h"
#include "bench/phase_trace.h"
#include "bench/record.h"
#include "bench/stats.h"
#include "bench/verify.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "host/memory_info.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <map>
#include <random>

namespace gpucheck::bench {

namespace k = keys;

namespace {

using Clock = std::chrono::steady_clock;

}  // namespace

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

DeviceTensor to_device(Device& dev, const HostBuffer& h) {
  DeviceTensor t{dev.allocate(h.size_bytes()), h.size_bytes()};
  dev.upload(*t.buf, h.data(), t.bytes);
  return t;
}

Work work_of(const Cell& cell) {
  return unit_of(cell.op).work(cell);
}

namespace {

nlohmann::json base_record(const Device& dev, const Cell& cell, Transfers transfers) {
  const auto& id = dev.identity();
  nlohmann::json r = {{k::kDevice, id.device},
                      {k::kDeviceName, id.device_name},
                      {k::kBackend, id.backend},
                      {k::kOp, to_string(cell.op)},
                      {k::kImpl, dev.impl(cell.op, cell.dtype)},
                      {k::kShape, shape_to_json(cell.shape)},
                      {k::kTransfers, to_string(transfers)}};
  if (!id.device_uuid.empty()) r[k::kDeviceUuid] = id.device_uuid;
  if (!id.pci_bus_id.empty()) r[k::kPciBusId] = id.pci_bus_id;
  if (unit_of(cell.op).has_dtype) {
    r[k::kDtype] = to_string(cell.dtype);
    r[k::kComputeType] = dev.compute_type(cell.op, cell.dtype);
  }
  if (cell.scaled_from) r[k::kScaledFrom] = *cell.scaled_from;
  auto ctx = dev.context();
  if (!ctx.empty()) r[k::kContext] = ctx;
  return r;
}

}  // namespace

nlohmann::json time_json(const TimeStats& t) {
  nlohmann::json j = {{k::kMedian, t.median}, {k::kMin, t.min},   {k::kMax, t.max},
                      {k::kStddev, t.stddev}, {k::kReps, t.reps}, {k::kTruncated, t.truncated}};
  j[k::kSamples] = t.samples;
  if (!t.round_medians.empty()) j[k::kRoundMedians] = t.round_medians;
  return j;
}

void finish_record(nlohmann::json& r, const Cell& cell, const std::vector<double>& times,
                   bool truncated, const std::optional<Verification>& v) {
  finish_record(r, cell, std::vector<std::vector<double>>{times}, truncated, v);
}

void finish_record(nlohmann::json& r, const Cell& cell,
                   const std::vector<std::vector<double>>& round_times, bool truncated,
                   const std::optional<Verification>& v) {
  TimeStats t = summarize_rounds(round_times, truncated);
  r[k::kTimeS] = time_json(t);
  Work w = work_of(cell);
  if (w.amount > 0 && t.median > 0) {
    double scale = std::string_view(w.unit) == "GB/s" ? 1e9 : 1e12;
    r[k::kThroughput] = {{k::kValue, w.amount / t.median / scale}, {k::kUnit, w.unit}};
  }
  if (v) {
    r[k::kVerification] = verification_json(*v);
    if (!v->ok) {
      r[k::kStatus] = "mismatch";
      std::string where =
          v->first_bad_index ? fmt::format(" (first bad index {})", *v->first_bad_index) : "";
      r[k::kReason] = fmt::format("verification failed{}: {}", where, v->detail);
      return;
    }
  }
  r[k::kStatus] = "ok";
}

namespace {

// One record of a cell across its rounds: the latest round's record (identity, context) and
// every round's timings; the record is finished once the cell's last round ran.
struct RecordRounds {
  nlohmann::json record;
  std::vector<std::vector<double>> times;  // per round
  bool truncated = false;
  std::optional<Verification> verification;  // the worst round's
};

// A failed verification beats a passed one; among equals the larger error.
bool worse(const Verification& a, const Verification& b) {
  if (a.ok != b.ok) return !a.ok;
  return a.max_rel_error > b.max_rel_error;
}

// What a cell collected so far: one RecordRounds per record it makes (1, or 2 with transfers).
struct CellRounds {
  std::vector<RecordRounds> records;
  std::size_t next = 0;  // the record the running round fills next
  int rounds_run = 0;
  double seconds = 0;                  // wall time of its rounds so far, for --max-time
  bool finished = false;               // emitted (or failed): no more rounds
  std::shared_ptr<const void> inputs;  // made in its first round (RunContext::keep_inputs)
  std::size_t input_bytes = 0;
  // The outputs checked in float64 so far (their digests) and the outcomes (CellRunner::check).
  std::vector<std::pair<std::uint64_t, Verification>> checked;
};

class CellRunner : public RunContext {
 public:
  CellRunner(const BenchPlan& plan, Device& dev, const EngineCallbacks& cb,
             const EngineOptions& options)
      : plan_(plan),
        dev_(dev),
        cb_(cb),
        plant_(options.plant),
        options_(options),
        slowdown_(options.slowdown),
        host_lock_(plan.host_lock),
        pinned_(dev) {}

  // The dtype's GEMM parameters, chosen once before its first GEMM or conv cell (the device
  // says nothing when it has none to choose). A failure fails this cell and is not retried.
  void tune_gemm_once(DType dtype) {
    if (tuned_.contains(dtype)) return;
    tuned_[dtype] = std::nullopt;
    GemmTuningRequest req;
    req.mode = plan_.tuning.mode;
    req.budget_s = plan_.tuning.budget_s;
    req.cache_dir = options_.tuning_cache_dir;
    req.plant_bad_candidate = options_.plant_bad_tuning_candidate;
    req.forced_parameters = options_.forced_gemm_parameters;
    req.log = cb_.tuning_log;
    req.progress = cb_.tuning_progress;
    // A device without a tuner runs what its library chooses: nothing to record.
    if (GemmTuner* tuner = dev_.gemm_tuner())
      tuned_[dtype] = tuner->tune_gemm(dtype, req, make_gemm_trial(dev_, dtype, plan_.seed));
  }

  // Runs one round of the cell under `policy`, adding its records' timings to `into`.
  void run_round(const Cell& cell, const RepPolicy& policy, CellRounds& into) {
    cell_ = &cell;
    round_policy_ = policy;
    round_policy_.min_warmup_s = std::max(policy.min_warmup_s, dev_.min_warmup_seconds());
    policy_ = &round_policy_;
    into_ = &into;
    into.next = 0;
    const auto run = unit_of(cell.op).run;
    if (!run)
      throw std::logic_error("a group op in a one-device plan (bench/group_engine.cpp runs it)");
    run(cell, *this);
  }

  // Finishes the cell's records from all its rounds and hands them on.
  void emit_all(std::size_t index, const Cell& cell, CellRounds& rounds) {
    for (auto& rr : rounds.records) {
      finish_record(rr.record, cell, rr.times, rr.truncated, rr.verification);
      add_peak_fraction(rr.record);
      cb_.record(index, rr.record);
    }
    rounds.finished = true;
  }

  Device& device() override { return dev_; }
  std::uint64_t seed() const override { return plan_.seed; }
  std::shared_ptr<const void> kept_inputs() override { return into_->inputs; }
  // Kept while all cells' kept inputs fit in a quarter of the host memory the cells may use.
  void keep_inputs(std::shared_ptr<const void> inputs, std::size_t bytes) override {
    if (into_->inputs || bytes > keep_limit_ || kept_bytes_ > keep_limit_ - bytes) return;
    into_->inputs = std::move(inputs);
    into_->input_bytes = bytes;
    kept_bytes_ += bytes;
  }
  // The cell's last round ran: its inputs go.
  void drop_inputs(CellRounds& rounds) {
    kept_bytes_ -= rounds.inputs ? rounds.input_bytes : 0;
    rounds.inputs.reset();
  }
  void set_keep_limit(std::size_t bytes) { keep_limit_ = bytes; }
  void mark(std::string_view phase) override { trace_.mark(phase); }
  std::unique_ptr<HostAllocation> host_memory(std::size_t bytes, HostMemory kind) override {
    return kind == HostMemory::kPinned ? pinned_.take(bytes) : dev_.allocate_host(bytes, kind);
  }
  nlohmann::json record(Transfers transfers, bool host_bound) override {
    return host_bound ? host_bound_record(*cell_, transfers) : base_record(dev_, *cell_, transfers);
  }
  HostLock::Guard hold_host(bool when) override { return host_lock_.hold(when); }
  void plant(HostBuffer& out) override {
    if (plant_) plant_error(out, *plant_);
  }
  void measure_op(const std::vector<const HostBuffer*>& inputs,
                  std::vector<DeviceTensor>& dev_inputs, HostBuffer& out, DeviceTensor& dev_out,
                  const Launch& launch,
                  const std::function<Verification(const HostBuffer&)>& verify) override {
    measure_op(*cell_, inputs, dev_inputs, out, dev_out, launch, verify);
  }

  std::vector<double> reps(const std::function<double()>& once, bool* truncated) override {
    trace_.mark("prep");
    dev_.timed_region_begin(cell_->op, cell_->dtype);
    try {
      auto times = run_reps(*policy_, once, truncated);
      dev_.timed_region_end();
      trace_.mark("reps");
      // GPUCHECK_TEST_SLOWDOWN: every repetition took this many times as long.
      for (double& t : times) t *= slowdown_;
      return times;
    } catch (...) {
      dev_.timed_region_end();
      throw;
    }
  }

  // Adds one round's record: the context describes the timed region just ended.
  void collect(nlohmann::json r, std::vector<double> times, bool truncated,
               std::optional<Verification> v) override {
    trace_.mark("verify");
    nlohmann::json ctx = dev_.context();
    // What the cell's runner put in the record's context (host_bound_record) stays.
    if (auto own = r.find(k::kContext); own != r.end() && own->is_object())
      for (const auto& [key, value] : own->items())
        if (!ctx.contains(key)) ctx[key] = value;
    if (unit_of(cell_->op).tunes_gemm) {
      if (auto choice = dev_.library_choice(); choice.is_object() && !choice.empty())
        r[k::kChoice] = std::move(choice);
      auto t = tuned_.find(cell_->dtype);
      if (t != tuned_.end() && t->second) {
        ctx[k::kTuning] = t->second->state;
        ctx[k::kTuningParameters] = t->second->parameters;
        if (!t->second->note.empty()) ctx[k::kTuningNote] = t->second->note;
      }
    }
    if (ctx.empty())
      r.erase(k::kContext);
    else
      r[k::kContext] = std::move(ctx);
    auto& records = into_->records;
    if (into_->next == records.size()) records.emplace_back();
    RecordRounds& rr = records[into_->next++];
    rr.record = std::move(r);
    rr.times.push_back(std::move(times));
    rr.truncated = rr.truncated || truncated;
    if (v && (!rr.verification || worse(*v, *rr.verification))) rr.verification = std::move(v);
  }

 private:
  // A record whose timed region moves data through host memory: with siblings running, the
  // region runs under the host lock and the record says so.
  nlohmann::json host_bound_record(const Cell& cell, Transfers transfers) {
    nlohmann::json r = base_record(dev_, cell, transfers);
    if (host_lock_.active()) r[k::kContext][k::kHostTransfersAlone] = true;
    return r;
  }

  // A peak the device names in the context becomes the record's peak_fraction (device time
  // only: transfers are no FLOP). Kept beside the record's `limit` (qualify/limits.h, set by the
  // parent once every child finished): documents and tools written before read peak_fraction,
  // and limit.fraction of a CUDA GEMM is the same figure (SMs × per-SM rate × the mean SM clock,
  // core/flop_rates.h); folding one into the other would break those readers for no new fact.
  static void add_peak_fraction(nlohmann::json& r) {
    auto ctx_it = r.find(k::kContext);
    if (ctx_it != r.end()) {
      nlohmann::json& ctx = *ctx_it;
      const auto thr = r.find(k::kThroughput);
      if (thr != r.end() && (*thr)[k::kUnit] == "TFLOP/s" &&
          r[k::kTransfers] == to_string(Transfers::kExcluded)) {
        const double v = (*thr)[k::kValue];
        if (auto p = ctx.find(k::kPeakTflopsAtMeanSmClock); p != ctx.end() && *p > 0)
          r[k::kPeakFraction] = v / p->get<double>();
        if (auto p = ctx.find(k::kPeakTflopsAtMaxSmClock); p != ctx.end() && *p > 0)
          ctx[k::kPeakFractionAtMaxSmClock] = v / p->get<double>();
      }
    }
  }

  // Times `launch` on the device's clock, brings `out` back and verifies it; then, for
  // accelerators, the same end to end (inputs up, op, result down) on the host clock.
  void measure_op(const Cell& cell, const std::vector<const HostBuffer*>& inputs,
                  std::vector<DeviceTensor>& dev_inputs, HostBuffer& out, DeviceTensor& dev_out,
                  const Launch& launch,
                  const std::function<Verification(const HostBuffer&)>& verify) {
    // Device time: the operation alone.
    {
      trace_.mark("setup");
      nlohmann::json r = base_record(dev_, cell, Transfers::kExcluded);
      poison(out);
      dev_.upload(*dev_out.buf, out.data(), dev_out.bytes);
      dev_.synchronize();
      trace_.mark("poison");
      bool truncated = false;
      auto times = reps([&] { return dev_.time_on_device(launch); }, &truncated);
      dev_.download(out.data(), *dev_out.buf, dev_out.bytes);
      dev_.synchronize();
      trace_.mark("back");
      if (plant_) plant_error(out, *plant_);
      collect(std::move(r), std::move(times), truncated, check(out, verify));
    }
    if (dev_.is_host()) return;
    // End to end: what a program that starts and ends with host data sees.
    nlohmann::json r = host_bound_record(cell, Transfers::kIncluded);
    std::vector<std::unique_ptr<HostAllocation>> pinned_in;
    for (const auto* in : inputs) {
      pinned_in.push_back(pinned_.take(in->size_bytes()));
      std::memcpy(pinned_in.back()->data(), in->data(), in->size_bytes());
    }
    auto pinned_out = pinned_.take(out.size_bytes());
    trace_.mark("pinned");
    poison(out);
    std::memcpy(pinned_out->data(), out.data(), out.size_bytes());
    dev_.upload(*dev_out.buf, out.data(), dev_out.bytes);
    dev_.synchronize();
    trace_.mark("poison");
    bool truncated = false;
    std::vector<double> times;
    {
      auto alone = host_lock_.hold();
      times = reps(
          [&] {
            auto t0 = Clock::now();
            for (std::size_t i = 0; i < inputs.size(); ++i)
              dev_.upload(*dev_inputs[i].buf, pinned_in[i]->data(), dev_inputs[i].bytes);
            launch();
            dev_.download(pinned_out->data(), *dev_out.buf, dev_out.bytes);
            dev_.synchronize();
            return seconds_since(t0);
          },
          &truncated);
    }
    std::memcpy(out.data(), pinned_out->data(), out.size_bytes());
    trace_.mark("back");
    if (plant_) plant_error(out, *plant_);
    collect(std::move(r), std::move(times), truncated, check(out, verify));
  }

  // The float64 check of `out`, or the outcome of an earlier check of the same bits: every round
  // and both records of a cell compute from the same seeded inputs, and a deterministic device
  // returns the same result each time. Checking it again was most of a default run's wall time
  // (a conv Freivalds test is 576 double-double products per output position); a digest of
  // the bytes finds the repeats, and any result that differs by a bit is checked in full.
  Verification check(const HostBuffer& out,
                     const std::function<Verification(const HostBuffer&)>& verify) {
    const std::uint64_t digest = output_digest(out.data(), out.size_bytes());
    for (const auto& [seen, outcome] : into_->checked)
      if (seen == digest) {
        Verification same = outcome;
        if (same.ok) same.detail += " (the same bits as a result of this cell checked before)";
        return same;
      }
    Verification v = verify(out);
    into_->checked.emplace_back(digest, v);
    return v;
  }

  const BenchPlan& plan_;
  Device& dev_;
  const EngineCallbacks& cb_;
  std::optional<PlantedError> plant_;
  const EngineOptions& options_;
  double slowdown_ = 1;
  HostLock host_lock_;
  PinnedPool pinned_;  // before the leases of any round, after them gone
  std::size_t keep_limit_ = 0;
  std::size_t kept_bytes_ = 0;
  const Cell* cell_ = nullptr;
  const RepPolicy* policy_ = nullptr;
  RepPolicy round_policy_;  // the round's policy with the device's least warm-up
  CellRounds* into_ = nullptr;
  std::map<DType, std::optional<GemmTuning>> tuned_;

 public:
  PhaseTrace trace_;  // GPUCHECK_TRACE_FILE: where each round's time went
};

Footprint footprint_of(const Cell& cell, bool host_device) {
  const auto of = unit_of(cell.op).footprint;
  return of ? of(cell, host_device) : Footprint{};
}

// A smaller version of a preset cell; false at the floor.
bool shrink(Cell& cell) {
  const auto smaller = unit_of(cell.op).shrink;
  return smaller && smaller(cell);
}

struct Budget {
  MemoryBudget device;
  std::uint64_t host = 0;
  bool host_device = false;
};

// Why the cell does not fit, or nullopt when it does.
std::optional<std::string> over_budget(const Footprint& f, const Budget& b, std::uint64_t* need,
                                       std::uint64_t* limit) {
  if (b.host_device) {
    std::uint64_t total = checked_add(f.device_total, f.host_total);
    if (total > b.device.max_total) {
      *need = total, *limit = b.device.max_total;
      return fmt::format("needs {} bytes of host memory; the limit is {}", total, b.device.rule);
    }
    return std::nullopt;
  }
  if (f.device_total > b.device.max_total) {
    *need = f.device_total, *limit = b.device.max_total;
    return fmt::format("needs {} bytes of device memory; the limit is {}", f.device_total,
                       b.device.rule);
  }
  if (f.device_largest > b.device.max_allocation) {
    *need = f.device_largest, *limit = b.device.max_allocation;
    return fmt::format("needs a {}-byte buffer; the device's largest allocation is {} bytes",
                       f.device_largest, b.device.max_allocation);
  }
  if (f.host_total > b.host) {
    *need = f.host_total, *limit = b.host;
    return fmt::format("needs {} bytes of host memory; the limit is half of MemAvailable",
                       f.host_total);
  }
  return std::nullopt;
}

}  // namespace

void plant_error(HostBuffer& out, PlantedError kind) {
  if (out.size() == 0) return;
  std::size_t i = out.size() / 2;
  if (kind == PlantedError::kNaN)
    out.set(i, std::numeric_limits<double>::quiet_NaN());
  else
    // Far outside any allowance, so the plant tests what happens to a wrong result, not how
    // small an error verification can see: 2x + 1, the plant before, moved an element by about
    // its own size, which the Freivalds check of a large GEMM (one allowance per row of 512)
    // missed on pocl, so a planted tuning candidate won at 150 TFLOP/s.
    out.set(i, out.get(i) + 1e3 * (1.0 + std::fabs(out.get(i))));
}

std::optional<PlantedError> planted_error_from_env(const char* value) {
  if (value == nullptr) return std::nullopt;
  std::string_view v(value);
  if (v == "wrong") return PlantedError::kWrongValue;
  if (v == "nan") return PlantedError::kNaN;
  return std::nullopt;
}

Footprint footprint(const Cell& cell, bool host_device) {
  return footprint_of(cell, host_device);
}

std::optional<double> planted_slowdown_from_env(const char* value) {
  if (value == nullptr || *value == '\0') return std::nullopt;
  char* end = nullptr;
  const double f = std::strtod(value, &end);
  if (*end != '\0' || !std::isfinite(f) || f < 1) return std::nullopt;
  return f;
}

namespace {

// What becomes of a cell before any round: nullopt to run it, else its only record.
std::optional<nlohmann::json> decide_before_running(Cell& cell, Device& device,
                                                    const Budget& budget) {
  const Transfers t = Transfers::kExcluded;
  const auto refusal = unit_of(cell.op).refusal;
  if (auto why = refusal ? refusal(cell, device)
                         : device.unsupported_reason(cell.op, cell.dtype, Layout::kNchw)) {
    nlohmann::json r = base_record(device, cell, t);
    r[k::kStatus] = "unsupported";
    r[k::kReason] = *why;
    return r;
  }
  try {
    std::uint64_t need = 0, limit = 0;
    auto why = over_budget(footprint(cell, budget.host_device), budget, &need, &limit);
    if (why && !cell.explicit_size) {
      nlohmann::json original = shape_to_json(cell.shape);
      while (why && shrink(cell))
        why = over_budget(footprint(cell, budget.host_device), budget, &need, &limit);
      if (!why) cell.scaled_from = original;
    }
    if (!why) return std::nullopt;
    nlohmann::json r = base_record(device, cell, t);
    r[k::kStatus] = "skipped";
    r[k::kReason] = *why;
    r[k::kBytesNeeded] = need;
    r[k::kBytesLimit] = limit;
    return r;
  } catch (const std::overflow_error& e) {
    nlohmann::json r = base_record(device, cell, t);
    r[k::kStatus] = "skipped";
    r[k::kReason] = fmt::format("the sizes overflow 64-bit byte counts ({})", e.what());
    return r;
  }
}

// The cells of one round: shuffled (seeded: a rerun runs the same order), except the last
// round, which runs in plan order so the finished records stream out in plan order.
std::vector<std::size_t> round_order(std::size_t cells, int round, int rounds, std::uint64_t seed) {
  std::vector<std::size_t> order(cells);
  for (std::size_t i = 0; i < cells; ++i) order[i] = i;
  if (round + 1 == rounds) return order;
  std::mt19937_64 rng(seed ^ (0x9E3779B97F4A7C15ull * static_cast<std::uint64_t>(round + 1)));
  for (std::size_t i = cells; i > 1; --i) std::swap(order[i - 1], order[rng() % i]);
  return order;
}

}  // namespace

void run_plan(const BenchPlan& plan, Device& device, const EngineCallbacks& callbacks,
              const EngineOptions& options) {
  Budget budget;
  budget.device = device.memory_budget();
  budget.host_device = device.is_host();
  auto mem = host::read_memory_facts("/");
  budget.host = mem.available_bytes.value_or(0) / 2;
  CellRunner runner(plan, device, callbacks, options);
  runner.set_keep_limit(budget.host / 4);

  const std::size_t n = plan.cells.size();
  std::vector<Cell> cells = plan.cells;
  std::vector<std::optional<nlohmann::json>> decided(n);  // a record that needs no round
  std::vector<bool> dropped(n, false);  // a default the device cannot run: not asked for
  std::vector<CellRounds> state(n);
  for (std::size_t i = 0; i < n; ++i) {
    decided[i] = decide_before_running(cells[i], device, budget);
    if (decided[i] && (*decided[i])[k::kStatus] == "unsupported" && !cells[i].explicit_request)
      dropped[i] = true;
  }
  // The cell's records as they stand: its decided record, or what its rounds collected.
  auto finish = [&](std::size_t i) {
    runner.drop_inputs(state[i]);
    if (state[i].finished || dropped[i]) return;
    if (decided[i]) {
      callbacks.record(i, *decided[i]);
      state[i].finished = true;
    } else if (state[i].rounds_run > 0) {
      runner.emit_all(i, cells[i], state[i]);
    }
  };
  const int rounds = effective_rounds(plan.policy);
  // A cell starts once a round; one decided before running starts once, in the last round.
  std::size_t units = 0;
  for (std::size_t i = 0; i < n; ++i)
    units += dropped[i] ? 0 : decided[i] ? 1 : static_cast<std::size_t>(rounds);
  if (callbacks.planned) {
    std::vector<bool> runs(n);
    for (std::size_t i = 0; i < n; ++i) runs[i] = !dropped[i];
    callbacks.planned(units, runs);
  }
  std::size_t ordinal = 0;
  for (int round = 0; round < rounds; ++round) {
    const bool last = round + 1 == rounds;
    const RepPolicy policy = round_policy(plan.policy, round);
    for (std::size_t i : round_order(n, round, rounds, plan.seed)) {
      if (dropped[i] || state[i].finished) continue;
      if (decided[i] || (round > 0 && state[i].seconds > plan.policy.max_time_s)) {
        // No round for it (any more): --max-time is spent, and the record says truncated.
        for (auto& rr : state[i].records) rr.truncated = rr.truncated || !decided[i];
        if (last) {
          if (callbacks.cell_started) callbacks.cell_started(i, ++ordinal, cells[i], round, rounds);
          finish(i);
        }
        continue;
      }
      if (callbacks.cell_started) callbacks.cell_started(i, ++ordinal, cells[i], round, rounds);
      const Cell& cell = cells[i];
      const auto t0 = Clock::now();
      if (runner.trace_.on())
        runner.trace_.start(fmt::format("device={} cell=\"{}\" round={}/{}",
                                        device.identity().device, describe(cell), round + 1,
                                        rounds));
      try {
        if (unit_of(cell.op).tunes_gemm) runner.tune_gemm_once(cell.dtype);
        runner.trace_.mark("tune");
        runner.run_round(cell, policy, state[i]);
        runner.trace_.finish();
        state[i].rounds_run++;
        state[i].seconds += seconds_since(t0);
        if (last) finish(i);
      } catch (const DeviceLostError& e) {
        nlohmann::json r = base_record(device, cell, Transfers::kExcluded);
        r[k::kStatus] = "failed";
        r[k::kReason] = std::string(e.what()) + " (the device is unusable: its child ends here)";
        decided[i] = std::move(r);
        // What the other cells measured before the device was lost is kept.
        for (std::size_t j = 0; j < n; ++j) finish(j);
        throw;
      } catch (const std::exception& e) {
        // The per-cell catch boundary: the run goes on with the next cell.
        nlohmann::json r = base_record(device, cell, Transfers::kExcluded);
        r[k::kStatus] = "failed";
        r[k::kReason] = e.what();
        decided[i] = std::move(r);
        state[i].records.clear();
        if (last) finish(i);
      }
    }
  }
}

}  // namespace gpucheck::bench

// Group cells: scheduled into batches of pairs that share no GPU → buffers kept for the run →
// timed batches → results back → exact verification → records.
#include "bench/group_engine.h"

#include "bench/inputs.h"
#include "bench/ops/allreduce.h"
#include "bench/ops/op_unit.h"
#include "bench/ops/peer_copies.h"
#include "bench/record.h"
#include "bench/verify.h"
#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "core/pair_schedule.h"
#include "core/parallel_ranges.h"
#include "host/memory_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <string_view>

namespace gpucheck::bench {

namespace k = keys;

namespace {

// Seed streams of the group's patterns (inputs.h holds the one-device ones, 1…5): each source
// device sends its own pattern, so bytes from the wrong source cannot pass.
constexpr std::uint64_t kStreamP2pSource = 11;    // + the source's place in the group (< 9)
constexpr std::uint64_t kStreamAllreduce = 1000;  // + the rank

// Poison of receiving buffers: 0xA5 bytes for copies; 0xFF for all-reduce (an f32 NaN, which
// equals nothing, so an element never written cannot pass).
constexpr unsigned char kCopyPoison = 0xA5;
constexpr unsigned char kAllreducePoison = 0xFF;

// Said after the error of a device that is lost: no later cell can run in this child.
constexpr std::string_view kDeviceLostNote = " (a device is unusable: the group's child ends here)";

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// A collective cell (all-reduce) is set up once and runs over every device of the group after
// the copies; the others (p2p, and latency of mode p2p) are peer copies between pairs.
bool collective(const Cell& c) {
  const auto& g = unit_of(c.op).group;
  return g && g->collective;
}

// A device buffer kept across cells, grown when a cell needs more.
struct Kept {
  std::unique_ptr<DeviceBuffer> buffer;
  std::size_t bytes = 0;
};

// Where a batch's time went, for -v.
struct Split {
  double setup = 0, timed = 0, verify = 0;
  void add(const Split& o) {
    setup += o.setup;
    timed += o.timed;
    verify += o.verify;
  }
};

std::invalid_argument not_in_group(const std::string& device) {
  return std::invalid_argument(fmt::format("bench plan: '{}' is not in the group", device));
}

std::size_t index_of(const PeerGroup& g, const std::string& device) {
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.identity(i).device == device) return i;
  throw not_in_group(device);
}

// A copy cell as its unit describes it over the group's device names; nullopt for the others.
std::optional<PeerCopies> peer_copies_of(const Cell& c, const std::vector<std::string>& group) {
  const auto describe = unit_of(c.op).peer_copies;
  if (describe == nullptr) return std::nullopt;
  return describe(c, group);
}

// A cell that cannot run here: why, and whether the memory rule (rather than the device) says so.
struct Refusal {
  std::string status;  // "unsupported" | "skipped"
  std::string reason;
  std::uint64_t needed = 0, limit = 0;
};

class GroupRunner {
 public:
  GroupRunner(const BenchPlan& plan, PeerGroup& group, const EngineCallbacks& cb,
              std::optional<PlantedError> plant)
      : plan_(plan), group_(group), cb_(cb), plant_(plant) {
    for (std::size_t i = 0; i < group_.size(); ++i) names_.push_back(group_.identity(i).device);
    host_limit_ = host::read_memory_facts("/").available_bytes.value_or(0) / 2;
    if (std::any_of(plan.cells.begin(), plan.cells.end(), collective))
      setup_refusal_ = group_.setup_allreduce(plan.collective);
  }

  // Each cell's record, once: a batch that fails part way gives the rest "failed".
  void record(std::size_t index, const nlohmann::json& r) {
    if (recorded_.insert(index).second) cb_.record(index, r);
  }
  bool recorded(std::size_t index) const { return recorded_.contains(index); }

  const Split& total() const { return total_; }

  // The cells of one batch (see group_batches), all copies or latency of one kind: those that
  // can run are timed together and each verified and recorded.
  void run_copy_batch(const std::vector<std::size_t>& batch) {
    const auto t0 = Clock::now();
    auto cells = runnable(batch);
    if (!cells.empty()) run_copies(cells, t0);
  }

  // Every all-reduce cell of the plan: inputs made and uploaded once for the largest, then each
  // size timed and verified in turn.
  void run_allreduces(const std::vector<std::size_t>& indices) {
    const auto t0 = Clock::now();
    release_copy_buffers();  // the all-reduce's buffers are larger: give the copies' back
    auto cells = runnable(indices);
    if (!cells.empty()) run_allreduce_cells(cells, t0);
  }

  // The cells that can run (sizes scaled to the memory rule); the others' records say why.
  std::vector<std::pair<std::size_t, Cell>> runnable(const std::vector<std::size_t>& indices) {
    std::vector<std::pair<std::size_t, Cell>> cells;
    for (std::size_t i : indices) {
      Cell cell = plan_.cells[i];
      if (auto refusal = refuse(cell))
        record(i, refused(cell, *refusal));
      else
        cells.emplace_back(i, std::move(cell));
    }
    return cells;
  }

  // The record's identity part: the source device (all-reduce: the first), and the destination.
  nlohmann::json base(const Cell& cell) const {
    std::string first, second;
    bool sm = false;
    if (const auto copies = peer_copies_of(cell, names_)) {
      first = copies->first, second = copies->second;
      sm = copies->sm;
    } else if (const auto* a = std::get_if<AllreduceShape>(&cell.shape); a && !a->devices.empty()) {
      first = a->devices.front();
    }
    // A plan naming a device outside the group still gets a record (its failure names it).
    auto identity = [&](const std::string& name) {
      for (std::size_t i = 0; i < group_.size(); ++i)
        if (group_.identity(i).device == name) return group_.identity(i);
      return DeviceIdentity{name, group_ops_backend(), name, "", ""};
    };
    const DeviceIdentity a = identity(first);
    nlohmann::json r = {
        {k::kDevice, a.device},
        {k::kDeviceName, a.device_name},
        {k::kBackend, a.backend},
        {k::kOp, to_string(cell.op)},
        {k::kImpl, collective(cell) ? group_.allreduce_impl() : group_.copy_impl(sm)},
        {k::kShape, shape_to_json(cell.shape)},
        {k::kTransfers, to_string(Transfers::kExcluded)}};
    if (!a.device_uuid.empty()) r[k::kDeviceUuid] = a.device_uuid;
    if (!a.pci_bus_id.empty()) r[k::kPciBusId] = a.pci_bus_id;
    if (!second.empty()) {
      const DeviceIdentity b = identity(second);
      if (!b.device_uuid.empty()) r[k::kDstUuid] = b.device_uuid;
      if (!b.pci_bus_id.empty()) r[k::kDstPciBusId] = b.pci_bus_id;
    }
    // A group op of a dtype sums in it: its compute type is its dtype.
    if (unit_of(cell.op).has_dtype) {
      r[k::kDtype] = to_string(cell.dtype);
      r[k::kComputeType] = to_string(cell.dtype);
    }
    if (cell.scaled_from) r[k::kScaledFrom] = *cell.scaled_from;
    return r;
  }

 private:
  nlohmann::json refused(const Cell& cell, const Refusal& refusal) const {
    nlohmann::json r = base(cell);
    r[k::kStatus] = refusal.status;
    r[k::kReason] = refusal.reason;
    if (refusal.status == "skipped" && refusal.needed > 0) {
      r[k::kBytesNeeded] = refusal.needed;
      r[k::kBytesLimit] = refusal.limit;
    }
    return r;
  }

  // A copy cell's description, which it must have to run: every device it names in the group.
  PeerCopies copies_of(const Cell& c) const {
    auto copies = peer_copies_of(c, names_);
    if (!copies)
      throw std::invalid_argument(
          fmt::format("bench plan: {} runs no copies between devices", to_string(c.op)));
    if (copies->absent) throw not_in_group(*copies->absent);
    return std::move(*copies);
  }

  std::vector<std::size_t> allreduce_devices(const Cell& c) const {
    std::vector<std::size_t> out;
    for (const auto& d : std::get<AllreduceShape>(c.shape).devices)
      out.push_back(index_of(group_, d));
    return out;
  }

  // Why the cell cannot run, or nullopt; a preset size too large is halved until it fits (and
  // the cell says scaled_from), an explicit one is skipped.
  std::optional<Refusal> refuse(Cell& cell) {
    std::vector<std::size_t> devs;
    if (collective(cell)) {
      devs = allreduce_devices(cell);
      if (setup_refusal_) return Refusal{"unsupported", *setup_refusal_};
      if (auto why = group_.allreduce_unavailable()) return Refusal{"unsupported", *why};
      if (ranks() < 2) return Refusal{"unsupported", "all-reduce needs at least two devices"};
      if (devs.size() != group_.size())
        return Refusal{"unsupported", "an all-reduce runs over every device of the group"};
      if (std::get<AllreduceShape>(cell.shape).bytes % 4 != 0)
        return Refusal{"unsupported", "an f32 all-reduce moves whole 4-byte elements"};
    } else {
      const PeerCopies copies = copies_of(cell);
      if (copies.refusal) return Refusal{"unsupported", *copies.refusal};
      if (copies.peer_access)
        for (const auto& [a, b] : copies.copies)
          if (auto why = group_.peer_access_unavailable(a, b)) return Refusal{"unsupported", *why};
      devs = copies.devices;
    }
    const nlohmann::json original = shape_to_json(cell.shape);
    bool scaled = false;
    while (true) {
      // The unit's footprint of a group cell: device_total on each device it uses.
      const Footprint f = unit_of(cell.op).footprint(cell, false);
      const struct { std::uint64_t per_device, host; } need{f.device_total, f.host_total};
      std::optional<Refusal> over;
      for (std::size_t d : devs) {
        const MemoryBudget b = group_.memory_budget(d);
        if (need.per_device > b.max_total)
          over = Refusal{"skipped",
                         fmt::format("needs {} bytes of device memory on {}; the limit is {}",
                                     need.per_device, group_.identity(d).device, b.rule),
                         need.per_device, b.max_total};
      }
      if (!over && need.host > host_limit_)
        over = Refusal{"skipped",
                       fmt::format("needs {} bytes of host memory; the limit is half of "
                                   "MemAvailable",
                                   need.host),
                       need.host, host_limit_};
      if (!over) break;
      const auto smaller = unit_of(cell.op).shrink;
      if (cell.explicit_size || !smaller || !smaller(cell)) return over;
      scaled = true;
    }
    if (scaled) cell.scaled_from = original;
    return std::nullopt;
  }

  void plant_into(void* data, std::size_t bytes) const {
    if (!plant_ || bytes == 0) return;
    auto* b = static_cast<unsigned char*>(data);
    b[bytes / 2] ^= 0x5A;  // the copy is checked byte for byte: one flipped byte must show
  }

  void emit(std::size_t index, nlohmann::json& r, nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json ctx = group_.context();
    for (auto& [key, v] : extra.items()) ctx[key] = v;
    if (!ctx.empty()) r[k::kContext] = ctx;
    record(index, r);
  }

  void log(const std::string& message) const {
    if (cb_.tuning_log) cb_.tuning_log(TuningLog::kInfo, message);
  }

  RepPolicy group_policy() const {
    RepPolicy p = plan_.policy;
    p.rounds = 1;  // a group's cells run once each: rounds are a one-device engine's
    return p;
  }

  // ---- buffers kept across cells: each source's pattern, each (receiver, source) landing place.

  // The seeded pattern device `from` sends (its first bytes, whatever the cell's size: the
  // generator is counter-based, so a longer pattern starts with the shorter one).
  const HostBuffer& pattern(std::size_t from, std::size_t bytes) {
    HostBuffer& p = patterns_[from];
    if (p.size_bytes() < bytes) {
      HostBuffer grown(DType::kF32, (bytes + 3) / 4);
      fill_uniform(grown, -1.0, 1.0, plan_.seed, kStreamP2pSource + from);
      p = std::move(grown);
    }
    return p;
  }
  // The source buffer on device `from`, holding its pattern's first `bytes`.
  const DeviceBuffer& source(std::size_t from, std::size_t bytes) {
    Kept& kept = sources_[from];
    if (kept.bytes < bytes) {
      kept.buffer.reset();
      kept.buffer = group_.allocate(from, bytes);
      kept.bytes = bytes;
      group_.upload(from, *kept.buffer, pattern(from, bytes).data(), bytes);
    }
    return *kept.buffer;
  }
  // Where device `to` receives from `from`, its first `bytes` poisoned.
  DeviceBuffer& landing(std::size_t to, std::size_t from, std::size_t bytes) {
    Kept& kept = landings_[{to, from}];
    if (kept.bytes < bytes) {
      kept.buffer.reset();
      kept.buffer = group_.allocate(to, bytes);
      kept.bytes = bytes;
    }
    group_.fill(to, *kept.buffer, kCopyPoison, bytes);
    return *kept.buffer;
  }
  void release_copy_buffers() {
    sources_.clear();
    landings_.clear();
    patterns_.clear();
    readback_ = HostBuffer();
  }
  // The bytes device `to` received from `from` against what `from` sent, read back into one host
  // buffer kept for the run: a fresh one per check (zeroed, then faulted in by the download)
  // made verification 85 % of a 4-GPU run.
  Verification check(std::size_t to, std::size_t from, std::size_t bytes) {
    if (readback_.size_bytes() < bytes) {
      readback_ = HostBuffer();
      readback_ = HostBuffer(DType::kF32, (bytes + 3) / 4);
    }
    auto* back = static_cast<unsigned char*>(readback_.data());
    group_.download(to, back, *landings_.at({to, from}).buffer, bytes);
    plant_into(back, bytes);
    const std::string& a = group_.identity(from).device;
    const std::string& b = group_.identity(to).device;
    return verify_exact(pattern(from, bytes).data(), back, bytes,
                        fmt::format("bytes received by {} differ from {}'s", b, a));
  }

  static void note_spin(nlohmann::json& extra, bool timed_out) {
    if (timed_out)
      extra["spin_timed_out"] =
          "a spin kernel gave up waiting for the host (an enqueue blocked): launch overhead is "
          "part of these times";
  }

  // ---- copies: one batch of p2p or latency cells, their pairs sharing no GPU.

  // One cell's part of a batch: its copies, from `first` on in the batch's list.
  struct Part {
    std::size_t index = 0;
    Cell cell;
    PeerCopies plan;
    std::size_t first = 0;
    std::vector<std::vector<double>> per_direction;  // summed rate: each copy's seconds
    std::size_t count() const { return plan.copies.size(); }
  };

  void run_copies(std::vector<std::pair<std::size_t, Cell>>& cells, Clock::time_point t0) {
    std::vector<PeerCopy> copies;
    std::vector<Part> parts;
    bool peer_path = true;
    for (auto& [index, cell] : cells) {
      Part part{index, cell, copies_of(cell), copies.size(), {}};
      const PeerCopies& p = part.plan;
      peer_path = p.peer_access;
      // The source pushes (issues the copy), as torch's dst.copy_(src) does.
      for (const auto& [src, dst] : p.copies) {
        group_.set_peer_access(src, dst, p.peer_access);
        copies.push_back({src, dst, src, &source(src, p.bytes), &landing(dst, src, p.bytes),
                          p.bytes, static_cast<std::size_t>(p.pieces), p.sm});
      }
      part.per_direction.resize(part.count());
      parts.push_back(std::move(part));
    }
    const bool summed = parts.front().plan.summed_rate;  // a batch's cells are of one kind
    // A copy cut into pieces repeats within itself. Copies staged through the host are each 10×
    // slower than over a peer path: a few a repetition time them as well as sixteen time a peer
    // copy.
    const int repeats = !summed ? 1 : peer_path ? kPeerCopiesPerRep : kStagedCopiesPerRep;
    Split split;
    split.setup = since(t0);
    const auto t1 = Clock::now();
    bool spin_timed_out = false, truncated = false, stable = false;
    auto samples = run_reps_multi(
        group_policy(), parts.size(),
        [&] {
          CopyTiming t = group_.timed_copies(copies, repeats);
          spin_timed_out = spin_timed_out || t.spin_timed_out;
          std::vector<double> out;
          for (auto& part : parts) {
            if (!part.plan.summed_rate) {
              out.push_back(t.seconds[part.first] / part.plan.pieces);
              continue;
            }
            const auto bytes = static_cast<double>(part.plan.bytes);
            double rate = 0;  // bytes per second, summed over the directions
            for (std::size_t d = 0; d < part.count(); ++d) {
              part.per_direction[d].push_back(t.seconds[part.first + d]);
              rate += bytes / t.seconds[part.first + d];
            }
            // The time that moves the cell's work at the summed rate (uni: the copy's own time).
            out.push_back(bytes * static_cast<double>(part.count()) / rate);
          }
          return out;
        },
        &truncated, &stable);
    split.timed = since(t1);
    const auto t2 = Clock::now();
    std::vector<Verification> verdicts;
    for (const auto& part : parts) {
      Verification v;
      for (std::size_t d = 0; d < part.count() && (d == 0 || v.ok); ++d) {
        const PeerCopy& c = copies[part.first + d];
        v = check(c.dst_device, c.src_device, c.bytes);
      }
      verdicts.push_back(v);
    }
    split.verify = since(t2);
    total_.add(split);
    std::string pairs;
    for (std::size_t p = 0; p < parts.size(); ++p) {
      Part& part = parts[p];
      nlohmann::json r = base(part.cell);
      nlohmann::json extra = {{"copies_per_repetition", repeats * part.plan.pieces},
                              {"concurrent_pairs", parts.size()}};
      if (summed) {
        nlohmann::json gbps = nlohmann::json::array();
        const auto bytes = static_cast<double>(part.plan.bytes);
        for (auto& d : part.per_direction) {
          std::sort(d.begin(), d.end());
          gbps.push_back(bytes / d[d.size() / 2] / 1e9);
        }
        extra[k::kDirectionGbps] = gbps;  // median of each direction: src→dst, then dst→src
        if (part.plan.fan) {
          nlohmann::json names = nlohmann::json::array();  // a fan's copies, in that order
          for (const auto& [src, dst] : part.plan.copies)
            names.push_back(names_[src] + "->" + names_[dst]);
          extra["direction_copies"] = names;
        }
      }
      note_spin(extra, spin_timed_out);
      finish_record(r, part.cell, samples[p], truncated, verdicts[p]);
      emit(part.index, r, extra);
      pairs += fmt::format("{}{}", p == 0 ? "" : ", ", part.plan.label);
    }
    log(
        fmt::format("{} ({}): set-up {:.3f} s, timed {:.3f} s ({} repetitions{}), verification "
                    "{:.3f} s",
                    describe(parts.front().cell), pairs, split.setup, split.timed,
                    samples.front().size(), stable ? ", median stable" : "", split.verify));
  }

  // ---- all-reduce.

  // Integer-valued f32 inputs in [−1024, 1024]: every partial sum of up to 2^14 of them is exact
  // in f32 whatever order NCCL adds in, so the result is checked for exact equality.
  HostBuffer allreduce_input(std::size_t count, std::size_t rank) const {
    HostBuffer x(DType::kF32, count);
    fill_uniform(x, -1024.0, 1024.0, plan_.seed, kStreamAllreduce + rank);
    float* p = x.as<float>();
    parallel_ranges(count, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end; ++i) p[i] = std::round(p[i]);
    });
    return x;
  }

  // The all-reduce's ranks: this group's devices, or every rank of the processes it spans.
  std::size_t ranks() const {
    return plan_.collective.span ? static_cast<std::size_t>(plan_.collective.span->ranks)
                                 : group_.size();
  }
  std::size_t first_rank() const {
    return plan_.collective.span ? static_cast<std::size_t>(plan_.collective.span->first_rank) : 0;
  }

  // The first element where got differs from expected (n when none), over the host's threads.
  static std::size_t first_difference(const float* got, const float* expected, std::size_t n) {
    if (std::memcmp(got, expected, n * sizeof(float)) == 0) return n;
    std::atomic<std::size_t> first{n};
    parallel_ranges(n, [&](std::size_t begin, std::size_t end) {
      for (std::size_t i = begin; i < end && i < first.load(); ++i)
        if (!(got[i] == expected[i])) {
          std::size_t seen = first.load();
          while (i < seen && !first.compare_exchange_weak(seen, i)) {
          }
          return;
        }
    });
    return first.load();
  }

  void run_allreduce_cells(std::vector<std::pair<std::size_t, Cell>>& cells, Clock::time_point t0) {
    const auto devs = allreduce_devices(cells.front().second);
    std::size_t max_bytes = 0;
    for (const auto& [index, cell] : cells) {
      if (allreduce_devices(cell) != devs)
        throw std::logic_error("the all-reduce cells of a plan run over one device order");
      max_bytes = std::max<std::size_t>(max_bytes, std::get<AllreduceShape>(cell.shape).bytes);
    }
    const std::size_t max_count = max_bytes / 4;
    // Every rank's input is the seed's, so each process knows the whole sum, its own ranks' and
    // those of the processes it cannot see. Made once at the largest size: a smaller cell's
    // inputs and sum are its first elements.
    HostBuffer expected(DType::kF32, max_count);
    std::memset(expected.data(), 0, expected.size_bytes());
    std::vector<std::unique_ptr<DeviceBuffer>> send, recv;
    for (std::size_t rank = 0; rank < ranks(); ++rank) {
      HostBuffer x = allreduce_input(max_count, rank);
      float* e = expected.as<float>();
      const float* xp = x.as<float>();
      parallel_ranges(max_count, [&](std::size_t begin, std::size_t end) {
        for (std::size_t i = begin; i < end; ++i) e[i] += xp[i];
      });
      if (rank < first_rank() || rank >= first_rank() + devs.size()) continue;
      const std::size_t d = devs[rank - first_rank()];
      send.push_back(group_.allocate(d, max_bytes));
      recv.push_back(group_.allocate(d, max_bytes));
      group_.upload(d, *send.back(), x.data(), max_bytes);
    }
    std::vector<const DeviceBuffer*> send_ptrs;
    std::vector<DeviceBuffer*> recv_ptrs;
    for (std::size_t r = 0; r < send.size(); ++r) {
      send_ptrs.push_back(send[r].get());
      recv_ptrs.push_back(recv[r].get());
    }
    Split first;
    first.setup = since(t0);
    total_.add(first);
    HostBuffer got(DType::kF32, max_count);
    for (auto& [index, cell] : cells) {
      try {
        run_allreduce(index, cell, devs, send_ptrs, recv_ptrs, expected, got);
      } catch (const DeviceLostError& e) {
        record(index, failed_record(cell, std::string(e.what()) + std::string(kDeviceLostNote)));
        throw;
      } catch (const std::exception& e) {
        record(index, failed_record(cell, e.what()));
      }
    }
  }

  void run_allreduce(std::size_t index, const Cell& cell, const std::vector<std::size_t>& devs,
                     const std::vector<const DeviceBuffer*>& send_ptrs,
                     const std::vector<DeviceBuffer*>& recv_ptrs, const HostBuffer& expected,
                     HostBuffer& got) {
    const auto& s = std::get<AllreduceShape>(cell.shape);
    const std::size_t count = s.bytes / 4;
    nlohmann::json r = base(cell);
    Split split;
    const auto t0 = Clock::now();
    for (std::size_t rank = 0; rank < devs.size(); ++rank)
      group_.fill(devs[rank], *recv_ptrs[rank], kAllreducePoison, s.bytes);
    split.setup = since(t0);
    const auto t1 = Clock::now();
    bool truncated = false, stable = false;
    auto times = run_reps_multi(
                     group_policy(), 1,
                     [&] {
                       return std::vector<double>{group_.timed_allreduce_f32(
                           send_ptrs, recv_ptrs, count, kAllreducesPerRep)};
                     },
                     &truncated, &stable)
                     .front();
    split.timed = since(t1);
    const auto t2 = Clock::now();
    // Every device's result, element by element: exactly the sum.
    Verification v;
    v.ok = true;
    v.method = "exact";
    v.tolerance = 0;
    for (std::size_t rank = 0; rank < devs.size() && v.ok; ++rank) {
      group_.download(devs[rank], got.data(), *recv_ptrs[rank], s.bytes);
      if (rank == 0) plant_into(got.data(), s.bytes);
      const float* g = got.as<float>();
      const float* e = expected.as<float>();
      if (const std::size_t i = first_difference(g, e, count); i < count) {
        v.ok = false;
        v.max_rel_error = std::numeric_limits<double>::infinity();
        v.first_bad_index = i;
        v.detail = fmt::format("{}'s sum at element {} is {}, expected {}",
                               group_.identity(devs[rank]).device, i, g[i], e[i]);
      }
    }
    split.verify = since(t2);
    total_.add(split);
    finish_record(r, cell, times, truncated, v);
    if (r.contains(k::kTimeS)) {
      const double median = r[std::string(k::kTimeS)][std::string(k::kMedian)].get<double>();
      if (median > 0) {
        const double algbw = static_cast<double>(s.bytes) / median / 1e9;
        r[k::kAlgbw] = algbw;
        r[k::kBusbw] = algbw * allreduce_bus_factor(ranks());
      }
    }
    emit(index, r, {{"allreduces_per_repetition", kAllreducesPerRep}});
    log(fmt::format("{}: set-up {:.3f} s, timed {:.3f} s ({} repetitions{}), verification {:.3f} s",
                    describe(cell), split.setup, split.timed, times.size(),
                    stable ? ", median stable" : "", split.verify));
  }

 public:
  nlohmann::json failed_record(const Cell& cell, const std::string& why) const {
    nlohmann::json r = base(cell);
    r[k::kStatus] = "failed";
    r[k::kReason] = why;
    return r;
  }

 private:
  const BenchPlan& plan_;
  PeerGroup& group_;
  std::vector<std::string> names_;  // the group's devices, in group order
  const EngineCallbacks& cb_;
  std::optional<PlantedError> plant_;
  std::uint64_t host_limit_ = 0;
  std::optional<std::string> setup_refusal_;  // why the plan's all-reduce setup cannot be
  std::set<std::size_t> recorded_;            // cells whose record has gone out
  std::map<std::size_t, HostBuffer> patterns_;
  HostBuffer readback_;  // where received bytes come back to be checked
  std::map<std::size_t, Kept> sources_;
  std::map<std::pair<std::size_t, std::size_t>, Kept> landings_;  // (receiver, source)
  Split total_;
};

}  // namespace

std::vector<std::vector<std::size_t>> group_batches(const BenchPlan& plan) {
  const std::size_t n = plan.group.size();
  // The round of each pair in the tournament: ordered pairs for one-way copies, unordered for
  // both ways at once.
  std::map<DevicePair, std::size_t> one_way, both_ways;
  const auto directed = directed_pair_rounds(n);
  for (std::size_t r = 0; r < directed.size(); ++r)
    for (const auto& p : directed[r]) one_way[p] = r;
  const auto undirected = disjoint_pair_rounds(n);
  for (std::size_t r = 0; r < undirected.size(); ++r)
    for (const auto& p : undirected[r]) both_ways[p] = r;

  struct Batch {
    int phase = 0;  // 0: over peer paths, 1: staged through the host, 2: all-reduce
    std::vector<std::size_t> cells;
    std::set<std::size_t> devices;
  };
  std::vector<Batch> batches;
  std::map<std::string, std::size_t> open;  // a kind and round's batch still taking cells
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    const Cell& c = plan.cells[i];
    int phase = 2;
    std::optional<std::string> slot;
    std::set<std::size_t> devices;
    if (const auto copies = peer_copies_of(c, plan.group)) {
      phase = copies->peer_access ? 0 : 1;
      // A fan uses every device at once: a batch of its own; so does a copy the runner refuses
      // for its devices.
      if (!copies->fan && !copies->copies.empty() &&
          copies->copies[0].first != copies->copies[0].second) {
        const auto [s, d] = copies->copies.front();
        devices = {s, d};
        const bool both = std::find(copies->copies.begin(), copies->copies.end(),
                                    DevicePair{d, s}) != copies->copies.end();
        const std::size_t round =
            both ? both_ways.at({std::min(s, d), std::max(s, d)}) : one_way.at({s, d});
        // Copies staged through the host share its PCIe root and memory whatever the pair: only
        // copies over peer paths run together.
        if (!plan.serial && copies->peer_access)
          slot = fmt::format("{} {} {} {} {} round {}", to_string(c.op), copies->bytes,
                             copies->pieces, copies->copies.size(), copies->sm, round);
      }
    }
    if (slot) {
      auto it = open.find(*slot);
      // The same pair twice (a size named twice) cannot share a batch: a new one.
      if (it != open.end() && std::none_of(devices.begin(), devices.end(), [&](std::size_t d) {
            return batches[it->second].devices.contains(d);
          })) {
        batches[it->second].cells.push_back(i);
        batches[it->second].devices.insert(devices.begin(), devices.end());
        continue;
      }
    }
    batches.push_back({phase, {i}, devices});
    if (slot) open[*slot] = batches.size() - 1;
  }
  // Peer access changes once per pair: every batch over peer paths, then the staged ones; the
  // all-reduce last (NCCL sets up its own peer access).
  std::stable_sort(batches.begin(), batches.end(),
                   [](const Batch& a, const Batch& b) { return a.phase < b.phase; });
  std::vector<std::vector<std::size_t>> out;
  for (auto& b : batches) out.push_back(std::move(b.cells));
  return out;
}

void run_group_plan(const BenchPlan& plan, PeerGroup& group, const EngineCallbacks& callbacks,
                    std::optional<PlantedError> plant) {
  const auto t0 = Clock::now();
  GroupRunner runner(plan, group, callbacks, plant);
  // Every cell runs or records why.
  if (callbacks.planned)
    callbacks.planned(plan.cells.size(), std::vector<bool>(plan.cells.size(), true));
  std::size_t ordinal = 0;
  auto started = [&](const std::vector<std::size_t>& cells) {
    if (callbacks.cell_started)
      for (std::size_t i : cells) callbacks.cell_started(i, ++ordinal, plan.cells[i], 0, 1);
  };
  // Runs a batch; when it fails, each of its cells without a record gets the failure (the
  // per-batch catch boundary: the next batch runs), and a lost device ends the run.
  auto guarded = [&](const std::vector<std::size_t>& cells, const auto& body) {
    auto fail_rest = [&](const std::string& why) {
      for (std::size_t i : cells)
        if (!runner.recorded(i)) runner.record(i, runner.failed_record(plan.cells[i], why));
    };
    started(cells);
    try {
      body();
    } catch (const DeviceLostError& e) {
      fail_rest(std::string(e.what()) + std::string(kDeviceLostNote));
      throw;
    } catch (const std::exception& e) {
      fail_rest(e.what());
    }
  };
  std::vector<std::size_t> allreduces;
  for (const auto& batch : group_batches(plan)) {
    if (collective(plan.cells[batch.front()]))
      allreduces.insert(allreduces.end(), batch.begin(), batch.end());
    else
      guarded(batch, [&] { runner.run_copy_batch(batch); });
  }
  if (!allreduces.empty()) guarded(allreduces, [&] { runner.run_allreduces(allreduces); });
  if (callbacks.tuning_log) {
    const Split& s = runner.total();
    callbacks.tuning_log(
        TuningLog::kInfo,
        fmt::format("group of {} devices: {:.2f} s in all; set-up {:.2f} s, timed {:.2f} s, "
                    "verification {:.2f} s",
                    group.size(), since(t0), s.setup, s.timed, s.verify));
  }
}

}  // namespace gpucheck::bench

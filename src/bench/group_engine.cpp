// Group cells: inputs → devices → timed batches → results back → exact verification → records.
#include "bench/group_engine.h"

#include "bench/inputs.h"
#include "bench/record.h"
#include "bench/verify.h"
#include "core/errors.h"
#include "core/json_keys.h"
#include "probe/memory_info.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpucheck::bench {

namespace k = keys;

namespace {

// Seed streams of the group's patterns (inputs.h holds the one-device ones, 1…5).
constexpr std::uint64_t kStreamP2pForward = 11;
constexpr std::uint64_t kStreamP2pReverse = 12;
constexpr std::uint64_t kStreamAllreduce = 20;  // + the device's place in the group

std::size_t index_of(const PeerGroup& g, const std::string& device) {
  for (std::size_t i = 0; i < g.size(); ++i)
    if (g.identity(i).device == device) return i;
  throw std::invalid_argument(fmt::format("bench plan: '{}' is not in the group", device));
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
    host_limit_ = probe::read_memory_facts("/").available_bytes.value_or(0) / 2;
    const bool any_allreduce = std::any_of(plan.cells.begin(), plan.cells.end(),
                                           [](const Cell& c) { return c.op == Op::kAllreduce; });
    if (any_allreduce) setup_refusal_ = group_.setup_allreduce(plan.allreduce);
  }

  void run(std::size_t index, Cell cell) {
    index_ = index;
    if (auto refusal = refuse(cell)) {
      nlohmann::json r = base(cell);
      r[k::kStatus] = refusal->status;
      r[k::kReason] = refusal->reason;
      if (refusal->status == "skipped" && refusal->needed > 0) {
        r[k::kBytesNeeded] = refusal->needed;
        r[k::kBytesLimit] = refusal->limit;
      }
      cb_.record(index_, r);
      return;
    }
    if (cell.op == Op::kAllreduce)
      run_allreduce(cell);
    else if (cell.op == Op::kP2p)
      run_p2p(cell);
    else
      run_latency(cell);
  }

  // The record's identity part: the source device (all-reduce: the first), and the destination.
  nlohmann::json base(const Cell& cell) const {
    std::string first, second;
    std::visit(
        [&](const auto& s) {
          using T = std::decay_t<decltype(s)>;
          if constexpr (std::is_same_v<T, P2pShape> || std::is_same_v<T, LatencyShape>) {
            first = s.src, second = s.dst;
          } else if constexpr (std::is_same_v<T, AllreduceShape>) {
            if (!s.devices.empty()) first = s.devices.front();
          }
        },
        cell.shape);
    // A plan naming a device outside the group still gets a record (its failure names it).
    auto identity = [&](const std::string& name) {
      for (std::size_t i = 0; i < group_.size(); ++i)
        if (group_.identity(i).device == name) return group_.identity(i);
      return DeviceIdentity{name, "cuda", name, "", ""};
    };
    const DeviceIdentity a = identity(first);
    nlohmann::json r = {{k::kDevice, a.device},
                        {k::kDeviceName, a.device_name},
                        {k::kBackend, a.backend},
                        {k::kOp, to_string(cell.op)},
                        {k::kImpl, cell.op == Op::kAllreduce ? group_.allreduce_impl()
                                                             : group_.copy_impl(is_sm(cell))},
                        {k::kShape, shape_to_json(cell.shape)},
                        {k::kTransfers, to_string(Transfers::kExcluded)}};
    if (!a.device_uuid.empty()) r[k::kDeviceUuid] = a.device_uuid;
    if (!a.pci_bus_id.empty()) r[k::kPciBusId] = a.pci_bus_id;
    if (!second.empty()) {
      const DeviceIdentity b = identity(second);
      if (!b.device_uuid.empty()) r[k::kDstUuid] = b.device_uuid;
      if (!b.pci_bus_id.empty()) r[k::kDstPciBusId] = b.pci_bus_id;
    }
    if (cell.op == Op::kAllreduce) {
      r[k::kDtype] = to_string(DType::kF32);
      r[k::kComputeType] = to_string(DType::kF32);
    }
    if (cell.scaled_from) r[k::kScaledFrom] = *cell.scaled_from;
    return r;
  }

 private:
  static bool is_sm(const Cell& c) {
    return c.op == Op::kP2p && std::get<P2pShape>(c.shape).engine == CopyEngine::kSm;
  }

  // Device bytes on each side, and host bytes, a cell needs.
  struct Need {
    std::uint64_t per_device = 0;
    std::uint64_t host = 0;
  };
  static Need need_of(const Cell& c) {
    if (const auto* p = std::get_if<P2pShape>(&c.shape))
      return {p->bytes * (p->bidirectional ? 2u : 1u), p->bytes * (p->bidirectional ? 4u : 2u)};
    if (const auto* a = std::get_if<AllreduceShape>(&c.shape)) return {a->bytes * 2, a->bytes * 3};
    const auto& l = std::get<LatencyShape>(c.shape);
    const std::uint64_t b = l.bytes * kLatencyCopiesPerRep;
    return {b, 2 * b};
  }
  static std::uint64_t& bytes_of(Cell& c) {
    if (auto* p = std::get_if<P2pShape>(&c.shape)) return p->bytes;
    if (auto* a = std::get_if<AllreduceShape>(&c.shape)) return a->bytes;
    return std::get<LatencyShape>(c.shape).bytes;
  }
  std::vector<std::size_t> devices_of(const Cell& c) const {
    std::vector<std::size_t> out;
    if (const auto* a = std::get_if<AllreduceShape>(&c.shape)) {
      for (const auto& d : a->devices) out.push_back(index_of(group_, d));
    } else if (const auto* p = std::get_if<P2pShape>(&c.shape)) {
      out = {index_of(group_, p->src), index_of(group_, p->dst)};
    } else {
      const auto& l = std::get<LatencyShape>(c.shape);
      out = {index_of(group_, l.src), index_of(group_, l.dst)};
    }
    return out;
  }

  // Why the cell cannot run, or nullopt; a preset size too large is halved until it fits (and
  // the cell says scaled_from), an explicit one is skipped.
  std::optional<Refusal> refuse(Cell& cell) {
    const auto devs = devices_of(cell);
    if (cell.op == Op::kAllreduce) {
      if (setup_refusal_) return Refusal{"unsupported", *setup_refusal_};
      if (auto why = group_.allreduce_unavailable()) return Refusal{"unsupported", *why};
      if (ranks() < 2) return Refusal{"unsupported", "all-reduce needs at least two devices"};
      if (devs.size() != group_.size())
        return Refusal{"unsupported", "an all-reduce runs over every device of the group"};
      if (std::get<AllreduceShape>(cell.shape).bytes % 4 != 0)
        return Refusal{"unsupported", "an f32 all-reduce moves whole 4-byte elements"};
    } else {
      if (devs[0] == devs[1]) return Refusal{"unsupported", "a peer copy needs two devices"};
      const bool peer = cell.op == Op::kP2p ? std::get<P2pShape>(cell.shape).peer_access
                                            : std::get<LatencyShape>(cell.shape).peer_access;
      if (is_sm(cell) && !peer)
        return Refusal{"unsupported",
                       "an SM copy reads and writes the peer's memory directly: it needs peer "
                       "access (the staged path is a copy-engine path)"};
      if (peer)
        if (auto why = group_.peer_access_unavailable(devs[0], devs[1]))
          return Refusal{"unsupported", *why};
    }
    const nlohmann::json original = shape_to_json(cell.shape);
    bool scaled = false;
    while (true) {
      const Need need = need_of(cell);
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
      std::uint64_t& bytes = bytes_of(cell);
      if (cell.explicit_size || cell.op == Op::kLatency || bytes <= 4096) return over;
      bytes /= 2;
      if (cell.op == Op::kAllreduce) bytes -= bytes % 4;
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

  void emit(nlohmann::json& r, nlohmann::json extra = nlohmann::json::object()) {
    nlohmann::json ctx = group_.context();
    for (auto& [key, v] : extra.items()) ctx[key] = v;
    if (!ctx.empty()) r[k::kContext] = ctx;
    cb_.record(index_, r);
  }

  // A seeded byte pattern of `bytes` (whole f32 draws, as the one-device copy's).
  HostBuffer pattern(std::size_t bytes, std::uint64_t stream) const {
    HostBuffer p(DType::kF32, (bytes + 3) / 4);
    fill_uniform(p, -1.0, 1.0, plan_.seed, stream);
    return p;
  }

  // One direction of a copy: the seeded pattern sent, its source buffer holding it, and the
  // receiving buffer poisoned (0xA5), so a byte never written cannot pass.
  struct Transfer {
    HostBuffer sent;
    std::unique_ptr<DeviceBuffer> src, dst;
  };
  Transfer prepare(std::size_t from, std::size_t to, std::size_t bytes, std::uint64_t stream) {
    Transfer t{pattern(bytes, stream), group_.allocate(from, bytes), group_.allocate(to, bytes)};
    const std::vector<unsigned char> poison(bytes, 0xA5);
    group_.upload(from, *t.src, t.sent.data(), bytes);
    group_.upload(to, *t.dst, poison.data(), bytes);
    return t;
  }
  // The received bytes against the pattern sent.
  Verification check(const Transfer& t, std::size_t to, std::size_t bytes,
                     const std::string& from_name, const std::string& to_name) {
    std::vector<unsigned char> back(bytes);
    group_.download(to, back.data(), *t.dst, bytes);
    plant_into(back.data(), bytes);
    return verify_exact(t.sent.data(), back.data(), bytes,
                        fmt::format("bytes received by {} differ from {}'s", to_name, from_name));
  }
  static void note_spin(nlohmann::json& extra, bool timed_out) {
    if (timed_out)
      extra["spin_timed_out"] =
          "a spin kernel gave up waiting for the host (an enqueue blocked): launch overhead is "
          "part of these times";
  }

  void run_p2p(const Cell& cell) {
    const auto& s = std::get<P2pShape>(cell.shape);
    const std::size_t src = index_of(group_, s.src), dst = index_of(group_, s.dst);
    const std::size_t bytes = s.bytes;
    nlohmann::json r = base(cell);
    // Forward src→dst; bidirectional adds dst→src on the other device's engines.
    const bool sm = s.engine == CopyEngine::kSm;
    Transfer fwd = prepare(src, dst, bytes, kStreamP2pForward);
    std::vector<PeerCopy> copies = {{src, dst, src, fwd.src.get(), fwd.dst.get(), bytes, 1, sm}};
    std::optional<Transfer> rev;
    if (s.bidirectional) {
      rev = prepare(dst, src, bytes, kStreamP2pReverse);
      copies.push_back({dst, src, dst, rev->src.get(), rev->dst.get(), bytes, 1, sm});
    }
    group_.set_peer_access(src, dst, s.peer_access);
    std::vector<std::vector<double>> per_direction(copies.size());
    bool spin_timed_out = false;
    bool truncated = false;
    auto times = run_reps(
        plan_.policy,
        [&] {
          CopyTiming t = group_.timed_copies(copies, kPeerCopiesPerRep);
          spin_timed_out = spin_timed_out || t.spin_timed_out;
          double rate = 0;  // bytes per second, summed over the directions
          for (std::size_t i = 0; i < t.seconds.size(); ++i) {
            per_direction[i].push_back(t.seconds[i]);
            rate += static_cast<double>(bytes) / t.seconds[i];
          }
          // The time that moves the cell's work at the summed rate (uni: the copy's own time).
          return static_cast<double>(bytes * copies.size()) / rate;
        },
        &truncated);
    nlohmann::json extra = nlohmann::json::object();
    nlohmann::json gbps = nlohmann::json::array();
    for (auto& d : per_direction) {
      std::sort(d.begin(), d.end());
      gbps.push_back(static_cast<double>(bytes) / d[d.size() / 2] / 1e9);
    }
    extra["direction_gbps"] = gbps;  // median of each direction: src→dst, then dst→src
    extra["copies_per_repetition"] = kPeerCopiesPerRep;
    note_spin(extra, spin_timed_out);
    Verification v = check(fwd, dst, bytes, s.src, s.dst);
    if (v.ok && rev) v = check(*rev, src, bytes, s.dst, s.src);
    finish_record(r, cell, times, truncated, v);
    emit(r, extra);
  }

  void run_latency(const Cell& cell) {
    const auto& s = std::get<LatencyShape>(cell.shape);
    const std::size_t src = index_of(group_, s.src), dst = index_of(group_, s.dst);
    const std::size_t bytes = s.bytes * kLatencyCopiesPerRep;
    nlohmann::json r = base(cell);
    Transfer t = prepare(src, dst, bytes, kStreamP2pForward);
    group_.set_peer_access(src, dst, s.peer_access);
    // Each piece is its own small copy: the batch's time over the count is one copy's latency.
    const std::vector<PeerCopy> copies = {{src, dst, src, t.src.get(), t.dst.get(), bytes,
                                           static_cast<std::size_t>(kLatencyCopiesPerRep), false}};
    bool truncated = false;
    bool spin_timed_out = false;
    auto times = run_reps(
        plan_.policy,
        [&] {
          CopyTiming ct = group_.timed_copies(copies, 1);
          spin_timed_out = spin_timed_out || ct.spin_timed_out;
          return ct.seconds[0];
        },
        &truncated);
    for (double& x : times) x /= kLatencyCopiesPerRep;
    nlohmann::json extra = {{"copies_per_repetition", kLatencyCopiesPerRep}};
    note_spin(extra, spin_timed_out);
    finish_record(r, cell, times, truncated, check(t, dst, bytes, s.src, s.dst));
    emit(r, extra);
  }

  // Integer-valued f32 inputs in [−1024, 1024]: every partial sum of up to 2^14 of them is exact
  // in f32 whatever order NCCL adds in, so the result is checked for exact equality.
  HostBuffer allreduce_input(std::size_t count, std::size_t rank) const {
    HostBuffer x(DType::kF32, count);
    fill_uniform(x, -1024.0, 1024.0, plan_.seed, kStreamAllreduce + rank);
    float* p = x.as<float>();
    for (std::size_t i = 0; i < count; ++i) p[i] = std::round(p[i]);
    return x;
  }

  // The all-reduce's ranks: this group's devices, or every rank of the processes it spans.
  std::size_t ranks() const {
    return plan_.allreduce.span ? static_cast<std::size_t>(plan_.allreduce.span->ranks)
                                : group_.size();
  }
  std::size_t first_rank() const {
    return plan_.allreduce.span ? static_cast<std::size_t>(plan_.allreduce.span->first_rank) : 0;
  }

  void run_allreduce(const Cell& cell) {
    const auto& s = std::get<AllreduceShape>(cell.shape);
    const auto devs = devices_of(cell);
    const std::size_t count = s.bytes / 4;
    nlohmann::json r = base(cell);
    std::vector<std::unique_ptr<DeviceBuffer>> send, recv;
    std::vector<const DeviceBuffer*> send_ptrs;
    std::vector<DeviceBuffer*> recv_ptrs;
    // Every rank's input is the seed's, so each process knows the whole sum, its own ranks' and
    // those of the processes it cannot see.
    HostBuffer expected(DType::kF32, count);
    std::memset(expected.data(), 0, expected.size_bytes());
    for (std::size_t rank = 0; rank < ranks(); ++rank) {
      HostBuffer x = allreduce_input(count, rank);
      float* e = expected.as<float>();
      const float* xp = x.as<float>();
      for (std::size_t i = 0; i < count; ++i) e[i] += xp[i];
    }
    {
      HostBuffer poisoned = make_output(DType::kF32, count);
      for (std::size_t rank = 0; rank < devs.size(); ++rank) {
        HostBuffer x = allreduce_input(count, first_rank() + rank);
        send.push_back(group_.allocate(devs[rank], s.bytes));
        recv.push_back(group_.allocate(devs[rank], s.bytes));
        group_.upload(devs[rank], *send.back(), x.data(), s.bytes);
        group_.upload(devs[rank], *recv.back(), poisoned.data(), s.bytes);
        send_ptrs.push_back(send.back().get());
        recv_ptrs.push_back(recv.back().get());
      }
    }
    bool truncated = false;
    auto times = run_reps(
        plan_.policy,
        [&] { return group_.timed_allreduce_f32(send_ptrs, recv_ptrs, count, kAllreducesPerRep); },
        &truncated);
    // Every device's result, element by element: exactly the sum.
    Verification v;
    v.ok = true;
    v.method = "exact";
    v.tolerance = 0;
    HostBuffer got(DType::kF32, count);
    for (std::size_t rank = 0; rank < devs.size() && v.ok; ++rank) {
      group_.download(devs[rank], got.data(), *recv[rank], s.bytes);
      if (rank == 0) plant_into(got.data(), s.bytes);
      const float* g = got.as<float>();
      const float* e = expected.as<float>();
      for (std::size_t i = 0; i < count; ++i)
        if (!(g[i] == e[i])) {
          v.ok = false;
          v.max_rel_error = std::numeric_limits<double>::infinity();
          v.first_bad_index = i;
          v.detail = fmt::format("{}'s sum at element {} is {}, expected {}",
                                 group_.identity(devs[rank]).device, i, g[i], e[i]);
          break;
        }
    }
    finish_record(r, cell, times, truncated, v);
    if (r.contains(k::kTimeS)) {
      const double median = r[std::string(k::kTimeS)][std::string(k::kMedian)].get<double>();
      if (median > 0) {
        const double algbw = static_cast<double>(s.bytes) / median / 1e9;
        r[k::kAlgbw] = algbw;
        r[k::kBusbw] = algbw * allreduce_bus_factor(ranks());
      }
    }
    emit(r, {{"allreduces_per_repetition", kAllreducesPerRep}});
  }

  const BenchPlan& plan_;
  PeerGroup& group_;
  const EngineCallbacks& cb_;
  std::optional<PlantedError> plant_;
  std::uint64_t host_limit_ = 0;
  std::optional<std::string> setup_refusal_;  // why the plan's all-reduce setup cannot be
  std::size_t index_ = 0;                     // the plan's cell being run, for the record callback
};

}  // namespace

void run_group_plan(const BenchPlan& plan, PeerGroup& group, const EngineCallbacks& callbacks,
                    std::optional<PlantedError> plant) {
  GroupRunner runner(plan, group, callbacks, plant);
  if (callbacks.planned) callbacks.planned(plan.cells.size());  // every cell runs or records why
  for (std::size_t i = 0; i < plan.cells.size(); ++i) {
    const Cell& cell = plan.cells[i];
    if (callbacks.cell_started) callbacks.cell_started(i, i + 1, cell, 0, 1);
    auto failed = [&](const std::string& why) {
      nlohmann::json r = runner.base(cell);
      r[k::kStatus] = "failed";
      r[k::kReason] = why;
      callbacks.record(i, r);
    };
    try {
      runner.run(i, cell);
    } catch (const DeviceLostError& e) {
      failed(std::string(e.what()) + " (a device is unusable: the group's child ends here)");
      throw;
    } catch (const std::exception& e) {
      failed(e.what());  // the per-cell catch boundary: the next cell runs
    }
  }
}

}  // namespace gpucheck::bench

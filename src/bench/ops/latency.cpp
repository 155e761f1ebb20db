// latency: empty kernel launches, asynchronous (the launch rate) or each waited for (the round
// trip); mode p2p is a group's small peer copy (bench/group_engine.cpp).
#include "bench/ops/op_unit.h"
#include "bench/ops/p2p.h"
#include "bench/ops/run_context.h"
#include "core/json_keys.h"

namespace gpucheck::bench {

namespace latency_op {

namespace {

namespace k = keys;

std::vector<Cell> plan(const PlanRequest&) {
  std::vector<Cell> cells;
  for (auto mode : {LatencyMode::kAsync, LatencyMode::kRoundTrip}) {
    LatencyShape shape;
    shape.mode = mode;
    cells.push_back(planned_cell(Op::kLatency, DType::kF32, shape));
  }
  return cells;
}

Work work(const Cell&) {
  return {0, ""};
}

// A group's small peer copies (mode p2p): a batch of them on each device; the one-device modes
// need nothing worth checking.
Footprint footprint(const Cell& cell, bool) {
  const std::uint64_t b = std::get<LatencyShape>(cell.shape).bytes * kLatencyCopiesPerRep;
  Footprint f;
  f.device_total = b;
  f.device_largest = b;
  f.host_total = 2 * b;
  return f;
}

// Mode p2p: one small copy between a pair, cut into pieces timed as one (a batch each
// repetition, as p2pBandwidthLatencyTest): the result is a piece's seconds, not a rate.
PeerCopies peer_copies(const Cell& cell, const std::vector<std::string>& group) {
  const auto& l = std::get<LatencyShape>(cell.shape);
  PeerCopies out = pair_copies(group, l.src, l.dst, false, l.peer_access);
  out.bytes = l.bytes * kLatencyCopiesPerRep;
  out.pieces = kLatencyCopiesPerRep;
  out.summed_rate = false;
  out.refusal = peer_copy_refusal(out);
  return out;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<LatencyShape>(shape);
  if (s.mode == LatencyMode::kP2p)
    return {{k::kMode, "p2p"},
            {k::kSrc, s.src},
            {k::kDst, s.dst},
            {k::kPeerAccess, s.peer_access},
            {k::kBytes, s.bytes}};
  return {{k::kMode, s.mode == LatencyMode::kAsync ? "async" : "round_trip"}};
}

Shape from_json(const nlohmann::json& j) {
  const std::string mode = j.at(std::string(k::kMode)).get<std::string>();
  LatencyShape s;
  s.mode = mode == "round_trip" ? LatencyMode::kRoundTrip
           : mode == "p2p"      ? LatencyMode::kP2p
                                : LatencyMode::kAsync;
  if (s.mode == LatencyMode::kP2p) {
    s.src = j.at(std::string(k::kSrc)).get<std::string>();
    s.dst = j.at(std::string(k::kDst)).get<std::string>();
    s.peer_access = j.at(std::string(k::kPeerAccess)).get<bool>();
    s.bytes = j.at(std::string(k::kBytes)).get<std::uint64_t>();
  }
  return s;
}

void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<LatencyShape>(cell.shape);
  constexpr int kLaunchesPerRep = 10000;
  Device& dev = ctx.device();
  dev.launch_empty();
  dev.synchronize();
  nlohmann::json r = ctx.record(Transfers::kExcluded, false);
  bool truncated = false;
  auto times = ctx.reps(
      [&] {
        auto t0 = std::chrono::steady_clock::now();
        if (s.mode == LatencyMode::kRoundTrip) {
          dev.launch_empty();
          dev.synchronize();
          return seconds_since(t0);
        }
        for (int i = 0; i < kLaunchesPerRep; ++i) dev.launch_empty();
        dev.synchronize();
        return seconds_since(t0);
      },
      &truncated);
  // Each asynchronous repetition timed a batch; the record is per launch.
  if (s.mode == LatencyMode::kAsync)
    for (double& t : times) t /= kLaunchesPerRep;
  ctx.collect(std::move(r), std::move(times), truncated, std::nullopt);
}

}  // namespace

}  // namespace latency_op

OpUnit latency_unit() {
  OpUnit u;
  u.op = Op::kLatency;
  u.rated = false;
  u.in_default_plan = true;
  u.has_dtype = false;
  u.profile_shape = {{}, {{"mode", {"async", "round_trip"}}}, {}};
  u.plan = latency_op::plan;
  u.work = latency_op::work;
  u.footprint = latency_op::footprint;
  u.shape_to_json = latency_op::to_json;
  u.shape_from_json = latency_op::from_json;
  u.run = latency_op::run;
  u.peer_copies = latency_op::peer_copies;
  return u;
}

}  // namespace gpucheck::bench

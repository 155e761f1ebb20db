// p2p: a copy between devices of a group (one pair, or a fan loading every link at once); run by
// bench/group_engine.cpp and planned by app/bench_multi.cpp.
#include "bench/ops/p2p.h"

#include "bench/ops/op_unit.h"
#include "bench/size_text.h"
#include "core/json_keys.h"

#include <set>
#include <stdexcept>

namespace gpucheck::bench {

std::string_view to_string(P2pFan f) {
  switch (f) {
    case P2pFan::kAllToOne:
      return "all_to_one";
    case P2pFan::kOneToAll:
      return "one_to_all";
    case P2pFan::kAllToAll:
      return "all_to_all";
    default:
      return "p2p";
  }
}

std::optional<P2pFan> p2p_fan_from_string(std::string_view text) {
  for (P2pFan f : {P2pFan::kPair, P2pFan::kAllToOne, P2pFan::kOneToAll, P2pFan::kAllToAll})
    if (to_string(f) == text) return f;
  return std::nullopt;
}

namespace p2p_op {

namespace {

namespace k = keys;

// Every ordered pair of the group: copy-engine copies with peer access on and off (staged
// through the host), and the SM copy kernel; bidirectional copies (each unordered pair once);
// with three or more devices the fans; then the small-copy latency of every ordered pair with
// peer access on and off (op latency, of a fixed size).
std::vector<Cell> group_plan(const GroupPlanRequest& req) {
  const auto& cuda = req.devices;
  std::vector<Cell> cells;
  auto add = [&](P2pShape s) { cells.push_back(planned_cell(Op::kP2p, DType::kF32, s)); };
  for (const Shape& size : req.sizes) {
    const std::uint64_t bytes = std::get<P2pShape>(size).bytes;
    for (const auto& s : cuda)
      for (const auto& d : cuda) {
        if (s == d) continue;
        for (bool peer : {true, false}) add(P2pShape{bytes, false, s, d, peer, CopyEngine::kCe});
        add(P2pShape{bytes, false, s, d, true, CopyEngine::kSm});
      }
    // Both directions at once measure the pair, not an order: each unordered pair once.
    for (std::size_t i = 0; i < cuda.size(); ++i)
      for (std::size_t j = i + 1; j < cuda.size(); ++j)
        for (bool peer : {true, false})
          add(P2pShape{bytes, true, cuda[i], cuda[j], peer, CopyEngine::kCe});
    // nvbandwidth's every-link-at-once tests show the contention a switch hides from one pair
    // at a time; with two GPUs they are the pair copies again.
    if (cuda.size() >= 3) {
      const std::uint64_t n = cuda.size();
      const std::string all(kAllDevices);
      auto fan = [&](P2pFan f, const std::string& src, const std::string& dst,
                     std::uint64_t copies) {
        P2pShape s{bytes, false, src, dst, true, CopyEngine::kCe};
        s.fan = f;
        s.copies = copies;
        add(s);
      };
      for (const auto& d : cuda) fan(P2pFan::kAllToOne, all, d, n - 1);
      for (const auto& d : cuda) fan(P2pFan::kOneToAll, d, all, n - 1);
      fan(P2pFan::kAllToAll, all, all, n * (n - 1));
    }
  }
  for (const auto& s : cuda)
    for (const auto& d : cuda) {
      if (s == d) continue;
      for (bool peer : {true, false}) {
        LatencyShape l;
        l.mode = LatencyMode::kP2p;
        l.src = s, l.dst = d, l.peer_access = peer, l.bytes = kP2pLatencyBytes;
        Cell c = planned_cell(Op::kLatency, DType::kF32, l);
        c.explicit_size = true;
        cells.push_back(std::move(c));
      }
    }
  return cells;
}

// Bytes over the links: both directions' for a bidirectional copy, every copy's of a fan.
Work work(const Cell& cell) {
  const auto& s = std::get<P2pShape>(cell.shape);
  const double copies = s.fan != P2pFan::kPair ? static_cast<double>(s.copies)
                        : s.bidirectional      ? 2.0
                                               : 1.0;
  return {static_cast<double>(s.bytes) * copies, "GB/s"};
}

// On each device: a fan's busiest device holds a landing place for every other device and its
// own source.
Footprint footprint(const Cell& cell, bool) {
  const auto& p = std::get<P2pShape>(cell.shape);
  Footprint f;
  if (p.fan != P2pFan::kPair) {
    f.device_total = p.bytes * (p.copies + 1);
    f.host_total = p.bytes * 2;
  } else {
    f.device_total = p.bytes * (p.bidirectional ? 2u : 1u);
    f.host_total = p.bytes * (p.bidirectional ? 4u : 2u);
  }
  f.device_largest = p.bytes;
  return f;
}

bool shrink(Cell& cell) {
  auto& bytes = std::get<P2pShape>(cell.shape).bytes;
  if (bytes <= 4096) return false;
  bytes /= 2;
  return true;
}

// A fan's copies: into `to`, out of `from`, or (neither given) between every ordered pair.
std::vector<std::pair<std::size_t, std::size_t>> fan_copies(std::size_t n,
                                                            std::optional<std::size_t> to,
                                                            std::optional<std::size_t> from) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = 0; b < n; ++b)
      if (a != b && (!to || b == *to) && (!from || a == *from)) out.emplace_back(a, b);
  return out;
}

// A pair's copy (both ways: two), or a fan's; a fan's record is its one device's (the target,
// the source; all_to_all: the group's first), and its copy count must be the group's.
PeerCopies peer_copies(const Cell& cell, const std::vector<std::string>& group) {
  const auto& s = std::get<P2pShape>(cell.shape);
  PeerCopies out;
  if (s.fan == P2pFan::kPair) {
    out = pair_copies(group, s.src, s.dst, s.bidirectional, s.peer_access);
  } else {
    out.peer_access = s.peer_access;
    out.fan = true;
    out.first = s.fan == P2pFan::kAllToOne ? s.dst : s.src;
    if (s.fan == P2pFan::kAllToAll && !group.empty()) out.first = group.front();
    auto named = [&](const std::string& device) {
      const auto at = place_in(group, device);
      if (!at) out.absent = device;
      return at;
    };
    const auto to = s.fan == P2pFan::kAllToOne ? named(s.dst) : std::nullopt;
    const auto from = s.fan == P2pFan::kOneToAll ? named(s.src) : std::nullopt;
    if (!out.absent) out.copies = fan_copies(group.size(), to, from);
    std::set<std::size_t> touched;
    for (const auto& [a, b] : out.copies) touched.insert({a, b});
    out.devices.assign(touched.begin(), touched.end());
    out.label = fmt::format("{} {} copies", to_string(s.fan), out.copies.size());
  }
  out.bytes = s.bytes;
  out.sm = s.engine == CopyEngine::kSm;
  out.refusal = peer_copy_refusal(out);
  if (!out.refusal && out.fan && out.copies.size() != s.copies)
    out.refusal = fmt::format("{} over {} devices is {} copies, not {}", to_string(s.fan),
                              group.size(), out.copies.size(), s.copies);
  return out;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<P2pShape>(shape);
  nlohmann::json j = {{k::kBytes, s.bytes},
                      {k::kDirection, to_string(s.fan)},
                      {k::kBidirectional, s.bidirectional},
                      {k::kSrc, s.src},
                      {k::kDst, s.dst},
                      {k::kPeerAccess, s.peer_access},
                      {k::kEngine, to_string(s.engine)}};
  if (s.dst.empty()) j.erase(std::string(k::kDst));  // a lone shape (no group) copies to nowhere
  if (s.fan != P2pFan::kPair) j[k::kCopies] = s.copies;
  return j;
}

// Where no group runs: a copy of the first size from the one device there is.
Shape lone_shape(const std::vector<Shape>& sizes, const std::string& device) {
  P2pShape s;
  if (!sizes.empty()) s.bytes = std::get<P2pShape>(sizes.front()).bytes;
  s.src = device;
  return s;
}

Shape from_json(const nlohmann::json& j) {
  P2pShape s;
  s.bytes = j.at(std::string(k::kBytes)).get<std::uint64_t>();
  s.bidirectional = j.at(std::string(k::kBidirectional)).get<bool>();
  s.src = j.at(std::string(k::kSrc)).get<std::string>();
  s.dst = j.at(std::string(k::kDst)).get<std::string>();
  s.peer_access = j.at(std::string(k::kPeerAccess)).get<bool>();
  const std::string engine = j.at(std::string(k::kEngine)).get<std::string>();
  if (engine != "ce" && engine != "sm")
    throw std::invalid_argument("bench plan: bad engine '" + engine + "'");
  s.engine = engine == "sm" ? CopyEngine::kSm : CopyEngine::kCe;
  const std::string direction = j.value(std::string(k::kDirection), std::string("p2p"));
  const auto fan = p2p_fan_from_string(direction);
  if (!fan) throw std::invalid_argument("bench plan: bad p2p direction '" + direction + "'");
  s.fan = *fan;
  if (s.fan != P2pFan::kPair) s.copies = j.at(std::string(k::kCopies)).get<std::uint64_t>();
  return s;
}

}  // namespace

}  // namespace p2p_op

OpUnit p2p_unit() {
  OpUnit u;
  u.op = Op::kP2p;
  u.group = GroupOp{"a peer copy", "cudaMemcpyPeerAsync", false, p2p_op::lone_shape};
  // A copy moves bytes, not elements of a type: its records carry no dtype (as copy's).
  u.has_dtype = false;
  // --copy's sizes, or 256 MiB: a link is measured at a size that saturates it (nvbandwidth).
  u.size_spec = SizeSpec{"p2p",
                         "copy",
                         nullptr,
                         "BYTES",
                         ',',
                         false,
                         [](std::string_view item, std::string_view where) -> Shape {
                           P2pShape s;
                           s.bytes = byte_count(item, where);
                           return s;
                         },
                         "256MiB"};
  u.group_plan = p2p_op::group_plan;
  u.work = p2p_op::work;
  u.footprint = p2p_op::footprint;
  u.shrink = p2p_op::shrink;
  u.shape_to_json = p2p_op::to_json;
  u.shape_from_json = p2p_op::from_json;
  u.peer_copies = p2p_op::peer_copies;
  return u;
}

}  // namespace gpucheck::bench

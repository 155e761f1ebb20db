// One benchmark cell (op × dtype × shape on one device) and the plan a bench child runs.
#pragma once

#include "backends/device.h"
#include "backends/peer_group.h"
#include "bench/reps.h"
#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace gpucheck::bench {

// kP2p: one small copy from src to dst (a group cell), as p2pBandwidthLatencyTest's latency.
enum class LatencyMode { kAsync, kRoundTrip, kP2p };

struct LatencyShape {
  LatencyMode mode = LatencyMode::kAsync;
  // kP2p only: the devices, whether peer access is on, and the bytes of one copy.
  std::string src, dst;
  bool peer_access = true;
  std::uint64_t bytes = 0;
};

// Which engine moves a peer copy: the copy engines (cudaMemcpyPeerAsync) or the SMs (a kernel).
enum class CopyEngine { kCe, kSm };
std::string_view to_string(CopyEngine e);

// Copies at once between several devices of a group, as nvbandwidth's tests load every link at
// once: every other device to one (all_to_one; dst names it), one to every other (one_to_all;
// src names it), every ordered pair (all_to_all); the other end is kAllDevices. kPair: one copy
// (two, bidirectional) between src and dst.
// Its names are the unit's (bench/ops/p2p.h).
enum class P2pFan { kPair, kAllToOne, kOneToAll, kAllToAll };
inline constexpr std::string_view kAllDevices = "all";

// A copy between devices of a group (op p2p): shape.direction "p2p" (or the fan's name) in the
// record. bidirectional: dst→src at the same time; peer_access false: staged through host memory
// by the driver (p2pBandwidthLatencyTest's "P2P off").
struct P2pShape {
  std::uint64_t bytes = 0;
  bool bidirectional = false;
  std::string src, dst;
  bool peer_access = true;
  CopyEngine engine = CopyEngine::kCe;
  P2pFan fan = P2pFan::kPair;
  std::uint64_t copies = 0;  // a fan's copies at once (shape.copies); 0 for a pair
};

// An f32 sum all-reduce of `bytes` per device over `devices` (op allreduce), out of place.
struct AllreduceShape {
  std::uint64_t bytes = 0;
  std::vector<std::string> devices;
};

// Theano's gputest.py: exp of n floats, `calls` times, input resident on the device.
struct SeedloopShape {
  std::uint64_t n = 10 * 30 * 768;
  std::uint64_t calls = 1000;
  bool d2h_each_call = false;
};

using Shape = std::variant<ExpShape, GemmShape, ConvShape, CopyShape, LatencyShape, SeedloopShape,
                           P2pShape, AllreduceShape>;

struct Cell {
  Op op{};  // the first op, whose shape a default Shape holds
  DType dtype = DType::kF32;
  Shape shape;
  // The user named this op/dtype/size: when the device cannot run it, the record says
  // "unsupported" or "skipped"; defaults it cannot run are left out instead.
  bool explicit_request = false;
  // The user gave this size (--gemm, ...): too large for the device is "skipped"; preset sizes
  // are scaled down instead.
  bool explicit_size = false;
  // Set when a preset was scaled down to fit the device's memory rule.
  std::optional<nlohmann::json> scaled_from;
};

// How a device's GEMM parameters are chosen before its GEMM and conv cells. Off unless
// the command asks: doctor's and other fixed plans never tune.
struct TuningPlan {
  TuningMode mode = TuningMode::kOff;
  std::optional<double> budget_s;  // per dtype; nullopt: the device's default
};

struct BenchPlan {
  std::string device;  // "cpu", "cuda0", ...; a group's devices joined by ","
  std::string backend;
  std::vector<Cell> cells;
  RepPolicy policy;
  std::uint64_t seed = 0;
  int threads = 0;
  // Several devices opened together in one child (the cells of group ops); empty for one device.
  std::vector<std::string> group;
  TuningPlan tuning;
  // A lock file that concurrent siblings share: host-bound timed regions take it (host_lock.h).
  std::string host_lock;
  // How a group's collective (the all-reduce) runs: over the network path only (--transport net),
  // and as ranks of one spanning processes (--rank, --world-size).
  CollectiveSetup collective;
  // A group's pairs one at a time (--serial), not the pairs that share no GPU together.
  bool serial = false;
};

// "off", "auto", "retune" and back (nullopt for anything else).
std::string_view to_string(TuningMode mode);
std::optional<TuningMode> tuning_mode_from_string(std::string_view text);

nlohmann::json shape_to_json(const Shape& shape);
nlohmann::json to_json(const Cell& cell);
nlohmann::json to_json(const BenchPlan& plan);
BenchPlan plan_from_json(const nlohmann::json& j);

// "gemm f32 2048x2048x2048" for progress lines and messages.
std::string describe(const Cell& cell);

}  // namespace gpucheck::bench

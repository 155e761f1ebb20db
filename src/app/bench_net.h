// `bench --ops net`: the host network between ranks, no GPU needed. The ranks meet through the
// rendezvous (app/bench_ranks.h), each with a TCP listener named in its identity; then every pair
// of ranks, in rounds where no rank is in two pairs at once, measures its link (core/net_link.h):
// round-trip latency and verified bulk bandwidth each way. Each rank's document holds the pairs
// it took part in (rank 0's: all of them for two ranks), two records a pair, one per direction.
#pragma once

#include "app/bench_ranks.h"
#include "core/errors.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

struct NetBenchOptions {
  std::uint64_t bytes = 64ull << 20;  // --net-bytes: per direction and repetition
  int reps = 3;                       // --reps where given
  int pings = 1000;
};

// --net-bytes: one byte count (KiB/MiB/GiB suffixes), 1 byte to 64 GiB; UsageError naming the
// flag for zero, a negative, a non-number or an overflow.
std::uint64_t parse_net_bytes(const std::string& text);

// The pairs rank `self` takes part in, in the order every rank runs them: (round, partner).
struct NetTurn {
  std::size_t round = 0;
  int partner = 0;
  bool connects = false;  // the lower rank of a pair connects, the higher one listens
};
std::vector<NetTurn> net_turns(int self, int world_size);

// The two records (self → partner, partner → self) of one measured pair, or of one that failed
// (status failed, the reason naming the peer). `self`/`partner`: {rank, host, addr, link_mbps}.
struct NetPairOutcome {
  nlohmann::json self, partner;
  std::uint64_t bytes = 0;
  std::optional<std::string> error;
  std::vector<double> rtt_us, out_s, in_s;  // round trips; self → partner; partner → self
  std::optional<std::uint64_t> out_bad, in_bad;
};
std::vector<nlohmann::json> net_records(const NetPairOutcome& outcome);

// One rank's part: listen, meet, measure its pairs. The records of its pairs, every rank's
// identity as the document records it (rank 0: all; the others: their own) and the exit code:
// 1 when a pair failed or its data was wrong.
struct NetRun {
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json ranks = nlohmann::json::array();
  ExitCode code = ExitCode::kOk;
};
NetRun run_bench_net(const NetBenchOptions& options, const RankSetup& setup);

}  // namespace gpucheck::app

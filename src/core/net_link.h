// The TCP path between two hosts, measured without a GPU: the link one pair of ranks opens after
// they met through core/rendezvous. The lower rank connects to the higher one's listener; both
// prove the run's secret with the rendezvous wire's proof (no second crypto), then they time a
// ping-pong of small messages and a bulk transfer each way, and the receiver compares every byte
// with the pattern the sender sends, so a wrong result is a mismatch and never a rate.
//
// Nothing waits forever: every socket call is bounded (meeting: the meet timeout; once the pair
// runs: the idle timeout without progress), and a peer that goes away or stops answering ends
// in NetError naming it, never an exit or a hang.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucheck::net {

// A link that broke or timed out; what() names the peer and the phase.
class NetError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One end of a link: a TCP socket, closed with the object.
class Socket {
 public:
  explicit Socket(int fd = -1) : fd_(fd) {}
  ~Socket();
  Socket(Socket&& o) noexcept : fd_(o.release()) {}
  Socket& operator=(Socket&& o) noexcept;
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;
  int get() const { return fd_; }
  int release();

 private:
  int fd_;
};

// Where a rank listens for its partners.
struct Endpoint {
  std::string addr;  // numeric IPv4 or IPv6
  std::uint16_t port = 0;
  std::string describe() const;  // "addr:port" or "[addr]:port"
};

// A listener on `addr` (numeric; "0.0.0.0" or "::" for every address), the kernel's choice of
// port. ApiError naming the call (socket, bind, listen, getsockname) and errno's meaning.
struct Listener {
  Socket socket;
  std::uint16_t port = 0;
};
Listener listen_on(const std::string& addr);

// The address this host sends from towards `host` (a name or number): what a partner on that
// network connects to. ApiError naming the call that failed.
std::string source_address_towards(const std::string& host);

// What both ends of one run share.
struct LinkRun {
  std::string token;  // GPUCHECK_RENDEZVOUS_TOKEN; empty: proofs are empty (loopback only)
  std::string run;    // rank 0's random id of this run: a link of another run is refused
  int world_size = 2;
};

// How much a pair measures.
struct LinkPlan {
  std::uint64_t bytes = 64ull << 20;      // per direction and repetition
  int reps = 3;                           // bulk repetitions each way (the best counts)
  int pings = 1000;                       // timed round trips, after pings / 10 untimed
  std::chrono::milliseconds idle{30000};  // no progress this long: the peer is gone
};

// What the connecting rank measured of one pair (the listening one gets a copy).
struct LinkResult {
  std::vector<double> rtt_us;      // each timed round trip
  std::vector<double> forward_s;   // connector → listener, each repetition
  std::vector<double> backward_s;  // listener → connector
  std::optional<std::uint64_t> forward_bad, backward_bad;  // first wrong byte, if any
};

// The connector's side: connects to `to` (rank `peer`), proves itself, waits until the peer
// takes the pair up (until `meet_by`), then runs the plan. NetError naming `peer_name` when the
// peer cannot be reached, refuses this rank, fails its proof, breaks off or stops answering.
LinkResult connect_pair(const Endpoint& to, int self, int peer, const std::string& peer_name,
                        const LinkRun& run, const LinkPlan& plan,
                        std::chrono::steady_clock::time_point meet_by);

// Connections that proved themselves but whose pair comes later (their rank → the socket): a
// partner of a later round may connect while this rank still measures another pair.
using Waiting = std::map<int, Socket>;

// The listener's side: accepts connections until rank `peer` has proven itself (one of a later
// partner waits in `waiting`; a stranger, a rank of another run or a wrong proof is closed and
// logged), then runs the plan with it. NetError when `peer` does not come by `meet_by` or breaks
// off. `later` names the ranks whose pairs with this one come after this pair.
LinkResult accept_pair(const Listener& listener, int self, int peer, const std::string& peer_name,
                       const std::vector<int>& later, Waiting& waiting, const LinkRun& run,
                       const LinkPlan& plan, std::chrono::steady_clock::time_point meet_by);

// ---- pure helpers, tested alone ----

// The bytes a sender sends: chunk `index` of kChunkBytes, a fixed pattern with the chunk's
// number in its first 8 bytes, so a lost, repeated or reordered chunk is seen. The receiver
// compares each chunk with the pattern (a memcmp, as cheap as a checksum) rather than a
// checksum: it names the first wrong byte, and no corruption can collide with the right sum.
inline constexpr std::size_t kChunkBytes = std::size_t{1} << 20;
void fill_chunk(std::vector<unsigned char>& chunk, std::uint64_t index);
// The first byte of `got` (chunk `index`, `n` bytes) that differs from what was sent; nullopt
// when all match. `pattern` is a chunk as fill_chunk made it for any index.
std::optional<std::size_t> first_difference(const unsigned char* got, std::size_t n,
                                            std::uint64_t index,
                                            const std::vector<unsigned char>& pattern);

// The p-th percentile (0..100) of the values, nearest rank; 0 for none.
double percentile(std::vector<double> values, double p);

}  // namespace gpucheck::net

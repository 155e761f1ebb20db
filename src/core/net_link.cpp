// One pair's TCP link: meeting, proofs, ping-pong and the bulk transfer each way.
//
// The words on the wire, after the connector's TCP connect:
//   listener  → "gpucheck-net/1 CHALLENGE"
//   connector → "RANK NONCE PROOF"     proof of (run, challenge, nonce, its rank, the peer's)
//   listener  → "ok PROOF" | "no WHY"  the listener's proof back, so neither trusts a stranger
//   listener  → "go"                   once it takes this pair up (it may be busy with another)
// then, in lockstep: the round trips (64 bytes each way), the repetitions connector → listener
// (each answered by 9 bytes: mismatch flag and first bad byte), the same listener → connector,
// the listener's times as a JSON line and the connector's results as one (the listener records
// the pair too). Without a token the proofs are "-" and the ranks meet on loopback only.
#include "core/net_link.h"

#include "core/errors.h"
#include "core/rendezvous_wire.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <thread>

namespace gpucheck::net {

namespace {

namespace wire = rendezvous_wire;
using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr std::string_view kMagic = "gpucheck-net/1";
constexpr std::size_t kPingBytes = 64;
// A line: the connector's results carry every round trip (about 10 bytes each).
constexpr std::size_t kMaxLine = std::size_t{1} << 20;
// A stranger gets this long to prove itself before the listener turns to the next.
constexpr auto kHelloWithin = std::chrono::seconds(10);

std::string errno_text(const char* call) {
  return fmt::format("{}: {}", call, std::strerror(errno));
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Reads and writes of one link, each bounded: a peer that stops answering for `idle` (or, while
// meeting, until `until`) is an error naming it.
class Wire {
 public:
  Wire(int fd, std::string peer, std::chrono::milliseconds idle)
      : fd_(fd), peer_(std::move(peer)), idle_(idle) {}

  void send_all(const void* data, std::size_t n, const char* what) {
    quiet_since_ = Clock::now();
    const auto* p = static_cast<const unsigned char*>(data);
    auto until = Clock::now() + idle_;
    while (n > 0) {
      const ssize_t got = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (got > 0) {
        p += got;
        n -= static_cast<std::size_t>(got);
        until = Clock::now() + idle_;
        quiet_since_ = Clock::now();
        continue;
      }
      if (got < 0 && errno == EINTR) continue;
      if (got < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
        wait(POLLOUT, until, what);
        continue;
      }
      throw NetError(fmt::format("{}: {} ({})", peer_, errno_text("send"), what));
    }
  }

  void recv_all(void* data, std::size_t n, const char* what) {
    quiet_since_ = Clock::now();
    auto* p = static_cast<unsigned char*>(data);
    const std::size_t buffered = std::min(n, buf_.size());
    std::memcpy(p, buf_.data(), buffered);
    buf_.erase(0, buffered);
    p += buffered;
    n -= buffered;
    while (n > 0) {
      const std::size_t got = receive_some(p, n, Clock::now() + idle_, what);
      p += got;
      n -= got;
    }
  }

  void send_line(const std::string& line, const char* what) {
    const std::string text = line + "\n";
    send_all(text.data(), text.size(), what);
  }

  // One line, by `until` (default: the idle timeout from now).
  std::string read_line(const char* what, std::optional<Clock::time_point> by = std::nullopt) {
    quiet_since_ = Clock::now();
    const auto until = by.value_or(Clock::now() + idle_);
    for (;;) {
      if (const auto nl = buf_.find('\n'); nl != std::string::npos) {
        std::string line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return line;
      }
      if (buf_.size() > kMaxLine)
        throw NetError(
            fmt::format("{} sent a line of more than {} bytes ({})", peer_, kMaxLine, what));
      char chunk[4096];
      buf_.append(chunk, receive_some(chunk, sizeof chunk, until, what));
    }
  }

  // The lockstep phases expect nothing early: bytes left over mean a peer of another protocol.
  void expect_drained(const char* what) const {
    if (!buf_.empty())
      throw NetError(fmt::format("{} sent {} bytes out of turn ({})", peer_, buf_.size(), what));
  }

 private:
  // At least one byte, waiting until `until`; NetError when the peer closed or failed.
  std::size_t receive_some(void* p, std::size_t n, Clock::time_point until, const char* what) {
    for (;;) {
      const ssize_t got = ::recv(fd_, p, n, 0);
      if (got > 0) {
        quiet_since_ = Clock::now();
        return static_cast<std::size_t>(got);
      }
      if (got == 0) throw NetError(fmt::format("{} closed the connection ({})", peer_, what));
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK)
        throw NetError(fmt::format("{}: {} ({})", peer_, errno_text("recv"), what));
      wait(POLLIN, until, what);
    }
  }

  void wait(short events, Clock::time_point until, const char* what) {
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now());
      if (left.count() <= 0)
        throw NetError(fmt::format("{} did not answer for {:.0f} s ({})", peer_,
                                   seconds_since(quiet_since_), what));
      pollfd p{fd_, events, 0};
      const int n = ::poll(&p, 1, static_cast<int>(std::min<long long>(left.count() + 1, 1000)));
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) throw NetError(fmt::format("{}: {} ({})", peer_, errno_text("poll"), what));
      if (n > 0) return;
    }
  }

  int fd_;
  std::string peer_;
  std::chrono::milliseconds idle_;
  std::string buf_;
  Clock::time_point quiet_since_ = Clock::now();  // the last progress
};

void check_call(int rc, const char* call) {
  if (rc != 0) throw_errno(call, __FILE__, __LINE__);
}

// Small messages leave at once (the round trips time the network, not Nagle's delay).
void no_delay(int fd) {
  const int one = 1;
  check_call(::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one),
             "setsockopt(TCP_NODELAY)");
}

std::string hello_proof(const LinkRun& run, const std::string& challenge, const std::string& nonce,
                        int from, int to) {
  const std::string p =
      wire::proof(run.token, {"net-hello", run.run, std::to_string(run.world_size), challenge,
                              nonce, std::to_string(from), std::to_string(to)});
  return p.empty() ? "-" : p;
}

std::string welcome_proof(const LinkRun& run, const std::string& challenge,
                          const std::string& nonce, int from, int to) {
  const std::string p =
      wire::proof(run.token, {"net-welcome", run.run, std::to_string(run.world_size), challenge,
                              nonce, std::to_string(from), std::to_string(to)});
  return p.empty() ? "-" : p;
}

// Equal texts, in time that does not tell how much of a guess was right.
bool same_text(const std::string& a, const std::string& b) {
  if (a.size() != b.size()) return false;
  unsigned char diff = 0;
  for (std::size_t i = 0; i < a.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

std::vector<std::string> words(const std::string& line) {
  std::vector<std::string> out;
  std::size_t pos = 0;
  while (pos < line.size()) {
    const std::size_t end = std::min(line.find(' ', pos), line.size());
    if (end > pos) out.push_back(line.substr(pos, end - pos));
    pos = end + 1;
  }
  return out;
}

void send_stream(Wire& w, std::uint64_t bytes, std::vector<unsigned char>& chunk) {
  for (std::uint64_t index = 0, done = 0; done < bytes; ++index) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, bytes - done));
    std::memcpy(chunk.data(), &index, sizeof index);
    w.send_all(chunk.data(), n, "bulk transfer");
    done += n;
  }
}

// The stream's first wrong byte, or nullopt.
std::optional<std::uint64_t> receive_stream(Wire& w, std::uint64_t bytes,
                                            std::vector<unsigned char>& into,
                                            const std::vector<unsigned char>& pattern) {
  std::optional<std::uint64_t> bad;
  for (std::uint64_t index = 0, done = 0; done < bytes; ++index) {
    const std::size_t n =
        static_cast<std::size_t>(std::min<std::uint64_t>(kChunkBytes, bytes - done));
    w.recv_all(into.data(), n, "bulk transfer");
    if (!bad)
      if (auto at = first_difference(into.data(), n, index, pattern)) bad = done + *at;
    done += n;
  }
  return bad;
}

struct Ack {
  unsigned char wrong = 0;
  std::uint64_t at = 0;
};

void send_ack(Wire& w, const std::optional<std::uint64_t>& bad) {
  unsigned char b[9] = {};
  b[0] = bad ? 1 : 0;
  const std::uint64_t at = bad.value_or(0);
  std::memcpy(b + 1, &at, sizeof at);
  w.send_all(b, sizeof b, "bulk transfer's answer");
}

std::optional<std::uint64_t> read_ack(Wire& w) {
  unsigned char b[9];
  w.recv_all(b, sizeof b, "bulk transfer's answer");
  std::uint64_t at = 0;
  std::memcpy(&at, b + 1, sizeof at);
  if (b[0] == 0) return std::nullopt;
  return at;
}

// `reps` timed transfers from this end; each time runs until the receiver's answer, so it counts
// every byte arriving (and checked) at the far end.
std::vector<double> send_reps(Wire& w, const LinkPlan& plan, std::optional<std::uint64_t>* bad) {
  std::vector<unsigned char> chunk(kChunkBytes);
  fill_chunk(chunk, 0);
  std::vector<double> times;
  for (int r = 0; r < plan.reps; ++r) {
    const auto t0 = Clock::now();
    send_stream(w, plan.bytes, chunk);
    const auto got = read_ack(w);
    times.push_back(seconds_since(t0));
    if (got && !*bad) *bad = got;
  }
  return times;
}

std::optional<std::uint64_t> receive_reps(Wire& w, const LinkPlan& plan) {
  std::vector<unsigned char> pattern(kChunkBytes), into(kChunkBytes);
  fill_chunk(pattern, 0);
  std::optional<std::uint64_t> first;
  for (int r = 0; r < plan.reps; ++r) {
    const auto bad = receive_stream(w, plan.bytes, into, pattern);
    send_ack(w, bad);
    if (bad && !first) first = bad;
  }
  return first;
}

json bad_json(const std::optional<std::uint64_t>& bad) {
  return bad ? json(*bad) : json(nullptr);
}

std::optional<std::uint64_t> bad_from(const json& j) {
  if (j.is_number_unsigned()) return j.get<std::uint64_t>();
  return std::nullopt;
}

std::vector<double> times_from(const json& j, std::size_t most) {
  std::vector<double> out;
  if (!j.is_array()) return out;
  for (const auto& v : j)
    if (v.is_number() && std::isfinite(v.get<double>()) && v.get<double>() >= 0 &&
        out.size() < most)
      out.push_back(v.get<double>());
  return out;
}

LinkResult run_connector(Wire& w, const LinkPlan& plan) {
  LinkResult r;
  w.expect_drained("before the round trips");
  unsigned char ping[kPingBytes] = {};
  const int warm = std::max(1, plan.pings / 10);
  for (int i = 0; i < warm + plan.pings; ++i) {
    const auto t0 = Clock::now();
    w.send_all(ping, sizeof ping, "round trip");
    w.recv_all(ping, sizeof ping, "round trip");
    if (i >= warm) r.rtt_us.push_back(seconds_since(t0) * 1e6);
  }
  r.forward_s = send_reps(w, plan, &r.forward_bad);
  r.backward_bad = receive_reps(w, plan);
  const json back = json::parse(w.read_line("the listener's times"), nullptr, false);
  if (!back.is_object()) throw NetError("the listener's times are not gpucheck's");
  r.backward_s = times_from(back.value("times", json()), static_cast<std::size_t>(plan.reps));
  w.send_line(json{{"rtt_us", r.rtt_us},
                   {"forward_s", r.forward_s},
                   {"forward_bad", bad_json(r.forward_bad)},
                   {"backward_bad", bad_json(r.backward_bad)}}
                  .dump(),
              "the results");
  return r;
}

LinkResult run_listener(Wire& w, const LinkPlan& plan) {
  w.expect_drained("before the round trips");
  unsigned char ping[kPingBytes];
  const int warm = std::max(1, plan.pings / 10);
  for (int i = 0; i < warm + plan.pings; ++i) {
    w.recv_all(ping, sizeof ping, "round trip");
    w.send_all(ping, sizeof ping, "round trip");
  }
  (void)receive_reps(w, plan);  // the connector learns of a wrong byte from the answers
  std::optional<std::uint64_t> backward_bad;
  const std::vector<double> backward = send_reps(w, plan, &backward_bad);
  w.send_line(json{{"times", backward}}.dump(), "the times");
  const json got = json::parse(w.read_line("the connector's results"), nullptr, false);
  if (!got.is_object()) throw NetError("the connector's results are not gpucheck's");
  LinkResult r;
  r.rtt_us = times_from(got.value("rtt_us", json()), static_cast<std::size_t>(plan.pings));
  r.forward_s = times_from(got.value("forward_s", json()), static_cast<std::size_t>(plan.reps));
  r.forward_bad = bad_from(got.value("forward_bad", json()));
  r.backward_s = backward;
  r.backward_bad = backward_bad;
  return r;
}

sockaddr_storage numeric_address(const std::string& addr, std::uint16_t port, socklen_t* len) {
  sockaddr_storage ss{};
  auto* v4 = reinterpret_cast<sockaddr_in*>(&ss);
  auto* v6 = reinterpret_cast<sockaddr_in6*>(&ss);
  if (::inet_pton(AF_INET, addr.c_str(), &v4->sin_addr) == 1) {
    v4->sin_family = AF_INET;
    v4->sin_port = htons(port);
    *len = sizeof *v4;
  } else if (::inet_pton(AF_INET6, addr.c_str(), &v6->sin6_addr) == 1) {
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(port);
    *len = sizeof *v6;
  } else {
    throw NetError(fmt::format("'{}' is not a numeric address", addr));
  }
  return ss;
}

}  // namespace

Socket::~Socket() {
  if (fd_ >= 0) ::close(fd_);
}

Socket& Socket::operator=(Socket&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.release();
  }
  return *this;
}

int Socket::release() {
  return std::exchange(fd_, -1);
}

std::string Endpoint::describe() const {
  return addr.find(':') == std::string::npos ? fmt::format("{}:{}", addr, port)
                                             : fmt::format("[{}]:{}", addr, port);
}

Listener listen_on(const std::string& addr) {
  socklen_t len = 0;
  sockaddr_storage ss = numeric_address(addr, 0, &len);
  Listener l;
  l.socket = Socket(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (l.socket.get() < 0) throw_errno("socket", __FILE__, __LINE__);
  check_call(::bind(l.socket.get(), reinterpret_cast<sockaddr*>(&ss), len), "bind");
  check_call(::listen(l.socket.get(), 64), "listen");
  len = sizeof ss;
  check_call(::getsockname(l.socket.get(), reinterpret_cast<sockaddr*>(&ss), &len), "getsockname");
  l.port = ntohs(ss.ss_family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                         : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  return l;
}

std::string source_address_towards(const std::string& host) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* list = nullptr;
  // A name that does not resolve is the caller's to mend (the rendezvous host, or this host's
  // own name in the file form), not an internal error.
  if (const int rc = ::getaddrinfo(host.c_str(), "9", &hints, &list); rc != 0)
    throw UsageError(fmt::format(
        "cannot resolve '{}', the host whose route gives the address this rank listens on: "
        "getaddrinfo: {}",
        host, rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
  std::unique_ptr<addrinfo, decltype(&::freeaddrinfo)> owned(list, &::freeaddrinfo);
  // A UDP socket's connect sends nothing: it only picks the route, and with it the source.
  Socket s(::socket(list->ai_family, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (s.get() < 0) throw_errno("socket", __FILE__, __LINE__);
  check_call(::connect(s.get(), list->ai_addr, list->ai_addrlen), "connect");
  sockaddr_storage ss{};
  socklen_t len = sizeof ss;
  check_call(::getsockname(s.get(), reinterpret_cast<sockaddr*>(&ss), &len), "getsockname");
  char text[INET6_ADDRSTRLEN] = {};
  const void* a = ss.ss_family == AF_INET
                      ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(&ss)->sin_addr)
                      : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&ss)->sin6_addr);
  if (::inet_ntop(ss.ss_family, a, text, sizeof text) == nullptr)
    throw_errno("inet_ntop", __FILE__, __LINE__);
  return text;
}

LinkResult connect_pair(const Endpoint& to, int self, int peer, const std::string& peer_name,
                        const LinkRun& run, const LinkPlan& plan, Clock::time_point meet_by) {
  socklen_t len = 0;
  const sockaddr_storage ss = numeric_address(to.addr, to.port, &len);
  std::string last = "no attempt";
  // The peer may not listen yet, or its backlog may be full: try again until the meet timeout.
  for (;;) {
    Socket s(::socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (s.get() < 0) throw_errno("socket", __FILE__, __LINE__);
    bool connected = ::connect(s.get(), reinterpret_cast<const sockaddr*>(&ss), len) == 0;
    if (!connected && errno == EINPROGRESS) {
      pollfd p{s.get(), POLLOUT, 0};
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(meet_by - Clock::now()).count();
      int err = 0;
      socklen_t elen = sizeof err;
      const int ready = ::poll(&p, 1, static_cast<int>(std::clamp<long long>(left, 0, 1000)));
      if (ready > 0 && ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &elen) == 0 && err == 0)
        connected = true;
      else if (ready < 0)
        last = errno_text("poll");
      else
        last = ready == 0 ? "connect: no answer" : fmt::format("connect: {}", std::strerror(err));
    } else if (!connected) {
      last = errno_text("connect");
    }
    if (connected) {
      no_delay(s.get());
      Wire w(s.get(), peer_name, plan.idle);
      const auto challenge_words = words(w.read_line("its challenge", meet_by));
      if (challenge_words.size() != 2 || challenge_words[0] != kMagic)
        throw NetError(fmt::format("{} at {} is not a gpucheck rank", peer_name, to.describe()));
      const std::string& challenge = challenge_words[1];
      const std::string nonce = wire::random_hex(16);
      w.send_line(
          fmt::format("{} {} {}", self, nonce, hello_proof(run, challenge, nonce, self, peer)),
          "hello");
      const auto reply = words(w.read_line("its welcome", meet_by));
      if (reply.size() >= 1 && reply[0] == "no")
        throw NetError(fmt::format("{} refused rank {} (its reason: {}); {}", peer_name, self,
                                   reply.size() > 1 ? reply[1] : "none",
                                   "every rank needs the same GPUCHECK_RENDEZVOUS_TOKEN"));
      if (reply.size() != 2 || reply[0] != "ok" ||
          !same_text(reply[1], welcome_proof(run, challenge, nonce, peer, self)))
        throw NetError(fmt::format("{} at {} did not prove it knows the run's token", peer_name,
                                   to.describe()));
      if (w.read_line("its go", meet_by) != "go")
        throw NetError(fmt::format("{} sent something other than its go", peer_name));
      return run_connector(w, plan);
    }
    if (Clock::now() >= meet_by)
      throw NetError(fmt::format("{} at {}: cannot connect by the meet timeout ({})", peer_name,
                                 to.describe(), last));
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

LinkResult accept_pair(const Listener& listener, int self, int peer, const std::string& peer_name,
                       const std::vector<int>& later, Waiting& waiting, const LinkRun& run,
                       const LinkPlan& plan, Clock::time_point meet_by) {
  Socket s;
  if (auto it = waiting.find(peer); it != waiting.end()) {
    s = std::move(it->second);
    waiting.erase(it);
  }
  while (s.get() < 0) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(meet_by - Clock::now()).count();
    if (left <= 0)
      throw NetError(fmt::format("{} did not connect within the meet timeout", peer_name));
    pollfd p{listener.socket.get(), POLLIN, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::min<long long>(left, 1000)));
    if (ready < 0 && errno != EINTR) throw_errno("poll", __FILE__, __LINE__);
    if (ready <= 0) continue;
    Socket c(::accept4(listener.socket.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (c.get() < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR || errno == ECONNABORTED)
        continue;
      throw_errno("accept4", __FILE__, __LINE__);
    }
    no_delay(c.get());
    // A stranger's silence costs kHelloWithin at most; its errors only a line in the log.
    try {
      Wire w(c.get(), "a connection",
             std::chrono::duration_cast<std::chrono::milliseconds>(kHelloWithin));
      const std::string challenge = wire::random_hex(16);
      w.send_line(fmt::format("{} {}", kMagic, challenge), "challenge");
      const auto hello = words(w.read_line("hello", Clock::now() + kHelloWithin));
      int from = -1;
      if (hello.size() == 3) {
        const auto& t = hello[0];
        if (std::from_chars(t.data(), t.data() + t.size(), from).ptr != t.data() + t.size())
          from = -1;
      }
      const bool known = from == peer || std::find(later.begin(), later.end(), from) != later.end();
      std::string why;
      if (hello.size() != 3 || from < 0 || from >= run.world_size)
        why = "not-a-gpucheck-hello";
      else if (!known)
        why = "no-pair-with-this-rank-now";
      else if (!same_text(hello[2], hello_proof(run, challenge, hello[1], from, self)))
        why = "proof-does-not-match";
      if (!why.empty()) {
        spdlog::warn("rank {}: refused a connection on the net link's port ({})", self, why);
        w.send_line("no " + why, "refusal");
        continue;
      }
      w.send_line("ok " + welcome_proof(run, challenge, hello[1], self, from), "welcome");
      w.expect_drained("after the hello");
      if (from == peer)
        s = std::move(c);
      else
        waiting[from] = std::move(c);
    } catch (const NetError& e) {
      spdlog::warn("rank {}: a connection on the net link's port: {}", self, e.what());
    }
  }
  Wire w(s.get(), peer_name, plan.idle);
  w.send_line("go", "go");
  return run_listener(w, plan);
}

void fill_chunk(std::vector<unsigned char>& chunk, std::uint64_t index) {
  chunk.resize(kChunkBytes);
  // A fixed pseudo-random pattern (an LCG's high bytes): no run of equal bytes a link or a
  // compressing middlebox could shorten.
  std::uint64_t x = 0x9e3779b97f4a7c15ull;
  for (std::size_t i = 0; i < chunk.size(); ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    chunk[i] = static_cast<unsigned char>(x >> 56);
  }
  std::memcpy(chunk.data(), &index, sizeof index);
}

std::optional<std::size_t> first_difference(const unsigned char* got, std::size_t n,
                                            std::uint64_t index,
                                            const std::vector<unsigned char>& pattern) {
  unsigned char head[sizeof index];
  std::memcpy(head, &index, sizeof index);
  const std::size_t h = std::min(n, sizeof index);
  for (std::size_t i = 0; i < h; ++i)
    if (got[i] != head[i]) return i;
  if (n <= h || std::memcmp(got + h, pattern.data() + h, n - h) == 0) return std::nullopt;
  for (std::size_t i = h; i < n; ++i)
    if (got[i] != pattern[i]) return i;
  return std::nullopt;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(v.size()));
  const auto i = static_cast<std::size_t>(std::clamp(rank, 1.0, static_cast<double>(v.size())));
  return v[i - 1];
}

}  // namespace gpucheck::net

// The TCP form. Rank 0 listens on the addresses the user named, sends every connection a fresh
// challenge and reads one hello line back; once every rank has joined it replies to each with
// the answer. A connection that does not say hello in time, sends more than a hello's bytes or
// says something else is refused and closed; at most a bounded number wait at once (the oldest
// makes room), so a crowd of idle or chatty strangers costs bounded memory, descriptors and
// time and never keeps a real rank out for long.
#include "core/errors.h"
#include "core/rendezvous_transport.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <deque>
#include <thread>

namespace gpucheck::rendezvous_detail {

namespace {

namespace wire = rendezvous_wire;

// A connection may be made room for once it had this long to say hello (a rank answers the
// challenge within a round trip; a turned-out rank connects again).
constexpr auto kGrace = std::chrono::milliseconds(250);
constexpr std::size_t kMostPending = 256;
// A joined rank has this long to take rank 0's reply.
constexpr auto kReplyWithin = std::chrono::seconds(10);
// A reply: the sealed answer (hex, twice its bytes) and the proof.
constexpr std::size_t kMaxReplyBytes = 2 * wire::kMaxAnswerBytes + 4096;

class Fd {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { reset(); }
  Fd(Fd&& o) noexcept : fd_(o.release()) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = o.release();
    }
    return *this;
  }
  int get() const { return fd_; }
  int release() { return std::exchange(fd_, -1); }
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_;
};

int ms_until(Clock::time_point t) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(t - Clock::now());
  return static_cast<int>(std::clamp<long long>(left.count() + 1, 0, 1000));
}

// Sends the whole line by `until` (a time already past: what the socket takes at once); false
// when the peer went away or did not take it in time.
bool send_line(int fd, const std::string& line, Clock::time_point until) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (Clock::now() >= until) return false;
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, ms_until(until));
      continue;
    }
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

enum class Got { kMore, kLine, kClosed, kTooLong };

// Reads what has arrived into buf; a whole line moves to *line.
Got receive_line(int fd, std::string& buf, std::size_t max_bytes, std::string* line) {
  char chunk[4096];
  const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return Got::kMore;
  if (n <= 0) return Got::kClosed;
  buf.append(chunk, static_cast<std::size_t>(n));
  if (const auto nl = buf.find('\n'); nl != std::string::npos && nl <= max_bytes) {
    *line = buf.substr(0, nl);
    buf.erase(0, nl + 1);
    return Got::kLine;
  }
  return buf.size() > max_bytes ? Got::kTooLong : Got::kMore;
}

// One line from a blocking wait until `until`; false on end of stream, too long, or time out.
bool read_line(int fd, std::string& buf, std::size_t max_bytes, Clock::time_point until,
               std::string* line) {
  if (const auto nl = buf.find('\n'); nl != std::string::npos) {
    *line = buf.substr(0, nl);
    buf.erase(0, nl + 1);
    return true;
  }
  while (Clock::now() <= until) {
    pollfd p{fd, POLLIN, 0};
    if (::poll(&p, 1, ms_until(until)) < 0 && errno != EINTR)
      throw_errno("poll", __FILE__, __LINE__);
    if (p.revents == 0) continue;
    const Got got = receive_line(fd, buf, max_bytes, line);
    if (got == Got::kLine) return true;
    if (got != Got::kMore) return false;
  }
  return false;
}

void set_nonblocking(int fd) {
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) != 0)
    throw_errno("fcntl(O_NONBLOCK)", __FILE__, __LINE__);
}

bool is_wildcard(const addrinfo* a) {
  if (a->ai_family == AF_INET)
    return reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr.s_addr == htonl(INADDR_ANY);
  if (a->ai_family == AF_INET6)
    return IN6_IS_ADDR_UNSPECIFIED(&reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr);
  return false;
}

// A listening socket on every address the host names (both of "localhost", say); UsageError
// when none can be had.
std::vector<Fd> listen_on(const RendezvousPlace& place) {
  const AddressList list = resolve(place);
  std::string why = "no address";
  std::vector<Fd> out;
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) {
      why = fmt::format("socket: {}", std::strerror(errno));
      continue;
    }
    int one = 1, zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    // "::" asked for every address: IPv4 ones as well.
    if (a->ai_family == AF_INET6 && is_wildcard(a))
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0) {
      why = fmt::format("bind: {}", std::strerror(errno));
      continue;
    }
    if (::listen(fd.get(), 128) != 0) {
      why = fmt::format("listen: {}", std::strerror(errno));
      continue;
    }
    set_nonblocking(fd.get());
    out.push_back(std::move(fd));
  }
  if (out.empty())
    throw UsageError(fmt::format(
        "--rendezvous {}: rank 0 cannot listen on port {}: {} (another run or service holds it?)",
        place.describe(), place.port, why));
  return out;
}

// How many connections may wait for their hello: what the descriptor limit leaves after the
// joined ranks and a margin for the rest of the process, at most kMostPending.
std::size_t pending_room(int world_size) {
  rlimit lim{};
  long long room = static_cast<long long>(kMostPending);
  if (::getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur != RLIM_INFINITY)
    room = std::min<long long>(room, static_cast<long long>(lim.rlim_cur) - world_size - 64);
  return static_cast<std::size_t>(std::max<long long>(room, 16));
}

// A connected socket to the place, or an invalid Fd with *last saying why not.
Fd connect_to(const RendezvousPlace& place, Clock::time_point deadline, std::string* last) {
  const AddressList list = resolve(place);
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
    if (s.get() < 0) {
      *last = fmt::format("socket: {}", std::strerror(errno));
      continue;
    }
    if (::connect(s.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
      *last = fmt::format("connect: {}", std::strerror(errno));
      continue;
    }
    pollfd p{s.get(), POLLOUT, 0};
    int err = 0;
    socklen_t len = sizeof err;
    if (::poll(&p, 1, ms_until(deadline)) <= 0 ||
        ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      *last = fmt::format("connect: {}", err != 0 ? std::strerror(err) : "no answer");
      continue;
    }
    return s;
  }
  return Fd();
}

}  // namespace

RendezvousResult tcp_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  const wire::Run run = run_of(q);
  const std::vector<Fd> listeners = listen_on(q.place);
  const auto deadline = deadline_after(q.timeout_s);
  const auto hello_within = std::chrono::duration_cast<Clock::duration>(
      std::chrono::duration<double>(std::max(q.hello_timeout_s, 0.01)));
  const std::size_t room = pending_room(q.world_size);
  struct Peer {
    Fd fd;
    std::string challenge, buf;
    Clock::time_point since;
  };
  struct Member {
    Fd fd;
    std::string challenge, nonce;
  };
  std::deque<Peer> pending;  // oldest first
  std::vector<Member> joined(static_cast<std::size_t>(q.world_size));
  RendezvousResult out;
  out.identities.assign(static_cast<std::size_t>(q.world_size), {});
  out.identities[0] = q.identity;
  std::string refused;  // the last peer turned away, for the timeout's message
  Clock::time_point accept_after{};
  auto missing = [&] {
    std::vector<int> m;
    for (int r = 1; r < q.world_size; ++r)
      if (joined[static_cast<std::size_t>(r)].fd.get() < 0) m.push_back(r);
    return m;
  };
  // Tells the peer why it is turned away (what its socket takes at once) and closes it.
  auto refuse = [&](Peer& p, const std::string& why, const std::string& nonce) {
    send_line(p.fd.get(), wire::refusal_line(q.token, p.challenge, nonce, why), Clock::now());
    refused = why;
    p.fd.reset();
  };
  auto take = [&](Peer& p, const std::string& line) {
    const wire::HelloCheck c = wire::check_hello(line, run, p.challenge);
    if (!c.hello) return refuse(p, c.refusal, c.nonce);
    const int r = c.hello->rank;
    Member& m = joined[static_cast<std::size_t>(r)];
    if (m.fd.get() >= 0)
      return refuse(
          p, fmt::format("rank {} has already joined (two processes were given --rank {})", r, r),
          c.nonce);
    out.identities[static_cast<std::size_t>(r)] = c.hello->identity;
    m = {std::move(p.fd), p.challenge, c.hello->nonce};
  };
  while (!missing().empty()) {
    const auto now = Clock::now();
    if (now > deadline) {
      std::string tail =
          refused.empty() ? "" : fmt::format(" (a peer was turned away: {})", refused);
      throw UsageError(fmt::format("{} on port {} for rank(s) {}{}: {}", waited(q), q.place.port,
                                   ranks_text(missing()), tail, kHint));
    }
    for (auto& p : pending)
      if (now - p.since > hello_within)
        refuse(p, fmt::format("no hello within {} s", q.hello_timeout_s), "");
    std::erase_if(pending, [](const Peer& p) { return p.fd.get() < 0; });
    // At the limit, connections that had their grace make room; until then (or while the
    // process is out of descriptors) new ones wait in the kernel's queue.
    if (pending.size() >= room)
      std::erase_if(pending, [&](const Peer& p) { return now - p.since >= kGrace; });
    const bool accepting = pending.size() < room && now >= accept_after;
    Clock::time_point wake = deadline;
    for (const auto& p : pending) wake = std::min(wake, p.since + hello_within);
    if (pending.size() >= room) wake = std::min(wake, pending.front().since + kGrace);
    if (!accepting && pending.size() < room) wake = std::min(wake, accept_after);
    std::vector<pollfd> fds;
    for (const auto& l : listeners) fds.push_back({accepting ? l.get() : -1, POLLIN, 0});
    for (const auto& p : pending) fds.push_back({p.fd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), ms_until(wake)) < 0 && errno != EINTR)
      throw_errno("poll", __FILE__, __LINE__);
    for (std::size_t i = 0; i < pending.size(); ++i) {
      if (fds[listeners.size() + i].revents == 0) continue;
      Peer& p = pending[i];
      std::string line;
      switch (receive_line(p.fd.get(), p.buf, wire::kMaxHelloBytes, &line)) {
        case Got::kLine:
          take(p, line);
          p.fd.reset();  // joined (moved) or refused
          break;
        case Got::kTooLong:
          refuse(p, fmt::format("a hello longer than {} bytes", wire::kMaxHelloBytes), "");
          break;
        case Got::kClosed:
          p.fd.reset();
          break;
        case Got::kMore:
          break;
      }
    }
    std::erase_if(pending, [](const Peer& p) { return p.fd.get() < 0; });
    for (std::size_t i = 0; i < listeners.size(); ++i) {
      if ((fds[i].revents & POLLIN) == 0) continue;
      // At most the room left, so a crowd arriving at once cannot push out a peer whose hello
      // is on its way before it is read.
      while (pending.size() < room) {
        Fd c(::accept4(listeners[i].get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
        if (c.get() < 0) {
          // Out of descriptors: the connection stays queued; try again shortly, not at once.
          if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
            accept_after = Clock::now() + kPoll;
          break;
        }
        Peer p{std::move(c), wire::random_hex(16), {}, Clock::now()};
        if (send_line(p.fd.get(), wire::challenge_line(p.challenge), Clock::now()))
          pending.push_back(std::move(p));
      }
    }
  }
  out.answer = answer(out.identities);
  const auto until = Clock::now() + kReplyWithin;
  for (int r = 1; r < q.world_size; ++r) {
    const Member& m = joined[static_cast<std::size_t>(r)];
    send_line(m.fd.get(), wire::answer_line(q.token, m.challenge, m.nonce, out.answer), until);
  }
  return out;
}

RendezvousResult tcp_rank(const RendezvousRequest& q) {
  const wire::Run run = run_of(q);
  const auto deadline = deadline_after(q.timeout_s);
  std::string last = "nothing listened there";
  std::string unproven;  // a reply not believed: worth naming even when later tries say less
  for (bool first = true; Clock::now() <= deadline; first = false) {
    if (!first) std::this_thread::sleep_for(kPoll * 2);
    const Fd fd = connect_to(q.place, deadline, &last);
    if (fd.get() < 0) continue;
    std::string buf, line;
    if (!read_line(fd.get(), buf, wire::kMaxHelloBytes, deadline, &line)) {
      last = Clock::now() <= deadline ? "rank 0 closed the connection before its challenge"
                                      : "what listens there sent no challenge";
      continue;
    }
    const auto challenge = wire::read_challenge(line);
    if (!challenge) {
      last = "what listens there is not gpucheck's rank 0 (of this version)";
      continue;
    }
    const std::string nonce = wire::random_hex(16);
    if (!send_line(fd.get(), wire::hello_text(run, *challenge, q.rank, nonce, q.identity),
                   deadline)) {
      last = "rank 0 closed the connection before the hello";
      continue;
    }
    if (!read_line(fd.get(), buf, kMaxReplyBytes, deadline, &line)) {
      last = Clock::now() <= deadline
                 ? "rank 0 closed the connection without an answer"
                 : "rank 0 accepted this rank but did not answer: not every rank came";
      continue;
    }
    const wire::Reply reply = wire::read_reply(line, q.token, *challenge, nonce);
    if (reply.answer) return {*reply.answer, {}};
    if (reply.refusal)
      throw UsageError(fmt::format("--rendezvous {}: rank 0 turned rank {} away: {}",
                                   q.place.describe(), q.rank, *reply.refusal));
    last = unproven = "rank 0 replied with " + reply.unproven;
  }
  if (!unproven.empty() && unproven != last) last += fmt::format(" (before that: {})", unproven);
  throw UsageError(
      fmt::format("{} for rank 0 at {}: {}; {}", waited(q), q.place.describe(), last, kHint));
}

}  // namespace gpucheck::rendezvous_detail

// The two meeting places. File: rank 0 writes FILE (a fresh token), each rank answers with
// FILE.rank<N> (the token and a nonce of its own), rank 0 rewrites FILE with the answer and every
// nonce it accepted; every write is a rename, so no reader sees half a file. Each rank removes
// its answer once it has read rank 0's, and rank 0 then removes FILE. TCP: rank 0 listens,
// each rank connects, sends one line and reads one line back.
#include "core/rendezvous.h"

#include "core/errors.h"
#include "core/files.h"
#include "core/json_input.h"

#include <fmt/format.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <random>
#include <thread>

namespace gpucheck {

namespace {

using Clock = std::chrono::steady_clock;
using nlohmann::json;

constexpr const char* kMagic = "gpucheck-rendezvous/1";
constexpr auto kPoll = std::chrono::milliseconds(50);
constexpr std::size_t kMaxMessage = std::size_t{1} << 20;

std::string random_hex() {
  std::random_device rd;
  std::uint64_t v = (std::uint64_t{rd()} << 32) ^ rd() ^
                    static_cast<std::uint64_t>(Clock::now().time_since_epoch().count()) ^
                    (static_cast<std::uint64_t>(::getpid()) << 16);
  return fmt::format("{:016x}", v);
}

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

std::string ranks_text(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

std::string waited(const RendezvousRequest& q) {
  return fmt::format("--rendezvous {}: rank {} of {} waited {} s", q.place.describe(), q.rank,
                     q.world_size, q.timeout_s);
}

// Every rank must give the same --world-size and --rendezvous, and start within the timeout.
constexpr const char* kHint =
    "every rank needs the same --rendezvous and --world-size and must start within "
    "--rendezvous-timeout of the others";

// ---- the file form ----

void write_atomic(const std::string& path, const std::string& text) {
  const std::string tmp = fmt::format("{}.tmp.{}.{}", path, host_name(), ::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    throw UsageError(
        fmt::format("--rendezvous {}: cannot write '{}': {}", path, tmp, std::strerror(errno)));
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      ::unlink(tmp.c_str());
      throw UsageError(
          fmt::format("--rendezvous {}: cannot write '{}': {}", path, tmp, std::strerror(e)));
    }
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw UsageError(
        fmt::format("--rendezvous {}: cannot rename '{}' to it: {}", path, tmp, std::strerror(e)));
  }
}

json read_json_file(const std::string& path) {
  auto text = read_text_file(path, kMaxMessage);
  if (!text) return json();
  return parse_json_or_discarded(*text);
}

std::string rank_file(const std::string& file, int rank) {
  return fmt::format("{}.rank{}", file, rank);
}

RendezvousResult file_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  const std::string& file = q.place.file;
  json head = {{"magic", kMagic},      {"token", random_hex()}, {"world_size", q.world_size},
               {"session", q.session}, {"created", unix_now()}, {"host", host_name()},
               {"pid", ::getpid()},    {"phase", "meet"}};
  write_atomic(file, head.dump());
  const auto deadline = deadline_after(q.timeout_s);
  RendezvousResult out;
  out.identities.assign(static_cast<std::size_t>(q.world_size), {});
  out.identities[0] = q.identity;
  json members = json::object();
  std::vector<bool> met(static_cast<std::size_t>(q.world_size), false);
  met[0] = true;
  while (true) {
    std::vector<int> missing;
    for (int r = 1; r < q.world_size; ++r) {
      if (met[static_cast<std::size_t>(r)]) continue;
      json j = read_json_file(rank_file(file, r));
      if (j.is_object() && j.value("token", "") == head["token"] && j.value("rank", -1) == r &&
          j.contains("identity") && j["identity"].is_string()) {
        met[static_cast<std::size_t>(r)] = true;
        out.identities[static_cast<std::size_t>(r)] = j["identity"].get<std::string>();
        members[std::to_string(r)] = j.value("nonce", "");
      } else {
        missing.push_back(r);
      }
    }
    if (missing.empty()) break;
    if (Clock::now() > deadline)
      throw UsageError(fmt::format(
          "{} for rank(s) {} (each answers {} with {}.rank<N>; none came from {}): {}", waited(q),
          ranks_text(missing), file, file, missing.size() == 1 ? "it" : "them", kHint));
    std::this_thread::sleep_for(kPoll);
  }
  out.answer = answer(out.identities);
  head["phase"] = "go";
  head["members"] = members;
  head["answer"] = out.answer;
  write_atomic(file, head.dump());
  // Each rank removes its answer once it has read rank 0's: then no rank needs the file, and a
  // later run must not read it. A rank that never says so leaves it for retire_rendezvous.
  while (Clock::now() <= deadline) {
    bool all_read = true;
    for (int r = 1; r < q.world_size && all_read; ++r)
      all_read = ::access(rank_file(file, r).c_str(), F_OK) != 0;
    if (all_read) {
      ::unlink(file.c_str());
      break;
    }
    std::this_thread::sleep_for(kPoll);
  }
  return out;
}

RendezvousResult file_rank(const RendezvousRequest& q) {
  const std::string& file = q.place.file;
  const double started = unix_now();
  const auto deadline = deadline_after(q.timeout_s);
  const std::string nonce = random_hex();
  std::string answered;  // the token of rank 0's file this rank answered
  std::string last = fmt::format("no '{}' was written", file);
  while (true) {
    json j = read_json_file(file);
    if (!j.is_null()) {
      if (!j.is_object() || j.value("magic", "") != kMagic) {
        last = fmt::format("'{}' is not a gpucheck rendezvous file", file);
      } else if (j.value("session", "") != q.session) {
        last = fmt::format("'{}' is stale: written for run '{}', this is run '{}'", file,
                           j.value("session", ""), q.session);
      } else if (j.value("created", 0.0) < started - q.timeout_s) {
        last = fmt::format(
            "'{}' is stale: written by {} (pid {}) {:.0f} s before this rank started, longer "
            "ago than --rendezvous-timeout; rank 0 of this run never rewrote it",
            file, j.value("host", "?"), j.value("pid", 0), started - j.value("created", 0.0));
      } else if (j.value("world_size", -1) != q.world_size) {
        throw UsageError(fmt::format(
            "--rendezvous {}: rank 0 ({} pid {}) runs a world of {} ranks, this rank was given "
            "--world-size {}: {}",
            file, j.value("host", "?"), j.value("pid", 0), j.value("world_size", -1), q.world_size,
            kHint));
      } else {
        const std::string token = j.value("token", "");
        const bool go = j.value("phase", "") == "go";
        if (go && token == answered) {
          const json& m = j.value("members", json::object());
          if (m.value(std::to_string(q.rank), "") == nonce && j.contains("answer")) {
            ::unlink(rank_file(file, q.rank).c_str());  // read: rank 0 may remove the file
            return {j["answer"].get<std::string>(), {}};
          }
        }
        if (go) {
          last =
              fmt::format("'{}' is stale: its ranks met without this rank (written by {} pid {})",
                          file, j.value("host", "?"), j.value("pid", 0));
        } else if (token != answered) {
          json mine = {
              {"token", token}, {"rank", q.rank}, {"nonce", nonce}, {"identity", q.identity}};
          write_atomic(rank_file(file, q.rank), mine.dump());
          answered = token;
          last = fmt::format("rank 0 ({} pid {}) never answered: the other ranks did not all come",
                             j.value("host", "?"), j.value("pid", 0));
        }
      }
    }
    if (Clock::now() > deadline)
      throw UsageError(fmt::format("{} for rank 0 at {}: {}; {}", waited(q), file, last, kHint));
    std::this_thread::sleep_for(kPoll);
  }
}

// ---- the TCP form ----

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

int ms_left(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return static_cast<int>(std::clamp<long long>(left.count(), 0, 1000));
}

void set_nonblocking(int fd, bool on) {
  const int flags = ::fcntl(fd, F_GETFL);
  ::fcntl(fd, F_SETFL, on ? flags | O_NONBLOCK : flags & ~O_NONBLOCK);
}

// Sends the whole line; false when the peer went away.
bool send_line(int fd, const std::string& line) {
  const std::string text = line + "\n";
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd p{fd, POLLOUT, 0};
      ::poll(&p, 1, 1000);
      continue;
    }
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// Reads what has arrived into buf: false on end of stream or error.
bool receive_some(int fd, std::string& buf) {
  char chunk[4096];
  const ssize_t n = ::recv(fd, chunk, sizeof chunk, 0);
  if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) return true;
  if (n <= 0) return false;
  buf.append(chunk, static_cast<std::size_t>(n));
  return buf.size() <= kMaxMessage;
}

addrinfo* resolve(const RendezvousPlace& place, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  if (passive) hints.ai_flags = AI_PASSIVE;
  addrinfo* res = nullptr;
  const std::string port = std::to_string(place.port);
  const int rc = ::getaddrinfo(passive ? nullptr : place.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0)
    throw UsageError(fmt::format("--rendezvous {}: cannot resolve '{}': {}", place.describe(),
                                 place.host, ::gai_strerror(rc)));
  return res;
}

Fd listen_on(const RendezvousPlace& place) {
  addrinfo* res = resolve(place, true);
  std::string why = "no address";
  Fd out;
  for (addrinfo* a = res; a != nullptr && out.get() < 0; a = a->ai_next) {
    Fd fd(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    if (fd.get() < 0) continue;
    int one = 1, zero = 0;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (a->ai_family == AF_INET6)
      ::setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof zero);
    if (::bind(fd.get(), a->ai_addr, a->ai_addrlen) != 0 || ::listen(fd.get(), 128) != 0) {
      why = std::strerror(errno);
      continue;
    }
    out = std::move(fd);
  }
  ::freeaddrinfo(res);
  if (out.get() < 0)
    throw UsageError(fmt::format(
        "--rendezvous {}: rank 0 cannot listen on port {}: {} (another run or service holds it?)",
        place.describe(), place.port, why));
  set_nonblocking(out.get(), true);
  return out;
}

RendezvousResult tcp_rank0(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  Fd listener = listen_on(q.place);
  const auto deadline = deadline_after(q.timeout_s);
  struct Pending {
    Fd fd;
    std::string buf;
  };
  std::vector<Pending> pending;
  std::vector<Fd> joined(static_cast<std::size_t>(q.world_size));
  RendezvousResult out;
  out.identities.assign(static_cast<std::size_t>(q.world_size), {});
  out.identities[0] = q.identity;
  std::string refused;  // the last peer turned away, for the timeout's message
  auto missing = [&] {
    std::vector<int> m;
    for (int r = 1; r < q.world_size; ++r)
      if (joined[static_cast<std::size_t>(r)].get() < 0) m.push_back(r);
    return m;
  };
  // One hello line from a peer: joins it, or answers why not and closes it.
  auto take = [&](Pending& p, const std::string& line) {
    json h = parse_json_or_discarded(line);
    std::string error;
    const int r = h.is_object() ? h.value("rank", -1) : -1;
    if (!h.is_object() || h.value("magic", "") != kMagic)
      error = "not a gpucheck rendezvous hello";
    else if (h.value("session", "") != q.session)
      error = fmt::format("run '{}' is not this run ('{}')", h.value("session", ""), q.session);
    else if (h.value("world_size", -1) != q.world_size)
      error = fmt::format("rank 0 runs a world of {} ranks, the peer says --world-size {}",
                          q.world_size, h.value("world_size", -1));
    else if (r < 1 || r >= q.world_size)
      error = fmt::format("rank {} is not a rank of a world of {}", r, q.world_size);
    else if (joined[static_cast<std::size_t>(r)].get() >= 0)
      error = fmt::format("rank {} has already joined (two processes were given --rank {})", r, r);
    if (!error.empty()) {
      send_line(p.fd.get(), json{{"error", error}}.dump());
      refused = error;
      return;
    }
    out.identities[static_cast<std::size_t>(r)] = h.value("identity", "");
    joined[static_cast<std::size_t>(r)] = std::move(p.fd);
  };
  while (!missing().empty()) {
    if (Clock::now() > deadline) {
      std::string tail =
          refused.empty() ? "" : fmt::format(" (a peer was turned away: {})", refused);
      throw UsageError(fmt::format("{} on port {} for rank(s) {}{}: {}", waited(q), q.place.port,
                                   ranks_text(missing()), tail, kHint));
    }
    std::vector<pollfd> fds = {{listener.get(), POLLIN, 0}};
    for (auto& p : pending) fds.push_back({p.fd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), ms_left(deadline)) < 0 && errno != EINTR)
      throw_errno("poll", __FILE__, __LINE__);
    for (std::size_t i = 1; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Pending& p = pending[i - 1];
      const bool alive = receive_some(p.fd.get(), p.buf);
      if (auto nl = p.buf.find('\n'); nl != std::string::npos)
        take(p, p.buf.substr(0, nl));
      else if (alive)
        continue;
      p.fd.reset();
    }
    std::erase_if(pending, [](const Pending& p) { return p.fd.get() < 0; });
    if (fds[0].revents & POLLIN) {
      Fd c(::accept4(listener.get(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
      if (c.get() >= 0) pending.push_back({std::move(c), {}});
    }
  }
  out.answer = answer(out.identities);
  const std::string line = json{{"answer", out.answer}}.dump();
  for (int r = 1; r < q.world_size; ++r) send_line(joined[static_cast<std::size_t>(r)].get(), line);
  return out;
}

RendezvousResult tcp_rank(const RendezvousRequest& q) {
  const auto deadline = deadline_after(q.timeout_s);
  const std::string hello = json{
      {"magic", kMagic},
      {"rank", q.rank},
      {"world_size", q.world_size},
      {"session", q.session},
      {"identity", q.identity}}.dump();
  std::string last = "nothing listened there";
  for (bool first = true; Clock::now() <= deadline; first = false) {
    if (!first) std::this_thread::sleep_for(kPoll * 2);
    addrinfo* res = resolve(q.place, false);
    Fd fd;
    for (addrinfo* a = res; a != nullptr && fd.get() < 0; a = a->ai_next) {
      Fd s(::socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, a->ai_protocol));
      if (s.get() < 0) continue;
      if (::connect(s.get(), a->ai_addr, a->ai_addrlen) != 0 && errno != EINPROGRESS) {
        last = fmt::format("connecting: {}", std::strerror(errno));
        continue;
      }
      pollfd p{s.get(), POLLOUT, 0};
      int err = 0;
      socklen_t len = sizeof err;
      if (::poll(&p, 1, ms_left(deadline)) <= 0 ||
          ::getsockopt(s.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
        last = fmt::format("connecting: {}", err != 0 ? std::strerror(err) : "no answer");
        continue;
      }
      fd = std::move(s);
    }
    ::freeaddrinfo(res);
    if (fd.get() < 0) continue;
    if (!send_line(fd.get(), hello)) {
      last = "rank 0 closed the connection before the hello";
      continue;
    }
    std::string buf;
    while (buf.find('\n') == std::string::npos) {
      pollfd p{fd.get(), POLLIN, 0};
      if (Clock::now() > deadline) {
        last = "rank 0 accepted this rank but did not answer: not every rank came";
        break;
      }
      if (::poll(&p, 1, ms_left(deadline)) < 0 && errno != EINTR)
        throw_errno("poll", __FILE__, __LINE__);
      if (p.revents != 0 && !receive_some(fd.get(), buf)) break;
    }
    const auto nl = buf.find('\n');
    if (nl == std::string::npos) {
      if (Clock::now() <= deadline) last = "rank 0 closed the connection without an answer";
      continue;
    }
    json reply = parse_json_or_discarded(buf.substr(0, nl));
    if (reply.is_object() && reply.contains("error"))
      throw UsageError(fmt::format("--rendezvous {}: rank 0 turned rank {} away: {}",
                                   q.place.describe(), q.rank, reply.value("error", "")));
    if (!reply.is_object() || !reply.contains("answer") || !reply["answer"].is_string())
      throw UsageError(fmt::format("--rendezvous {}: what answered is not gpucheck's rank 0",
                                   q.place.describe()));
    return {reply["answer"].get<std::string>(), {}};
  }
  throw UsageError(
      fmt::format("{} for rank 0 at {}: {}; {}", waited(q), q.place.describe(), last, kHint));
}

}  // namespace

std::string RendezvousPlace::describe() const {
  return tcp() ? fmt::format("{}:{}", host, port) : file;
}

RendezvousPlace parse_rendezvous(const std::string& text) {
  if (text.empty()) throw UsageError("--rendezvous: empty (FILE or HOST:PORT)");
  RendezvousPlace p;
  const auto colon = text.rfind(':');
  const bool digits = colon != std::string::npos && colon + 1 < text.size() &&
                      std::all_of(text.begin() + static_cast<long>(colon) + 1, text.end(),
                                  [](unsigned char c) { return c >= '0' && c <= '9'; });
  if (!digits || text.find('/') != std::string::npos) {
    p.file = text;
    return p;
  }
  unsigned port = 0;
  auto r = std::from_chars(text.data() + colon + 1, text.data() + text.size(), port);
  if (r.ec != std::errc() || port < 1 || port > 65535)
    throw UsageError(fmt::format("--rendezvous {}: port must be 1 to 65535", text));
  p.host = text.substr(0, colon);
  if (p.host.size() >= 2 && p.host.front() == '[' && p.host.back() == ']')
    p.host = p.host.substr(1, p.host.size() - 2);
  if (p.host.empty())
    throw UsageError(fmt::format("--rendezvous {}: no host before the port (HOST:PORT)", text));
  p.port = static_cast<std::uint16_t>(port);
  return p;
}

RendezvousResult rendezvous(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  if (q.world_size < 1 || q.rank < 0 || q.rank >= q.world_size)
    throw std::logic_error("rendezvous: rank outside the world");
  if (q.world_size == 1) return {answer({q.identity}), {q.identity}};
  if (q.place.tcp()) return q.rank == 0 ? tcp_rank0(q, answer) : tcp_rank(q);
  return q.rank == 0 ? file_rank0(q, answer) : file_rank(q);
}

void retire_rendezvous(const RendezvousPlace& place) {
  if (!place.tcp()) ::unlink(place.file.c_str());
}

}  // namespace gpucheck

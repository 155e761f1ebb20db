// Where the ranks meet, whether meeting there is safe, and which of the two ways (a file,
// rendezvous_file.cpp; TCP, rendezvous_tcp.cpp) each rank takes.
#include "core/rendezvous.h"

#include "core/errors.h"
#include "core/rendezvous_transport.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>

namespace gpucheck {

namespace rendezvous_detail {

Clock::time_point deadline_after(double seconds) {
  return Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
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

rendezvous_wire::Run run_of(const RendezvousRequest& q) {
  return {q.session, q.world_size, q.token};
}

AddressList resolve(const RendezvousPlace& place) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;  // only used when the host is a wildcard (0.0.0.0, ::)
  addrinfo* res = nullptr;
  const std::string port = std::to_string(place.port);
  const int rc = ::getaddrinfo(place.host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0)
    throw UsageError(fmt::format("--rendezvous {}: cannot resolve '{}': getaddrinfo: {}",
                                 place.describe(), place.host,
                                 rc == EAI_SYSTEM ? std::strerror(errno) : ::gai_strerror(rc)));
  return {res, &::freeaddrinfo};
}

bool loopback_only(const RendezvousPlace& place) {
  const AddressList list = resolve(place);
  for (const addrinfo* a = list.get(); a != nullptr; a = a->ai_next) {
    if (a->ai_family == AF_INET) {
      const auto* in = reinterpret_cast<const sockaddr_in*>(a->ai_addr);
      if ((ntohl(in->sin_addr.s_addr) >> 24) != 127) return false;
    } else if (a->ai_family == AF_INET6) {
      const auto* in6 = reinterpret_cast<const sockaddr_in6*>(a->ai_addr);
      const bool mapped_loopback =
          IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr) && in6->sin6_addr.s6_addr[12] == 127;
      if (!IN6_IS_ADDR_LOOPBACK(&in6->sin6_addr) && !mapped_loopback) return false;
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace rendezvous_detail

namespace {

namespace transport = rendezvous_detail;
namespace wire = rendezvous_wire;

void check_directory(const std::string& file) {
  std::string dir = std::filesystem::path(file).parent_path().string();
  if (dir.empty()) dir = ".";
  struct stat st {};
  if (::stat(dir.c_str(), &st) != 0)
    throw UsageError(fmt::format("--rendezvous {}: cannot use its directory '{}': stat: {}", file,
                                 dir, std::strerror(errno)));
  if ((st.st_mode & S_IWOTH) != 0)
    throw UsageError(fmt::format(
        "--rendezvous {}: its directory '{}' is writable by every user, so another "
        "user could plant files where the ranks meet: name a FILE in a directory only you (or "
        "your group) can write, on a file system every rank sees",
        file, dir));
}

}  // namespace

std::string RendezvousPlace::describe() const {
  if (!tcp()) return file;
  return host.find(':') != std::string::npos ? fmt::format("[{}]:{}", host, port)
                                             : fmt::format("{}:{}", host, port);
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

void check_rendezvous_place(const RendezvousPlace& place, const std::string& token) {
  if (!token.empty() && token.size() < wire::kMinTokenChars)
    throw UsageError(fmt::format(
        "{}: {} characters are too few to be a secret; give at least {} random ones (for example "
        "`head -c 32 /dev/urandom | base64`)",
        wire::kTokenVariable, token.size(), wire::kMinTokenChars));
  if (!place.tcp()) {
    check_directory(place.file);
  } else if (token.empty() && !transport::loopback_only(place)) {
    throw UsageError(fmt::format(
        "--rendezvous {}: other hosts can reach this address, so every rank must prove it "
        "knows a secret: set {} to the same random text (at least {} characters) in every "
        "rank's environment (srun passes it on; docs/FLEET.md says how), or meet on 127.0.0.1 "
        "when every rank runs on this host",
        place.describe(), wire::kTokenVariable, wire::kMinTokenChars));
  }
}

RendezvousResult rendezvous(const RendezvousRequest& q, const RendezvousAnswer& answer) {
  if (q.world_size < 1 || q.rank < 0 || q.rank >= q.world_size)
    throw std::logic_error("rendezvous: rank outside the world");
  if (q.world_size == 1) return {answer({q.identity}), {q.identity}};
  check_rendezvous_place(q.place, q.token);
  if (q.place.tcp()) return q.rank == 0 ? transport::tcp_rank0(q, answer) : transport::tcp_rank(q);
  return q.rank == 0 ? transport::file_rank0(q, answer) : transport::file_rank(q);
}

void retire_rendezvous(const RendezvousPlace& place) {
  if (!place.tcp()) transport::retire_file(place.file);
}

}  // namespace gpucheck

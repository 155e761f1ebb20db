// The rendezvous against strangers: bad bytes from a peer are refused and rank 0
// carries on; rank 0 listens only where it was asked (IPv6 too); with a token, a peer or a rank
// 0 that cannot prove it knows it is not believed and the token never travels; idle, endless
// and crowding connections cost bounded time and bytes; rendezvous files are created afresh,
// never through a planted link, and a file gpucheck did not write is never replaced or removed.
#include "core/errors.h"
#include "core/rendezvous.h"
#include "core/rendezvous_wire.h"

#include "../free_port.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <thread>

namespace {

namespace fs = std::filesystem;
namespace wire = gpucheck::rendezvous_wire;
using namespace gpucheck;
using gpucheck::testing::free_port;
using ::testing::HasSubstr;
using ::testing::Not;
using Json = nlohmann::json;

constexpr const char* kToken = "a-test-secret-of-32-characters!!";

std::string private_dir() {
  const fs::path dir =
      fs::temp_directory_path() / ("gpucheck-rdvs-" + std::to_string(::getpid()) + "-" +
                                   ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  fs::permissions(dir, fs::perms::owner_all);
  return dir.string();
}

RendezvousRequest request(const std::string& where, int rank, int world, double timeout,
                          const std::string& token = "") {
  RendezvousRequest q;
  q.place = parse_rendezvous(where);
  q.rank = rank;
  q.world_size = world;
  q.timeout_s = timeout;
  q.identity = "id-of-" + std::to_string(rank);
  q.token = token;
  return q;
}

std::string join_ids(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& i : ids) s += i + ";";
  return s;
}

// rendezvous() in a thread: its answer (rank 0: and the identities) or "error: ...".
std::future<std::string> start(RendezvousRequest q) {
  return std::async(std::launch::async, [q] {
    try {
      auto res = rendezvous(q, join_ids);
      return res.answer + (q.rank == 0 ? "|" + join_ids(res.identities) : "");
    } catch (const UsageError& e) {
      return std::string("error: ") + e.what();
    } catch (const std::exception& e) {
      return std::string("crash: ") + e.what();
    }
  });
}

// A raw TCP client: a stranger, or the test speaking for a rank.
class Client {
 public:
  // Connects to 127.0.0.1:port, waiting up to 5 s for rank 0 to listen.
  explicit Client(std::uint16_t port) {
    for (int i = 0; i < 100 && fd_ < 0; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) {
        fd_ = fd;
      } else {
        ::close(fd);
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
      }
    }
  }
  ~Client() {
    if (fd_ >= 0) ::close(fd_);
  }
  bool connected() const { return fd_ >= 0; }
  bool send_text(const std::string& text) {
    return ::send(fd_, text.data(), text.size(), MSG_NOSIGNAL) == static_cast<ssize_t>(text.size());
  }
  // One line, or "<closed>" / "<silent>" (nothing within `seconds`).
  std::string line(double seconds = 5) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (buf_.find('\n') == std::string::npos) {
      if (std::chrono::steady_clock::now() > until) return "<silent>";
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, 50) <= 0) continue;
      char chunk[4096];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0) return "<closed>";
      buf_.append(chunk, static_cast<std::size_t>(n));
    }
    const auto nl = buf_.find('\n');
    std::string out = buf_.substr(0, nl);
    buf_.erase(0, nl + 1);
    return out;
  }

 private:
  int fd_ = -1;
  std::string buf_;
};

std::string challenge_of(const std::string& line) {
  return Json::parse(line, nullptr, false).value("challenge", std::string());
}

TEST(RendezvousSecurity, BadHelloBytesAreRefusedAndRankZeroCarriesOn) {
  const std::uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto zero = start(request(where, 0, 2, 20));
  const std::vector<std::string> bad = {
      R"({"magic":5})",
      "not json at all",
      "\x1b[31m\xff\xfe",
      R"({"magic":"gpucheck-rendezvous/2","rank":"1","world_size":2,"session":"","nonce":"00000000000000000000000000000000","identity":"x"})",
      R"({"magic":"gpucheck-rendezvous/2","rank":1,"world_size":2,"session":7,"nonce":"00000000000000000000000000000000","identity":"x"})",
      R"({"magic":"gpucheck-rendezvous/2","rank":1,"world_size":2,"session":"","nonce":"00000000000000000000000000000000","identity":{"a":1}})",
      R"({"magic":"gpucheck-rendezvous/2","rank":18446744073709551615,"world_size":2.5,"session":""})",
  };
  for (const auto& text : bad) {
    Client c(port);
    ASSERT_TRUE(c.connected());
    const std::string challenge = c.line();
    ASSERT_EQ(challenge_of(challenge).size(), 32u) << challenge;
    ASSERT_TRUE(c.send_text(text + "\n"));
    const std::string reply = c.line();
    EXPECT_THAT(reply, HasSubstr("\"error\"")) << text;
  }
  // Rank 0 is still there for the real rank 1.
  const std::string one = start(request(where, 1, 2, 20)).get();
  EXPECT_EQ(one, "id-of-0;id-of-1;");
  EXPECT_EQ(zero.get(), "id-of-0;id-of-1;|id-of-0;id-of-1;");
}

TEST(RendezvousSecurity, AFileOfBadTypesIsRefusedNotFatal) {
  const std::string file = private_dir() + "/rdv";
  const Json good_head = {{"magic", "gpucheck-rendezvous/2"},
                          {"challenge", "0123456789abcdef0123456789abcdef"},
                          {"world_size", 2},
                          {"session", ""},
                          {"created", 1e12},
                          {"host", "n1"},
                          {"pid", 1},
                          {"phase", "meet"}};
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, Json>>{{"world_size", "2"},
                                                 {"pid", "1"},
                                                 {"session", 5},
                                                 {"challenge", 12},
                                                 {"created", "now"},
                                                 {"phase", Json::array()}}) {
    Json head = good_head;
    head[key] = value;
    std::ofstream(file) << head.dump();
    try {
      rendezvous(request(file, 1, 2, 0.2), join_ids);
      FAIL() << key << ": no error";
    } catch (const UsageError& e) {
      EXPECT_THAT(e.what(), HasSubstr("is no rendezvous file of this run")) << key;
    } catch (const std::exception& e) {
      FAIL() << key << ": " << e.what();
    }
  }
}

TEST(RendezvousSecurity, RankZeroListensOnlyWhereAsked) {
  const std::uint16_t port = free_port();
  auto zero = start(request("127.0.0.1:" + std::to_string(port), 0, 2, 1.5));
  Client c(port);  // listening now
  ASSERT_TRUE(c.connected());
  // Another loopback address, same port: free unless rank 0 took every address (0.0.0.0).
  const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  a.sin_addr.s_addr = htonl(0x7f000002);  // 127.0.0.2
  EXPECT_EQ(::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0) << std::strerror(errno);
  ::close(fd);
  EXPECT_THAT(zero.get(), HasSubstr("for rank(s) 1"));
}

TEST(RendezvousSecurity, RanksMeetOverIpv6) {
  const int probe = ::socket(AF_INET6, SOCK_STREAM, 0);
  sockaddr_in6 a{};
  a.sin6_family = AF_INET6;
  a.sin6_addr = in6addr_loopback;
  const bool have_v6 = probe >= 0 && ::bind(probe, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0;
  if (probe >= 0) ::close(probe);
  if (!have_v6) GTEST_SKIP() << "no IPv6 loopback here";
  const std::string where = "[::1]:" + std::to_string(free_port());
  auto zero = start(request(where, 0, 2, 10));
  EXPECT_EQ(start(request(where, 1, 2, 10)).get(), "id-of-0;id-of-1;");
  EXPECT_EQ(zero.get(), "id-of-0;id-of-1;|id-of-0;id-of-1;");
}

TEST(RendezvousSecurity, AStrangerWithoutTheTokenIsTurnedAwayAndLearnsNothing) {
  const std::uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  auto zero = start(request(where, 0, 2, 20, kToken));
  {
    Client stranger(port);
    ASSERT_TRUE(stranger.connected());
    const std::string challenge = challenge_of(stranger.line());
    ASSERT_EQ(challenge.size(), 32u);
    // A well-formed hello with a proof made with the wrong secret.
    const wire::Run wrong{"", 2, "not-the-secret-but-long-enough"};
    ASSERT_TRUE(stranger.send_text(
        wire::hello_text(wrong, challenge, 1, wire::random_hex(16), "evil\x1b]0;host") + "\n"));
    const std::string reply = stranger.line();
    EXPECT_THAT(reply, HasSubstr("does not prove it knows this run's secret"));
    EXPECT_THAT(reply, Not(HasSubstr("answer")));
    EXPECT_THAT(reply, Not(HasSubstr(kToken)));
  }
  EXPECT_EQ(start(request(where, 1, 2, 20, kToken)).get(), "id-of-0;id-of-1;");
  EXPECT_EQ(zero.get(), "id-of-0;id-of-1;|id-of-0;id-of-1;");
}

TEST(RendezvousSecurity, AFakeRankZeroIsNotBelievedAndTheTokenNeverTravels) {
  // The test listens as a fake rank 0 that answers without knowing the token.
  const int listener = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 8), 0);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  auto one = start(request("127.0.0.1:" + std::to_string(ntohs(a.sin_port)), 1, 2, 1.5, kToken));
  const int c = ::accept(listener, nullptr, nullptr);
  ASSERT_GE(c, 0);
  const std::string challenge = wire::random_hex(16);
  const std::string line = wire::challenge_line(challenge) + "\n";
  ASSERT_EQ(::send(c, line.data(), line.size(), MSG_NOSIGNAL), static_cast<ssize_t>(line.size()));
  std::string hello;
  char ch = 0;
  while (::recv(c, &ch, 1, 0) == 1 && ch != '\n') hello += ch;
  EXPECT_THAT(hello, HasSubstr("\"proof\""));
  EXPECT_THAT(hello, Not(HasSubstr(kToken)));
  const std::string fake = R"({"answer":"evil id"})"
                           "\n";
  ::send(c, fake.data(), fake.size(), MSG_NOSIGNAL);
  const std::string result = one.get();
  EXPECT_THAT(result, HasSubstr("error: "));
  EXPECT_THAT(result, HasSubstr("not gpucheck's rank 0"));
  EXPECT_THAT(result, Not(HasSubstr(kToken)));
  ::close(c);
  ::close(listener);
}

TEST(RendezvousSecurity, TheAnswerTravelsSealedAndOnlyTheTokenOpensIt) {
  const std::string challenge = wire::random_hex(16), nonce = wire::random_hex(16);
  const std::string line = wire::answer_line(kToken, challenge, nonce, "nccl-unique-id");
  EXPECT_THAT(line, Not(HasSubstr("nccl-unique-id")));
  EXPECT_EQ(wire::read_reply(line, kToken, challenge, nonce).answer, "nccl-unique-id");
  EXPECT_FALSE(wire::read_reply(line, "another-secret-of-enough-length", challenge, nonce).answer);
  // Replayed to another rank (another nonce): not believed.
  EXPECT_FALSE(wire::read_reply(line, kToken, challenge, wire::random_hex(16)).answer);
}

TEST(RendezvousSecurity, RanksMeetWithATokenThroughTcpAndAFile) {
  for (const std::string& where :
       {"127.0.0.1:" + std::to_string(free_port()), private_dir() + "/rdv"}) {
    auto zero = start(request(where, 0, 3, 20, kToken));
    auto one = start(request(where, 1, 3, 20, kToken));
    auto two = start(request(where, 2, 3, 20, kToken));
    EXPECT_EQ(one.get(), "id-of-0;id-of-1;id-of-2;") << where;
    EXPECT_EQ(two.get(), "id-of-0;id-of-1;id-of-2;") << where;
    EXPECT_EQ(zero.get(), "id-of-0;id-of-1;id-of-2;|id-of-0;id-of-1;id-of-2;") << where;
  }
  // A rank with another token does not meet rank 0's file.
  const std::string file = private_dir() + "/rdv";
  auto zero = start(request(file, 0, 2, 1, kToken));
  const std::string other = start(request(file, 1, 2, 1, "another-secret-of-enough-length")).get();
  EXPECT_THAT(other, HasSubstr("not written with this run's GPUCHECK_RENDEZVOUS_TOKEN"));
  EXPECT_THAT(zero.get(), HasSubstr("for rank(s) 1"));
}

TEST(RendezvousSecurity, StrangersNeedAToken) {
  const std::string port = std::to_string(free_port());
  try {
    check_rendezvous_place(parse_rendezvous("0.0.0.0:" + port), "");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("set GPUCHECK_RENDEZVOUS_TOKEN"));
    EXPECT_THAT(e.what(), HasSubstr("docs/FLEET.md"));
  }
  EXPECT_NO_THROW(check_rendezvous_place(parse_rendezvous("0.0.0.0:" + port), kToken));
  EXPECT_NO_THROW(check_rendezvous_place(parse_rendezvous("127.0.0.1:" + port), ""));
  EXPECT_NO_THROW(check_rendezvous_place(parse_rendezvous("localhost:" + port), ""));
  try {
    check_rendezvous_place(parse_rendezvous("127.0.0.1:" + port), "short");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("5 characters are too few"));
    EXPECT_THAT(e.what(), Not(HasSubstr("short")));
  }
  // rendezvous() itself refuses too, before it listens.
  EXPECT_THROW(rendezvous(request("0.0.0.0:" + port, 0, 2, 5), join_ids), UsageError);
}

TEST(RendezvousSecurity, IdleAndEndlessConnectionsAreCut) {
  const std::uint16_t port = free_port();
  const std::string where = "127.0.0.1:" + std::to_string(port);
  RendezvousRequest q = request(where, 0, 2, 20);
  q.hello_timeout_s = 0.3;
  auto zero = start(q);
  Client idle(port), endless(port);
  ASSERT_TRUE(idle.connected() && endless.connected());
  ASSERT_EQ(challenge_of(idle.line()).size(), 32u);
  ASSERT_EQ(challenge_of(endless.line()).size(), 32u);
  // More than a hello's bytes without a newline: refused by name, not read on.
  const std::string chunk(wire::kMaxHelloBytes + 4096, 'x');
  endless.send_text(chunk);
  EXPECT_THAT(endless.line(), HasSubstr("a hello longer than 65536 bytes"));
  // Silent past the hello timeout: told so and closed.
  EXPECT_THAT(idle.line(), HasSubstr("no hello within 0.3 s"));
  EXPECT_EQ(idle.line(), "<closed>");
  EXPECT_EQ(start(request(where, 1, 2, 20)).get(), "id-of-0;id-of-1;");
  EXPECT_THAT(zero.get(), HasSubstr("|id-of-0;id-of-1;"));
}

TEST(RendezvousSecurity, PlantedLinksAreNeverFollowed) {
  const std::string dir = private_dir();
  const std::string victim = dir + "/victim", file = dir + "/rdv";
  std::ofstream(victim) << "precious";
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  // Links where gpucheck 5dcb301 put its temporary files (FILE.tmp.HOST.PID, opened with
  // O_TRUNC), for rank 0's head and rank 1's hello.
  const std::string tmp = fmt::format(".tmp.{}.{}", host, ::getpid());
  fs::create_symlink(victim, file + tmp);
  fs::create_symlink(victim, file + ".rank1" + tmp);
  // Rank 2 never comes: rank 0's head and rank 1's hello stay for a look.
  auto zero = start(request(file, 0, 3, 1));
  auto one = start(request(file, 1, 3, 1));
  EXPECT_THAT(zero.get(), HasSubstr("for rank(s) 2"));
  one.get();
  std::ifstream in(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "precious");
  for (const std::string& written : {file, file + ".rank1"}) {
    ASSERT_TRUE(fs::is_regular_file(fs::symlink_status(written))) << written;
    EXPECT_EQ(fs::status(written).permissions(), fs::perms::owner_read | fs::perms::owner_write)
        << written;
  }
  // A link planted at the place itself is not written through either.
  fs::remove(file);
  fs::create_symlink(victim, file);
  EXPECT_THAT(start(request(file, 0, 2, 0.3)).get(),
              HasSubstr("exists and is not a gpucheck rendezvous file"));
  std::ifstream again(victim);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(again), {}), "precious");
}

TEST(RendezvousSecurity, AFileGpucheckDidNotWriteIsNeitherReplacedNorRemoved) {
  const std::string file = private_dir() + "/notes.txt";
  std::ofstream(file) << "my notes";
  try {
    rendezvous(request(file, 0, 2, 5), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("exists and is not a gpucheck rendezvous file"));
  }
  retire_rendezvous(parse_rendezvous(file));
  std::ifstream in(file);
  EXPECT_EQ(std::string(std::istreambuf_iterator<char>(in), {}), "my notes");
}

TEST(RendezvousSecurity, AWorldWritableDirectoryIsRefused) {
  const std::string dir = private_dir();
  fs::permissions(dir, fs::perms::all);
  try {
    rendezvous(request(dir + "/rdv", 0, 2, 5), join_ids);
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), HasSubstr("is writable by every user"));
  }
  EXPECT_FALSE(fs::exists(dir + "/rdv"));
}

}  // namespace

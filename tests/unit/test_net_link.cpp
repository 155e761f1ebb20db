#include "app/bench_net.h"
#include "core/errors.h"
#include "core/net_link.h"

#include <arpa/inet.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <set>
#include <string>

using namespace gpucheck;
using namespace std::chrono_literals;

namespace {

constexpr const char* kToken = "a-secret-of-thirty-two-characters";

net::LinkPlan small_plan() {
  net::LinkPlan p;
  // Not a whole number of chunks: the last one is short.
  p.bytes = 3 * net::kChunkBytes + 123;
  p.reps = 2;
  p.pings = 50;
  p.idle = 5000ms;
  return p;
}

// A plain listening socket on loopback (a fake peer the test drives by hand) and its port.
int raw_listener(std::uint16_t* port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      ::listen(fd, 4) != 0 || ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0)
    return -1;
  *port = ntohs(a.sin_port);
  return fd;
}

std::chrono::steady_clock::time_point in(std::chrono::milliseconds d) {
  return std::chrono::steady_clock::now() + d;
}

}  // namespace

TEST(NetLink, PatternChunksDifferAndDifferencesAreFound) {
  std::vector<unsigned char> a, b;
  net::fill_chunk(a, 0);
  net::fill_chunk(b, 7);
  ASSERT_EQ(a.size(), net::kChunkBytes);
  EXPECT_NE(a, b);  // the chunk's number in its head: a repeated chunk is seen
  EXPECT_EQ(net::first_difference(b.data(), b.size(), 7, a), std::nullopt);
  EXPECT_EQ(net::first_difference(b.data(), b.size(), 6, a), 0u);
  b[4321] ^= 1;
  EXPECT_EQ(net::first_difference(b.data(), b.size(), 7, a), 4321u);
  EXPECT_EQ(net::first_difference(b.data(), 100, 7, a), std::nullopt);  // a short last chunk
}

TEST(NetLink, PercentileIsNearestRank) {
  EXPECT_EQ(net::percentile({}, 50), 0);
  EXPECT_EQ(net::percentile({3, 1, 2}, 50), 2);
  std::vector<double> v;
  for (int i = 1; i <= 1000; ++i) v.push_back(i);
  EXPECT_EQ(net::percentile(v, 99), 990);
  EXPECT_EQ(net::percentile(v, 100), 1000);
}

TEST(NetTurns, EveryPairOnceNoRankTwiceInARoundLowerRankConnects) {
  for (int n : {2, 3, 4, 5, 8}) {
    std::set<std::pair<int, int>> pairs;
    std::map<std::size_t, std::multiset<int>> busy;
    for (int self = 0; self < n; ++self) {
      std::size_t last_round = 0;
      bool first = true;
      for (const auto& t : app::net_turns(self, n)) {
        EXPECT_EQ(t.connects, self < t.partner) << n;
        EXPECT_TRUE(first || t.round > last_round) << "turns in round order";
        first = false;
        last_round = t.round;
        busy[t.round].insert(self);
        // The partner has the same round with this rank.
        bool mirrored = false;
        for (const auto& u : app::net_turns(t.partner, n))
          mirrored = mirrored || (u.round == t.round && u.partner == self);
        EXPECT_TRUE(mirrored) << n << " " << self << " " << t.partner;
        pairs.insert({std::min(self, t.partner), std::max(self, t.partner)});
      }
    }
    EXPECT_EQ(pairs.size(), static_cast<std::size_t>(n * (n - 1) / 2)) << n;
    for (const auto& [round, ranks] : busy)
      for (int r : ranks) EXPECT_EQ(ranks.count(r), 1u) << "rank " << r << " twice in a round";
  }
  EXPECT_TRUE(app::net_turns(0, 1).empty());
}

TEST(NetBytes, ParsesSizesAndRefusesZeroNegativeOverflowAndTooMuch) {
  EXPECT_EQ(app::parse_net_bytes("4MiB"), 4u << 20);
  EXPECT_EQ(app::parse_net_bytes("1000"), 1000u);
  for (const char* bad :
       {"0", "-1", "", "abc", "1.5MiB", "99999999999999999999999", "17179869184GiB", "65GiB"}) {
    try {
      app::parse_net_bytes(bad);
      ADD_FAILURE() << bad << " was taken";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("--net-bytes"), std::string::npos) << e.what();
    }
  }
}

// The address a rank listens on comes from the route towards a host: one that does not resolve
// (here a name getaddrinfo refuses without asking a resolver) is a usage error naming it, not an
// internal one.
TEST(NetLink, AHostThatDoesNotResolveIsAUsageErrorNamingIt) {
  EXPECT_EQ(net::source_address_towards("127.0.0.1"), "127.0.0.1");
  try {
    net::source_address_towards("");
    ADD_FAILURE() << "an empty host resolved";
  } catch (const UsageError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("cannot resolve ''"));
    EXPECT_THAT(e.what(), ::testing::HasSubstr("getaddrinfo: "));
  }
}

TEST(NetLink, PairOnLoopbackMeasuresBothWaysAndAgrees) {
  const net::Listener l = net::listen_on("127.0.0.1");
  ASSERT_GT(l.port, 0);
  const net::LinkRun run{kToken, "run-1", 2};
  const auto plan = small_plan();
  auto listener = std::async(std::launch::async, [&] {
    net::Waiting waiting;
    return net::accept_pair(l, 1, 0, "rank 0", {}, waiting, run, plan, in(10s));
  });
  const auto a = net::connect_pair({"127.0.0.1", l.port}, 0, 1, "rank 1", run, plan, in(10s));
  const auto b = listener.get();
  EXPECT_EQ(a.rtt_us.size(), 50u);
  EXPECT_EQ(a.forward_s.size(), 2u);
  EXPECT_EQ(a.backward_s.size(), 2u);
  EXPECT_FALSE(a.forward_bad);
  EXPECT_FALSE(a.backward_bad);
  for (double t : a.forward_s) EXPECT_GT(t, 0);
  // The listener records the same pair: the connector's numbers and its own.
  EXPECT_EQ(b.rtt_us, a.rtt_us);
  EXPECT_EQ(b.forward_s, a.forward_s);
  EXPECT_EQ(b.backward_s, a.backward_s);
}

TEST(NetLink, AWrongTokenIsRefusedAndTheListenerWaitsOnForItsPeer) {
  const net::Listener l = net::listen_on("127.0.0.1");
  const auto plan = small_plan();
  auto listener = std::async(std::launch::async, [&] {
    net::Waiting waiting;
    return net::accept_pair(l, 1, 0, "rank 0", {}, waiting, {kToken, "run-1", 2}, plan, in(2s));
  });
  try {
    net::connect_pair({"127.0.0.1", l.port}, 0, 1, "rank 1",
                      {"another-secret-of-32-characters!", "run-1", 2}, plan, in(5s));
    ADD_FAILURE() << "a wrong token was let in";
  } catch (const net::NetError& e) {
    EXPECT_NE(std::string(e.what()).find("refused rank 0"), std::string::npos) << e.what();
  }
  // Another run's rank with the right token is refused too (its run id differs).
  EXPECT_THROW(
      net::connect_pair({"127.0.0.1", l.port}, 0, 1, "rank 1", {kToken, "run-2", 2}, plan, in(5s)),
      net::NetError);
  try {
    listener.get();
    ADD_FAILURE() << "the listener took a stranger for its peer";
  } catch (const net::NetError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 did not connect"), std::string::npos) << e.what();
  }
}

TEST(NetLink, APeerThatClosesOrFallsSilentEndsInAnErrorNamingIt) {
  const std::string challenge = "gpucheck-net/1 0123456789abcdef0123456789abcdef\n";
  // A listener that sends its challenge and goes away.
  std::uint16_t port = 0;
  const int fd = raw_listener(&port);
  ASSERT_GE(fd, 0);
  auto gone = std::async(std::launch::async, [&] {
    const int c = ::accept(fd, nullptr, nullptr);
    EXPECT_EQ(::send(c, challenge.data(), challenge.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(challenge.size()));
    ::close(c);
  });
  try {
    net::connect_pair({"127.0.0.1", port}, 0, 1, "rank 1 (host far)", {kToken, "run-1", 2},
                      small_plan(), in(5s));
    ADD_FAILURE() << "no error";
  } catch (const net::NetError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (host far) closed the connection"),
              std::string::npos)
        << e.what();
  }
  gone.get();
  ::close(fd);

  // A listener that says its challenge, reads the hello and falls silent: the connector gives
  // up at its meet time instead of hanging.
  const int fd2 = raw_listener(&port);
  ASSERT_GE(fd2, 0);
  std::promise<void> done;
  auto silent = std::async(std::launch::async, [&] {
    const int c = ::accept(fd2, nullptr, nullptr);
    EXPECT_EQ(::send(c, challenge.data(), challenge.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(challenge.size()));
    done.get_future().wait();
    ::close(c);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    net::connect_pair({"127.0.0.1", port}, 0, 1, "rank 1 (host far)", {kToken, "run-1", 2},
                      small_plan(), in(1500ms));
    ADD_FAILURE() << "no error";
  } catch (const net::NetError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (host far) did not answer"), std::string::npos)
        << e.what();
  }
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  done.set_value();
  silent.get();
  ::close(fd2);
}

// bench --ops net: the ranks' listeners, their meeting, the pairs in rounds and the records.
//
// Why net is no op unit (bench/ops/): a unit's cells run in a bench child on a device, and its
// shapes travel in the plan's JSON; net runs on no device, in the rank process itself, between
// processes that already met, so it lives beside the multi-process all-reduce's setup instead.
#include "app/bench_net.h"

#include "bench/record.h"
#include "bench/size_text.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/net_link.h"
#include "core/pair_schedule.h"
#include "core/rendezvous_wire.h"

#include <fmt/format.h>
#include <ifaddrs.h>
#include <netdb.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

namespace gpucheck::app {

namespace k = keys;
using nlohmann::json;

namespace {

constexpr std::uint64_t kMostNetBytes = std::uint64_t{64} << 30;

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// The interface that holds `addr` and its speed in Mbit/s from /sys/class/net/IF/speed; 0 when
// unknown (veths, loopback and most virtual interfaces report none).
std::pair<std::string, long> link_of(const std::string& addr) {
  ifaddrs* list = nullptr;
  if (::getifaddrs(&list) != 0) {
    spdlog::warn("getifaddrs: {}: the link speed stays unknown", std::strerror(errno));
    return {"", 0};
  }
  std::string name;
  for (const ifaddrs* i = list; i != nullptr && name.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[NI_MAXHOST] = {};
    const socklen_t len = family == AF_INET ? sizeof(sockaddr_in) : sizeof(sockaddr_in6);
    if (::getnameinfo(i->ifa_addr, len, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0 &&
        addr == text)
      name = i->ifa_name;
  }
  ::freeifaddrs(list);
  if (name.empty()) return {"", 0};
  long mbps = 0;
  std::ifstream in("/sys/class/net/" + name + "/speed");
  if (!(in >> mbps) || mbps <= 0) mbps = 0;
  return {name, mbps};
}

// Where this rank listens. Without a token nothing proves who connects, so only loopback, where
// check_rendezvous_place already kept the ranks; with one, the address this host reaches rank 0
// from (the file form: its own name's), so the partners connect over the path being measured.
std::string listen_address(const RankSetup& rs) {
  if (rs.token.empty()) return "127.0.0.1";
  return net::source_address_towards(rs.place.tcp() ? rs.place.host : host_name());
}

std::string rank_name(const json& who) {
  return fmt::format("rank {} (host {} at {})", who.value("rank", -1), who.value("host", "?"),
                     who.value("addr", "?"));
}

json limit_of(const json& src, const json& dst, double gbps) {
  const long a = src.value("link_mbps", 0L), b = dst.value("link_mbps", 0L);
  if (a <= 0 || b <= 0)
    return {{k::kReason, "no link speed known (/sys/class/net/IF/speed gives none on " +
                             std::string(a <= 0 ? src.value("host", "?") : dst.value("host", "?")) +
                             ": loopback, a veth or another virtual interface)"}};
  const double limit = static_cast<double>(std::min(a, b)) / 8000.0;  // Mbit/s → GB/s
  return {
      {k::kValue, limit},
      {k::kUnit, "GB/s"},
      {k::kLimitFraction, gbps / limit},
      {k::kSource, fmt::format("/sys/class/net/{}/speed on {} and /sys/class/net/{}/speed on {}",
                               src.value("interface", "?"), src.value("host", "?"),
                               dst.value("interface", "?"), dst.value("host", "?"))},
      {k::kLimitBasis, "the slower end's link speed; TCP/IP headers take a few percent of it"}};
}

json direction_record(const NetPairOutcome& o, const json& src, const json& dst,
                      const std::vector<double>& times, const std::optional<std::uint64_t>& bad) {
  json r = {
      {k::kDevice, fmt::format("rank{}->rank{}", src.value("rank", -1), dst.value("rank", -1))},
      {k::kBackend, "host"},
      {k::kOp, "net"},
      {k::kImpl, "tcp"},
      {k::kShape, {{k::kBytes, o.bytes}}},
      {k::kTransfers, "excluded"},
      {k::kSrc, src},
      {k::kDst, dst}};
  if (o.error) {
    r[k::kStatus] = "failed";
    r[k::kReason] = *o.error;
    r[k::kLimit] = {{k::kReason, "no rate: the pair failed"}};
    return r;
  }
  if (times.empty() || o.rtt_us.empty()) {
    r[k::kStatus] = "failed";
    r[k::kReason] = fmt::format("no timings came back from {}", rank_name(dst));
    r[k::kLimit] = {{k::kReason, "no rate: the pair failed"}};
    return r;
  }
  std::vector<double> sorted = times;
  std::sort(sorted.begin(), sorted.end());
  const double bytes = static_cast<double>(o.bytes);
  // The best repetition counts, as the other copies' records do; the spread says how far the
  // worst fell behind it (a busy or lossy link shows there first).
  const double best = bytes / sorted.front() / 1e9, worst = bytes / sorted.back() / 1e9;
  r[k::kThroughput] = {{k::kUnit, "GB/s"}, {k::kValue, best}};
  r[k::kTimeS] = bench::time_json(bench::summarize(times, false));
  r[k::kSpread] = best > 0 ? (best - worst) / best : 0.0;
  r["latency_us"] = {{k::kMedian, net::percentile(o.rtt_us, 50)},
                     {"p99", net::percentile(o.rtt_us, 99)},
                     {"round_trips", o.rtt_us.size()}};
  if (bad) {
    const std::string detail =
        fmt::format("byte {} of the stream from {} to {} differs from what was sent", *bad,
                    rank_name(src), rank_name(dst));
    r[k::kStatus] = "mismatch";
    r[k::kReason] = "verification failed: " + detail;
    r[k::kVerification] = {{"method", "exact"},
                           {"tolerance", 0},
                           {"max_rel_error", nullptr},
                           {"first_bad_index", *bad},
                           {"detail", detail}};
    r[k::kLimit] = {{k::kReason, "no rate: the data arrived wrong"}};
    return r;
  }
  r[k::kStatus] = "ok";
  r[k::kVerification] = {{"method", "exact"}, {"tolerance", 0}, {"max_rel_error", 0}};
  r[k::kLimit] = limit_of(src, dst, best);
  return r;
}

// One rank's entry of rank 0's answer, as checked text from another process.
std::optional<json> member_of(const json& answer, int rank) {
  const json& m = answer.value("members", json::array());
  if (!m.is_array() || static_cast<std::size_t>(rank) >= m.size()) return std::nullopt;
  const json& e = m[static_cast<std::size_t>(rank)];
  if (!e.is_object()) return std::nullopt;
  const auto addr = rendezvous_wire::text_field(e, "addr", 64);
  const auto port = rendezvous_wire::whole_field(e, "port", 1, 65535);
  if (!addr || !port) return std::nullopt;
  return e;
}

}  // namespace

std::uint64_t parse_net_bytes(const std::string& text) {
  const std::uint64_t bytes = bench::byte_count(text, "--net-bytes");
  if (bytes > kMostNetBytes)
    throw UsageError(fmt::format(
        "--net-bytes: '{}' is more than 64 GiB a repetition; a link's rate settles within far less",
        text));
  return bytes;
}

std::vector<NetTurn> net_turns(int self, int world_size) {
  std::vector<NetTurn> out;
  const auto rounds = disjoint_pair_rounds(static_cast<std::size_t>(std::max(world_size, 0)));
  for (std::size_t r = 0; r < rounds.size(); ++r)
    for (const auto& [a, b] : rounds[r]) {
      if (static_cast<int>(a) == self) out.push_back({r, static_cast<int>(b), true});
      if (static_cast<int>(b) == self) out.push_back({r, static_cast<int>(a), false});
    }
  return out;
}

std::vector<json> net_records(const NetPairOutcome& o) {
  return {direction_record(o, o.self, o.partner, o.out_s, o.out_bad),
          direction_record(o, o.partner, o.self, o.in_s, o.in_bad)};
}

NetRun run_bench_net(const NetBenchOptions& opt, const RankSetup& rs) {
  const std::string addr = listen_address(rs);
  net::Listener listener = net::listen_on(addr);
  const auto [interface, mbps] = link_of(addr);
  json identity = {
      {"rank", rs.rank},
      {k::kHostname, host_name()},
      {k::kDevices, json::array()},
      {"net",
       {{"addr", addr}, {"port", listener.port}, {"interface", interface}, {"link_mbps", mbps}}}};
  spdlog::info("rank {} of {} ({}): listening on {}, meeting the others at {}", rs.rank,
               rs.world_size, rs.source, net::Endpoint{addr, listener.port}.describe(),
               rs.place.describe());
  const RendezvousResult met =
      rendezvous(rendezvous_request(rs, identity.dump()), [](const std::vector<std::string>& ids) {
        json members = json::array();
        for (std::size_t r = 0; r < ids.size(); ++r) {
          const json i = parse_json_or_discarded(ids[r]);
          if (!i.is_object() || !i.contains("net") || !i["net"].is_object())
            throw UsageError(fmt::format(
                "--rendezvous: rank {} is no `bench --ops net` rank (every rank needs --ops net)",
                r));
          json m = i["net"];
          m["rank"] = static_cast<int>(r);
          m["host"] = i.value(std::string(k::kHostname), "?");
          members.push_back(m);
        }
        // A fresh id, so a link of an earlier run with the same token is refused.
        return json{{"run", rendezvous_wire::random_hex(16)}, {"members", members}}.dump();
      });
  const json answer = parse_json_or_discarded(met.answer);
  const auto run_id =
      answer.is_object() ? rendezvous_wire::text_field(answer, "run", 64) : std::nullopt;
  if (!run_id)
    throw UsageError(
        "--rendezvous: rank 0's answer is not a `bench --ops net` one: give every "
        "rank --ops net");
  NetRun out;
  if (rs.rank == 0)
    out.ranks = identities_for_document(met.identities);
  else
    out.ranks.push_back(identity);
  const net::LinkRun run{rs.token, *run_id, rs.world_size};
  net::LinkPlan plan;
  plan.bytes = opt.bytes;
  plan.reps = opt.reps;
  plan.pings = opt.pings;
  plan.idle = std::chrono::milliseconds(static_cast<long long>(rs.timeout_s * 1000));
  const auto describe = [](const json& m) {
    return json{{"rank", m.value("rank", -1)},
                {"host", m.value("host", "?")},
                {"addr", m.value("addr", "?")},
                {"interface", m.value("interface", "")},
                {"link_mbps", m.value("link_mbps", 0L)}};
  };
  const auto me = member_of(answer, rs.rank);
  if (!me) throw UsageError("--rendezvous: rank 0's answer does not list this rank");
  const std::vector<NetTurn> turns = net_turns(rs.rank, rs.world_size);
  net::Waiting waiting;
  for (std::size_t t = 0; t < turns.size(); ++t) {
    const NetTurn& turn = turns[t];
    NetPairOutcome o;
    o.self = describe(*me);
    o.bytes = opt.bytes;
    const auto partner = member_of(answer, turn.partner);
    o.partner = partner ? describe(*partner) : json{{"rank", turn.partner}};
    const std::string who = rank_name(o.partner);
    // Each pair waits for its partner up to --rendezvous-timeout from when this rank is ready:
    // the partner may still measure a pair of the round before.
    const auto meet_by = std::chrono::steady_clock::now() +
                         std::chrono::milliseconds(static_cast<long long>(rs.timeout_s * 1000));
    spdlog::info("rank {}: round {}: the link with {}", rs.rank, turn.round + 1, who);
    try {
      if (!partner) throw net::NetError(fmt::format("rank 0's answer has no address for {}", who));
      net::LinkResult r;
      if (turn.connects) {
        r = net::connect_pair(
            {partner->value("addr", ""), partner->value("port", std::uint16_t{0})}, rs.rank,
            turn.partner, who, run, plan, meet_by);
        o.out_s = r.forward_s;
        o.in_s = r.backward_s;
        o.out_bad = r.forward_bad;
        o.in_bad = r.backward_bad;
      } else {
        std::vector<int> later;
        for (std::size_t u = t + 1; u < turns.size(); ++u)
          if (!turns[u].connects) later.push_back(turns[u].partner);
        r = net::accept_pair(listener, rs.rank, turn.partner, who, later, waiting, run, plan,
                             meet_by);
        o.out_s = r.backward_s;
        o.in_s = r.forward_s;
        o.out_bad = r.backward_bad;
        o.in_bad = r.forward_bad;
      }
      o.rtt_us = r.rtt_us;
    } catch (const net::NetError& e) {
      o.error = e.what();
      spdlog::error("rank {}: {}", rs.rank, e.what());
    }
    for (auto& rec : net_records(o)) {
      const std::string status = rec.value(std::string(k::kStatus), "");
      if (status != "ok") out.code = worse_exit(out.code, ExitCode::kFailed);
      out.results.push_back(std::move(rec));
    }
  }
  // Every rank read the answer before its first pair could start.
  if (rs.rank == 0) retire_rendezvous(rs.place);
  return out;
}

}  // namespace gpucheck::app

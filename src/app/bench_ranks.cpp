// Ranks of a multi-process all-reduce: read from the flags or Slurm, checked before any work.
#include "app/bench_ranks.h"

#include "core/backend_descriptors.h"
#include "core/errors.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/rendezvous_wire.h"
#include "core/sanitize.h"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>

namespace gpucheck::app {

namespace k = keys;
using nlohmann::json;

namespace {

std::optional<int> env_int(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  if (it == env.end()) return std::nullopt;
  int v = -1;
  const auto& s = it->second;
  auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  if (r.ec != std::errc() || r.ptr != s.data() + s.size())
    throw UsageError(fmt::format("{}='{}' is not a whole number", name, s));
  return v;
}

std::string env_text(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() ? std::string() : it->second;
}

std::string hostname() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// How many tasks of this step run on this node: SLURM_STEP_TASKS_PER_NODE (srun's; else the
// job's SLURM_TASKS_PER_NODE), "2(x3),1" meaning 2 on each of the first three nodes and 1 on the
// fourth, at this node's place (SLURM_NODEID). nullopt when Slurm does not say.
std::optional<int> slurm_tasks_here(const EnvMap& env) {
  std::string spec = env_text(env, "SLURM_STEP_TASKS_PER_NODE");
  if (spec.empty()) spec = env_text(env, "SLURM_TASKS_PER_NODE");
  int node = 0;
  try {
    node = env_int(env, "SLURM_NODEID").value_or(0);
  } catch (const UsageError&) {
    return std::nullopt;
  }
  std::size_t pos = 0;
  while (!spec.empty() && pos <= spec.size()) {
    std::size_t end = spec.find(',', pos);
    if (end == std::string::npos) end = spec.size();
    const std::string item = spec.substr(pos, end - pos);
    int tasks = 0, times = 1;
    auto r = std::from_chars(item.data(), item.data() + item.size(), tasks);
    if (r.ec != std::errc()) return std::nullopt;
    if (r.ptr != item.data() + item.size()) {
      if (std::sscanf(r.ptr, "(x%d)", &times) != 1) return std::nullopt;
    }
    if (node < times) return tasks;
    node -= times;
    pos = end + 1;
  }
  return std::nullopt;
}

}  // namespace

std::optional<RankSetup> resolve_ranks(const RankOptions& o, const EnvMap& env) {
  if (o.rendezvous.empty()) {
    if (o.rank || o.world_size)
      throw UsageError(fmt::format(
          "{}: a multi-process all-reduce needs --rendezvous FILE|HOST:PORT, where its ranks meet",
          o.rank ? "--rank" : "--world-size"));
    return std::nullopt;
  }
  RankSetup s;
  s.place = parse_rendezvous(o.rendezvous);
  s.timeout_s = o.rendezvous_timeout_s;
  if (o.rank || o.world_size) {
    if (!o.rank || !o.world_size)
      throw UsageError(o.rank ? "--rank: give --world-size too (how many ranks meet)"
                              : "--world-size: give --rank too (which rank this process is)");
    s.rank = *o.rank;
    s.world_size = *o.world_size;
    s.source = "--rank/--world-size";
  } else {
    const auto rank = env_int(env, "SLURM_PROCID");
    const auto size = env_int(env, "SLURM_NTASKS");
    if (!rank || !size)
      throw UsageError(
          "--rendezvous: which rank is this process? Give --rank and --world-size, or start the "
          "ranks with srun (SLURM_PROCID, SLURM_NTASKS)");
    s.rank = *rank;
    s.world_size = *size;
    s.source = "Slurm (SLURM_PROCID/SLURM_NTASKS)";
    const std::string job = env_text(env, "SLURM_JOB_ID");
    const std::string step = env_text(env, "SLURM_STEP_ID");
    if (!job.empty()) s.session = step.empty() ? job : job + "." + step;
  }
  if (s.world_size < 1)
    throw UsageError(
        fmt::format("{}: the world size must be at least 1, not {}", s.source, s.world_size));
  if (s.rank < 0 || s.rank >= s.world_size)
    throw UsageError(fmt::format("{}: rank {} is outside a world of {} (ranks 0 to {})", s.source,
                                 s.rank, s.world_size, s.world_size - 1));
  s.token = env_text(env, rendezvous_wire::kTokenVariable);
  if (s.world_size > 1) check_rendezvous_place(s.place, s.token);
  return s;
}

RendezvousRequest rendezvous_request(const RankSetup& s, std::string identity) {
  RendezvousRequest q;
  q.place = s.place;
  q.rank = s.rank;
  q.world_size = s.world_size;
  q.session = s.session;
  q.timeout_s = s.timeout_s;
  q.identity = std::move(identity);
  q.token = s.token;
  return q;
}

std::vector<std::string> rank_devices(const std::vector<BenchTarget>& cuda, bool device_named,
                                      const EnvMap& env) {
  std::vector<std::string> out;
  for (const auto& t : cuda) out.push_back(t.device);
  const auto local = env_int(env, "SLURM_LOCALID");
  if (device_named || !local || out.size() <= 1) return out;
  // One task on this node: it takes every GPU. Several: srun's tasks each see every GPU of the
  // node unless Slurm binds them, so each takes its own, one task per GPU.
  if (slurm_tasks_here(env) == 1) return out;
  if (*local < 0 || static_cast<std::size_t>(*local) >= out.size())
    throw UsageError(fmt::format(
        "SLURM_LOCALID={} names no GPU of this node ({} visible): run at most one task per GPU, "
        "or name the devices with --device",
        *local, out.size()));
  return {out[static_cast<std::size_t>(*local)]};
}

json rank_identity(int rank, const std::vector<std::string>& devices, const json& backends) {
  json devs = json::array();
  for (const auto& name : devices) {
    json d = {{k::kDevice, name}};
    for (const auto& b : backends) {
      if (b.value(std::string(k::kName), "") != group_ops_backend() || !b.contains(k::kDevices))
        continue;
      for (const auto& p : b[std::string(k::kDevices)]) {
        if (p.value(std::string(k::kDevice), "") != name) continue;
        for (auto key : {k::kDeviceName, k::kDeviceUuid, k::kPciBusId})
          if (p.contains(key)) d[std::string(key)] = p[std::string(key)];
      }
    }
    devs.push_back(d);
  }
  return {{"rank", rank}, {k::kHostname, hostname()}, {k::kDevices, devs}};
}

namespace {

json sanitized(const json& j) {
  if (j.is_string()) return sanitize(j.get_ref<const std::string&>());
  if (j.is_array()) {
    json out = json::array();
    for (const auto& v : j) out.push_back(sanitized(v));
    return out;
  }
  if (j.is_object()) {
    json out = json::object();
    for (const auto& [key, v] : j.items()) out[sanitize(key)] = sanitized(v);
    return out;
  }
  return j;
}

}  // namespace

json identities_for_document(const std::vector<std::string>& identities) {
  json out = json::array();
  for (const auto& text : identities) {
    const json i = parse_json_or_discarded(text);
    out.push_back(i.is_discarded() ? json(sanitize(text)) : sanitized(i));
  }
  return out;
}

std::string rank0_answer(const std::vector<std::string>& identities, const std::string& id) {
  json first = json::array();
  int ranks = 0;
  for (std::size_t r = 0; r < identities.size(); ++r) {
    const json i = parse_json_or_discarded(identities[r]);
    if (!i.is_object() || !i.contains(k::kDevices) || !i[std::string(k::kDevices)].is_array())
      throw UsageError(fmt::format("--rendezvous: rank {} sent no gpucheck identity", r));
    first.push_back(ranks);
    ranks += static_cast<int>(i[std::string(k::kDevices)].size());
  }
  std::string hex;
  for (unsigned char c : id) hex += fmt::format("{:02x}", c);
  return json{{"id", hex}, {"ranks", ranks}, {"first_rank", first}}.dump();
}

CollectiveSpan span_of(const std::string& answer, int rank) {
  const json a = parse_json_or_discarded(answer);
  if (!a.is_object() || !a.contains("first_rank") || !a["first_rank"].is_array() ||
      static_cast<std::size_t>(rank) >= a["first_rank"].size())
    throw UsageError(fmt::format("--rendezvous: rank 0's answer is not gpucheck's ({})", answer));
  CollectiveSpan s;
  const std::string hex = a.value("id", "");
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2) {
    unsigned v = 0;
    std::from_chars(hex.data() + i, hex.data() + i + 2, v, 16);
    s.id.push_back(static_cast<char>(v));
  }
  s.ranks = a.value("ranks", 0);
  s.first_rank = a["first_rank"][static_cast<std::size_t>(rank)].get<int>();
  return s;
}

}  // namespace gpucheck::app

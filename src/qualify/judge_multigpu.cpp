// p2p and allreduce requirements read the group child's records; siblings reads doctor's load
// figures through the one outlier function doctor's gpu_siblings uses.
#include "qualify/judge_multigpu.h"
#include "qualify/judge.h"

#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "core/nccl_log.h"
#include "core/outliers.h"
#include "qualify/judge_bench.h"
#include "qualify/toml_reader.h"

#include <fmt/format.h>

#include <map>

namespace gpucheck::qualify {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::vector<DeviceFacts> cuda_devices(const Observations& obs) {
  std::vector<DeviceFacts> out;
  for (auto& d : list_devices(obs.backends))
    if (d.backend == group_ops_backend()) out.push_back(d);
  return out;
}

Verdict start_multigpu(const Requirement& r, std::string words, std::string device = "") {
  Verdict v = verdict_for(r, std::move(words), std::move(device));
  v.threshold = r.value;
  v.unit = r.criterion == Criterion::kMin ? r.unit : "fraction";
  return v;
}

std::string criterion_words(const Requirement& r) {
  if (r.criterion == Criterion::kMin) return fmt::format("≥ {} {}", r.value, r.unit);
  if (r.criterion == Criterion::kFractionOfLineRate)
    return fmt::format("≥ {} of the NVLink line rate", r.value);
  if (r.criterion == Criterion::kFractionOfLimit)
    return fmt::format("≥ {} of the hardware's limit", r.value);
  return fmt::format("≥ {} of the {} reference", r.value, r.reference);
}

// GB/s the active NVLinks from src to dst carry one way, as NVML reports their speeds (links to
// NVSwitches count: the fabric reaches every GPU); nullopt without such a link.
std::optional<double> line_rate(const Observations& obs, const std::string& src,
                                const std::string& dst) {
  const Json* a = nullptr;
  std::string dst_pci;
  for (const auto& b : obs.backends) {
    if (b.value(std::string(k::kName), "") != "cuda" || !b.contains(k::kDevices)) continue;
    // By reference into obs: a copy's elements would dangle once the loop ends.
    for (const auto& d : b[std::string(k::kDevices)]) {
      if (d.value(std::string(k::kDevice), "") == src) a = &d;
      if (d.value(std::string(k::kDevice), "") == dst)
        dst_pci = d.value(std::string(k::kPciBusId), "");
    }
    if (a == nullptr) return std::nullopt;
    double mbps = 0;
    const Json links = a->value(std::string(k::kProperties), Json::object())
                           .value(std::string(k::kNvml), Json::object())
                           .value(std::string(k::kNvlink), Json::object())
                           .value(std::string(k::kLinks), Json::array());
    for (const auto& l : links)
      if (l.value(std::string(k::kState), "") == "active" &&
          (l.value(std::string(k::kRemotePciBusId), "") == dst_pci ||
           l.value(std::string(k::kRemoteDeviceType), "") == "switch"))
        mbps += l.value(std::string(k::kSpeedMbps), 0.0);
    if (mbps > 0) return mbps / 1000.0;
  }
  return std::nullopt;
}

const DeviceFacts* facts_of(const std::vector<DeviceFacts>& devices, const std::string& id) {
  for (const auto& d : devices)
    if (d.device == id) return &d;
  return nullptr;
}

// Judges a record's throughput (GB/s) by the requirement's criterion; the reference is the
// card's (the source device's) of the same op and shape.
void judge_throughput(const Requirement& r, const Json& rec, const DeviceFacts* card,
                      const Observations& obs, Verdict& v) {
  if (!judge_status(rec, v)) return;
  const double gbps =
      rec.value(std::string(k::kThroughput), Json::object()).value(std::string(k::kValue), 0.0);
  if (r.criterion == Criterion::kMin) {
    v.measured = gbps / unit_factor(r.unit);
    v.outcome = v.measured.get<double>() >= r.value ? Outcome::kMet : Outcome::kUnmet;
    if (v.outcome == Outcome::kUnmet)
      v.reason = fmt::format("measured {:.4g} {}, required {}", v.measured.get<double>(), r.unit,
                             criterion_words(r));
    return;
  }
  if (r.criterion == Criterion::kFractionOfLimit) {
    judge_limit_fraction(r, rec, v);
    if (v.outcome == Outcome::kUnmet)
      v.reason = fmt::format("measured {:.4g} of the limit, required {}", v.measured.get<double>(),
                             criterion_words(r));
    return;
  }
  std::optional<std::string> pci_id;
  if (card && !card->pci_bus_id.empty() && obs.pci_device_id)
    pci_id = obs.pci_device_id(card->pci_bus_id);
  const Sku* sku = obs.skus && card ? find_sku(*obs.skus, pci_id, card->name) : nullptr;
  if (sku == nullptr) {
    v.outcome = Outcome::kSkip;
    v.reason = fmt::format("no reference for {}", card ? card->name : std::string("this card"));
    return;
  }
  const Reference* ref =
      find_reference(*sku, r.reference, r.op, r.op == "allreduce" ? "f32" : "",
                     rec.value(std::string(k::kShape), Json::object()), "excluded");
  if (ref == nullptr) {
    v.outcome = Outcome::kSkip;
    v.reason = fmt::format("no {} {} reference of {} bytes for {}", r.reference, r.op, r.bytes,
                           sku->model);
    return;
  }
  v.measured = gbps / ref->value;
  v.outcome = v.measured.get<double>() >= r.value ? Outcome::kMet : Outcome::kUnmet;
  v.reason =
      fmt::format("{:.4g} GB/s of {} GB/s ({}, {})", gbps, ref->value, sku->model, ref->provenance);
}

std::string why_too_few(const std::vector<DeviceFacts>& cuda, const Observations& obs) {
  for (const auto& b : obs.backends)
    if (b.value(std::string(k::kName), "") == "cuda" &&
        b.value(std::string(k::kStatus), "") != "available")
      return fmt::format("the cuda backend is {}: {}", b.value(std::string(k::kStatus), ""),
                         b.value(std::string(k::kReason), ""));
  return fmt::format("{} CUDA device(s) here; the work between GPUs needs two", cuda.size());
}

}  // namespace

std::vector<std::pair<std::string, std::string>> p2p_pairs(const Requirement& r,
                                                           const std::vector<DeviceFacts>& cuda) {
  if (!r.pairs.empty()) return r.pairs;
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i < cuda.size(); ++i)
    for (std::size_t j = 0; j < cuda.size(); ++j)
      if (i != j && (!r.bidirectional || i < j)) out.emplace_back(cuda[i].device, cuda[j].device);
  return out;
}

std::vector<Verdict> judge_p2p(const Requirement& r, const Observations& obs) {
  const auto cuda = cuda_devices(obs);
  const std::string what = fmt::format(
      "p2p {:g} MiB {}, {} engine, peer access {}", static_cast<double>(r.bytes) / (1 << 20),
      r.bidirectional ? "bi" : "uni", r.engine, r.peer_access ? "on" : "off");
  if (cuda.size() < 2) {
    Verdict v = start_multigpu(r, what + ": " + criterion_words(r));
    v.outcome = Outcome::kUnmet;
    v.reason = why_too_few(cuda, obs);
    return {v};
  }
  std::vector<Verdict> out;
  for (const auto& [src, dst] : p2p_pairs(r, cuda)) {
    const std::string pair = src + "->" + dst;
    Verdict v = start_multigpu(r, fmt::format("{} {}: {}", what, pair, criterion_words(r)), pair);
    const Json* rec = nullptr;
    for (const auto& x : obs.results) {
      const Json s = x.value(std::string(k::kShape), Json::object());
      if (x.value(std::string(k::kOp), "") != "p2p" ||
          s.value(std::string(k::kBytes), std::uint64_t{0}) != r.bytes ||
          s.value(std::string(k::kBidirectional), false) != r.bidirectional ||
          s.value(std::string(k::kPeerAccess), true) != r.peer_access ||
          s.value(std::string(k::kEngine), "") != r.engine)
        continue;
      const std::string a = s.value(std::string(k::kSrc), ""),
                        b = s.value(std::string(k::kDst), "");
      if ((a == src && b == dst) || (r.bidirectional && a == dst && b == src)) rec = &x;
    }
    if (const DeviceFacts* d = facts_of(cuda, src)) v.device_name = d->name;
    if (facts_of(cuda, src) == nullptr || facts_of(cuda, dst) == nullptr) {
      v.outcome = Outcome::kUnmet;
      v.reason = fmt::format("{} is not a CUDA device here ({} found)", pair, cuda.size());
    } else if (rec == nullptr) {
      v.outcome = Outcome::kUnmet;
      v.reason = "the bench wrote no record of this copy";
    } else if (r.criterion == Criterion::kFractionOfLineRate) {
      auto rate = line_rate(obs, src, dst);
      if (!rate) {
        v.outcome = Outcome::kSkip;
        v.reason =
            fmt::format("NVML reports no active NVLink from {} to {}: no line rate", src, dst);
      } else if (judge_status(*rec, v)) {
        // Both directions at once: twice the one-way rate.
        const double limit = *rate * (r.bidirectional ? 2.0 : 1.0);
        const double gbps = (*rec)[std::string(k::kThroughput)].value(std::string(k::kValue), 0.0);
        v.measured = gbps / limit;
        v.outcome = v.measured.get<double>() >= r.value ? Outcome::kMet : Outcome::kUnmet;
        v.reason = fmt::format("{:.4g} GB/s of {:.4g} GB/s the NVLinks carry", gbps, limit);
      }
    } else {
      judge_throughput(r, *rec, facts_of(cuda, src), obs, v);
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<Verdict> judge_allreduce(const Requirement& r, const Observations& obs) {
  const auto cuda = cuda_devices(obs);
  Verdict v =
      start_multigpu(r, fmt::format("all-reduce f32 {:g} MiB per GPU over every CUDA device{}, "
                                    "busbw {}",
                                    static_cast<double>(r.bytes) / (1 << 20),
                                    r.network_only ? " over the network path (NCCL's P2P and "
                                                     "SHM transports off)"
                                                   : "",
                                    criterion_words(r)));
  if (cuda.size() < 2) {
    v.outcome = Outcome::kUnmet;
    v.reason = why_too_few(cuda, obs);
    return {v};
  }
  Json devices = Json::array();
  for (const auto& d : cuda) devices.push_back(d.device);
  v.device = cuda.front().device;
  v.device_name = cuda.front().name;
  for (const auto& x : obs.results) {
    const Json s = x.value(std::string(k::kShape), Json::object());
    const Json context = x.value(std::string(k::kContext), Json::object());
    const bool net = context.value("transport", "auto") == "net";
    if (x.value(std::string(k::kOp), "") == "allreduce" &&
        s.value(std::string(k::kBytes), std::uint64_t{0}) == r.bytes &&
        s.value(std::string(k::kDevices), Json::array()) == devices && net == r.network_only) {
      judge_throughput(r, x, &cuda.front(), obs, v);
      if (r.network_only && v.outcome == Outcome::kMet) {
        // Only NCCL's log proves the path: every channel a network one.
        NcclPath path;
        for (const auto& t : context.value("nccl_transports", Json::array()))
          if (t.is_string()) path.transports.push_back(t.get<std::string>());
        if (!only_network(path)) {
          v.outcome = Outcome::kUnmet;
          v.reason += path.transports.empty()
                          ? "; NCCL's log names no transport, so the network path is unproven"
                          : fmt::format("; NCCL's channels went via {}, not only the network",
                                        Json(path.transports).dump());
        } else {
          v.reason += fmt::format(" via {}", path.transports.front());
        }
      }
      return {v};
    }
  }
  v.outcome = Outcome::kUnmet;
  v.reason = "the bench wrote no record of this all-reduce";
  return {v};
}

std::vector<Verdict> judge_siblings(const Requirement& r, const Observations& obs) {
  Verdict base =
      start_multigpu(r, fmt::format("no GPU more than {:g} % below the median of its same-model "
                                    "siblings in doctor's load run",
                                    100 * r.value));
  base.unit = "fraction";
  const Json* cuda = nullptr;
  for (const auto& b : obs.backends)
    if (b.value(std::string(k::kName), "") == "cuda") cuda = &b;
  const Json load = cuda ? cuda->value(std::string(k::kUnderLoad), Json::array()) : Json::array();
  if (load.empty()) {
    base.outcome = Outcome::kSkip;
    base.reason = "doctor's load run did not run (no CUDA device)";
    return {base};
  }
  // GPUs of one model and their figures, as doctor's gpu_siblings groups them.
  std::map<std::string, std::vector<std::pair<std::string, Json>>> by_model;
  for (const auto& e : load)
    for (const auto& d : list_devices(obs.backends))
      if (d.device == e.value(std::string(k::kDevice), "") &&
          e.value(std::string(k::kStatus), "") == "ok")
        by_model[d.name].emplace_back(d.device, e.value(std::string(k::kFigures), Json::array()));
  OutlierThresholds t;
  t.relative_fail = r.value;
  double worst = 0;
  std::vector<std::string> out_of_line;
  std::size_t judged = 0;
  for (const auto& [model, members] : by_model) {
    if (members.size() < 2) continue;
    std::map<std::string, std::vector<std::pair<std::string, Json>>> by_figure;
    for (const auto& [device, figures] : members)
      for (const auto& f : figures)
        by_figure[f.value(std::string(k::kName), "")].emplace_back(device, f);
    for (const auto& [name, list] : by_figure) {
      if (list.size() < 2) continue;
      std::vector<double> values, noise;
      for (const auto& [device, f] : list) {
        values.push_back(f.value(std::string(k::kValue), 0.0));
        noise.push_back(std::max(0.01, f.value(std::string(k::kSpread), 0.0)));
      }
      ++judged;
      const OutlierResult res = judge_outliers(values, noise, t);
      for (std::size_t i = 0; i < res.points.size(); ++i) {
        const auto& p = res.points[i];
        if (p.relative_deviation < 0 && std::abs(p.relative_deviation) > p.noise)
          worst = std::max(worst, -p.relative_deviation);
        if (p.level != OutlierLevel::kNone)
          out_of_line.push_back(fmt::format("{} {} {:.1f} % below the median of {} {}",
                                            list[i].first, name, -100 * p.relative_deviation,
                                            list.size(), model));
      }
    }
  }
  if (judged == 0) {
    base.outcome = Outcome::kSkip;
    base.reason = "no two GPUs of one model ran the load run: no sibling to compare";
    return {base};
  }
  base.measured = worst;
  base.outcome = out_of_line.empty() ? Outcome::kMet : Outcome::kUnmet;
  base.reason =
      out_of_line.empty()
          ? fmt::format("worst {:.1f} % below its siblings (beyond its own noise)", 100 * worst)
          : join(out_of_line);
  return {base};
}

}  // namespace gpucheck::qualify

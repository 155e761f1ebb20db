// Each record's physical limit: which figure bounds its op, where the figure comes from, and the
// clock it was corrected to.
#include "qualify/limits.h"

#include "bench/ops/op_unit.h"
#include "core/backend_descriptors.h"
#include "core/flop_rates.h"
#include "core/json_access.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

namespace gpucheck::qualify {

namespace k = keys;
using Json = nlohmann::json;

namespace {

constexpr const char* kCpuMemoryReason =
    "the CPU's memory bandwidth is not knowable from the files gpucheck reads: the channels "
    "populated and the DIMMs' speed are in the DMI tables, which only root may read";

std::optional<double> number_member(const Json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

Json none(std::string why) {
  return {{k::kReason, std::move(why)}};
}

Json figure(double value, std::string_view unit, std::string source, std::string basis) {
  return {{k::kValue, value},
          {k::kUnit, std::string(unit)},
          {k::kSource, std::move(source)},
          {k::kLimitBasis, std::move(basis)}};
}

// The device the record ran on, as the probe saw it.
struct Device {
  std::string id, backend, name;
  const Json* probe = nullptr;  // the probe's entry, or nullptr
  const Sku* sku = nullptr;
  const Json& properties() const {
    static const Json kNone;
    return member_or_empty(probe ? *probe : kNone, k::kProperties);
  }
};

Device find_device(const LimitFacts& f, const std::string& id, std::string backend) {
  Device d{id, std::move(backend), {}, nullptr, nullptr};
  for (const auto& b : f.backends) {
    if (!b.is_object() || !b.contains(k::kDevices) || !b[k::kDevices].is_array()) continue;
    for (const auto& entry : b[k::kDevices])
      if (entry.is_object() && string_member(entry, k::kDevice) == id) {
        d.probe = &entry;
        if (d.backend.empty()) d.backend = string_member(b, k::kName);
      }
  }
  if (!d.probe) return d;
  d.name = string_member(*d.probe, k::kDeviceName);
  if (f.skus) {
    std::optional<std::string> pci;
    if (const auto bus = string_member(*d.probe, k::kPciBusId); !bus.empty() && f.pci_device_id)
      pci = f.pci_device_id(bus);
    d.sku = find_sku(*f.skus, pci, d.name);
  }
  return d;
}

// The CPU itself, or a CPU implementation of a GPU API (pocl, lavapipe).
bool on_host_cpu(const Device& d) {
  return device_on_host_cpu(d.backend, d.properties());
}

// The clock every core is assumed to hold: cpufreq's maximum where the kernel exposes it (a VM
// often does not), else the base clock an x86 model name states ("... @ 2.50GHz"), else the
// clock /proc/cpuinfo last reported, which moves from run to run.
std::optional<std::pair<double, std::string>> cpu_clock(const Json& cpu) {
  if (auto max = number_member(cpu, k::kMhzMax); max && *max > 0)
    return std::pair{*max, std::string("cpufreq's maximum clock")};
  const std::string model = string_member(cpu, k::kModel);
  if (auto at = model.rfind(" @ "); at != std::string::npos) {
    double ghz = 0;
    char unit[4] = {};
    if (std::sscanf(model.c_str() + at + 3, "%lf%3s", &ghz, unit) == 2 && ghz > 0 &&
        std::string(unit) == "GHz")
      return std::pair{ghz * 1000, std::string("the base clock the CPU's model name states")};
  }
  if (auto now = number_member(cpu, k::kMhzCurrent); now && *now > 0)
    return std::pair{*now, std::string("the clock /proc/cpuinfo reported")};
  return std::nullopt;
}

// Cores × FLOP per cycle per core × clock.
Json cpu_compute(const Json& record, const LimitFacts& f, const std::string& dtype) {
  std::string why;
  std::map<std::string, bool> isa;
  for (const auto& [flag, on] : member_or_empty(f.cpu, k::kIsa).items())
    isa[flag] = on.is_boolean() && on.get<bool>();
  auto rate = cpu_flop_per_cycle_per_core(isa, string_member(f.cpu, k::kArch), dtype, &why);
  if (!rate) return none(why);
  auto cores = number_member(f.cpu, k::kCores);
  if (!cores || *cores < 1) return none("the CPU's core count is unknown");
  const auto clock = cpu_clock(f.cpu);
  if (!clock) return none("the CPU's clock is unknown");
  // The CPU backend's threads, where fewer than the cores: the rest were not asked to work.
  double used = *cores;
  if (auto threads = number_member(member_or_empty(record, k::kContext), k::kThreads))
    used = std::clamp(*threads, 1.0, *cores);
  Json out = figure(
      used * rate->flop_per_cycle_per_core * clock->first * 1e6 / 1e12, "TFLOP/s",
      fmt::format("the CPU's ISA ({}) × {:g} cores", rate->basis, used),
      fmt::format("every core at {}; turbo runs above it, AVX-512 frequency licences below it",
                  clock->second));
  out[k::kLimitClockMhz] = clock->first;
  return out;
}

// The mean SM clock NVML sampled during the record's timed region, else NVML's maximum.
std::optional<std::pair<double, std::string>> sm_clock(const Json& record, const Device& d) {
  const Json& sampled = member_or_empty(member_or_empty(record, k::kContext), k::kSmClockMhz);
  if (auto mean = number_member(sampled, k::kMean); mean && *mean > 0)
    return std::pair{*mean, std::string("the mean SM clock NVML sampled during the timed region")};
  if (auto max = number_member(member_or_empty(d.properties(), k::kNvml), k::kMaxSmClockMhz);
      max && *max > 0)
    return std::pair{*max, std::string("NVML's maximum SM clock (no clock sampled in the region)")};
  return std::nullopt;
}

std::optional<std::pair<int, int>> compute_capability(const Device& d) {
  int major = 0, minor = 0;
  const std::string cc = string_member(d.properties(), k::kComputeCapability);
  if (std::sscanf(cc.c_str(), "%d.%d", &major, &minor) != 2) return std::nullopt;
  return std::pair{major, minor};
}

// GEMM and conv on an NVIDIA GPU: the datasheet's dense peak corrected from its own clock (peak ÷
// SMs ÷ per-SM rate) to the record's, else SMs × per-SM rate × the record's clock.
Json gpu_compute(const Json& record, const Device& d, const std::string& dtype) {
  const auto cc = compute_capability(d);
  const auto sms = number_member(d.properties(), k::kMultiprocessors);
  const auto clock = sm_clock(record, d);
  // Convolutions run on the same tensor cores: the GEMM peak bounds them.
  const Reference* ds =
      d.sku ? find_reference(*d.sku, "datasheet", "gemm", dtype, Json::object(), "excluded")
            : nullptr;
  const auto rate = cc ? dense_flop_per_clock_per_sm(cc->first, cc->second, dtype) : std::nullopt;
  if (!rate || !clock) {
    if (ds)
      return figure(ds->value, "TFLOP/s", ds->provenance,
                    rate ? "the datasheet's clock (no SM clock known to correct it to)"
                         : "the datasheet's clock (no per-SM rate known to correct it)");
    if (!cc) return none("the GPU's compute capability is unknown");
    if (!rate)
      return none(
          fmt::format("no dense FLOP per clock per SM known for compute capability "
                      "{}.{} in {}",
                      cc->first, cc->second, dtype));
    return none("no SM clock known: NVML gave neither a sample nor a maximum");
  }
  Json out;
  if (ds && d.sku->sm_count) {
    const double ds_clock = ds->value * 1e6 / (*d.sku->sm_count * *rate);
    out = figure(ds->value * clock->first / ds_clock, "TFLOP/s", ds->provenance, clock->second);
    out[k::kLimitDatasheet] = {{k::kValue, ds->value}, {k::kLimitClockMhz, ds_clock}};
  } else if (sms && *sms > 0) {
    out = figure(*sms * *rate * clock->first * 1e6 / 1e12, "TFLOP/s",
                 fmt::format("compute capability {}.{}: {:g} dense FLOP per clock per SM in {} "
                             "(NVIDIA's whitepapers) × {:g} SMs",
                             cc->first, cc->second, *rate, dtype, *sms),
                 clock->second);
  } else {
    return none("the GPU's SM count is unknown");
  }
  out[k::kLimitClockMhz] = clock->first;
  return out;
}

// Device memory: the datasheet's bandwidth, else bus width × memory clock × 2 (double data rate).
Json gpu_memory(const Device& d) {
  if (d.sku)
    if (const Reference* ds =
            find_reference(*d.sku, "datasheet", "exp", "f32", Json::object(), "excluded"))
      return figure(ds->value, "GB/s", ds->provenance, "the datasheet's memory bandwidth");
  const auto bits = number_member(d.properties(), k::kMemoryBusWidthBits);
  const auto khz = number_member(d.properties(), k::kMemoryClockKhz);
  if (d.backend != "cuda" || !bits || !khz)
    return none(
        fmt::format("no memory bandwidth known for {} (configs/skus.toml has no entry and "
                    "the probe gave no bus width and memory clock)",
                    d.name.empty() ? d.id : d.name));
  Json out = figure(*bits / 8 * *khz * 1e3 * 2 / 1e9, "GB/s",
                    fmt::format("CUDA's memory bus width ({:g} bits) × memory clock × 2 (double "
                                "data rate)",
                                *bits),
                    "the memory's maximum clock");
  out[k::kLimitClockMhz] = *khz / 1e3;
  return out;
}

// One direction of a PCIe link after its line encoding: 8b/10b to Gen2, 128b/130b from Gen3.
std::optional<double> pcie_gb_per_s(int gen, int width) {
  static constexpr double kGtPerS[] = {0, 2.5, 5, 8, 16, 32};
  if (gen < 1 || gen > 5 || width < 1) return std::nullopt;
  const double encoding = gen <= 2 ? 8.0 / 10 : 128.0 / 130;
  return width * kGtPerS[gen] * encoding / 8;
}

// Host copies: the link NVML reports, else the datasheet's PCIe figure; "both" moves twice.
Json gpu_host_copy(const Device& d, const std::string& direction) {
  const double ways = direction == "both" ? 2 : 1;
  const Json& nvml = member_or_empty(d.properties(), k::kNvml);
  const auto gen = number_member(nvml, k::kPcieLinkGenMax);
  const auto width = number_member(nvml, k::kPcieLinkWidthMax);
  if (gen && width)
    if (auto per = pcie_gb_per_s(static_cast<int>(*gen), static_cast<int>(*width)))
      return figure(ways * *per, "GB/s",
                    fmt::format("PCIe Gen{:g} x{:g} (NVML's maximum link): {:g} GB/s per direction "
                                "after encoding",
                                *gen, *width, *per),
                    direction == "both" ? "both directions at once" : "one direction");
  if (d.sku)
    if (const Reference* ds =
            find_reference(*d.sku, "datasheet", "copy", "", {{k::kDirection, "h2d"}}, "excluded"))
      return figure(ways * ds->value, "GB/s", ds->provenance,
                    direction == "both" ? "both directions at once" : "one direction");
  return none("the PCIe link is unknown (NVML reports it for CUDA devices)");
}

// A link between GPUs (the SKU's NVLink figure, per direction), times the directions or GPUs
// that send at once.
Json gpu_link(const Device& d, const std::string& op, double ways, std::string basis) {
  const Reference* ds =
      d.sku ? find_reference(*d.sku, "datasheet", op, "f32", Json::object(), "excluded") : nullptr;
  if (!ds)
    return none(fmt::format("no NVLink figure for {} in configs/skus.toml",
                            d.name.empty() ? d.id : d.name));
  Json out = figure(ways * ds->value, "GB/s", ds->provenance, std::move(basis));
  if (ds->signalling) out[k::kLimitSignalling] = ways * *ds->signalling;
  return out;
}

Json p2p_limit(const Json& record, const LimitFacts& f) {
  const Json& s = member_or_empty(record, k::kShape);
  if (!s.value(std::string(k::kPeerAccess), true))
    return none("no peer access: the copy is staged through host memory");
  std::string id = string_member(s, k::kSrc);
  if (id == "all") id = string_member(s, k::kDst);
  if (id == "all") {
    for (const auto& b : f.backends)
      if (string_member(b, k::kName) == "cuda")
        for (const auto& e : member_or_empty(b, k::kDevices))
          if (id == "all") id = string_member(e, k::kDevice);
  }
  const Device d = find_device(f, id, "cuda");
  const std::string direction = string_member(s, k::kDirection);
  if (direction == "all_to_all") {
    // n GPUs each send to n − 1: copies = n(n − 1), and every GPU's links send at once.
    const double copies = number_member(s, k::kCopies).value_or(0);
    const double n = std::round((1 + std::sqrt(1 + 4 * copies)) / 2);
    return gpu_link(d, "p2p", n,
                    fmt::format("{:g} GPUs sending at once, each over all its links", n));
  }
  if (direction == "all_to_one" || direction == "one_to_all")
    return gpu_link(d, "p2p", 1, "the one GPU's links in one direction");
  if (s.value(std::string(k::kBidirectional), false))
    return gpu_link(d, "p2p", 2,
                    "both directions; a pair joined by all its GPU's links (NVSwitch)");
  return gpu_link(d, "p2p", 1, "one direction; a pair joined by all its GPU's links (NVSwitch)");
}

Json limit_without_fraction(const Json& r, const LimitFacts& f) {
  const std::string op = string_member(r, k::kOp);
  if (string_member(r, k::kTransfers) == "included")
    return none(
        "end to end: the host transfers and the op share the time; no one figure bounds "
        "both");
  if (op == "p2p") return p2p_limit(r, f);
  if (op == "allreduce") {
    if (f.across_processes ||
        string_member(member_or_empty(r, k::kContext), k::kTransport) == "net")
      return none(
          "the network path (between processes, or forced by --transport net) bounds this "
          "all-reduce, and no figure for it is known");
    const Json& devices = member_or_empty(member_or_empty(r, k::kShape), k::kDevices);
    const std::string first = devices.is_array() && !devices.empty() && devices[0].is_string()
                                  ? devices[0].get<std::string>()
                                  : "";
    return gpu_link(find_device(f, first, "cuda"), "allreduce", 1,
                    "bus bandwidth against one direction of each GPU's links");
  }
  const Device d = find_device(f, string_member(r, k::kDevice), string_member(r, k::kBackend));
  const std::string dtype = string_member(r, k::kDtype);
  const bool flops = op == "gemm" || op == "conv";
  if (on_host_cpu(d)) return flops ? cpu_compute(r, f, dtype) : none(kCpuMemoryReason);
  if (d.backend != "cuda")
    return none(
        fmt::format("no {} figure known for {} (backend {}): SM count, per-SM rate, "
                    "memory bus and link are read from CUDA and NVML",
                    flops ? "FLOP" : "bandwidth", d.name.empty() ? d.id : d.name, d.backend));
  if (flops) return gpu_compute(r, d, dtype);
  const std::string direction = string_member(member_or_empty(r, k::kShape), k::kDirection);
  if (op == "copy" && direction != "d2d") return gpu_host_copy(d, direction);
  return gpu_memory(d);
}

}  // namespace

bool runs_on_host_cpu(const LimitFacts& facts, const std::string& device,
                      const std::string& backend) {
  return on_host_cpu(find_device(facts, device, backend));
}

Json limit_of(const Json& record, const LimitFacts& facts) {
  const auto op = op_from_string(string_member(record, k::kOp));
  if (!op || !bench::unit_of(*op).rated) return nullptr;
  if (string_member(record, k::kStatus) != "ok") return nullptr;
  const Json& tp = member_or_empty(record, k::kThroughput);
  const auto value = number_member(tp, k::kValue);
  if (!value) return nullptr;
  Json limit = limit_without_fraction(record, facts);
  if (auto v = number_member(limit, k::kValue); v && *v > 0) {
    if (string_member(limit, k::kUnit) != string_member(tp, k::kUnit))
      return none(fmt::format("the limit is in {}, the record in {}",
                              string_member(limit, k::kUnit), string_member(tp, k::kUnit)));
    limit[k::kLimitFraction] = *value / *v;
  }
  return limit;
}

void add_stress_limits(Json& section, const LimitFacts& facts) {
  if (!section.is_object() || !section.contains(k::kDevices) || !section[k::kDevices].is_array())
    return;
  for (auto& device : section[k::kDevices]) {
    if (!device.is_object() || !device.contains(k::kRecords) || !device[k::kRecords].is_array())
      continue;
    for (auto& r : device[k::kRecords]) {
      if (!r.is_object()) continue;
      const std::string test = string_member(r, k::kTest);
      Json as_bench = r;
      as_bench[k::kTransfers] = "excluded";
      if (test == "gemm") {
        as_bench[k::kOp] = "gemm";
        double sum = 0, n = 0;
        for (const auto& w : member_or_empty(member_or_empty(r, k::kThroughput), k::kWindows))
          if (auto mhz = number_member(w, k::kSmClockMhz)) sum += *mhz, ++n;
        if (n > 0) as_bench[k::kContext] = {{k::kSmClockMhz, {{k::kMean, sum / n}}}};
      } else if (test == "memory") {
        as_bench[k::kOp] = "exp";  // device memory, read and written
      } else if (test == "copy") {
        if (member_or_empty(r, k::kCopy).contains(k::kPeer)) {
          if (string_member(r, k::kStatus) == "ok")
            r[k::kLimit] = none("host and peer copies at once: no one link bounds their sum");
          continue;
        }
        as_bench[k::kOp] = "copy";
        as_bench[k::kShape] = {{k::kDirection, "both"}};
      } else {
        continue;
      }
      Json limit = limit_of(as_bench, facts);
      if (!limit.is_null()) r[k::kLimit] = std::move(limit);
    }
  }
}

void add_limits(Json& results, const LimitFacts& facts) {
  if (!results.is_array()) return;
  for (auto& r : results) {
    if (!r.is_object()) continue;
    Json limit = limit_of(r, facts);
    if (!limit.is_null()) r[k::kLimit] = std::move(limit);
  }
}

}  // namespace gpucheck::qualify

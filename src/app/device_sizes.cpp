#include "app/device_sizes.h"

#include "bench/ops/op_unit.h"
#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/shape_text.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <optional>

namespace gpucheck::app {

namespace k = keys;
using nlohmann::json;

namespace {

// The most a chosen size may be: the large preset's GEMM doubled, 2^30 exp elements (8 GiB
// moved), a 1 GiB copy, the conv sweep's largest batch. A card past these is saturated by them.
constexpr std::uint64_t kMaxGemm = 16384;
constexpr std::uint64_t kMaxExp = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxCopy = std::uint64_t{1} << 30;
constexpr std::uint64_t kMaxConvBatch = 256;

struct Limit {
  std::optional<double> value;  // in the unit asked for
  std::string why;              // the reason there is none, or the figure's source
};

// The limit a record of this op on this device would be judged against (qualify::limit_of on a
// record with a nominal throughput): the same figure the run's records will carry.
Limit limit_for(const BenchTarget& t, const qualify::LimitFacts& facts, std::string_view op,
                DType dtype, std::string_view unit, std::string_view direction = {}) {
  json shape = json::object();
  if (!direction.empty()) shape[k::kDirection] = direction;
  const json record = {{k::kOp, op},
                       {k::kStatus, "ok"},
                       {k::kDevice, t.device},
                       {k::kBackend, t.backend},
                       {k::kDtype, to_string(dtype)},
                       {k::kShape, shape},
                       {k::kThroughput, {{k::kValue, 1.0}, {k::kUnit, unit}}}};
  const json l = qualify::limit_of(record, facts);
  Limit out;
  if (l.is_object() && l.contains(k::kValue) && l[k::kValue].is_number() &&
      l[k::kValue].get<double>() > 0 && l.value(std::string(k::kUnit), "") == unit) {
    out.value = l[k::kValue].get<double>();
    out.why = l.value(std::string(k::kSource), "");
  } else if (l.is_object()) {
    out.why = l.value(std::string(k::kReason), "no limit known");
  }
  return out;
}

std::uint64_t first_n(const std::vector<bench::Shape>& shapes, auto member) {
  for (const auto& s : shapes)
    if (auto v = member(s)) return *v;
  return 0;
}

std::string count_text(std::uint64_t n) {
  if (n >= 1024 && (n & (n - 1)) == 0) return fmt::format("2^{}", std::countr_zero(n));
  return fmt::format("{}", n);
}

std::string bytes_text(std::uint64_t b) {
  if (b >= (std::uint64_t{1} << 30) && b % (std::uint64_t{1} << 30) == 0)
    return fmt::format("{} GiB", b >> 30);
  if (b >= (std::uint64_t{1} << 20) && b % (std::uint64_t{1} << 20) == 0)
    return fmt::format("{} MiB", b >> 20);
  return fmt::format("{} B", b);
}

// A size as the size flags write it: exp "2^28", copy "256 MiB" (a preset's copy has no
// direction yet), the others as records print their shapes.
std::string size_label(const bench::Shape& s) {
  if (const auto* e = std::get_if<ExpShape>(&s)) return count_text(e->n);
  if (const auto* c = std::get_if<CopyShape>(&s)) return bytes_text(c->bytes);
  return shape_text(bench::shape_to_json(s));
}

class Chooser {
 public:
  Chooser(const BenchTarget& t, const bench::SizeSet& small, const bench::SizeSet& medium,
          const qualify::LimitFacts& facts)
      : t_(t),
        small_(small),
        medium_(medium),
        facts_(facts),
        on_cpu_(qualify::runs_on_host_cpu(facts, t.device, t.backend)) {
    out_.sizes = small;
  }

  DeviceSizes take() && { return std::move(out_); }

  // pocl and lavapipe run on the CPU's cores, where the cpu device already measures what they
  // can do: they answer whether the implementation works and how it compares, at the small
  // sizes (lavapipe's GEMM takes 0.9 s at 1024³ on a 2-core VM).
  bool cpu_implementation() const { return on_cpu_ && !backend_is_host_cpu(t_.backend); }
  void keep_small() {
    for (Op op : {bench::op_for<GemmShape>, bench::op_for<ConvShape>, bench::op_for<ExpShape>,
                  bench::op_for<CopyShape>})
      if (!small_.of(op).empty())
        note(op,
             "an implementation on the CPU's cores: the small size (the cpu device measures "
             "the cores)");
  }

  void gemm() {
    const auto& shapes = small_.of(bench::op_for<GemmShape>);
    const std::uint64_t side =
        first_n(shapes, [](const bench::Shape& s) -> std::optional<std::uint64_t> {
          if (auto g = std::get_if<GemmShape>(&s)) return std::max({g->m, g->n, g->k});
          return std::nullopt;
        });
    if (side == 0) return;
    // The CPU's f32 only: its bf16 and f16 run far below what its ISA could do, so their limit
    // would ask for sizes that take minutes.
    Limit l = limit_for(t_, facts_, "gemm", DType::kF32, "TFLOP/s");
    std::string basis = "f32";
    if (!on_cpu_)
      if (Limit b = limit_for(t_, facts_, "gemm", DType::kBf16, "TFLOP/s");
          b.value && (!l.value || *b.value > *l.value)) {
        l = b;
        basis = "bf16";
      }
    if (!l.value) return fallback(bench::op_for<GemmShape>, l.why);
    const double n = std::cbrt(*l.value * 1e12 * kWorkS / 2);
    const std::uint64_t chosen = std::min(round_up_pow2(n, side), kMaxGemm);
    add(GemmShape{chosen, chosen, chosen},
        fmt::format("{:.3g} ms of work at its {} limit of {:.4g} TFLOP/s ({})", kWorkS * 1e3, basis,
                    *l.value, l.why));
  }

  void conv() {
    const auto& shapes = small_.of(bench::op_for<ConvShape>);
    const ConvShape* base = shapes.empty() ? nullptr : std::get_if<ConvShape>(&shapes.front());
    if (!base) return;
    const Limit l = limit_for(t_, facts_, "conv", DType::kF32, "TFLOP/s");
    if (!l.value) return fallback(bench::op_for<ConvShape>, l.why);
    const double per_image =
        2.0 * static_cast<double>(base->k * base->p() * base->q() * base->c * base->r * base->s);
    ConvShape s = *base;
    s.n = std::min(round_up_pow2(*l.value * 1e12 * kWorkS / per_image, base->n), kMaxConvBatch);
    add(s, fmt::format("{:.3g} ms of work at its f32 limit of {:.4g} TFLOP/s", kWorkS * 1e3,
                       *l.value));
  }

  void exp() {
    const std::uint64_t n = first_n(small_.of(bench::op_for<ExpShape>), [](const bench::Shape& s) {
      auto e = std::get_if<ExpShape>(&s);
      return e ? std::optional<std::uint64_t>(e->n) : std::nullopt;
    });
    if (n == 0) return;
    const Limit l = limit_for(t_, facts_, "exp", DType::kF32, "GB/s");
    if (!l.value) {
      if (on_cpu_)
        return note(bench::op_for<ExpShape>,
                    "exp is bound by a CPU's arithmetic, not its memory: the small size keeps "
                    "its cores busy");
      return fallback(bench::op_for<ExpShape>, l.why);
    }
    // f32 in and out: 8 bytes moved an element.
    const double elements = *l.value * 1e9 * kWorkS / 8;
    add(ExpShape{std::min(round_up_pow2(elements, n), kMaxExp)},
        fmt::format("{:.3g} ms of memory traffic at its {:.4g} GB/s", kWorkS * 1e3, *l.value));
  }

  void copy() {
    const std::uint64_t bytes =
        first_n(small_.of(bench::op_for<CopyShape>), [](const bench::Shape& s) {
          auto c = std::get_if<CopyShape>(&s);
          return c ? std::optional<std::uint64_t>(c->bytes) : std::nullopt;
        });
    if (bytes == 0 || on_cpu_) return;
    const Limit host = limit_for(t_, facts_, "copy", DType::kF32, "GB/s", "h2d");
    const Limit dev = limit_for(t_, facts_, "copy", DType::kF32, "GB/s", "d2d");
    if (!host.value && !dev.value) return fallback(bench::op_for<CopyShape>, host.why);
    double need = 0;
    std::vector<std::string> parts;
    if (host.value) {
      need = std::max(need, *host.value * 1e9 * kHostCopyWorkS);
      parts.push_back(fmt::format("{:.3g} ms at the host link's {:.4g} GB/s", kHostCopyWorkS * 1e3,
                                  *host.value));
    }
    if (dev.value) {
      need = std::max(need, *dev.value * 1e9 * kDeviceCopyWorkS);
      parts.push_back(fmt::format("{:.3g} µs at device memory's {:.4g} GB/s",
                                  kDeviceCopyWorkS * 1e6, *dev.value));
    }
    CopyShape s;
    s.bytes = std::min(round_up_pow2(need, bytes), kMaxCopy);
    add(s, fmt::format("the larger of {}", fmt::join(parts, " and ")));
  }

 private:
  // An op with no limit known: a GPU gets the medium preset's idea of a size that keeps a
  // discrete GPU busy; a CPU device keeps the small size.
  void fallback(Op op, const std::string& why) {
    if (on_cpu_) return note(op, fmt::format("no limit known ({}): the small size", why));
    const auto& medium = medium_.of(op);
    if (medium.empty()) return note(op, fmt::format("no limit known ({})", why));
    add(medium.front(), fmt::format("no limit known ({}): the medium preset's size", why));
  }

  void note(Op op, std::string why) {
    json sizes = json::array();
    for (const auto& s : small_.of(op)) sizes.push_back(size_label(s));
    out_.explained[std::string(to_string(op))] = {{k::kSizes, sizes}, {k::kWhy, std::move(why)}};
  }

  void add(bench::Shape chosen, std::string why) {
    const Op op = bench::op_of(chosen);
    auto& list = out_.sizes.lists[op];
    const std::string chosen_json = bench::shape_to_json(chosen).dump();
    const bool already = std::any_of(list.begin(), list.end(), [&](const bench::Shape& s) {
      return bench::shape_to_json(s).dump() == chosen_json;
    });
    json sizes = json::array();
    if (!already) {
      if (!list.empty()) out_.lesson.emplace(op, list.front());
      list.push_back(chosen);
    }
    for (const auto& s : list) sizes.push_back(size_label(s));
    if (already)
      why += "; the small size already gives it";
    else if (out_.lesson.contains(op))
      why += fmt::format("; {} kept to show the cost of host transfers",
                         size_label(out_.lesson.at(op)));
    out_.explained[std::string(to_string(op))] = {{k::kSizes, sizes}, {k::kWhy, std::move(why)}};
  }

  const BenchTarget& t_;
  const bench::SizeSet& small_;
  const bench::SizeSet& medium_;
  const qualify::LimitFacts& facts_;
  const bool on_cpu_;
  DeviceSizes out_;
};

}  // namespace

std::uint64_t round_up_pow2(double x, std::uint64_t floor) {
  std::uint64_t p = 1;
  while (p < floor) p <<= 1;
  while (static_cast<double>(p) < x && p < (std::uint64_t{1} << 62)) p <<= 1;
  return std::max(p, floor);
}

DeviceSizes choose_device_sizes(const BenchTarget& target, const bench::Presets& presets,
                                const qualify::LimitFacts& facts) {
  static const bench::SizeSet kNone;
  auto preset = [&](const char* name) -> const bench::SizeSet& {
    auto it = presets.find(name);
    return it == presets.end() ? kNone : it->second;
  };
  Chooser c(target, preset("small"), preset("medium"), facts);
  if (c.cpu_implementation()) {
    c.keep_small();
    return std::move(c).take();
  }
  c.gemm();
  c.conv();
  c.exp();
  c.copy();
  return std::move(c).take();
}

bool keep_cell(const DeviceSizes& sizes, const bench::Cell& cell) {
  auto it = sizes.lesson.find(cell.op);
  if (it == sizes.lesson.end()) return true;
  // A preset's size says only what counts for size: a copy's bytes, a conv's dimensions; the
  // cells made from it add the direction and the layout.
  if (const auto* c = std::get_if<CopyShape>(&cell.shape)) {
    const auto* lesson = std::get_if<CopyShape>(&it->second);
    if (!lesson || lesson->bytes != c->bytes) return true;
    return c->direction == Direction::kH2d || c->direction == Direction::kD2h;
  }
  if (const auto* conv = std::get_if<ConvShape>(&cell.shape)) {
    auto* lesson = std::get_if<ConvShape>(&it->second);
    if (!lesson) return true;
    ConvShape same = *conv;
    same.layout = lesson->layout;
    if (bench::shape_to_json(same) != bench::shape_to_json(*lesson)) return true;
    return conv->layout == Layout::kNchw && cell.dtype == DType::kF32;
  }
  if (bench::shape_to_json(cell.shape) != bench::shape_to_json(it->second)) return true;
  return cell.dtype == DType::kF32;
}

}  // namespace gpucheck::app

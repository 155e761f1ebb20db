// bench's text view: the records first (a table per op, device time and end to end side by
// side, sizes too small for a GPU's peak marked), the GPU versus CPU answer in words, the
// sweep's break-even sizes, the system facts with --details, and a closing count.
#include "core/backend_descriptors.h"
#include "core/json_keys.h"
#include "core/json_keys_limits.h"
#include "core/workload.h"
#include "report/multigpu_tables.h"
#include "report/units.h"
#include "report/view_model.h"
#include "report/views.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <optional>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

namespace {

std::size_t index_in(std::vector<std::string>& order, const std::string& v) {
  auto it = std::find(order.begin(), order.end(), v);
  if (it != order.end()) return static_cast<std::size_t>(it - order.begin());
  order.push_back(v);
  return order.size() - 1;
}

bool accelerator(const Json& r) {
  return !backend_is_host_cpu(text_at(r, k::kBackend));
}

bool included(const Json& r) {
  return text_at(r, k::kTransfers) == "included";
}

// bench --framework: a record measured through a Python framework (its name), or empty.
std::string framework_of(const Json& r) {
  auto f = r.find("framework");
  return f != r.end() && f->is_object() ? text_at(*f, k::kName) : std::string();
}

// "cpu", or "cpu torch" for a framework's record beside gpucheck's own on that device.
std::string device_label(const Json& r) {
  const std::string fw = framework_of(r);
  return text_at(r, k::kDevice) + (fw.empty() ? "" : " " + fw);
}

// The work of a record, to judge whether it can keep a GPU busy: the medium preset's sizes
// (configs/default.toml) are where an H100/H200 comes near its peak (docs/PERFORMANCE.md); the
// small preset's GEMM 512 reaches 11 TFLOP/s of ~700 and its 1 MiB copy 294 of ~4000 GB/s.
bool too_small_for_peak(const Json& r) {
  if (!is_gpu_record(r) || text_at(r, k::kStatus) != "ok") return false;
  if (auto pf = number_at(r, k::kPeakFraction); pf && *pf >= 0.7) return false;
  if (auto lf = number_at(r.value(std::string(k::kLimit), Json::object()), k::kLimitFraction);
      lf && *lf >= 0.7)
    return false;
  const Json s = r.value(std::string(k::kShape), Json::object());
  auto u = [&](std::string_view key) { return number_at(s, key).value_or(0); };
  const std::string op = text_at(r, k::kOp);
  if (op == "exp") return u(k::kN) < 16777216.0;
  if (op == "copy") return u(k::kBytes) < 67108864.0;
  if (op == "gemm") return u(k::kM) * u(k::kN) * u(k::kKk) < 2048.0 * 2048 * 2048;
  if (op == "conv") {
    const double p = (u(k::kH) + 2 * u(k::kPad) - u(k::kR)) / std::max(1.0, u(k::kStride)) + 1;
    const double q = (u(k::kW) + 2 * u(k::kPad) - u(k::kS)) / std::max(1.0, u(k::kStride)) + 1;
    return 2 * u(k::kN) * u(k::kKk) * p * q * u(k::kC) * u(k::kR) * u(k::kS) <
           2.0 * 32 * 64 * 56 * 56 * 64 * 3 * 3;  // the medium conv
  }
  return false;
}

// A result cell: the record with device time and its end-to-end twin.
struct Cell {
  const Json* excluded = nullptr;
  const Json* included = nullptr;
  std::size_t shape = 0, dtype = 0, device = 0;
  const Json& any() const { return excluded ? *excluded : *included; }
};

std::string median_text(const Json* r) {
  if (!r || text_at(*r, k::kStatus) != "ok") return {};
  const Json t = r->value(std::string(k::kTimeS), Json::object());
  auto m = number_at(t, k::kMedian);
  return m ? format_seconds(*m) : std::string();
}

std::string rate_text(const Json* r) {
  if (!r || text_at(*r, k::kStatus) != "ok") return {};
  const Json tp = r->value(std::string(k::kThroughput), Json::object());
  auto v = number_at(tp, k::kValue);
  return v ? format_rate(*v, text_at(tp, k::kUnit)) : std::string();
}

std::string speedup_text(const Json* r) {
  if (!r) return {};
  auto s = number_at(*r, k::kSpeedupVsCpu);
  return s ? format_speedup(*s) : std::string();
}

std::string status_text(const Json* r) {
  if (!r) return {};
  std::string s = text_at(*r, k::kStatus);
  if (s == "ok") return {};
  if (s == "failed" || s == "mismatch")
    for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// With --details, the library's choice (cuDNN engine, cuBLASLt algorithm) under its row.
std::vector<std::string> notes_of(const Cell& c, bool details) {
  std::vector<std::string> notes;
  if (details)
    if (auto ch = c.any().find(k::kChoice); ch != c.any().end() && ch->is_object())
      notes.push_back(fmt::format(
          "{} {}: {}{}", text_at(*ch, k::kLibrary), text_at(*ch, k::kVersion), text_at(*ch, k::kId),
          text_at(*ch, k::kSource).empty() ? "" : " (" + text_at(*ch, k::kSource) + ")"));
  for (const Json* r : {c.excluded, c.included}) {
    if (!r) continue;
    const std::string what =
        c.excluded && c.included ? (r == c.included ? "end to end: " : "") : "";
    if (auto reason = text_at(*r, k::kReason); !reason.empty() && text_at(*r, k::kStatus) != "ok")
      notes.push_back(what + reason);
    if (r->contains(k::kScaledFrom) && r == &c.any())
      notes.push_back("scaled down from " + shape_label((*r)[k::kScaledFrom]) +
                      " to fit the memory rule");
    if (auto vs = r->find("vs_gpucheck"); vs != r->end() && vs->is_object())
      if (auto x = number_at(*vs, "ratio"))
        notes.push_back(fmt::format("{}{} {} {}: {} gpucheck's {}", what, framework_of(*r),
                                    text_at(*r, k::kDtype), text_at(*r, k::kOp), format_speedup(*x),
                                    text_at(*vs, k::kImpl)));
    const Json t = r->value(std::string(k::kTimeS), Json::object());
    if (t.value(std::string(k::kTruncated), false))
      notes.push_back(what + "cut short at --max-time: fewer repetitions than planned");
  }
  return notes;
}

// A conv shape is nine numbers and a layout: too wide for a table column beside eight others
// (at 80 or 100 columns it broke mid-number, "8,64,5" over "6,56,6"). Where every record of the
// table shares all but the batch and the layout, the rest is said once above the table.
std::optional<std::string> conv_common_shape(const std::vector<Cell>& cells) {
  static constexpr std::string_view kFixed[] = {k::kC, k::kH, k::kW,      k::kKk,
                                                k::kR, k::kS, k::kStride, k::kPad};
  std::optional<Json> first;
  for (const auto& c : cells) {
    const Json s = c.any().value(std::string(k::kShape), Json::object());
    if (!s.is_object() || !s.contains(k::kN)) return std::nullopt;
    Json fixed = Json::object();
    for (auto key : kFixed) fixed[std::string(key)] = s.value(key, Json());
    if (!first) first = fixed;
    if (fixed != *first) return std::nullopt;
  }
  if (!first) return std::nullopt;
  auto u = [&](std::string_view key) { return scalar_text((*first)[std::string(key)]); };
  return fmt::format("an N×{}×{}×{} input, {} filters {}×{}, stride {}, pad {}; size: N and layout",
                     u(k::kC), u(k::kH), u(k::kW), u(k::kKk), u(k::kR), u(k::kS), u(k::kStride),
                     u(k::kPad));
}

// One table per op, in the order the ops first appear.
void op_tables(TextView& view, const Json& results, bool details, bool* any_small) {
  std::vector<std::string> ops, shapes, dtypes, devices;
  std::map<std::string, std::vector<Cell>> by_op;
  std::map<std::string, std::size_t> cell_index;          // key → index in by_op[op]
  std::map<std::string, std::vector<std::string>> impls;  // op → "device impl"
  for (const auto& r : results) {
    const std::string op = text_at(r, k::kOp);
    index_in(ops, op);
    const std::string shape = r.value(std::string(k::kShape), Json::object()).dump();
    const std::string key = Json::array({op, text_at(r, k::kDevice), text_at(r, k::kImpl),
                                         text_at(r, k::kDtype), shape})
                                .dump();
    auto [it, fresh] = cell_index.try_emplace(key, by_op[op].size());
    if (fresh)
      by_op[op].push_back({nullptr, nullptr, index_in(shapes, shape),
                           index_in(dtypes, text_at(r, k::kDtype)),
                           index_in(devices, text_at(r, k::kDevice))});
    Cell& c = by_op[op][it->second];
    (included(r) ? c.included : c.excluded) = &r;
    const std::string impl = text_at(r, k::kDevice) + " " + text_at(r, k::kImpl);
    if (text_at(r, k::kImpl) != "unknown" && !text_at(r, k::kImpl).empty())
      index_in(impls[op], impl);
  }
  for (const auto& op : ops) {
    auto cells = by_op[op];
    std::stable_sort(cells.begin(), cells.end(), [](const Cell& a, const Cell& b) {
      return std::tie(a.shape, a.dtype, a.device) < std::tie(b.shape, b.dtype, b.device);
    });
    // "cpu openblas, cuda0/cuda1 cublaslt": devices that share an implementation together.
    std::vector<std::string> impl_order;
    std::map<std::string, std::string> impl_devices;
    for (const auto& i : impls[op]) {
      const std::string device = i.substr(0, i.find(' ')), impl = i.substr(i.find(' ') + 1);
      auto& list = impl_devices[impl];
      if (list.empty()) impl_order.push_back(impl);
      list += (list.empty() ? "" : "/") + device;
    }
    std::string impl_list;
    for (const auto& impl : impl_order)
      impl_list += (impl_list.empty() ? "" : ", ") + impl_devices[impl] + " " + impl;
    view.text(op + (impl_list.empty() ? "" : " (" + impl_list + ")"), 0, 2, Tone::kBold);
    const std::optional<std::string> conv_common =
        op == "conv" ? conv_common_shape(cells) : std::nullopt;
    if (conv_common) view.text(*conv_common, 2, 4, Tone::kMuted);
    TextTable t;
    t.indent = 2;
    t.columns = {{"device", false, false, false, false, 5},
                 {"dtype", false, false, false, false, 4},
                 {"size", false, true, true, false, 6},
                 {"status", false, false, false, true, 6},
                 {"time", true},
                 {"throughput", true},
                 {"of limit", true},
                 {"vs CPU", true},
                 {"+copies", true},
                 {"vs CPU", true}};
    for (const auto& c : cells) {
      const Json& r = c.any();
      const Json shape = r.value(std::string(k::kShape), Json::object());
      std::string size = conv_common ? fmt::format("N={} {}", scalar_text(shape[k::kN]),
                                                   text_at(shape, k::kLayout))
                                     : shape_label(shape);
      const Json* main = c.excluded ? c.excluded : c.included;
      if (c.excluded && too_small_for_peak(*c.excluded)) {
        size += "*";
        *any_small = true;
      }
      std::string status = status_text(c.excluded);
      if (status.empty()) status = status_text(c.included);
      t.add({device_label(r), text_at(r, k::kDtype), size, status, median_text(main),
             rate_text(main), main ? limit_share(*main) : "", speedup_text(c.excluded),
             c.excluded ? median_text(c.included) : "", c.excluded ? speedup_text(c.included) : ""},
            notes_of(c, details));
    }
    view.table(std::move(t));
  }
}

std::string times_phrase(double s) {
  return s >= 1 ? format_speedup(s) + " faster than the CPU"
                : format_speedup(s) + " (slower than the CPU)";
}

// The seeds' question in words, per op and size (in f32 where it ran, else the first dtype), one
// line per device: "cuda0  3.40× faster than the CPU on resident data; 0.31× (slower) with the
// copies".
void gpu_versus_cpu(TextView& view, const Json& results) {
  struct Group {
    std::vector<std::string> devices;
    std::map<std::string, std::pair<const Json*, bool>> pick;  // device → record, is f32
  };
  std::vector<std::string> order;
  std::map<std::string, Group> groups;
  for (const auto& r : results) {
    if (!accelerator(r) || included(r) || !number_at(r, k::kSpeedupVsCpu)) continue;
    if (!framework_of(r).empty()) continue;  // the answer is about gpucheck's own kernels
    const std::string shape = shape_label(r.value(std::string(k::kShape), Json::object()));
    const std::string key = text_at(r, k::kOp) + " " + shape;
    auto [g, fresh] = groups.try_emplace(key);
    if (fresh) order.push_back(key);
    const std::string device = text_at(r, k::kDevice);
    const bool f32 = text_at(r, k::kDtype) == "f32";
    auto it = g->second.pick.find(device);
    if (it == g->second.pick.end()) g->second.devices.push_back(device);
    if (it != g->second.pick.end() && (it->second.second || !f32)) continue;
    g->second.pick[device] = {&r, f32};
  }
  if (order.empty()) return;
  view.blank();
  const bool gpus = std::any_of(results.begin(), results.end(), is_gpu_record);
  view.text(gpus ? "GPU versus CPU" : "Devices versus the CPU", 0, 0, Tone::kBold);
  for (const auto& key : order) {
    const Group& g = groups[key];
    TextTable t;
    t.header = false;
    t.indent = 4;
    t.columns = {{"device"}, {"answer", false, true, true, false, 20}};
    bool all_f32 = true;
    for (const auto& device : g.devices) {
      const Json& r = *g.pick.at(device).first;
      const std::string dtype = text_at(r, k::kDtype);
      all_f32 = all_f32 && dtype == "f32";
      std::string text = times_phrase(*number_at(r, k::kSpeedupVsCpu)) + " on resident data";
      for (const auto& e : results)
        if (included(e) && text_at(e, k::kDevice) == device &&
            text_at(e, k::kOp) == text_at(r, k::kOp) && text_at(e, k::kDtype) == dtype &&
            e.value(std::string(k::kShape), Json()) == r.value(std::string(k::kShape), Json()) &&
            number_at(e, k::kSpeedupVsCpu)) {
          const double x = *number_at(e, k::kSpeedupVsCpu);
          text += "; " + format_speedup(x) + (x >= 1 ? "" : " (slower)") + " with the copies";
          break;
        }
      t.add({device, text + (dtype == "f32" ? "" : " (" + dtype + ")")});
    }
    view.text(key + (all_f32 ? " f32" : ""), 2, 2);
    view.table(std::move(t));
  }
}

void sweep_view(TextView& view, const Json& sweep) {
  const std::string op = text_at(sweep, k::kOp), parameter = text_at(sweep, k::kParameter);
  view.text(fmt::format("break-even sweep of {} ({}): the smallest size from which the device "
                        "beats the CPU, there and at every larger size",
                        op, parameter),
            0, 2, Tone::kBold);
  TextTable t;
  t.indent = 2;
  t.columns = {{"device"},    {"dtype"},       {"layout"},
               {"transfers"}, {"sizes", true}, {"break-even", false, true, true, false, 10}};
  for (const auto& s : sweep.value(std::string(k::kSeries), Json::array())) {
    std::size_t measured = 0;
    for (const auto& p : s.value(std::string(k::kPoints), Json::array()))
      measured += p.contains(k::kBeatsCpu) ? 1 : 0;
    auto be = number_at(s, k::kBreakEven);
    t.add({text_at(s, k::kDevice), text_at(s, k::kDtype), text_at(s, k::kLayout),
           text_at(s, k::kTransfers), fmt::format("{}", measured),
           be ? format_count(static_cast<std::uint64_t>(*be)) : "none in range"});
  }
  view.table(std::move(t));
}

// bench without --size: the CPU and each device ran sizes of their own, so "how much faster" is
// also answered rate against rate, each at the largest size it ran in f32 (device time).
void own_size_rates(TextView& view, const Json& results) {
  auto rate_of = [](const Json& r) {
    return number_at(r.value(std::string(k::kThroughput), Json::object()), k::kValue);
  };
  auto best = [&](const std::string& device, const std::string& op) -> const Json* {
    const Json* pick = nullptr;
    for (const auto& r : results)
      if (text_at(r, k::kDevice) == device && text_at(r, k::kOp) == op && !included(r) &&
          text_at(r, k::kStatus) == "ok" && text_at(r, k::kDtype) == "f32" &&
          framework_of(r).empty()) {
        const auto v = rate_of(r);
        if (v && (!pick || *v > rate_of(*pick).value_or(0))) pick = &r;
      }
    return pick;
  };
  std::vector<std::pair<std::string, std::string>> lines;
  for (const std::string op : {"gemm", "conv", "exp"}) {
    const Json* cpu = best("cpu", op);
    if (!cpu) continue;
    std::vector<std::string> devices;
    for (const auto& r : results)
      if (accelerator(r) && text_at(r, k::kOp) == op &&
          std::find(devices.begin(), devices.end(), text_at(r, k::kDevice)) == devices.end())
        devices.push_back(text_at(r, k::kDevice));
    for (const auto& device : devices) {
      const Json* dev = best(device, op);
      if (!dev) continue;
      const Json& dt = dev->value(std::string(k::kThroughput), Json::object());
      const Json& ct = cpu->value(std::string(k::kThroughput), Json::object());
      const double d = rate_of(*dev).value_or(0), c = rate_of(*cpu).value_or(0);
      if (d <= 0 || c <= 0 || text_at(dt, k::kUnit) != text_at(ct, k::kUnit)) continue;
      lines.emplace_back(
          device, fmt::format("{} f32: {} at {}, {} the CPU's {} at {}", op,
                              format_rate(d, text_at(dt, k::kUnit)),
                              shape_label(dev->value(std::string(k::kShape), Json::object())),
                              format_speedup(d / c), format_rate(c, text_at(ct, k::kUnit)),
                              shape_label(cpu->value(std::string(k::kShape), Json::object()))));
    }
  }
  if (lines.empty()) return;
  view.text("each at its own size (rate against rate, device time)", 2, 2);
  TextTable t;
  t.header = false;
  t.indent = 4;
  t.columns = {{"device"}, {"answer", false, true, true, false, 20}};
  for (auto& [device, text] : lines) t.add({device, text});
  view.table(std::move(t));
}

// bench without --size: the sizes each device got, and with --details why.
void default_sizes_view(TextView& view, const Json& chosen, bool details) {
  view.text("sizes chosen for each device (--size small|medium|large: one preset for all)", 0, 2,
            Tone::kBold);
  TextTable t;
  t.header = false;
  t.indent = 2;
  t.columns = {{"device"}, {"sizes", false, true, true, false, 20}};
  for (const auto& [device, ops] : chosen.items()) {
    std::vector<std::string> parts;
    for (const auto& [op, entry] : ops.items()) {
      std::vector<std::string> sizes;
      for (const auto& size : entry.value(std::string(k::kSizes), Json::array()))
        sizes.push_back(scalar_text(size));
      parts.push_back(fmt::format("{} {}", op, fmt::join(sizes, ", ")));
    }
    t.add({device, fmt::format("{}", fmt::join(parts, "; "))});
    if (details)
      for (const auto& [op, entry] : ops.items())
        t.add({"", fmt::format("{}: {}", op, text_at(entry, k::kWhy))});
  }
  view.table(std::move(t));
}

}  // namespace

std::pair<std::string, Tone> results_summary(const Json& results) {
  std::map<std::string, std::size_t> n;
  for (const auto& r : results) ++n[text_at(r, k::kStatus)];
  const bool bad = n["failed"] + n["mismatch"] > 0;
  return {fmt::format("{} record{}: {} ok, {} unsupported, {} skipped, {} failed, {} mismatch",
                      results.size(), results.size() == 1 ? "" : "s", n["ok"], n["unsupported"],
                      n["skipped"], n["failed"], n["mismatch"]),
          bad ? Tone::kBad : Tone::kGood};
}

void results_view(TextView& view, const Json& results, const ViewOptions& o,
                  bool sizes_per_device) {
  bool any_small = false;
  // Work between GPUs reads as matrices, source by destination, and the network between hosts
  // as its own table; the rest per op.
  Json per_device = Json::array();
  for (const auto& r : results) {
    const std::string op = text_at(r, k::kOp);
    const auto known = op_from_string(op);
    if (!(known && runs_between_devices(*known)) && op != "net") per_device.push_back(r);
  }
  op_tables(view, per_device, o.details, &any_small);
  for (const auto& t : multigpu_tables(results)) section_table_view(view, t);
  if (any_small)
    view.text(sizes_per_device ? "* kept small to show where a GPU loses once host transfers count"
                               : "* too small to keep a GPU busy: far below the card's peak",
              2, 2, Tone::kMuted);
  gpu_versus_cpu(view, results);
  if (sizes_per_device) own_size_rates(view, results);
}

void bench_view(TextView& view, const Json& doc, const ViewOptions& o) {
  const Json results = doc.value(std::string(k::kResults), Json::array());
  title_view(view, "gpucheck bench", {}, doc);
  view.blank();
  if (auto s = doc.find(k::kSweep); s != doc.end() && s->is_object()) {
    sweep_view(view, *s);
    view.blank();
  }
  const auto chosen = doc.find(k::kDefaultSizes);
  const bool per_device = chosen != doc.end() && chosen->is_object() && !chosen->empty();
  if (per_device) {
    default_sizes_view(view, *chosen, o.details);
    view.blank();
  }
  results_view(view, results, o, per_device);
  for (const auto& e : doc.value(std::string(k::kErrors), Json::array()))
    view.text("error: " + scalar_text(e), 0, 7, Tone::kBad);
  if (o.details) {
    view.blank();
    system_facts_view(view, doc);
  }
  view.blank();
  const bool small = std::any_of(results.begin(), results.end(), too_small_for_peak);
  if (small && !per_device)
    view.text(
        "Sizes marked * do not reach a GPU's peak; --size large (or --size medium) "
        "measures the card.",
        0, 0, Tone::kWarn);
  auto [line, tone] = results_summary(results);
  view.text("bench: " + line, 0, 7, tone);
}

}  // namespace gpucheck::report

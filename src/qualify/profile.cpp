// Reading a qualify profile: every key is checked (type, allowed values, unknown keys), and every
// error names the file, the line from toml++'s source region and the dotted key.
#include "qualify/profile.h"

#include "qualify/toml_reader.h"

#include "bench/cell.h"
#include "bench/ops/op_unit.h"
#include "bench/reps.h"
#include "core/backend_descriptors.h"
#include "core/duration.h"
#include "core/errors.h"
#include "core/files.h"
#include "core/json_keys.h"
#include "core/safe_regex.h"
#include "doctor/registry.h"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <set>

namespace gpucheck::qualify {

namespace {

namespace k = keys;

// Every backend gpucheck knows, built here or not: a profile may require one this build lacks.
const std::vector<std::string>& backend_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const auto& b : backend_descriptors()) out.emplace_back(b.name);
    return out;
  }();
  return names;
}

// The file column of the pattern's character `offset` in the string value `value`: TOML literal
// strings hold the pattern as it is, basic strings escape backslashes and quotes, multi-line
// strings open with three quotes.
std::size_t pattern_column(const toml::node& value, std::string_view pattern, std::size_t offset) {
  const auto& src = value.source();
  if (src.end.line != src.begin.line) return src.begin.column;  // a string over several lines
  const std::size_t raw = src.end.column - src.begin.column;
  const std::size_t open = raw == pattern.size() + 6 ? 3 : 1;
  const bool escaped = raw != pattern.size() + 2 * open;
  std::size_t column = src.begin.column + open;
  for (std::size_t i = 0; i < offset && i < pattern.size(); ++i)
    column += escaped && (pattern[i] == '\\' || pattern[i] == '"') ? 2 : 1;
  return column;
}

// name_regex compiled by the linear-time matcher (core/safe_regex.h): std::regex backtracks
// exponentially on nested quantifiers ((.*)*x hangs on a long name) and recurses per group.
void check_name_regex(TableReader& r, const std::string& pattern, const std::string& file) {
  auto compiled = SafeRegex::compile(pattern);
  const auto* error = std::get_if<RegexError>(&compiled);
  if (!error) return;
  const toml::node& n = *r.take("name_regex");
  if (pattern.size() > SafeRegex::kMaxPatternLength) r.fail_value("name_regex", error->message);
  const std::size_t at = std::min(error->offset, pattern.size());
  throw UsageError(fmt::format(
      "{}:{}:{}: {}: expected an ECMAScript regex of the subset matched in linear time: {} (at "
      "character {} of the pattern)",
      file, n.source().begin.line, pattern_column(n, pattern, at), r.dotted("name_regex"),
      error->message, at + 1));
}

void read_selector(TableReader& r, Requirement& q) {
  auto dev = r.string("device");
  std::string d = dev.value_or("any");
  if (d == "any")
    q.selector = Selector::kAny;
  else if (d == "each")
    q.selector = Selector::kEach;
  else {
    if (backend_of_device_name(d).empty())
      r.fail_at(*r.take("device"), "device",
                fmt::format("\"any\", \"each\" or a device: cpu, {}, {}",
                            numbered_device_examples(), stable_device_forms()));
    q.selector = Selector::kNamed;
    if (r.has("backend")) r.fail_value("backend", "restricts device = \"any\" or \"each\" only");
  }
  q.device = d;
}

void read_backend(TableReader& r, Requirement& q) {
  q.backend = r.one_of("name", backend_names());
  q.available = r.boolean("available");
  q.devices_min = r.integer("devices_min", 0);
  if (!q.available && !q.devices_min)
    r.fail("a backend requirement needs 'available' or 'devices_min'");
  r.reject_unknown({"kind", "id", "name", "available", "devices_min"});
}

void read_device(TableReader& r, Requirement& q, const std::string& file) {
  read_selector(r, q);
  q.backend = r.one_of("backend", backend_names(), "");
  if (auto re = r.string("name_regex")) {
    check_name_regex(r, *re, file);
    q.name_regex = *re;
  }
  q.compute_capability_min = r.version("compute_capability_min");
  q.driver_min = r.version("driver_min");
  q.memory_gib_min = r.number("memory_gib_min", true);
  r.reject_unknown({"kind", "id", "device", "backend", "name_regex", "compute_capability_min",
                    "memory_gib_min", "driver_min"});
}

std::vector<std::string> string_list(TableReader& r, std::string_view key,
                                     const std::vector<std::string>& allowed) {
  const toml::node* n = r.take(key);
  std::vector<std::string> out;
  if (!n->is_array()) r.fail_at(*n, key, "a list of: " + join(allowed));
  for (const auto& e : *n->as_array()) {
    if (!e.is_string() ||
        std::find(allowed.begin(), allowed.end(), e.as_string()->get()) == allowed.end())
      r.fail_at(e, key, "a list of: " + join(allowed));
    out.push_back(e.as_string()->get());
  }
  return out;
}

void read_doctor(TableReader& r, Requirement& q) {
  std::string max = r.one_of("max_status", {"pass", "info", "warn"}, "warn");
  q.max_status = *doctor::check_status_from_string(max);
  std::vector<std::string> ids;
  for (const auto& c : doctor::all_checks()) ids.emplace_back(c.id);
  if (auto id = r.string("check")) {
    if (!doctor::find_check(*id))
      r.fail_at(*r.take("check"), "check",
                "a doctor check id (gpucheck doctor --list): " + join(ids));
    q.check = *id;
  }
  // Checks outside the profile's concern (another backend's driver stack): they still run and
  // report, but do not decide this requirement.
  if (r.has("ignore")) {
    if (!q.check.empty()) r.fail_value("ignore", "is for all checks; check names one already");
    q.ignore = string_list(r, "ignore", ids);
  }
  r.reject_unknown({"kind", "id", "max_status", "check", "ignore"});
}

void read_bench(TableReader& r, Requirement& q, const std::string& file) {
  read_selector(r, q);
  q.backend = r.one_of("backend", backend_names(), "");
  // The one-device ops (a group op's records are judged by the multi-GPU requirements).
  std::vector<std::string> ops;
  for (const auto& unit : bench::op_units())
    if (!unit.group) ops.emplace_back(to_string(unit.op));
  q.op = r.one_of("op", ops);
  const bool typed = bench::records_have_dtype(q.op);
  if (typed) {
    q.dtype = r.one_of("dtype", {"f32", "tf32", "f16", "bf16", "f64", "fp8"}, "f32");
    if (q.dtype == "fp8" && q.op != "gemm")
      r.fail_value("dtype", fmt::format("fp8 is a GEMM dtype; {} does not run in it", q.op));
  } else if (r.has("dtype"))
    r.fail_value("dtype", fmt::format("does not apply to {}", q.op));
  q.shape = read_shape(r, q.op, file);
  q.transfers = r.one_of("transfers", {"excluded", "included"}, "excluded");
  if (!typed && q.transfers == "included")
    r.fail(
        fmt::format("{} records are transfers = \"excluded\" only (a copy is the transfer)", q.op));

  std::vector<std::string> given;
  for (const char* key :
       {"min", "max", "speedup_min", "min_fraction_of_reference", "min_fraction_of_limit"})
    if (r.has(key)) given.emplace_back(key);
  if (given.size() != 1)
    r.fail(
        fmt::format("a bench requirement needs exactly one of min, max, speedup_min, "
                    "min_fraction_of_reference, min_fraction_of_limit (got {})",
                    given.empty() ? "none" : join(given)));
  const std::string& c = given.front();
  // A floor above the limit itself asks for more than the hardware can do: refused here.
  q.value = c == "min_fraction_of_limit" ? *r.fraction(c) : *r.number(c, true);
  bool flops = q.op == "gemm" || q.op == "conv";
  if (c == "min") {
    q.criterion = Criterion::kMin;
    if (q.op == "latency") r.fail("latency has no throughput: use 'max' with unit s, ms or us");
    q.unit = flops ? r.one_of("unit", {"TFLOP/s", "GFLOP/s"}) : r.one_of("unit", {"GB/s", "MB/s"});
  } else if (c == "max") {
    q.criterion = Criterion::kMax;
    q.unit = r.one_of("unit", {"s", "ms", "us"});
  } else if (c == "speedup_min") {
    q.criterion = Criterion::kSpeedupMin;
  } else if (c == "min_fraction_of_limit") {
    q.criterion = Criterion::kFractionOfLimit;
  } else {
    q.criterion = Criterion::kFractionOfReference;
    q.reference = r.one_of("reference", {"measured", "datasheet"}, "measured");
  }
  if (q.criterion != Criterion::kMin && q.criterion != Criterion::kMax && r.has("unit"))
    r.fail_value("unit", fmt::format("goes with min or max, not {}", c));
  if (q.criterion == Criterion::kSpeedupMin && q.selector == Selector::kNamed && q.device == "cpu")
    r.fail("speedup_min on the CPU: the CPU is the baseline speedups are measured against");
  r.reject_unknown({"kind", "id", "device", "backend", "op", "dtype", "shape", "transfers", "min",
                    "max", "unit", "speedup_min", "min_fraction_of_reference", "reference",
                    "min_fraction_of_limit"});
}

void read_stress(TableReader& r, Requirement& q) {
  read_selector(r, q);
  q.backend = r.one_of("backend", backend_names(), "");
  if (auto d = r.string("duration")) {
    std::string why;
    auto v = parse_duration_s(*d, &why);
    if (!v) r.fail_value("duration", why + " (a duration such as \"60s\", \"5m\", \"1h\")");
    q.duration_s = *v;
  }
  if (r.has("tests")) q.tests = string_list(r, "tests", {"gemm", "memory", "copy"});
  if (q.tests.empty()) r.fail("tests: at least one of gemm, memory, copy");
  q.dtype = r.one_of("dtype", {"f32", "tf32", "f16", "bf16", "f64", "fp8"}, "");
  if (auto v = r.integer("max_errors", 0)) q.max_errors = *v;
  q.max_temperature_c = r.number("max_temperature_c", true);
  if (r.has("allowed_clock_events"))
    q.allowed_clock_events =
        string_list(r, "allowed_clock_events",
                    {"gpu_idle", "applications_clocks_setting", "sw_power_cap", "hw_slowdown",
                     "sync_boost", "sw_thermal_slowdown", "hw_thermal_slowdown",
                     "hw_power_brake_slowdown", "display_clock_setting"});
  q.min_sustained_fraction = r.fraction("min_sustained_fraction");
  r.reject_unknown({"kind", "id", "device", "backend", "duration", "tests", "dtype", "max_errors",
                    "max_temperature_c", "allowed_clock_events", "min_sustained_fraction"});
}

// min (GB/s or MB/s) or min_fraction_of_reference, as for bench requirements; p2p also
// min_fraction_of_line_rate.
void read_link_criterion(TableReader& r, Requirement& q, const char* what) {
  const bool line_rate = std::string_view(what) == "p2p";
  std::vector<std::string> given;
  for (const char* key :
       {"min", "min_fraction_of_reference", "min_fraction_of_line_rate", "min_fraction_of_limit"})
    if (r.has(key) && (line_rate || std::string_view(key) != "min_fraction_of_line_rate"))
      given.emplace_back(key);
  if (given.size() != 1)
    r.fail(
        fmt::format("a {} requirement needs exactly one of min, min_fraction_of_reference{}, "
                    "min_fraction_of_limit (got {})",
                    what, line_rate ? ", min_fraction_of_line_rate" : "",
                    given.empty() ? "none" : join(given)));
  const bool min = given.front() == "min";
  if (given.front() == "min_fraction_of_limit") {
    q.criterion = Criterion::kFractionOfLimit;
    q.value = *r.fraction("min_fraction_of_limit");
    if (r.has("unit")) r.fail("'unit' goes with min, not min_fraction_of_limit");
  } else if (given.front() == "min_fraction_of_line_rate") {
    q.criterion = Criterion::kFractionOfLineRate;
    q.value = *r.fraction("min_fraction_of_line_rate");
    if (r.has("unit")) r.fail("'unit' goes with min, not min_fraction_of_line_rate");
  } else if (min) {
    q.criterion = Criterion::kMin;
    q.value = *r.number("min", true);
    q.unit = r.one_of("unit", {"GB/s", "MB/s"});
  } else {
    q.criterion = Criterion::kFractionOfReference;
    q.value = *r.number("min_fraction_of_reference", true);
    q.reference = r.one_of("reference", {"measured", "datasheet"}, "measured");
    if (r.has("unit")) r.fail("'unit' goes with min, not min_fraction_of_reference");
  }
}

std::uint64_t read_bytes(TableReader& r, std::uint64_t dflt) {
  auto v = r.integer("bytes", 1);
  return v ? static_cast<std::uint64_t>(*v) : dflt;
}

void read_p2p(TableReader& r, Requirement& q) {
  q.op = "p2p";
  q.bytes = read_bytes(r, std::uint64_t{256} << 20);
  q.bidirectional = r.one_of("direction", {"uni", "bi"}, "uni") == "bi";
  q.peer_access = r.boolean("peer_access").value_or(true);
  q.engine = r.one_of("engine", {"ce", "sm"}, "ce");
  if (q.engine == "sm" && !q.peer_access) r.fail("engine = \"sm\" needs peer_access = true");
  if (q.engine == "sm" && q.bidirectional) r.fail("engine = \"sm\" is measured one way only");
  if (const toml::node* n = r.take("pairs")) {
    static const std::regex pair_form(R"(^(cuda[0-9]+)->(cuda[0-9]+)$)");
    if (n->is_string() && n->as_string()->get() == "all") {
    } else if (n->is_array()) {
      for (const auto& item : *n->as_array()) {
        std::smatch m;
        std::string s = item.is_string() ? item.as_string()->get() : std::string();
        if (!std::regex_match(s, m, pair_form) || m[1] == m[2])
          r.fail_at(item, "pairs", "\"all\" or a list of \"cudaA->cudaB\" (A != B)");
        q.pairs.emplace_back(m[1], m[2]);
      }
    } else {
      r.fail_at(*n, "pairs", "\"all\" or a list of \"cudaA->cudaB\"");
    }
  }
  read_link_criterion(r, q, "p2p");
  r.reject_unknown({"kind", "id", "pairs", "direction", "peer_access", "engine", "bytes", "min",
                    "unit", "min_fraction_of_reference", "reference", "min_fraction_of_line_rate",
                    "min_fraction_of_limit"});
}

void read_allreduce(TableReader& r, Requirement& q) {
  q.op = "allreduce";
  q.bytes = read_bytes(r, std::uint64_t{256} << 20);
  if (q.bytes % 4 != 0) r.fail("bytes: an f32 all-reduce moves whole 4-byte elements");
  q.network_only = r.one_of("transport", {"auto", "net"}, "auto") == "net";
  if (q.network_only && (r.has("min_fraction_of_reference") || r.has("min_fraction_of_limit")))
    r.fail(
        "transport = \"net\": judge by min (busbw in GB/s); the SKU references are of the GPUs' "
        "own links, not of the network path");
  read_link_criterion(r, q, "allreduce");
  r.reject_unknown({"kind", "id", "bytes", "transport", "min", "unit", "min_fraction_of_reference",
                    "reference", "min_fraction_of_limit"});
}

void read_siblings(TableReader& r, Requirement& q) {
  auto v = r.number("max_deviation", true);
  if (!v) r.fail("missing key 'max_deviation' (a fraction below the median, e.g. 0.05)");
  q.value = *v;
  if (q.value >= 1)
    r.fail_at(*r.take("max_deviation"), "max_deviation", "a fraction between 0 and 1");
  q.backend = "cuda";
  r.reject_unknown({"kind", "id", "max_deviation"});
}

void read_infiniband(TableReader& r, Requirement& q) {
  if (auto v = r.number("rate_gbps_min", false, true)) q.value = *v;
  q.devices_min = r.integer("ports_min", 1, 1024).value_or(1);
  q.link_layer = r.one_of("link_layer", {"any", "InfiniBand", "Ethernet"}, "any");
  if (q.link_layer == "any") q.link_layer.clear();
  r.reject_unknown({"kind", "id", "rate_gbps_min", "ports_min", "link_layer"});
}

// A time a profile gives: within the limits every duration flag has (core/duration.h).
double seconds(TableReader& r, std::string_view key, double value, bool allow_zero) {
  if (auto why = duration_refusal(value, {kMaxDurationS, allow_zero})) r.fail_value(key, *why);
  return value;
}

BenchSettings read_bench_settings(TableReader& b) {
  BenchSettings s;
  if (auto v = b.integer("warmup", 0, 1000)) s.warmup = static_cast<int>(*v);
  if (auto v = b.integer("reps", 1, bench::kMaxAutoReps)) s.reps = static_cast<int>(*v);
  if (auto v = b.number("min_time_s", false, true))
    s.min_time_s = seconds(b, "min_time_s", *v, true);
  if (auto v = b.number("max_time_s", true)) s.max_time_s = seconds(b, "max_time_s", *v, false);
  if (auto v = b.integer("seed", 0)) s.seed = static_cast<std::uint64_t>(*v);
  if (auto v = b.integer("threads", 0, 65536)) s.threads = static_cast<int>(*v);
  b.reject_unknown({"warmup", "reps", "min_time_s", "max_time_s", "seed", "threads"});
  return s;
}

}  // namespace

std::string_view to_string(Kind k) {
  switch (k) {
    case Kind::kBackend:
      return "backend";
    case Kind::kDevice:
      return "device";
    case Kind::kDoctor:
      return "doctor";
    case Kind::kBench:
      return "bench";
    case Kind::kP2p:
      return "p2p";
    case Kind::kAllreduce:
      return "allreduce";
    case Kind::kSiblings:
      return "siblings";
    case Kind::kStress:
      return "stress";
    case Kind::kInfiniband:
      return "infiniband";
  }
  return "backend";
}

double unit_factor(std::string_view unit) {
  if (unit == "GFLOP/s") return 1e-3;  // to TFLOP/s
  if (unit == "MB/s") return 1e-3;     // to GB/s
  if (unit == "ms") return 1e-3;       // to s
  if (unit == "us") return 1e-6;
  return 1;
}

Profile parse_profile(std::string_view toml_text, const std::string& path) {
  const toml::table root = parse_toml(toml_text, path);
  Profile p;
  p.path = path;
  TableReader top(root, "", path);
  p.name = top.string("name").value_or(std::filesystem::path(path).stem().string());
  p.description = top.string("description").value_or("");
  if (const toml::node* b = top.take("bench")) {
    if (!b->is_table()) top.fail_at(*b, "bench", "a table of repetition settings");
    TableReader br(*b->as_table(), "bench", path);
    p.bench = read_bench_settings(br);
  }
  const toml::node* reqs = top.take("require");
  top.reject_unknown({"name", "description", "bench", "require"});
  if (!reqs)
    throw UsageError(fmt::format("{}: no [[require]] table: a profile needs requirements", path));
  if (!reqs->is_array_of_tables()) top.fail_at(*reqs, "require", "[[require]] tables");
  std::set<std::string> ids;
  std::size_t index = 0;
  for (const auto& node : *reqs->as_array()) {
    ++index;
    TableReader r(*node.as_table(), fmt::format("require[{}]", index), path);
    Requirement q;
    q.line = static_cast<int>(node.source().begin.line);
    std::string kind = r.one_of("kind", {"backend", "device", "doctor", "bench", "p2p", "allreduce",
                                         "siblings", "stress", "infiniband"});
    static const std::regex id_form(R"(^[a-z][a-z0-9_]*$)");
    if (auto id = r.string("id")) {
      if (!std::regex_match(*id, id_form)) r.fail_at(*r.take("id"), "id", "lower_snake_case");
      q.id = *id;
    } else {
      q.id = fmt::format("{}_{}", kind, index);
    }
    if (!ids.insert(q.id).second) r.fail_value("id", fmt::format("'{}' is used twice", q.id));
    if (kind == "backend") {
      q.kind = Kind::kBackend;
      read_backend(r, q);
    } else if (kind == "device") {
      q.kind = Kind::kDevice;
      read_device(r, q, path);
    } else if (kind == "doctor") {
      q.kind = Kind::kDoctor;
      read_doctor(r, q);
    } else if (kind == "p2p") {
      q.kind = Kind::kP2p;
      read_p2p(r, q);
    } else if (kind == "allreduce") {
      q.kind = Kind::kAllreduce;
      read_allreduce(r, q);
    } else if (kind == "siblings") {
      q.kind = Kind::kSiblings;
      read_siblings(r, q);
    } else if (kind == "infiniband") {
      q.kind = Kind::kInfiniband;
      read_infiniband(r, q);
    } else if (kind == "bench") {
      q.kind = Kind::kBench;
      read_bench(r, q, path);
    } else {
      // One stress run covers a profile: its devices run at once, as `gpucheck stress` runs them.
      if (std::any_of(p.requirements.begin(), p.requirements.end(),
                      [](const auto& x) { return x.kind == Kind::kStress; }))
        r.fail(
            "a profile holds one stress requirement (use device = \"each\" for several devices)");
      q.kind = Kind::kStress;
      read_stress(r, q);
    }
    p.requirements.push_back(std::move(q));
  }
  if (p.requirements.empty()) throw UsageError(fmt::format("{}: no [[require]] table", path));
  return p;
}

Profile load_profile(const std::string& path) {
  return parse_profile(read_input_file(path, kMaxConfigBytes, "--profile"), path);
}

}  // namespace gpucheck::qualify

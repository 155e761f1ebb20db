// `gpucheck bench`: the same workloads on the CPU and each chosen device, verified, with
// speedups over the CPU. Each device runs in its own child; children of distinct physical GPUs
// run at the same time (bench_multi.h), the CPU baseline alone first.
#include "app/bench_devices.h"
#include "app/bench_framework.h"
#include "app/bench_multi.h"
#include "app/bench_net.h"
#include "app/bench_ranks.h"
#include "app/bench_run.h"
#include "app/cli_common.h"
#include "app/device_sizes.h"
#include "backends/registry.h"
#include "bench/cell.h"
#include "bench/config.h"
#include "bench/host_lock.h"
#include "bench/ops/op_unit.h"
#include "bench/sweep.h"
#include "core/backend_descriptors.h"
#include "core/closest_word.h"
#include "core/document.h"
#include "core/json_input.h"
#include "core/json_keys.h"
#include "core/rendezvous.h"
#include "core/text.h"
#include "host/cpu_info.h"
#include "host/host_info.h"
#include "probe/backend_probes.h"
#include "qualify/judge.h"
#include "qualify/limits.h"
#include "report/speedup.h"
#include "report/stack_versions.h"

#include <fmt/format.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <sstream>

namespace gpucheck::app {

namespace k = keys;
using bench::Cell;

namespace {

struct BenchOptions {
  OutputOptions out;
  LibraryOptions libraries;
  TuningOptions tuning;
  std::string devices = "all";
  std::string ops, dtypes, layouts;
  // --size; empty: sizes chosen per device (app/device_sizes.h) unless a size flag or --config
  // is given, which keep the small preset's meaning.
  std::string size;
  // The size flags (--exp, --gemm, ...: each op's unit declares its own) → the text given.
  std::map<std::string, std::string> size_flags;
  bool serial = false;  // --serial: one device after another, never at the same time
  // --host-copies-together: concurrent GPUs time their host transfers at the same time
  bool host_copies_together = false;
  std::optional<int> reps;
  double min_time_s = 0.5, max_time_s = 20;
  int warmup = 2;
  int rounds = 3;
  int threads = 0;
  std::uint64_t seed = 20240601;
  std::string config;
  bool no_baseline = false;
  double probe_timeout_s = 60;
  std::vector<std::string> argv;
  std::string sweep, sweep_max;    // --sweep exp|gemm|conv, --sweep-max N
  std::string frameworks, python;  // --framework LIST, --python PATH
  double framework_timeout_s = 120;
  bool reps_given = false, warmup_given = false, max_time_given = false;
  std::string transport = "auto";  // --transport auto|net: the all-reduce's path
  RankOptions ranks;               // --rank, --world-size, --rendezvous, --rendezvous-timeout
  std::string net_bytes;           // --net-bytes: net's bulk transfer, each way and repetition
  bool device_named = false;
};

template <typename T, typename F>
std::vector<T> parse_names(const std::string& text, const char* flag, F from_string,
                           const char* valid) {
  std::vector<T> out;
  for (const auto& item : split_list(text)) {
    auto v = from_string(item);
    if (!v) {
      std::vector<std::string> names;
      for (const auto& name : split_list(valid)) names.emplace_back(trim_space(name));
      throw UsageError(fmt::format("{}: unknown value '{}'{} (valid: {})", flag, item,
                                   did_you_mean(item, names), valid));
    }
    out.push_back(*v);
  }
  if (out.empty()) throw UsageError(fmt::format("{}: empty list (valid: {})", flag, valid));
  return out;
}

// Every op's name, as the units list them, joined by `sep`.
std::string op_names(std::string_view sep) {
  std::string all;
  for (const auto& unit : bench::op_units())
    all += fmt::format("{}{}", all.empty() ? "" : sep, to_string(unit.op));
  return all;
}

// --ops' help: every op, and those the default plan leaves out.
std::string ops_help() {
  std::vector<std::string_view> left_out;
  for (const auto& unit : bench::op_units())
    if (!unit.in_default_plan) left_out.push_back(to_string(unit.op));
  left_out.push_back("net");
  std::string listed;
  for (std::size_t i = 0; i < left_out.size(); ++i)
    listed += fmt::format("{}{}",
                          i == 0                     ? ""
                          : i + 1 == left_out.size() ? " and "
                                                     : ", ",
                          left_out[i]);
  // net is between ranks, not on a device (app/bench_net.cpp): it runs alone, with --rendezvous.
  return fmt::format(
      "{} (default: all but {}); net: the TCP path between ranks (--rendezvous), alone, no GPU",
      op_names(",") + ",net", listed);
}

// The cells one device runs: each op's unit makes its cells from the sizes, dtypes and layouts
// (bench/ops/op_unit.h); the request marks what the user named.
std::vector<Cell> plan_cells(const BenchOptions& o, const bench::SizeSet& sizes, bool host_device) {
  bool ops_named = !o.ops.empty();
  std::vector<Op> default_ops;
  for (const auto& unit : bench::op_units())
    if (unit.in_default_plan) default_ops.push_back(unit.op);
  auto ops = ops_named ? parse_names<Op>(o.ops, "--ops", op_from_string, op_names(", ").c_str())
                       : default_ops;
  bool dtypes_named = !o.dtypes.empty();
  std::vector<DType> named_dtypes;
  if (dtypes_named)
    named_dtypes = parse_names<DType>(o.dtypes, "--dtype", dtype_from_string,
                                      "f32, tf32, f16, bf16, f64, fp8");
  auto layouts = o.layouts.empty()
                     ? std::vector<Layout>{Layout::kNchw, Layout::kNhwc}
                     : parse_names<Layout>(o.layouts, "--layout", layout_from_string, "nchw, nhwc");
  std::vector<Cell> cells;
  for (Op op : ops) {
    const bench::OpUnit& unit = bench::unit_of(op);
    const auto& dtypes = dtypes_named ? named_dtypes : unit.default_dtypes;
    if (!unit.plan) continue;  // between devices: the group plan (app/bench_multi.cpp)
    const bench::PlanRequest request{sizes, dtypes, layouts, host_device, o.host_copies_together};
    for (Cell c : unit.plan(request)) {
      c.explicit_request = ops_named && (dtypes_named || !unit.has_dtype);
      c.explicit_size = sizes.given.contains(op);
      cells.push_back(std::move(c));
    }
  }
  return cells;
}

bench::Presets presets_of(const BenchOptions& o) {
  return o.config.empty() ? bench::default_presets() : bench::load_presets_file(o.config);
}

bench::SizeSet size_set(const BenchOptions& o, const bench::Presets& presets) {
  const std::string size = o.size.empty() ? "small" : o.size;
  auto it = presets.find(size);
  if (it == presets.end()) {
    std::string names;
    std::vector<std::string> known;
    for (const auto& [n, s] : presets) {
      names += (names.empty() ? "" : ", ") + n;
      known.push_back(n);
    }
    throw UsageError(fmt::format("--size: no preset '{}'{} (presets: {})", size,
                                 did_you_mean(size, known), names));
  }
  return bench::with_size_flags(it->second, o.size_flags);
}

bool any_size_flag(const BenchOptions& o) {
  return std::any_of(o.size_flags.begin(), o.size_flags.end(),
                     [](const auto& flag) { return !flag.second.empty(); });
}

// --sweep: the op's range as its size flag (bench/sweep.h), f32 and NCHW unless named, and few
// fixed repetitions unless given, so the full sweep of the largest sizes stays within minutes.
std::optional<bench::SweepSpec> sweep_of(const BenchOptions& o) {
  if (o.sweep.empty()) {
    if (!o.sweep_max.empty()) throw UsageError("--sweep-max: only with --sweep");
    return std::nullopt;
  }
  if (!o.ops.empty() || any_size_flag(o)) {
    std::string flags = "--ops";
    for (const auto& flag : bench::size_flags()) flags += ", --" + flag;
    throw UsageError(fmt::format("--sweep: runs its op over its own sizes; drop {}", flags));
  }
  if (o.no_baseline) throw UsageError("--sweep: needs the CPU baseline; drop --no-baseline");
  return bench::make_sweep(o.sweep, o.sweep_max);
}

// The group op that may span processes (--rendezvous) and that --transport steers.
Op collective_op() {
  for (const auto& unit : bench::op_units())
    if (unit.group && unit.group->collective) return unit.op;
  throw std::logic_error("bench: no collective op");
}

BenchOptions with_sweep(BenchOptions o, const bench::SweepSpec& s) {
  o.ops = std::string(gpucheck::to_string(s.op));
  if (o.dtypes.empty()) o.dtypes = "f32";
  if (o.layouts.empty()) o.layouts = "nchw";
  o.size_flags[bench::unit_of(s.op).size_spec->flag] = bench::sweep_size_flag(s);
  if (!o.reps_given) o.reps = bench::kSweepReps;
  if (!o.warmup_given) o.warmup = bench::kSweepWarmup;
  if (!o.max_time_given) o.max_time_s = bench::kSweepMaxTimeS;
  return o;
}

// A failed or mismatched record makes the run fail (exit 1).
bool any_failed_record(const nlohmann::json& results) {
  return std::any_of(results.begin(), results.end(), [](const nlohmann::json& r) {
    const std::string status = r.value(std::string(k::kStatus), "");
    return status == "failed" || status == "mismatch";
  });
}

// One rank of a multi-process all-reduce: probe, meet the others, run this process's share in
// its group child; rank 0 writes the document with every rank's host and GPUs, the others only
// with -o.
ExitCode run_bench_ranks(const BenchOptions& o, const RankSetup& rs, Output& output,
                         const bench::RepPolicy& policy, const bench::SizeSet& sizes,
                         const EnvMap& env) {
  ChildLimits limits;
  limits.timeout = std::chrono::duration<double>(o.probe_timeout_s);
  const nlohmann::json backends = probe::probe_backends(env, limits);
  DeviceResolution res = resolve_devices(split_list(o.devices), backends);
  std::vector<BenchTarget> cuda;
  for (const auto& t : res.targets) {
    if (t.backend == group_ops_backend())
      cuda.push_back(t);
    else if (o.device_named)
      throw UsageError(fmt::format(
          "--device {}: the all-reduce between processes runs on CUDA devices (NCCL)", t.device));
  }
  for (const auto& m : res.missing) spdlog::error("{}", m);
  if (cuda.empty() || !res.missing.empty()) {
    spdlog::error(
        "rank {} of {}: no CUDA device to take part with; the other ranks will wait "
        "for this one until --rendezvous-timeout",
        rs.rank, rs.world_size);
    return ExitCode::kDeviceMissing;
  }
  const std::vector<std::string> devices = rank_devices(cuda, o.device_named, env);
  const nlohmann::json identity = rank_identity(rs.rank, devices, backends);
  std::string id;
  if (rs.rank == 0) {
    std::string why = "gpucheck was built without CUDA";
    if (auto backend = make_backend(group_ops_backend(), env)) id = backend->start_collective(&why);
    if (id.empty()) {
      spdlog::error("rank 0 cannot start the all-reduce: {}", why);
      return ExitCode::kDeviceMissing;
    }
  }
  spdlog::info("rank {} of {} ({}): meeting the others at {}", rs.rank, rs.world_size, rs.source,
               rs.place.describe());
  const RendezvousResult met =
      rendezvous(rendezvous_request(rs, identity.dump()),
                 [&](const std::vector<std::string>& ids) { return rank0_answer(ids, id); });
  GroupRequest request;
  request.ops = {collective_op()};
  request.sizes = sizes;
  bench::BenchPlan plan = plan_rank(request, devices, policy, o.seed);
  plan.collective.network_only = o.transport == "net";
  plan.collective.span = span_of(met.answer, rs.rank);

  nlohmann::json doc = make_document("bench", o.argv, env);
  doc[k::kProvenance][k::kVersions] = report::stack_versions_json(report::stack_versions(backends));
  doc[k::kHost] = host::to_json(host::read_host_facts("/"));
  doc[k::kCpu] = host::to_json(host::read_cpu_facts("/"));
  nlohmann::json who = nlohmann::json::array();
  if (rs.rank == 0)
    who = identities_for_document(met.identities);
  else
    who.push_back(identity);
  doc["ranks"] = who;
  Progress progress = Progress::for_stderr("bench", o.out.quiet);
  BenchProgress bench_progress(progress, {plan});
  DeviceRun run = run_device({plan.device, plan.backend}, plan, bench_progress);
  progress.clear();
  // Every rank has read the answer once their all-reduce ran: no later run may read it.
  if (rs.rank == 0) retire_rendezvous(rs.place);
  ExitCode code = run.child_died_silently ? ExitCode::kDeviceMissing : ExitCode::kOk;
  nlohmann::json results = nlohmann::json::array();
  for (auto& r : run.records) results.push_back(std::move(r));
  if (any_failed_record(results)) code = worse_exit(code, ExitCode::kFailed);
  qualify::LimitFacts limit_facts{backends, doc[k::kCpu], &qualify::builtin_skus(), {}};
  limit_facts.across_processes = true;
  qualify::add_limits(results, limit_facts);
  doc[k::kResults] = results;
  if (rs.rank == 0 || !o.out.output_path.empty()) output.write(doc);
  return code;
}

// One rank of `bench --ops net`: no probe and no child (nothing runs on a device); the document
// is written as the all-reduce's is, rank 0's always, the others' with -o.
ExitCode run_bench_net_rank(const BenchOptions& o, const RankSetup& rs, Output& output,
                            const EnvMap& env) {
  NetBenchOptions net;
  if (!o.net_bytes.empty()) net.bytes = parse_net_bytes(o.net_bytes);
  net.reps = o.reps.value_or(net.reps);
  NetRun run = run_bench_net(net, rs);
  nlohmann::json doc = make_document("bench", o.argv, env);
  doc[k::kHost] = host::to_json(host::read_host_facts("/"));
  doc[k::kCpu] = host::to_json(host::read_cpu_facts("/"));
  doc["ranks"] = std::move(run.ranks);
  doc[k::kResults] = std::move(run.results);
  if (rs.rank == 0 || !o.out.output_path.empty()) output.write(doc);
  return run.code;
}

// --ops net and --net-bytes: net runs alone between two or more ranks; UsageError otherwise.
bool wants_net(const BenchOptions& o, const std::optional<RankSetup>& ranks) {
  const auto ops = split_list(o.ops);
  const bool net = std::find(ops.begin(), ops.end(), "net") != ops.end();
  if (!net) {
    if (!o.net_bytes.empty()) throw UsageError("--net-bytes: only with --ops net");
    return false;
  }
  if (ops.size() != 1)
    throw UsageError(fmt::format(
        "--ops net: runs alone, between ranks and on no device; give --ops net, not '{}'", o.ops));
  if (!o.net_bytes.empty()) (void)parse_net_bytes(o.net_bytes);  // fails before any meeting
  if (!ranks || ranks->world_size < 2)
    throw UsageError(
        "--ops net: measures the network between two or more gpucheck processes: give each "
        "--rendezvous HOST:PORT with --rank and --world-size (or start them with srun)");
  if (!o.frameworks.empty()) throw UsageError("--framework: not with --ops net");
  if (o.transport != "auto") throw UsageError("--transport: steers the all-reduce, not --ops net");
  return true;
}

// The repetition flags as a policy; a bad value is a usage error (exit 2).
bench::RepPolicy policy_of(const BenchOptions& o) {
  bench::RepPolicy policy;
  policy.warmup = o.warmup;
  policy.reps = o.reps;
  policy.min_time_s = o.min_time_s;
  policy.max_time_s = o.max_time_s;
  policy.rounds = o.rounds;
  bench::validate(policy);
  return policy;
}

// Each device's plan, made before anything runs so that a bad flag value fails fast with exit 2;
// with no size asked for, each device's own sizes, and which they are (app/device_sizes.h).
struct DevicePlans {
  std::vector<bench::BenchPlan> plans;
  std::vector<BenchTarget> targets;  // of the plans, one for one
  nlohmann::json chosen_sizes = nlohmann::json::object();
};

// `base` (its policy, seed, threads and tuning) for each target; with `presets`, the target's
// own sizes chosen from them, else `sizes` for all.
DevicePlans plan_devices(const BenchOptions& o, const std::vector<BenchTarget>& all,
                         const bench::BenchPlan& base, const bench::Presets* presets,
                         const bench::SizeSet& sizes, const qualify::LimitFacts& limit_facts) {
  DevicePlans planned;
  for (const auto& t : all) {
    bench::BenchPlan plan = base;
    plan.device = t.device;
    plan.backend = t.backend;
    if (presets) {
      const DeviceSizes chosen = choose_device_sizes(t, *presets, limit_facts);
      plan.cells = plan_cells(o, chosen.sizes, backend_is_host_cpu(t.backend));
      std::erase_if(plan.cells, [&](const Cell& c) { return !keep_cell(chosen, c); });
      if (!plan.cells.empty()) planned.chosen_sizes[t.device] = chosen.explained;
    } else {
      plan.cells = plan_cells(o, sizes, backend_is_host_cpu(t.backend));
    }
    if (plan.cells.empty()) continue;  // only ops between devices were asked for
    planned.plans.push_back(std::move(plan));
    planned.targets.push_back(t);
  }
  return planned;
}

// After gpucheck's own kernels, one framework child at a time, on the devices as named: their
// records join `results`, their errors `errors`; kDeviceMissing when a framework could not run.
ExitCode run_frameworks_after(const std::vector<FrameworkChoice>& frameworks,
                              const std::vector<bench::BenchPlan>& plans,
                              const std::vector<BenchTarget>& selected,
                              const FrameworkBenchOptions& fo, Progress& progress,
                              nlohmann::json& results, nlohmann::json& errors) {
  std::vector<bench::BenchPlan> framework_plans;
  for (const auto& p : plans)
    if (std::any_of(selected.begin(), selected.end(),
                    [&](const BenchTarget& t) { return t.device == p.device; }))
      framework_plans.push_back(p);
  auto fr = run_framework_benches(frameworks, framework_plans, results, fo, progress);
  progress.clear();
  for (auto& r : fr.records) results.push_back(std::move(r));
  for (const auto& m : fr.notes) spdlog::warn("{}", m);
  for (const auto& m : fr.errors) {
    spdlog::error("{}", m);
    errors.push_back(m);
  }
  return fr.errors.empty() ? ExitCode::kOk : ExitCode::kDeviceMissing;
}

// Runs the plans: distinct physical GPUs at the same time; the CPU and a GPU's second face
// (OpenCL) alone. collect(target, run, the devices that ran beside it) takes each run.
void run_in_waves(
    const DevicePlans& planned, const nlohmann::json& backends, const BenchOptions& o,
    BenchProgress& progress,
    const std::function<void(const BenchTarget&, DeviceRun&, const nlohmann::json&)>& collect) {
  for (const auto& wave : concurrency_waves(planned.targets, backends, o.serial)) {
    std::vector<BenchTarget> wave_targets;
    std::vector<bench::BenchPlan> wave_plans;
    for (auto i : wave) {
      wave_targets.push_back(planned.targets[i]);
      wave_plans.push_back(planned.plans[i]);
    }
    // Siblings time their host transfers one at a time (bench/host_lock.h).
    std::optional<bench::HostLockFile> host_lock;
    if (wave_plans.size() > 1 && !o.host_copies_together) {
      try {
        host_lock.emplace();
        for (auto& p : wave_plans) p.host_lock = host_lock->path();
      } catch (const std::exception& e) {
        spdlog::warn("{}: concurrent GPUs time their host transfers at the same time", e.what());
      }
    }
    auto runs = run_devices(wave_targets, wave_plans, progress);
    for (std::size_t j = 0; j < runs.size(); ++j) {
      nlohmann::json beside = nlohmann::json::array();
      for (std::size_t other = 0; other < wave_targets.size(); ++other)
        if (other != j) beside.push_back(wave_targets[other].device);
      collect(wave_targets[j], runs[j], beside);
    }
  }
}

// --transport net and --rendezvous steer the collective op (OpUnit::group): each asks for it.
void check_collective_flags(const BenchOptions& o, const std::optional<RankSetup>& ranks,
                            bool network_only) {
  const auto ops = split_list(o.ops);
  const bench::OpUnit& collective = bench::unit_of(collective_op());
  const std::string name(to_string(collective.op));
  const bool asked = std::find(ops.begin(), ops.end(), name) != ops.end();
  if (network_only && !asked)
    throw UsageError(fmt::format("--transport net: steers the {}; add {} to --ops",
                                 collective.group->what, name));
  if (ranks && (ops.size() != 1 || !asked))
    throw UsageError(fmt::format(
        "--rendezvous: a multi-process run does the {} or the network between ranks; "
        "give --ops {} or --ops net{}",
        collective.group->what, name, o.ops.empty() ? "" : fmt::format(", not '{}'", o.ops)));
  if (ranks && !o.frameworks.empty())
    throw UsageError(
        "--framework: not with --rendezvous (a multi-process run does the all-reduce or net only)");
}

// Ops between devices (OpUnit::group) run in one group child; the others in one per device.
// *any_single_op: whether any op runs on one device (all do when --ops is not given).
GroupRequest group_request_of(const BenchOptions& o, const std::vector<std::string>& names,
                              const bench::SizeSet& sizes, bool* any_single_op) {
  GroupRequest request;
  *any_single_op = o.ops.empty();
  for (const auto& name : split_list(o.ops)) {
    const auto op = op_from_string(name);
    if (!op) continue;  // plan_cells says which
    if (bench::unit_of(*op).group)
      request.ops.insert(*op);
    else
      *any_single_op = true;
  }
  request.refuse_other_backends = std::find(names.begin(), names.end(), "all") == names.end();
  request.sizes = sizes;
  return request;
}

// The flags checked, in the order their errors show, and what they settle before any device is
// probed.
struct CheckedOptions {
  std::optional<bench::SweepSpec> sweep;
  BenchOptions o;  // with --sweep, its op, sizes and repetitions (with_sweep)
  Output output;
  bench::RepPolicy policy;
  bench::TuningPlan tuning;
  bench::Presets presets;
  bench::SizeSet sizes;
  bool per_device_sizes = false;
  int threads = 0;
  std::vector<std::string> names;  // --device's
};

CheckedOptions checked_options(const BenchOptions& given) {
  std::optional<bench::SweepSpec> sweep = sweep_of(given);
  BenchOptions o = sweep ? with_sweep(given, *sweep) : given;
  // Sets up logging: before anything that may log.
  Output output(o.out);
  apply_library_options(o.libraries);
  const bench::RepPolicy policy = policy_of(o);
  const bench::TuningPlan tuning = tuning_plan(o.tuning);
  bench::Presets presets = presets_of(o);
  bench::SizeSet sizes = size_set(o, presets);
  // Nothing says which sizes: each device gets its own (app/device_sizes.h).
  const bool per_device_sizes = o.size.empty() && o.config.empty() && !any_size_flag(o);
  const int threads = clamp_cpu_threads(o.threads, "--threads");
  auto names = split_list(o.devices);
  if (names.empty()) throw UsageError("--device: empty list");
  if (o.serial && o.host_copies_together)
    throw UsageError("--host-copies-together: no GPUs run together with --serial; drop one");
  return {std::move(sweep),   std::move(o),     std::move(output), policy,  tuning,
          std::move(presets), std::move(sizes), per_device_sizes,  threads, std::move(names)};
}

// --framework's choices, and one message for each framework that cannot run (exit 3).
struct FrameworksAsked {
  std::vector<FrameworkChoice> chosen;
  std::vector<std::string> missing;
};

FrameworksAsked frameworks_asked(const CheckedOptions& checked, const EnvMap& env) {
  const BenchOptions& o = checked.o;
  FrameworksAsked asked;
  if (!o.frameworks.empty()) {
    if (checked.sweep) throw UsageError("--framework: not with --sweep");
    asked.chosen = choose_frameworks(o.frameworks, o.python, env, &asked.missing);
  } else if (!o.python.empty()) {
    throw UsageError("--python: only with --framework");
  }
  return asked;
}

// The backends' probe, only when a name needs it: the CPU alone runs without one.
nlohmann::json probed_backends(const CheckedOptions& checked, const EnvMap& env) {
  nlohmann::json backends = nlohmann::json::array();
  if (needs_probe(checked.names)) {
    ChildLimits limits;
    limits.timeout = std::chrono::duration<double>(checked.o.probe_timeout_s);
    backends = probe::probe_backends(env, limits);
  }
  return backends;
}

DeviceResolution resolved_devices(const CheckedOptions& checked, const nlohmann::json& backends) {
  DeviceResolution res = resolve_devices(checked.names, backends);
  for (auto& m : res.missing) m += " (gpucheck doctor says why and how to fix it)";
  return res;
}

// Nothing to run: the reason in one line, not a document of host facts without results.
ExitCode no_device_to_run(const std::vector<std::string>& missing) {
  for (const auto& m : missing) spdlog::error("{}", m);
  return ExitCode::kDeviceMissing;
}

// The accelerators' speedups are over the CPU: it runs first unless already named, no op runs
// on one device, or --no-baseline.
std::vector<BenchTarget> targets_with_baseline(std::vector<BenchTarget> targets, bool any_single_op,
                                               bool no_baseline) {
  bool any_accelerator = false;
  for (const auto& t : targets)
    any_accelerator = any_accelerator || !backend_is_host_cpu(t.backend);
  if (any_accelerator && any_single_op && !no_baseline &&
      std::none_of(targets.begin(), targets.end(), [](const auto& t) { return t.device == "cpu"; }))
    targets.insert(targets.begin(), BenchTarget{"cpu", "cpu"});
  return targets;
}

// The facts the records' limits are judged by; their CPU facts are also the document's.
qualify::LimitFacts limit_facts_of(const nlohmann::json& backends) {
  return {backends, host::to_json(host::read_cpu_facts("/")), &qualify::builtin_skus(),
          [](const std::string& bus) { return qualify::read_pci_device_id("/", bus); }};
}

DevicePlans device_plans(const CheckedOptions& checked, const std::vector<BenchTarget>& targets,
                         const qualify::LimitFacts& limit_facts) {
  const bench::BenchPlan base{
      "", "", {}, checked.policy, checked.o.seed, checked.threads, {}, checked.tuning, {}, {}};
  return plan_devices(checked.o, targets, base,
                      checked.per_device_sizes ? &checked.presets : nullptr, checked.sizes,
                      limit_facts);
}

// The ops between devices, on the devices as named (never the baseline).
GroupPlanning group_planning(const CheckedOptions& checked, const GroupRequest& request,
                             const std::vector<BenchTarget>& selected) {
  GroupPlanning group = selected.empty()
                            ? GroupPlanning{}
                            : plan_group(request, selected, checked.policy, checked.o.seed);
  if (group.plan) {
    group.plan->collective.network_only = checked.o.transport == "net";
    group.plan->serial = checked.o.serial;
  }
  return group;
}

nlohmann::json document_head(const BenchOptions& o, const EnvMap& env,
                             const nlohmann::json& backends, const nlohmann::json& cpu_facts,
                             const nlohmann::json& chosen_sizes) {
  nlohmann::json doc = make_document("bench", o.argv, env);
  // The driver and libraries the devices ran with, for whoever reads the results later.
  if (!backends.empty())
    doc[k::kProvenance][k::kVersions] =
        report::stack_versions_json(report::stack_versions(backends));
  doc[k::kHost] = host::to_json(host::read_host_facts("/"));
  doc[k::kCpu] = cpu_facts;
  if (!chosen_sizes.empty()) doc[k::kDefaultSizes] = chosen_sizes;
  return doc;
}

// What the run gathers as it goes: its records, the errors the document lists, the exit code.
struct BenchOutcome {
  nlohmann::json results = nlohmann::json::array();
  nlohmann::json errors = nlohmann::json::array();
  ExitCode code = ExitCode::kOk;
};

// The devices and frameworks that cannot run are logged and listed, and make the exit code 3;
// the others still run.
BenchOutcome outcome_with_missing(const std::vector<std::string>& devices_missing,
                                  const std::vector<std::string>& frameworks_missing) {
  BenchOutcome outcome;
  for (const auto& m : devices_missing) {
    spdlog::error("{}", m);
    outcome.errors.push_back(m);
  }
  outcome.code = devices_missing.empty() ? ExitCode::kOk : ExitCode::kDeviceMissing;
  for (const auto& m : frameworks_missing) {
    spdlog::error("{}", m);
    outcome.errors.push_back(m);
    outcome.code = worse_exit(outcome.code, ExitCode::kDeviceMissing);
  }
  return outcome;
}

// Progress counts every plan the run will start, the group's too.
std::vector<bench::BenchPlan> every_plan(const DevicePlans& planned, const GroupPlanning& group) {
  std::vector<bench::BenchPlan> plans = planned.plans;
  if (group.plan) plans.push_back(*group.plan);
  return plans;
}

void run_devices_and_group(const DevicePlans& planned, GroupPlanning& group,
                           const nlohmann::json& backends, const BenchOptions& o,
                           BenchProgress& progress, BenchOutcome& outcome) {
  auto collect = [&](const BenchTarget& target, DeviceRun& run, const nlohmann::json& beside) {
    if (run.child_died_silently) {
      outcome.code = worse_exit(outcome.code, ExitCode::kDeviceMissing);
      outcome.errors.push_back(
          fmt::format("{}: the benchmark child wrote no record", target.device));
    }
    for (auto& r : run.records) {
      if (!beside.empty()) r[k::kConcurrentWith] = beside;
      outcome.results.push_back(std::move(r));
    }
  };
  run_in_waves(planned, backends, o, progress, collect);
  // The work between devices last, alone: it uses every GPU of the group.
  for (auto& r : group.refused) outcome.results.push_back(std::move(r));
  if (group.plan) {
    BenchTarget group_target{group.plan->device, group.plan->backend};
    DeviceRun run = run_device(group_target, *group.plan, progress);
    collect(group_target, run, nlohmann::json::array());
  }
}

// What compares the records: speedups over the CPU, the share of each device's limit, the
// frameworks against gpucheck's own kernels.
void finish_results(nlohmann::json& results, const qualify::LimitFacts& limit_facts) {
  report::add_speedups(results);
  qualify::add_limits(results, limit_facts);
  add_framework_ratios(results);
}

void write_document(nlohmann::json doc, const BenchOutcome& outcome,
                    const std::optional<bench::SweepSpec>& sweep, Output& output) {
  doc[k::kResults] = outcome.results;
  if (sweep) doc[k::kSweep] = bench::analyze_sweep(*sweep, outcome.results);
  if (!outcome.errors.empty()) doc[k::kErrors] = outcome.errors;
  output.write(doc);
}

ExitCode run_bench(const BenchOptions& given) {
  CheckedOptions checked = checked_options(given);
  const BenchOptions& o = checked.o;
  const EnvMap env = current_environment();
  const FrameworksAsked frameworks = frameworks_asked(checked, env);
  const std::optional<RankSetup> ranks = resolve_ranks(o.ranks, env);
  if (wants_net(o, ranks)) return run_bench_net_rank(o, *ranks, checked.output, env);
  check_collective_flags(o, ranks, o.transport == "net");
  if (ranks) return run_bench_ranks(o, *ranks, checked.output, checked.policy, checked.sizes, env);

  const nlohmann::json backends = probed_backends(checked, env);
  const DeviceResolution res = resolved_devices(checked, backends);
  if (res.targets.empty()) return no_device_to_run(res.missing);
  bool any_single_op = false;
  const GroupRequest group_request =
      group_request_of(o, checked.names, checked.sizes, &any_single_op);
  const std::vector<BenchTarget>& selected = res.targets;  // as named, before the baseline
  const std::vector<BenchTarget> targets =
      targets_with_baseline(selected, any_single_op, o.no_baseline);
  const qualify::LimitFacts limit_facts = limit_facts_of(backends);
  const DevicePlans planned = device_plans(checked, targets, limit_facts);
  GroupPlanning group = group_planning(checked, group_request, selected);

  nlohmann::json doc = document_head(o, env, backends, limit_facts.cpu, planned.chosen_sizes);
  BenchOutcome outcome = outcome_with_missing(res.missing, frameworks.missing);
  // Both live until the document is written: the progress trace's last event closes the run.
  Progress progress = Progress::for_stderr("bench", o.out.quiet);
  BenchProgress bench_progress(progress, every_plan(planned, group));
  run_devices_and_group(planned, group, backends, o, bench_progress, outcome);
  progress.clear();
  if (!frameworks.chosen.empty())
    outcome.code = worse_exit(
        outcome.code,
        run_frameworks_after(frameworks.chosen, planned.plans, selected,
                             {checked.policy, o.seed, checked.threads, o.framework_timeout_s},
                             progress, outcome.results, outcome.errors));
  finish_results(outcome.results, limit_facts);
  if (any_failed_record(outcome.results))
    outcome.code = worse_exit(outcome.code, ExitCode::kFailed);
  write_document(std::move(doc), outcome, checked.sweep, checked.output);
  return outcome.code;
}

}  // namespace

Command add_bench_command(CLI::App& root, const std::vector<std::string>& argv) {
  auto o = std::make_shared<BenchOptions>();
  o->argv = argv;
  auto* cmd = root.add_subcommand(
      "bench",
      "Identical exp / GEMM / conv2d / copy workloads on the CPU and each device, "
      "verified against float64, with speedups over the CPU");
  add_output_options(*cmd, o->out);
  add_details_option(*cmd, o->out, "The host, CPU and provenance after the results (table view)");
  add_library_options(*cmd, o->libraries);
  add_tuning_options(*cmd, o->tuning);
  cmd->add_option("--device", o->devices,
                  "Devices, comma-separated: cpu, cuda0, opencl1, cuda:<uuid>, opencl:<pci>, all")
      ->capture_default_str()
      ->type_name("DEVICES");
  cmd->add_option("--ops", o->ops, ops_help())->type_name("OPS");
  cmd->add_option("--dtype", o->dtypes,
                  "f32,tf32,f16,bf16,f64 (default: all the device supports); fp8: e4m3 GEMM "
                  "with bf16 output (CUDA 8.9+), only when named")
      ->type_name("DTYPES");
  cmd->add_option("--layout", o->layouts, "conv layouts: nchw,nhwc (default: both)")
      ->type_name("LAYOUTS");
  cmd->add_option("--size", o->size,
                  "Size preset: small, medium, large (default: sizes chosen for each device "
                  "from its limits, beside the small size in f32)")
      ->type_name("SIZE");
  // Each op's size flag, as its unit describes it (bench/ops/op_unit.h's SizeSpec).
  for (const auto& unit : bench::op_units())
    if (unit.size_spec && unit.size_spec->help)
      cmd->add_option(fmt::format("--{}", unit.size_spec->flag),
                      o->size_flags[unit.size_spec->flag], unit.size_spec->help)
          ->type_name(unit.size_spec->value_name);
  cmd->add_flag("--host-copies-together", o->host_copies_together,
                "Concurrent GPUs time their host transfers at the same time, sharing the host's "
                "memory and PCIe root, as stress's copy test does (default: one GPU at a time, "
                "each figure the GPU's alone); adds pinned copies both ways at once (direction "
                "'both'), the baseline of stress's copies");
  cmd->add_option("--reps", o->reps, "Exactly this many timed repetitions")->type_name("N");
  cmd->add_option("--min-time", o->min_time_s,
                  "Timed work to aim for per record: " + duration_help({kMaxDurationS, true}))
      ->transform(duration_validator({kMaxDurationS, true}))
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--max-time", o->max_time_s,
                  "Time after which a record is cut short: " + duration_help())
      ->transform(duration_validator())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--warmup", o->warmup, "Untimed runs first")
      ->capture_default_str()
      ->type_name("N");
  cmd->add_option("--rounds", o->rounds,
                  "Rounds each cell's repetitions are spread over, every cell once a round in a "
                  "shuffled order, so a record carries the spread between moments of the run "
                  "(what report compare judges noise by)")
      ->capture_default_str()
      ->type_name("N");
  add_threads_option(*cmd, o->threads,
                     "CPU threads (0: all; more than the CPU's hardware threads are clamped)");
  cmd->add_option("--seed", o->seed, "Seed of the random inputs")
      ->capture_default_str()
      ->type_name("N");
  cmd->add_option("--config", o->config, "TOML file of size presets replacing the built-in ones")
      ->type_name("FILE");
  cmd->add_option("--transport", o->transport,
                  "The all-reduce's path: auto (NCCL's choice) or net (NCCL's P2P and SHM "
                  "transports off: the network path, IB, RoCE or sockets, even on one host)")
      ->check(CLI::IsMember({"auto", "net"}))
      ->capture_default_str()
      ->type_name("auto|net");
  cmd->add_option("--net-bytes", o->net_bytes,
                  "--ops net: bytes of each bulk transfer, each way and repetition (KiB/MiB/GiB "
                  "suffixes; default 64MiB; --reps: how many, default 3, the best counts)")
      ->type_name("BYTES");
  cmd->add_option("--rank", o->ranks.rank,
                  "This process's rank of a multi-process all-reduce (default under srun: "
                  "SLURM_PROCID)")
      ->type_name("N");
  cmd->add_option("--world-size", o->ranks.world_size,
                  "How many gpucheck processes meet (default under srun: SLURM_NTASKS)")
      ->type_name("N");
  cmd->add_option("--rendezvous", o->ranks.rendezvous,
                  "Where the ranks meet: a FILE every rank sees (rank 0 writes it) or rank 0's "
                  "HOST:PORT (not loopback: every rank needs the same GPUCHECK_RENDEZVOUS_TOKEN)")
      ->type_name("WHERE");
  cmd->add_option("--rendezvous-timeout", o->ranks.rendezvous_timeout_s,
                  "How long a rank waits for the others: " + duration_help())
      ->transform(duration_validator())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_flag("--no-baseline", o->no_baseline, "Do not run the CPU beside other devices");
  cmd->add_flag("--serial", o->serial,
                "Benchmark one device after another, and one GPU pair after another for p2p "
                "(default: distinct GPUs, and pairs that share no GPU, at the same time)");
  add_probe_timeout_option(*cmd, o->probe_timeout_s);
  cmd->add_option("--framework", o->frameworks,
                  "Also run the workloads through Python frameworks, after gpucheck's own "
                  "kernels: torch, jax, cupy, tensorflow, or all installed; verified by gpucheck")
      ->type_name("LIST");
  cmd->add_option("--python", o->python,
                  "The interpreter --framework runs (default: each Python environment found, "
                  "the first that has the framework)")
      ->check(non_empty("interpreter path",
                        "leave --python out to search the Python environments found"))
      ->type_name("PATH");
  cmd->add_option("--framework-timeout", o->framework_timeout_s,
                  "How long a framework child may take to import and open its device, and may "
                  "stay silent beyond its cell's own time, before it is killed: " +
                      duration_help())
      ->transform(duration_validator())
      ->capture_default_str()
      ->type_name("SECONDS");
  cmd->add_option("--sweep", o->sweep,
                  "Break-even sweep of one op (" + bench::sweepable_ops() +
                      ") over a range of sizes on the CPU and each device (5 reps, 1 warm-up "
                      "unless given)")
      ->type_name("OP");
  cmd->add_option("--sweep-max", o->sweep_max,
                  "Largest sweep size (N or 2^K): " + bench::sweep_size_meanings())
      ->type_name("N");
  return {cmd, [o, cmd]() {
            o->reps_given = cmd->count("--reps") > 0;
            o->warmup_given = cmd->count("--warmup") > 0;
            o->max_time_given = cmd->count("--max-time") > 0;
            o->device_named = cmd->count("--device") > 0;
            return run_bench(*o);
          }};
}

}  // namespace gpucheck::app

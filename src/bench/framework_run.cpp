// Framework children: inputs out as raw files, a JSON job in, timings and outputs back,
// verification here (framework_run.h has the protocol).
#include "bench/framework_run.h"

#include "bench/engine.h"
#include "bench/inputs.h"
#include "bench/record.h"
#include "bench/verify.h"
#include "core/child_process.h"
#include "core/json_keys_framework.h"

#include <fmt/format.h>
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

extern const unsigned char gpucheck_framework_driver[];
extern const unsigned long long gpucheck_framework_driver_size;

namespace gpucheck::bench {

namespace k = keys;
namespace fs = std::filesystem;

const std::vector<std::string>& known_frameworks() {
  static const std::vector<std::string> names{"torch", "jax", "cupy", "tensorflow"};
  return names;
}

bool is_known_framework(std::string_view name) {
  const auto& names = known_frameworks();
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string_view framework_driver_source() {
  return {reinterpret_cast<const char*>(gpucheck_framework_driver),
          static_cast<std::size_t>(gpucheck_framework_driver_size)};
}

namespace {

// A private directory for one framework run, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/gpucheck-framework-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(
          fmt::format("mkdtemp({}) failed: {}", pattern, std::strerror(errno)));
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void write_file(const std::string& path, const void* data, std::size_t bytes) {
  std::ofstream f(path, std::ios::binary | std::ios::trunc);
  f.write(static_cast<const char*>(data), static_cast<std::streamsize>(bytes));
  f.close();
  if (!f) throw std::runtime_error(fmt::format("writing {} ({} bytes) failed", path, bytes));
}

// The whole file, or nullopt when it cannot be read.
std::optional<std::string> read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return std::nullopt;
  std::ostringstream ss;
  ss << f.rdbuf();
  return std::move(ss).str();
}

// A cell's inputs, made as the engine makes them (only ops whose unit has inputs reach here).
std::vector<HostBuffer> make_inputs(const Cell& cell, std::uint64_t seed) {
  return unit_of(cell.op).inputs(cell, seed);
}

// The copy's source pattern is whole f32 elements; its file holds exactly the copied bytes.
std::size_t input_bytes(const Cell& cell, const HostBuffer& b) {
  return cell.op == Op::kCopy ? std::get<CopyShape>(cell.shape).bytes : b.size_bytes();
}

// Elements and dtype of a cell's output.
OpOutput output_of(const Cell& cell) {
  return unit_of(cell.op).output(cell);
}

// How many records the framework makes of a cell: device time, and end to end on accelerators.
std::size_t records_of(const Cell& cell, bool host_device) {
  return unit_of(cell.op).end_to_end && !host_device ? 2 : 1;
}

Transfers transfers_of(const Cell& cell, std::size_t record) {
  if (const auto transfers = unit_of(cell.op).transfers) return transfers(cell);
  return record == 0 ? Transfers::kExcluded : Transfers::kIncluded;
}

struct Hello {
  std::string version, device, device_name, settings, python;
};

class Runner {
 public:
  explicit Runner(const FrameworkJob& job) : job_(job), host_(job.backend == "cpu") {}

  nlohmann::json record(const Cell& cell, Transfers transfers) const {
    nlohmann::json r = {{k::kDevice, job_.device},
                        {k::kDeviceName, job_.device_name},
                        {k::kBackend, job_.backend},
                        {k::kOp, to_string(cell.op)},
                        {k::kImpl, impl()},
                        {k::kShape, shape_to_json(cell.shape)},
                        {k::kTransfers, to_string(transfers)}};
    if (unit_of(cell.op).has_dtype) {
      r[k::kDtype] = to_string(cell.dtype);
      r[k::kComputeType] =
          to_string(unit_of(cell.op).computes_in_dtype ? cell.dtype : default_compute(cell.dtype));
    }
    nlohmann::json fw = {{k::kName, job_.framework}, {k::kInterpreter, job_.python}};
    if (hello_) {
      fw[k::kVersion] = hello_->version;
      fw[k::kDevice] = hello_->device;
      fw[k::kDeviceName] = hello_->device_name;
      fw[k::kSettings] = hello_->settings;
      fw[k::kPython] = hello_->python;
    }
    r[k::kFramework] = std::move(fw);
    return r;
  }

  // A verdict without a measurement: one record says "unsupported" for the whole cell; a
  // failure fails every record the cell would have made.
  void verdict(const Cell& cell, const std::string& status, const std::string& reason) {
    // As the engine does: a default the framework cannot run is left out, not reported.
    if (status == "unsupported" && !cell.explicit_request) return;
    const std::size_t n = status == "unsupported" ? 1 : records_of(cell, host_);
    for (std::size_t i = 0; i < n; ++i) {
      nlohmann::json r = record(cell, transfers_of(cell, i));
      r[k::kStatus] = status;
      r[k::kReason] = reason;
      run_.records.push_back(std::move(r));
    }
  }

  FrameworkRun run() {
    std::vector<std::size_t> batch;
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < job_.cells.size() && !run_.unavailable; ++i) {
      const Cell& c = job_.cells[i];
      if (!unit_of(c.op).inputs) {
        if (c.explicit_request)
          verdict(c, "unsupported",
                  fmt::format("gpucheck runs {} through no framework", to_string(c.op)));
        continue;
      }
      const std::uint64_t need = cell_bytes(c);
      if (!batch.empty() && bytes + need > job_.max_batch_bytes) {
        run_batch(batch);
        batch.clear();
        bytes = 0;
      }
      batch.push_back(i);
      bytes += need;
    }
    if (!batch.empty() && !run_.unavailable) run_batch(batch);
    if (run_.unavailable) run_.records.clear();
    return std::move(run_);
  }

 private:
  std::string impl() const {
    if (!hello_) return job_.framework;
    return fmt::format("{} {} ({})", job_.framework, hello_->version, hello_->settings);
  }

  std::uint64_t cell_bytes(const Cell& c) const {
    const OpOutput out = output_of(c);
    const Footprint f = footprint(c, true);
    return f.device_total + out.elements * element_size(out.dtype);
  }

  nlohmann::json round_policies() const {
    nlohmann::json rounds = nlohmann::json::array();
    const int count = effective_rounds(job_.policy);
    for (int r = 0; r < count; ++r) {
      const RepPolicy p = round_policy(job_.policy, r);
      rounds.push_back({{"warmup", p.warmup},
                        {"reps", p.reps ? nlohmann::json(*p.reps) : nlohmann::json(nullptr)},
                        {"min_time", p.min_time_s},
                        {"max_time", p.max_time_s},
                        {"min_auto_reps", p.min_auto_reps}});
    }
    return rounds;
  }

  void run_batch(const std::vector<std::size_t>& batch) {
    TempDir dir;
    const std::string driver = dir.path() + "/gpucheck_framework_driver.py";
    const auto source = framework_driver_source();
    write_file(driver, source.data(), source.size());
    nlohmann::json cells = nlohmann::json::array();
    for (std::size_t b = 0; b < batch.size(); ++b) {
      const Cell& c = job_.cells[batch[b]];
      nlohmann::json inputs = nlohmann::json::array(), outputs = nlohmann::json::array();
      auto in = make_inputs(c, job_.seed);
      for (std::size_t i = 0; i < in.size(); ++i) {
        const std::string name = fmt::format("in{}_{}.bin", b, i);
        write_file(dir.path() + "/" + name, in[i].data(), input_bytes(c, in[i]));
        inputs.push_back(name);
      }
      for (std::size_t i = 0; i < records_of(c, host_); ++i)
        outputs.push_back(fmt::format("out{}_{}.bin", b, i));
      cells.push_back({{"op", to_string(c.op)},
                       {"dtype", to_string(c.dtype)},
                       {"shape", shape_to_json(c.shape)},
                       {"inputs", inputs},
                       {"outputs", outputs}});
    }
    nlohmann::json job = {{"protocol", 1},
                          {"framework", job_.framework},
                          {"device", job_.device},
                          {"dir", dir.path()},
                          {"seed", job_.seed},
                          {"threads", job_.threads},
                          {"rounds", round_policies()},
                          {"max_time", job_.policy.max_time_s},
                          {"cells", cells}};
    ChildSpec::Env env = job_.env;
    env.emplace("PYTHONDONTWRITEBYTECODE", "1");
    ChildSpec spec({"-B", driver}, std::move(env), job.dump() + "\n");
    spec.program = job_.python;
    ChildLimits limits;
    // A cell's rounds take up to max_time (plus one repetition past it); a child silent for
    // that long after the start-up allowance is hung.
    const double cell_s = 2 * job_.policy.max_time_s + job_.startup_timeout.count();
    limits.startup_silence = job_.startup_timeout;
    limits.max_silence = std::chrono::duration<double>(cell_s);
    limits.timeout = std::chrono::duration<double>(job_.startup_timeout.count() +
                                                   cell_s * static_cast<double>(batch.size()));
    // The times come back as text, one number per repetition: a 1 MiB copy of a few µs under
    // --min-time is 10^5 repetitions, about 2 MB per record (4 MiB cut an H200's small preset).
    limits.max_output = 256u << 20;
    // The heartbeats as they come, for the progress line.
    std::string pending;
    const auto watch = [&](std::size_t, std::string_view chunk) {
      if (!job_.cell_started) return;
      pending.append(chunk);
      for (auto nl = pending.find('\n'); nl != std::string::npos; nl = pending.find('\n')) {
        const auto m = nlohmann::json::parse(pending.substr(0, nl), nullptr, false);
        pending.erase(0, nl + 1);
        if (m.is_object() && m.contains("started") && m["started"].is_number_unsigned() &&
            m["started"].get<std::size_t>() < batch.size())
          job_.cell_started(job_.cells[batch[m["started"].get<std::size_t>()]]);
      }
    };
    const ChildResult res = run_children({spec}, limits, watch).front();
    collect(batch, dir.path(), res, limits);
  }

  // The last line of the child's stderr that says something (an exception's message).
  static std::string last_error_line(const std::string& err) {
    std::istringstream in(err);
    std::string line, last;
    while (std::getline(in, line))
      if (line.find_first_not_of(" \t\r") != std::string::npos) last = line;
    if (last.size() > 300) last = last.substr(0, 300) + "…";
    return last;
  }

  void collect(const std::vector<std::size_t>& batch, const std::string& dir,
               const ChildResult& res, const ChildLimits& limits) {
    const std::string who = fmt::format("the {} child ({})", job_.framework, job_.python);
    if (res.end == ChildResult::End::kSpawnFailed) {
      run_.unavailable = fmt::format("cannot start {}: {}", job_.python, res.spawn_error);
      return;
    }
    std::vector<bool> answered(batch.size(), false);
    std::optional<std::size_t> running;
    bool done = false;
    std::string protocol_error;
    std::istringstream lines(res.out);
    std::string line;
    while (protocol_error.empty() && std::getline(lines, line)) {
      if (line.empty()) continue;
      nlohmann::json m = nlohmann::json::parse(line, nullptr, false);
      if (m.is_discarded() || !m.is_object()) {
        // A child stopped for writing too much leaves its last line cut: say that, not this.
        if (res.end == ChildResult::End::kOutputTooLarge) break;
        protocol_error = fmt::format("{} wrote a line that is not a JSON object: '{}'", who,
                                     line.substr(0, 120));
        break;
      }
      try {
        if (m.contains("hello")) {
          const auto& h = m["hello"];
          hello_ = Hello{h.at("version").get<std::string>(), h.at("device").get<std::string>(),
                         h.at("device_name").get<std::string>(),
                         h.at("settings").get<std::string>(), h.value("python", "")};
        } else if (m.contains("unavailable")) {
          run_.unavailable = m["unavailable"].get<std::string>();
          return;
        } else if (m.contains("fatal")) {
          protocol_error = fmt::format("{}: {}", who, m["fatal"].get<std::string>());
        } else if (m.contains("done")) {
          done = true;
        } else if (m.contains("started")) {
          running = index_in_batch(m["started"], batch.size());
        } else if (m.contains("cell")) {
          const std::size_t b = index_in_batch(m["cell"], batch.size());
          const Cell& cell = job_.cells[batch[b]];
          answered[b] = true;
          if (m.contains("unsupported")) {
            verdict(cell, "unsupported", m["unsupported"].get<std::string>());
          } else if (m.contains("failed")) {
            verdict(cell, "failed",
                    fmt::format("{} {}: {}", job_.framework, version(),
                                m["failed"].get<std::string>()));
          } else {
            try {
              finish(cell, m, dir);
            } catch (const std::exception& e) {
              // Only this record fails; the cell's other record may have come back whole.
              const auto i = m.value("record", std::size_t{0});
              nlohmann::json r =
                  record(cell, transfers_of(cell, i < records_of(cell, host_) ? i : 0));
              r[k::kStatus] = "failed";
              r[k::kReason] = fmt::format("{} returned a malformed result '{}': {}", who,
                                          line.substr(0, 120), e.what());
              run_.records.push_back(std::move(r));
            }
          }
        } else {
          protocol_error =
              fmt::format("{} wrote an unknown message: '{}'", who, line.substr(0, 120));
        }
      } catch (const std::exception& e) {
        protocol_error = fmt::format("{} wrote a malformed message '{}': {}", who,
                                     line.substr(0, 120), e.what());
      }
    }
    if (done && protocol_error.empty() && res.exited_ok()) return;
    // The child failed: every cell it did not answer says how, loudly.
    std::string how = protocol_error;
    if (how.empty()) {
      how = fmt::format("{}: {}", who, res.describe(limits.timeout, limits.max_output));
      if (res.end == ChildResult::End::kExited && res.exit_code == 0)
        how += " without finishing its cells";
    }
    if (const std::string e = last_error_line(res.err); !e.empty())
      how += fmt::format("; its last words: {}", e);
    for (std::size_t b = 0; b < batch.size(); ++b) {
      if (answered[b]) continue;
      const bool was_running = running && *running == b;
      verdict(job_.cells[batch[b]], "failed",
              was_running ? how + " (while running this cell)" : how);
    }
  }

  std::string version() const { return hello_ ? hello_->version : std::string("?"); }

  static std::size_t index_in_batch(const nlohmann::json& v, std::size_t size) {
    const auto i = v.get<std::size_t>();
    if (i >= size) throw std::out_of_range(fmt::format("cell {} of {}", i, size));
    return i;
  }

  // Reads a record's output, verifies it and completes the record from its timings.
  void finish(const Cell& cell, const nlohmann::json& m, const std::string& dir) {
    const auto rec = m.at("record").get<std::size_t>();
    if (rec >= records_of(cell, host_))
      throw std::out_of_range(
          fmt::format("record {} of a cell with {}", rec, records_of(cell, host_)));
    const auto rounds = m.at("times").get<std::vector<std::vector<double>>>();
    nlohmann::json r = record(cell, transfers_of(cell, rec));
    bool any = false;
    for (const auto& round : rounds)
      for (double t : round) {
        if (!std::isfinite(t) || t < 0)
          throw std::invalid_argument(fmt::format("a time of {} s", t));
        any = true;
      }
    if (!any) throw std::invalid_argument("no timed repetition");
    const std::string name = m.at("output").get<std::string>();
    if (name.find('/') != std::string::npos)
      throw std::invalid_argument("an output outside its directory: " + name);
    const Verification v = verify_output(cell, dir + "/" + name);
    finish_record(r, cell, rounds, m.value("truncated", false), v);
    run_.records.push_back(std::move(r));
  }

  Verification verify_output(const Cell& cell, const std::string& path) const {
    const std::uint64_t want = output_of(cell).bytes;
    const auto got = read_file(path);
    if (!got || got->size() != want) {
      Verification v;
      v.ok = false;
      v.max_rel_error = std::numeric_limits<double>::infinity();
      v.method = "size";
      v.detail = got ? fmt::format("{} returned {} bytes for an output of {} bytes", job_.framework,
                                   got->size(), want)
                     : fmt::format("{} wrote no output file", job_.framework);
      return v;
    }
    auto in = make_inputs(cell, job_.seed);
    VerifyOptions vo;
    vo.seed = job_.seed;
    return unit_of(cell.op).verify(cell, in, got->data(), default_compute(cell.dtype), vo);
  }

  const FrameworkJob& job_;
  const bool host_;
  std::optional<Hello> hello_;
  FrameworkRun run_;
};

}  // namespace

FrameworkRun run_framework(const FrameworkJob& job) {
  return Runner(job).run();
}

}  // namespace gpucheck::bench

// Framework children: inputs out as raw files, a JSON job in, timings and outputs back,
// verification here (framework_run.h has the protocol).
#include "bench/framework_run.h"

#include "bench/engine.h"
#include "bench/inputs.h"
#include "bench/record.h"
#include "bench/verify.h"
#include "core/backend_descriptors.h"
#include "core/child_process.h"
#include "core/graceful_stop.h"
#include "core/json_keys_framework.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <thread>

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

// A private directory for one framework run, removed with everything in it (on a stop signal
// too: run_framework holds the signal until the directory is gone).
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/gpucheck-framework-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr)
      throw std::runtime_error(fmt::format("mkdtemp({}) failed: {} (TMPDIR={})", pattern,
                                           std::strerror(errno), base ? base : "unset"));
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

// An output the child wrote: a regular file of exactly `want` bytes, read without following a
// link or waiting on a FIFO, and never more than `want` bytes; otherwise why not.
struct OutputFile {
  std::string bytes;
  std::string problem;  // empty: bytes holds the output
};

OutputFile read_output_file(const std::string& path, std::uint64_t want, std::string_view who) {
  OutputFile out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    out.problem = errno == ENOENT
                      ? fmt::format("{} wrote no output file", who)
                      : fmt::format("open({}) failed: {} ({})", path, std::strerror(errno),
                                    errno == ELOOP ? "a symbolic link" : "not readable");
    return out;
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    out.problem = fmt::format("fstat({}) failed: {}", path, std::strerror(errno));
  } else if (!S_ISREG(st.st_mode)) {
    out.problem = fmt::format(
        "{} left its output {} as something other than a regular file "
        "(a FIFO, a device or a directory)",
        who, path);
  } else if (static_cast<std::uint64_t>(st.st_size) != want) {
    out.problem = fmt::format("{} returned {} bytes for an output of {} bytes", who,
                              static_cast<std::uint64_t>(st.st_size), want);
  } else {
    out.bytes.resize(want);
    std::size_t done = 0;
    while (done < want) {
      const ssize_t n = ::read(fd, out.bytes.data() + done, want - done);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        out.problem =
            n < 0 ? fmt::format("read({}) failed: {}", path, std::strerror(errno))
                  : fmt::format("{} returned {} bytes for an output of {} bytes", who, done, want);
        break;
      }
      done += static_cast<std::size_t>(n);
    }
  }
  ::close(fd);
  if (!out.problem.empty()) out.bytes.clear();
  return out;
}

// A count or an index the child sent: a whole number >= 0, else std::invalid_argument. A float is
// refused too: converting one past SIZE_MAX to an integer is undefined behaviour (the
// framework-answer fuzz target sent 1.8e20 as a record index).
std::size_t whole_number(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<std::size_t>();
  throw std::invalid_argument(std::string("not a whole number >= 0 (a ") + v.type_name() + ")");
}

// A generous physical bound on what a device can do a second (FLOP/s or bytes/s): a faster
// timing is impossible, so the child's clock or its answer is wrong. The CPU: every core at
// 6 GHz retiring 4096 flops a cycle (above AMX's bf16 rate) or 512 bytes a cycle (above two
// loads and a store of 64 bytes from L1); an accelerator: 100 PFLOP/s and 100 TB/s, far above
// any made.
double throughput_bound(const Work& w, bool host_device) {
  const bool flops = std::string_view(w.unit) != "GB/s";
  if (!host_device) return flops ? 1e17 : 1e14;
  const double cores = std::max(1u, std::thread::hardware_concurrency());
  return cores * 6e9 * (flops ? 4096.0 : 512.0);
}

// A cell's inputs, made as the engine makes them (only ops whose unit has inputs reach here).
std::vector<HostBuffer> make_inputs(const Cell& cell, std::uint64_t seed) {
  return unit_of(cell.op).inputs(cell, seed);
}

std::size_t input_bytes(const Cell& cell, const HostBuffer& b) {
  if (const auto bytes = unit_of(cell.op).input_bytes) return bytes(cell, b);
  return b.size_bytes();
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
  // ones(4,512) @ ones(512,4) in bf16 through the GEMM cell's call (asked only with a bf16 GEMM
  // cell): 512 for f32 accumulation, 256 where every partial sum is rounded to bf16.
  std::optional<double> bf16_gemm_sum;
};

bool is_bf16_gemm(const Cell& cell) {
  return unit_of(cell.op).bf16_gemm_accumulation && cell.dtype == DType::kBf16;
}

// What the probe's sum says about how bf16 GEMMs accumulate.
std::string accumulation_of(double sum) {
  if (sum == 512) return "f32";
  if (sum == 256) return "bf16";
  return "unknown";
}

class Runner {
 public:
  explicit Runner(const FrameworkJob& job) : job_(job), host_(backend_is_host_cpu(job.backend)) {}

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
      if (hello_->bf16_gemm_sum && is_bf16_gemm(cell))
        fw[k::kBf16GemmAccumulation] = accumulation_of(*hello_->bf16_gemm_sum);
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
    for (std::size_t i = 0;
         i < job_.cells.size() && !run_.unavailable && GracefulStop::stop_signal() == 0; ++i) {
      const Cell& c = job_.cells[i];
      if (!unit_of(c.op).inputs) {
        if (c.explicit_request)
          verdict(c, "unsupported",
                  fmt::format("gpucheck runs {} through no framework", to_string(c.op)));
        continue;
      }
      if (c.dtype == DType::kFp8) {
        if (c.explicit_request)
          verdict(c, "unsupported",
                  "gpucheck runs fp8 through no framework (torch's FP8 GEMM, torch._scaled_mm, "
                  "is compared by tools/device/fp8.sh)");
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
    // Without a place for the inputs the framework cannot run; what gpucheck measured itself is
    // kept.
    std::optional<TempDir> dir_holder;
    try {
      dir_holder.emplace();
    } catch (const std::runtime_error& e) {
      run_.unavailable = fmt::format("no temporary directory for its inputs: {}", e.what());
      return;
    }
    const TempDir& dir = *dir_holder;
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
      for (std::size_t i = 0; i < records_of(c, host_); ++i) outputs.push_back(output_name(b, i));
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
    // A stop signal ends the child (SIGTERM, then its whole group) and comes back once the
    // directory is removed: run_framework raises it again.
    if (GracefulStop::stop_signal() != 0) return;
    limits.stop_signal = &GracefulStop::stop_signal;
    limits.stop_grace = std::chrono::seconds(2);
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
    return redact_child_words(last);
  }

  void collect(const std::vector<std::size_t>& batch, const std::string& dir,
               const ChildResult& res, const ChildLimits& limits) {
    const std::string who = fmt::format("the {} child ({})", job_.framework, job_.python);
    if (res.end == ChildResult::End::kSpawnFailed) {
      run_.unavailable = fmt::format("cannot start {}: {}", job_.python, res.spawn_error);
      return;
    }
    std::vector<bool> answered(batch.size(), false), answered_whole(batch.size(), false);
    std::set<std::pair<std::size_t, std::size_t>> answered_records;
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
                                     redact_child_words(line.substr(0, 120)));
        break;
      }
      try {
        if (m.contains("hello")) {
          const auto& h = m["hello"];
          hello_ = Hello{words(h.at("version")),
                         words(h.at("device")),
                         words(h.at("device_name")),
                         words(h.at("settings")),
                         h.contains("python") ? words(h["python"]) : std::string(),
                         std::nullopt};
          if (h.contains("bf16_gemm_sum")) hello_->bf16_gemm_sum = h["bf16_gemm_sum"].get<double>();
        } else if (m.contains("unavailable")) {
          run_.unavailable = words(m["unavailable"]);
          return;
        } else if (m.contains("fatal")) {
          protocol_error = fmt::format("{}: {}", who, words(m["fatal"]));
        } else if (m.contains("done")) {
          done = true;
        } else if (m.contains("started")) {
          running = index_in_batch(m["started"], batch.size());
        } else if (m.contains("cell")) {
          const std::size_t b = index_in_batch(m["cell"], batch.size());
          const Cell& cell = job_.cells[batch[b]];
          // One answer a record (a verdict answers all of the cell's): a second is the child's
          // error, never a second record.
          const bool whole_cell = m.contains("unsupported") || m.contains("failed");
          const auto rec =
              whole_cell || !m.contains("record") ? std::size_t{0} : whole_number(m["record"]);
          const bool again = whole_cell
                                 ? answered[b]
                                 : answered_whole[b] || !answered_records.insert({b, rec}).second;
          if (again) {
            protocol_error =
                fmt::format("{} answered cell {} ({}) more than once", who, b,
                            whole_cell ? "all records" : fmt::format("record {}", rec));
            break;
          }
          answered[b] = true;
          answered_whole[b] = whole_cell;
          if (m.contains("unsupported")) {
            verdict(cell, "unsupported", words(m["unsupported"]));
          } else if (m.contains("failed")) {
            verdict(cell, "failed",
                    fmt::format("{} {}: {}", job_.framework, version(), words(m["failed"])));
          } else {
            try {
              finish(b, cell, m, dir);
            } catch (const std::exception& e) {
              // Only this record fails; the cell's other record may have come back whole.
              const auto i = m.contains("record") && m["record"].is_number_unsigned()
                                 ? m["record"].get<std::size_t>()
                                 : std::size_t{0};
              nlohmann::json r =
                  record(cell, transfers_of(cell, i < records_of(cell, host_) ? i : 0));
              r[k::kStatus] = "failed";
              r[k::kReason] = fmt::format("{} returned a malformed result '{}': {}", who,
                                          redact_child_words(line.substr(0, 120)), e.what());
              run_.records.push_back(std::move(r));
            }
          }
        } else {
          protocol_error = fmt::format("{} wrote an unknown message: '{}'", who,
                                       redact_child_words(line.substr(0, 120)));
        }
      } catch (const std::exception& e) {
        protocol_error = fmt::format("{} wrote a malformed message '{}': {}", who,
                                     redact_child_words(line.substr(0, 120)), e.what());
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

 public:
  // The answer lines of a child that exited 0, for every cell as one batch (no child run).
  FrameworkRun answers(std::string_view out, const std::string& dir) {
    std::vector<std::size_t> batch(job_.cells.size());
    for (std::size_t i = 0; i < batch.size(); ++i) batch[i] = i;
    ChildResult res;
    res.end = ChildResult::End::kExited;
    res.exit_code = 0;
    res.out = std::string(out);
    collect(batch, dir, res, ChildLimits{});
    if (run_.unavailable) run_.records.clear();
    return std::move(run_);
  }

 private:
  static std::string output_name(std::size_t cell_in_batch, std::size_t record) {
    return fmt::format("out{}_{}.bin", cell_in_batch, record);
  }

  // A string the child sent, as a record may quote it.
  static std::string words(const nlohmann::json& v) {
    return redact_child_words(v.get<std::string>());
  }

  // Every time positive and finite, and none faster than the device can be (the fastest time
  // against the bound on the work it did).
  void check_times(const Cell& cell, const std::vector<std::vector<double>>& rounds) const {
    double fastest = std::numeric_limits<double>::infinity();
    for (const auto& round : rounds)
      for (double t : round) {
        if (!std::isfinite(t) || t <= 0)
          throw std::invalid_argument(
              fmt::format("a time of {} s (not a positive finite time)", t));
        fastest = std::min(fastest, t);
      }
    if (!std::isfinite(fastest)) throw std::invalid_argument("no timed repetition");
    const Work w = work_of(cell);
    const double bound = throughput_bound(w, host_);
    if (w.amount > 0 && w.amount / fastest > bound) {
      const double scale = std::string_view(w.unit) == "GB/s" ? 1e9 : 1e12;
      throw std::invalid_argument(fmt::format(
          "a time of {:g} s is {:.3g} {}, above the {:.3g} {} this device can do at most: its "
          "clock or its answer is wrong",
          fastest, w.amount / fastest / scale, w.unit, bound / scale, w.unit));
    }
  }

  static std::size_t index_in_batch(const nlohmann::json& v, std::size_t size) {
    const auto i = whole_number(v);
    if (i >= size) throw std::out_of_range(fmt::format("cell {} of {}", i, size));
    return i;
  }

  // Reads a record's output, verifies it and completes the record from its timings.
  void finish(std::size_t b, const Cell& cell, const nlohmann::json& m, const std::string& dir) {
    const auto rec = whole_number(m.at("record"));
    if (rec >= records_of(cell, host_))
      throw std::out_of_range(
          fmt::format("record {} of a cell with {}", rec, records_of(cell, host_)));
    const auto rounds = m.at("times").get<std::vector<std::vector<double>>>();
    nlohmann::json r = record(cell, transfers_of(cell, rec));
    check_times(cell, rounds);
    // Only the file gpucheck named for this record, in the job's directory.
    const std::string name = m.at("output").get<std::string>();
    if (name != output_name(b, rec))
      throw std::invalid_argument(fmt::format("an output named '{}', not the '{}' it was given",
                                              redact_child_words(name.substr(0, 120)),
                                              output_name(b, rec)));
    const Verification v = verify_output(cell, dir + "/" + name);
    finish_record(r, cell, rounds, m.value("truncated", false), v);
    if (r[k::kStatus] == "mismatch")
      r[k::kReason] = r[k::kReason].get<std::string>() + why_off(cell);
    run_.records.push_back(std::move(r));
  }

  // What is known to make a cell's result off: a bf16 GEMM that accumulates in bf16 (gpucheck's
  // reference and tolerance are for f32 accumulation, as cuBLAS and oneDNN do).
  std::string why_off(const Cell& cell) const {
    if (!is_bf16_gemm(cell) || !hello_ || !hello_->bf16_gemm_sum ||
        accumulation_of(*hello_->bf16_gemm_sum) != "bf16")
      return "";
    std::string why = fmt::format(
        "; {} {} accumulates bf16 GEMMs in bf16 on this {}, not in f32 (ones(4,512) @ "
        "ones(512,4) in bf16 gives {}, not 512: each partial sum is rounded to bf16)",
        job_.framework, version(), host_ ? "CPU" : "device", *hello_->bf16_gemm_sum);
    if (job_.framework == "torch" && host_ && version().starts_with("1.13"))
      why +=
          "; torch 1.13 sums bf16 in f32 through oneDNN only where the CPU has AVX-512 BW, VL and "
          "DQ and torch.backends.mkldnn.enabled is True";
    return why;
  }

  Verification verify_output(const Cell& cell, const std::string& path) const {
    const std::uint64_t want = output_of(cell).bytes;
    const OutputFile got = read_output_file(path, want, job_.framework);
    if (!got.problem.empty()) {
      Verification v;
      v.ok = false;
      v.max_rel_error = std::numeric_limits<double>::infinity();
      v.method = "size";
      v.detail = got.problem;
      return v;
    }
    auto in = make_inputs(cell, job_.seed);
    VerifyOptions vo;
    vo.seed = job_.seed;
    return unit_of(cell.op).verify(cell, in, got.bytes.data(), default_compute(cell.dtype), vo);
  }

  const FrameworkJob& job_;
  const bool host_;
  std::optional<Hello> hello_;
  FrameworkRun run_;
};

}  // namespace

FrameworkRun read_framework_answers(const FrameworkJob& job, std::string_view child_stdout,
                                    const std::string& dir) {
  return Runner(job).answers(child_stdout, dir);
}

FrameworkRun run_framework(const FrameworkJob& job) {
  int stopped_by = 0;
  FrameworkRun run;
  {
    // A stop signal is held while a job directory exists (inputs of up to max_batch_bytes), so
    // that the directory is removed before gpucheck stops as the signal asks.
    GracefulStop hold;
    GracefulStop::reset();  // a signal an earlier hold recorded was its owner's to handle
    run = Runner(job).run();
    stopped_by = GracefulStop::stop_signal();
  }
  if (stopped_by != 0) ::raise(stopped_by);
  return run;
}

}  // namespace gpucheck::bench

// The bench's workloads through a Python framework (torch, JAX, CuPy, TensorFlow): gpucheck makes
// the seeded inputs, a child of the framework's interpreter runs and times them with the bench's
// repetition policy, and gpucheck verifies what comes back against its float64 reference.
//
// Protocol (the driver is framework_driver.py, embedded in the binary):
//  * gpucheck writes each cell's inputs as raw little-endian arrays (the dtype's storage, packed
//    in the cell's layout, as inputs.h makes them) into a private temporary directory, and the
//    driver there too; the child gets one JSON line on stdin: protocol, framework, device, dir,
//    seed, threads, the policy of each round, max_time, and the cells (op, dtype, shape, input
//    and output file names).
//  * The child answers one JSON object a line on stdout: {"hello": {framework, version, device,
//    device_name, settings, python[, bf16_gemm_sum]}} or {"unavailable": why} (bf16_gemm_sum:
//    ones(4,512) @ ones(512,4) in bf16 through the GEMM cell's call, asked with a bf16 GEMM
//    cell); {"started": cell} before each run of a cell (a heartbeat: a silent child is hung);
//    {"cell", "record", "times": [[round's seconds…]…], "truncated", "output"} after a cell's
//    last round, with the output file written; {"cell", "unsupported": why} or
//    {"cell", "failed": why}; {"done": true} last.
//  * A child that crashes, hangs (silent past the limit: killed), writes no JSON, or returns an
//    output of the wrong size fails loudly: its cells' records say why. Nothing it says is
//    trusted: one answer a record, outputs only under the names given and only as regular files
//    of the expected size, times positive, finite and within what the device can physically do.
#pragma once

#include "bench/cell.h"
#include "bench/reps.h"

#include <nlohmann/json.hpp>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

// The frameworks the driver knows, in the order `all` runs them.
const std::vector<std::string>& known_frameworks();
bool is_known_framework(std::string_view name);

struct FrameworkJob {
  std::string framework;    // torch, jax, cupy, tensorflow
  std::string python;       // the interpreter: an absolute path
  std::string device;       // gpucheck's device name: cpu, cuda0, ...
  std::string backend;      // the device's backend: cpu, cuda
  std::string device_name;  // gpucheck's name of the device (the records' device_name)
  std::vector<Cell> cells;
  RepPolicy policy;
  std::uint64_t seed = 0;
  int threads = 0;  // CPU threads the framework may use (0: its default)
  // Importing the framework and opening its device; also how long a child may stay silent
  // beyond what its running cell may take (a hung child is killed then).
  std::chrono::duration<double> startup_timeout{120.0};
  // The child's environment changes (value set, nullopt unset) on top of gpucheck's own.
  std::map<std::string, std::optional<std::string>> env;
  // Called as the child starts a run of a cell (each round), for a progress line.
  std::function<void(const Cell& cell)> cell_started;
  // Inputs of one child at most (bytes on disk); more cells run in further children.
  std::uint64_t max_batch_bytes = std::uint64_t{1} << 30;
};

struct FrameworkRun {
  // Records of every cell the framework got to (ok, mismatch, unsupported, failed).
  std::vector<nlohmann::json> records;
  // The framework cannot run here at all (not installed, no such device): why, and no records.
  std::optional<std::string> unavailable;
};

// Runs the job's cells in children of job.python. Never throws for the child's failures: they
// become failed records; without a temporary directory (TMPDIR missing, not a directory) the
// framework is unavailable, with the reason. Throws std::runtime_error when an input cannot be
// written. A stop signal (SIGINT, SIGTERM, SIGHUP) ends the child, removes the job directory and
// is then raised again, for gpucheck's stop handler.
FrameworkRun run_framework(const FrameworkJob& job);

// What run_framework makes of a child's stdout, without a child: the job's cells as one batch
// whose job directory is `dir` (outputs are read from there), the child exited 0. For the fuzz
// target of the answer lines (tests/fuzz) and tests.
FrameworkRun read_framework_answers(const FrameworkJob& job, std::string_view child_stdout,
                                    const std::string& dir);

// The embedded driver's text.
std::string_view framework_driver_source();

}  // namespace gpucheck::bench

// What one stress child runs: the device, the tests in order, their sizes and the run's length.
// The parent sends it as JSON (`__child stress --plan`), as bench sends its plans.
#pragma once

#include "core/workload.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::stress {

enum class Test { kGemm, kMemory, kCopy };
std::string_view to_string(Test t);
std::optional<Test> test_from_string(std::string_view s);

inline constexpr double kDefaultWindowS = 10;
inline constexpr std::uint64_t kGpuGemmSize = 8192;
inline constexpr std::uint64_t kHostGemmSize = 1024;
inline constexpr double kGpuMemoryFraction = 0.9;   // of the device's free memory
inline constexpr double kHostMemoryFraction = 0.1;  // of MemAvailable (CPU, pocl)

struct StressPlan {
  std::string device;  // "cpu", "cuda0", ...
  std::string backend;
  std::vector<Test> tests;    // run one after another, each for an equal share of the duration
  std::vector<DType> dtypes;  // GEMM dtypes (equal shares of the GEMM time); empty: the default
  double duration_s = 60;
  std::uint64_t gemm_size = 0;            // square; 0: 8192 on GPUs, 1024 on host memory
  std::optional<double> memory_fraction;  // empty: 0.9 on GPUs, 0.1 on host memory
  std::uint64_t check_every = 0;          // full check of every k-th result; 0: chosen
  bool no_check = false;                  // measure without checks (verdict: not PASS)
  double window_s = kDefaultWindowS;
  std::uint64_t seed = 20240601;
  int threads = 0;
  // The copy test also copies this device's memory to the peer's and back-checks it (CUDA, two
  // or more GPUs: the next GPU of the run, a ring), so NVLink or PCIe peer paths carry load.
  std::string peer;
  // When the tests must be over, in CLOCK_MONOTONIC seconds (the same clock in every process of
  // the machine): set by the parent from its own start, so the whole command, its probe and
  // each child's device set-up included, keeps to --duration. Empty: duration_s from the
  // child's start.
  std::optional<double> deadline_s;
};

// Now in CLOCK_MONOTONIC seconds (std::chrono::steady_clock on Linux), for deadline_s.
double monotonic_now_s();

nlohmann::json to_json(const StressPlan& plan);
StressPlan plan_from_json(const nlohmann::json& j);

// Gives each CUDA plan whose tests include copy the next such GPU as its peer (a ring: with two,
// each copies to the other), when there are two or more.
void assign_copy_peers(std::vector<StressPlan>& plans);

// "90s", "5m", "1h", "2.5m" or a bare number of seconds (core/duration.h); nullopt for anything
// else, <= 0 or past kMaxDurationS.
std::optional<double> parse_duration(std::string_view text);

// Why the plan's GEMM cannot run, known before any child starts (a bad flag, exit 2), or
// nullopt: a dtype the backend never runs GEMM in (the CPU: f32 and f64, as its device says),
// or a size whose three N×N matrices (A, B and a result) do not fit memory_bytes (the device's
// memory, MemTotal for the CPU; 0 when not known: only sizes whose bytes overflow are refused).
std::optional<std::string> gemm_refusal(const StressPlan& plan, std::uint64_t memory_bytes);

// The plan's memory fraction, or the default of a device with (host_memory) or without its own
// memory: 0.1 of MemAvailable, 0.9 of a GPU's free memory.
double memory_fraction_for(const StressPlan& plan, bool host_memory);

// The GEMM dtype a device runs when --dtype is not given: bf16 (tensor cores) on CUDA, f32 else.
DType default_gemm_dtype(std::string_view backend);

}  // namespace gpucheck::stress

// A qualify profile: the [[require]] tables of a TOML file, checked completely on load so a bad
// profile is a usage error (exit 2) naming file:line, the dotted key and what was expected.
#pragma once

#include "doctor/check.h"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::qualify {

// kP2p, kAllreduce, kSiblings: the GPUs of a machine together; kStress: a stress run;
// kInfiniband: the node's InfiniBand/RoCE ports.
enum class Kind {
  kBackend,
  kDevice,
  kDoctor,
  kBench,
  kP2p,
  kAllreduce,
  kSiblings,
  kStress,
  kInfiniband
};
std::string_view to_string(Kind k);

// Which devices a device or bench requirement is about.
enum class Selector { kNamed, kAny, kEach };

// What a bench requirement compares its record with.
// kFractionOfLineRate: p2p only, against the NVLink line rate NVML reports between the pair.
enum class Criterion {
  kMin,
  kMax,
  kSpeedupMin,
  kFractionOfReference,
  kFractionOfLineRate,
  kFractionOfLimit,  // of the record's `limit` (qualify/limits.h), in (0, 1]
};

struct Requirement {
  std::string id;  // `id` key, else "<kind>_<n>" with n its 1-based place in the profile
  Kind kind = Kind::kBackend;
  int line = 0;  // the [[require]] table's line in the profile

  // backend: name, available, devices_min. device/bench: backend restricts the devices.
  std::string backend;
  std::optional<bool> available;
  std::optional<std::int64_t> devices_min;

  // device and bench: "cuda0", "cpu", "opencl:<pci>" (kNamed), "any" or "each"
  Selector selector = Selector::kAny;
  std::string device;
  std::string name_regex;                                         // ECMAScript
  std::optional<std::string> compute_capability_min, driver_min;  // numeric tuples "8.0"
  std::optional<double> memory_gib_min;

  // doctor: the worst status allowed, of one check or of all but those ignored
  doctor::CheckStatus max_status = doctor::CheckStatus::kWarn;
  std::string check;
  std::vector<std::string> ignore;

  // bench: one cell (op, dtype, shape as in the result record, transfers) and one criterion
  std::string op, dtype = "f32", transfers = "excluded";
  nlohmann::json shape;
  Criterion criterion = Criterion::kMin;
  double value = 0;       // min/max in `unit`, speedup, or fraction
  std::string unit;       // min: TFLOP/s, GFLOP/s, GB/s, MB/s; max: s, ms, us
  std::string reference;  // min_fraction_of_reference: "measured" (default) or "datasheet"

  // stress: one `gpucheck stress` run on the selected devices (device, backend as
  // above; dtype is the GEMM's, empty for the device's default) and its limits.
  double duration_s = 60;
  std::vector<std::string> tests{"gemm", "memory", "copy"};
  std::int64_t max_errors = 0;  // wrong GEMM results + memory words + copies allowed
  std::optional<double> max_temperature_c;
  std::vector<std::string> allowed_clock_events{"gpu_idle", "applications_clocks_setting",
                                                "sw_power_cap", "sync_boost",
                                                "display_clock_setting"};
  std::optional<double> min_sustained_fraction;  // of the card's measured GEMM reference
  // p2p: the copy (as in the record's shape) and the pairs, "all" ordered pairs of CUDA devices
  // (unordered for bidirectional) or a list "cuda0->cuda1". allreduce: bytes per device over all
  // CUDA devices, min on the record's busbw. Both use criterion kMin or kFractionOfReference.
  std::vector<std::pair<std::string, std::string>> pairs;  // empty: all
  std::uint64_t bytes = 0;
  bool bidirectional = false;
  bool peer_access = true;
  std::string engine = "ce";
  // allreduce: transport = "net", NCCL's P2P and SHM transports off (bench --transport net): the
  // network path the ranks of several nodes take, proven on one host.
  bool network_only = false;
  // siblings: the largest fraction a GPU may fall below the median of its same-model siblings
  // in doctor's load run (value holds it), judged past each GPU's own noise (at least 1 %).
  // infiniband: every enabled port of the link layer ("InfiniBand", "Ethernet", empty: any)
  // ACTIVE at rate_gbps_min or more (value holds it; 0: any rate), and at least ports_min
  // (devices_min holds it) such ports.
  std::string link_layer;
};

// [bench] of the profile: the repetition policy of every bench it runs.
struct BenchSettings {
  int warmup = 1;
  std::optional<int> reps;
  double min_time_s = 0.2;
  double max_time_s = 5;
  std::uint64_t seed = 20240601;
  int threads = 0;
};

struct Profile {
  std::string path;
  std::string name;  // `name` key, else the file's stem
  std::string description;
  BenchSettings bench;
  std::vector<Requirement> requirements;
};

// Throws UsageError "FILE:LINE: KEY: expected ..., got ..." for anything it cannot use: TOML
// syntax, unknown keys, wrong types, unknown values, a check id doctor does not have.
Profile parse_profile(std::string_view toml_text, const std::string& path);
Profile load_profile(const std::string& path);

// A bench requirement's unit as a factor to the record's unit (TFLOP/s, GB/s or seconds).
double unit_factor(std::string_view unit);

}  // namespace gpucheck::qualify

// Which pip install line gives a framework that uses the NVIDIA GPUs here: the wheel matrices of
// torch, JAX, TensorFlow and CuPy (configs/wheels.toml, embedded, each entry with its sources)
// judged against this driver, the GPUs' compute capabilities and the environment's Python.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::doctor {

struct WheelEntry {
  std::string framework;  // torch, jax, tensorflow, cupy
  std::string version;    // "2.11": the release line
  std::string variant;    // cu130, cuda12, and-cuda, cuda12x
  std::string cuda;       // "13.0"
  std::string pip;        // the install line, without the interpreter
  bool pypi_default = false;
  std::vector<std::string> python;  // "3.12", "3.14t"
  std::vector<int> sm;              // machine code for these capabilities (90 = sm_90)
  std::vector<int> ptx;             // PTX for these
  int sm_min = 0;                   // without an sm list (CuPy compiles at run time): the floor
  int ptx_fails_from = 0;           // PTX JIT known to fail from this capability on (0: never)
  std::string min_driver;           // "580.65.06" (Linux)
  std::string confidence;           // confirmed, secondary, conflicting, unconfirmed
  std::vector<std::string> sources;

  // "torch 2.11 cu130 (CUDA 13.0, sm_75…sm_120)"
  std::string describe() const;
};

// The embedded table, in the file's order (each framework's releases oldest first).
const std::vector<WheelEntry>& wheel_table();
// A table from TOML text; std::runtime_error naming the entry and key when malformed.
std::vector<WheelEntry> parse_wheel_table(std::string_view toml_text);

// What is known about the machine and environment; an empty field is not judged.
struct WheelQuery {
  std::string framework;
  std::string driver;    // "575.51.03"
  int driver_cuda = 0;   // 12090, when the driver's own version is unknown
  std::vector<int> ccs;  // the GPUs' compute capabilities (90)
  std::string python;    // "3.12"
  std::string keep;      // a release line to keep when it fits ("2.10")
};

struct WheelAdvice {
  const WheelEntry* wheel = nullptr;  // null: none fits
  bool ptx_only = false;              // a GPU runs only through PTX JIT on it
  std::string why;                    // none fits: why, with what would change that
};

WheelAdvice advise_wheel(const std::vector<WheelEntry>& table, const WheelQuery& q);

// "580.65.06" >= "575.51.03", part by part; false when either is not dotted numbers.
bool driver_at_least(const std::string& have, const std::string& need);

}  // namespace gpucheck::doctor

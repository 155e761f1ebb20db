// Size presets (configs/default.toml, embedded) and the size flags that override them.
#pragma once

#include "core/workload.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

struct SizeSet {
  std::vector<ExpShape> exp;
  std::vector<GemmShape> gemm;
  std::vector<ConvShape> conv;  // layout left at NCHW; the bench's --layout list applies
  std::vector<std::uint64_t> copy;
  std::vector<std::uint64_t> p2p;        // bytes of each peer copy (--copy replaces them)
  std::vector<std::uint64_t> allreduce;  // bytes per device (--allreduce replaces them)
  // The ops whose sizes the command line gave: one too large for the device is "skipped", where
  // a preset's is scaled down.
  std::set<Op> given;
};

// Preset name ("small", "medium", "large") → sizes.
using Presets = std::map<std::string, SizeSet>;

// The presets compiled into the binary.
Presets default_presets();

// Every list keeps each size once, in the order first given (a warning counts the repeats).
// Parses a TOML document of presets. Throws UsageError naming `source` with line:column for a
// syntax error, and the dotted key with its line for an unknown key or a value of a wrong type.
Presets parse_presets(std::string_view toml_text, const std::string& source);

// Reads and parses a presets file (UsageError when it cannot be read).
Presets load_presets_file(const std::string& path);

// Command-line forms; each throws UsageError naming `flag` and the offending value.
//   --exp    "1048576,2^24"            element counts (N or 2^K)
//   --gemm   "2048x2048x2048,512"      MxNxK, or N for a square problem
//   --conv   "8,64,56,56,64,3,3,1,1;…" nine fields, ';' between shapes
//   --copy   "1048576,64MiB"           bytes, with an optional KiB/MiB/GiB suffix
std::vector<ExpShape> parse_exp_sizes(std::string_view text, std::string_view flag);
std::vector<GemmShape> parse_gemm_shapes(std::string_view text, std::string_view flag);
std::vector<ConvShape> parse_conv_shapes(std::string_view text, std::string_view flag);
std::vector<std::uint64_t> parse_byte_sizes(std::string_view text, std::string_view flag);

}  // namespace gpucheck::bench

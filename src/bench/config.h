// Size presets (configs/default.toml, embedded) and the size flags that override them. Which
// keys and flags there are, and how their sizes are written, each op's unit says (SizeSpec in
// bench/ops/op_unit.h).
#pragma once

#include "bench/cell.h"
#include "core/workload.h"

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace gpucheck::bench {

struct SizeSet {
  // Each op's sizes as shapes of the op (a copy's: a CopyShape of which only the bytes count),
  // each once, in the order first given. An op without any has no entry.
  std::map<Op, std::vector<Shape>> lists;
  // The ops whose sizes the command line gave: one too large for the device is "skipped", where
  // a preset's is scaled down.
  std::set<Op> given;

  // The op's sizes; empty when it has none.
  const std::vector<Shape>& of(Op op) const;
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

// The most distinct sizes one op's list may hold (a UsageError past it): 50,000 took 6.5 GB
// (85 KB a record); 4096 stay under 400 MB and leave room for a 2,000-size sweep.
inline constexpr std::size_t kMaxDistinctSizes = 4096;

// An op's sizes as its flag takes them (its unit's syntax and separator: "1048576,2^24",
// "2048x2048x2048,512", "8,64,56,56,64,3,3,1,1;…", "1048576,64MiB"). UsageError naming `flag`
// and the offending value, or more than kMaxDistinctSizes sizes; std::logic_error for an op
// without sizes.
std::vector<Shape> parse_sizes(Op op, std::string_view text, std::string_view flag);

// The size flags each op's unit declares (SizeSpec::flag, without "--"), one entry per flag, in
// the order of Op.
std::vector<std::string> size_flags();

// `sizes` with the size flags given (flag name without "--" → its text; empty text: not given)
// in place of the preset's lists, marked as given, and each op's fallback sizes where neither gave
// any (SizeSpec::fallback).
SizeSet with_size_flags(SizeSet sizes, const std::map<std::string, std::string>& flags);

}  // namespace gpucheck::bench

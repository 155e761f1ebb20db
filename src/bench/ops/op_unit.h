// One unit per benchmark op: everything the bench knows about an op (its default dtypes, how its
// sizes become cells, its work, memory footprint and shrinking, its inputs, output and float64
// verification, its shape's JSON both ways, and the steps that run it) sits in the op's file
// under bench/ops/, reached through unit_of(op). The engine, the plan's JSON, bench's planning,
// the sweep and the framework runner read the table instead of switching on the op.
#pragma once

#include "backends/device.h"
#include "bench/cell.h"
#include "bench/config.h"
#include "bench/inputs.h"
#include "bench/ops/peer_copies.h"
#include "bench/record.h"
#include "bench/verify.h"
#include "core/workload.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

namespace gpucheck::bench {

class RunContext;  // bench/ops/run_context.h

// Bytes a cell needs: on the device (all buffers together and the largest one) and in host
// memory. Overflow-checked: std::overflow_error for sizes beyond 64 bits.
struct Footprint {
  std::uint64_t device_total = 0;
  std::uint64_t device_largest = 0;
  std::uint64_t host_total = 0;
};

// What a device's plan asks of an op: the sizes (preset, or the size flags), the dtypes (named,
// or the unit's defaults), the conv layouts, and what the device is.
struct PlanRequest {
  const SizeSet& sizes;
  const std::vector<DType>& dtypes;
  const std::vector<Layout>& layouts;
  bool host_device = false;
  bool host_copies_together = false;  // --host-copies-together: copies both ways at once too
};

// What a group's plan asks of a group op: the group's devices (two or more) and the op's sizes
// (shapes of the op whose bytes count; SizeSet::of).
struct GroupPlanRequest {
  const std::vector<std::string>& devices;
  const std::vector<Shape>& sizes;
};

// How an op's sizes are written: a preset's key, a command-line flag, and the syntax of one size
// (bench/config.cpp reads presets and flags through it; bench_command makes the flags from it).
struct SizeSpec {
  const char* key = "";   // in a preset: `[small] gemm = [...]`
  const char* flag = "";  // --FLAG, without the dashes; ops may share one (p2p takes --copy's)
  // The flag's help and value name; help nullptr: the flag is another op's, described there.
  const char* help = nullptr;
  const char* value_name = "SIZES";
  char separator = ',';       // between sizes on the command line
  bool toml_strings = false;  // a preset writes the sizes as strings, else as positive integers
  // One size: a shape of the op; UsageError naming `where` (the flag or the preset key).
  Shape (*parse)(std::string_view item, std::string_view where) = nullptr;
  // The sizes (in the flag's syntax) when neither the preset nor the flag gives any.
  const char* fallback = nullptr;
};

// The steps of a sweep (`bench --sweep OP`): a geometric range of one size parameter.
struct SweepRange {
  std::uint64_t first = 0, last = 0;
  const char* parameter = "";  // what a size counts ("elements", "m=n=k", "batch n")
  // The sizes as the op's size flag takes them (conv: "1,64,56,…;2,64,…"); nullptr: the sizes
  // joined by commas ("1024,2048").
  std::string (*size_flag)(const std::vector<std::uint64_t>& sizes) = nullptr;
};

// How a qualify profile writes the op's shape (qualify/toml_reader.cpp): the record's keys.
struct ProfileShape {
  struct Count {
    Count(std::string k, std::int64_t least = 1, std::optional<std::int64_t> otherwise = {})
        : key(std::move(k)), min(least), dflt(otherwise) {}
    std::string key;
    std::int64_t min;
    std::optional<std::int64_t> dflt;  // nullopt: required
  };
  struct Named {
    Named(std::string k, std::vector<std::string> allowed,
          std::optional<std::string> otherwise = {}, std::string only_key = {},
          std::vector<std::string> only_values = {}, std::string only_why = {})
        : key(std::move(k)),
          values(std::move(allowed)),
          dflt(std::move(otherwise)),
          when_key(std::move(only_key)),
          when_values(std::move(only_values)),
          when_not(std::move(only_why)) {}
    std::string key;
    std::vector<std::string> values;
    std::optional<std::string> dflt;  // nullopt: required
    // Given only where `when_key` holds one of `when_values` (else `when_not` says why not).
    std::string when_key;
    std::vector<std::string> when_values;
    std::string when_not;
  };
  struct Flag {
    explicit Flag(std::string k, bool otherwise = false) : key(std::move(k)), dflt(otherwise) {}
    std::string key;
    bool dflt;
  };
  std::vector<Count> counts;
  std::vector<Named> names;
  std::vector<Flag> flags;
};

// A cell's result: elements of a dtype (a copy: its bytes, counted as f32 elements) and its size.
struct OpOutput {
  std::uint64_t elements = 0;
  DType dtype = DType::kF32;
  std::uint64_t bytes = 0;
};

// What a group op is beyond its cells: how the group engine runs it and how a record says that
// no group could.
struct GroupOp {
  // The work, as a reason names it ("a peer copy").
  const char* what = "";
  // What runs it on CUDA, named by a record made where no group runs (the group child names its
  // PeerGroup's).
  const char* impl = "";
  // A collective (NCCL): set up once for the plan, over every device of the group, run after the
  // copies, and it may span processes (--rendezvous; --transport steers it). Otherwise peer
  // copies (OpUnit::peer_copies), batched into pairs that share no GPU.
  bool collective = false;
  // The shape a record names where the op cannot run: its first size (none: zero bytes) on the
  // one device there is.
  Shape (*lone_shape)(const std::vector<Shape>& sizes, const std::string& device) = nullptr;
};

struct OpUnit {
  Op op = Op::kExp;
  // Runs between the devices of a group (bench/group_engine.cpp), never on one device.
  std::optional<GroupOp> group;
  // Planned when the command names no ops.
  bool in_default_plan = false;
  // Its records' throughput is set against a card's reference figures (configs/skus.toml) and
  // the device's limit (qualify/limits.h); latency and the seed loop measure no such rate.
  bool rated = true;
  // Its records carry a dtype and compute type; an op without (copy, latency, p2p) is an explicit
  // request whenever --ops names it, whatever --dtype says.
  bool has_dtype = true;
  // The device's GEMM parameters are tuned before its first cell of a dtype, and its records
  // carry the library's choice and the tuning.
  bool tunes_gemm = false;
  // Its bf16 records are off where a framework sums bf16 GEMMs in bf16 (the framework's probe,
  // ones(4,512) @ ones(512,4), says so).
  bool bf16_gemm_accumulation = false;
  // Its compute type is its dtype (an elementwise op), not default_compute's.
  bool computes_in_dtype = false;
  // On accelerators a cell makes two records, device time and end to end (RunContext::measure_op).
  bool end_to_end = false;
  std::vector<DType> default_dtypes = {DType::kF32};
  // `bench --sweep OP`: the op's range; nullopt: the op cannot be swept.
  std::optional<SweepRange> sweep;
  // A qualify profile's bench requirement names one-device ops' records by this shape.
  ProfileShape profile_shape;
  // Its sizes in presets and flags; nullopt: fixed sizes (latency, the seed loop).
  std::optional<SizeSpec> size_spec;

  // The op's cells of a one-device plan (op, dtype and shape set; the caller marks explicit
  // requests and sizes). Group ops plan in app/bench_multi.cpp: empty.
  std::vector<Cell> (*plan)(const PlanRequest& request) = nullptr;
  // A group op's cells over a group's devices (app/bench_multi.cpp marks them explicit requests,
  // and their sizes explicit where the command line gave them); cells of a fixed size say so.
  std::vector<Cell> (*group_plan)(const GroupPlanRequest& request) = nullptr;
  Work (*work)(const Cell& cell) = nullptr;
  // Nullptr: the cell needs no memory worth checking.
  Footprint (*footprint)(const Cell& cell, bool host_device) = nullptr;
  // A smaller version of a preset cell (halved along its main dimension); false at the floor.
  // Nullptr: never shrunk.
  bool (*shrink)(Cell& cell) = nullptr;
  nlohmann::json (*shape_to_json)(const Shape& shape) = nullptr;
  Shape (*shape_from_json)(const nlohmann::json& j) = nullptr;
  // Why the device cannot run the cell; nullptr: Device::unsupported_reason (layout NCHW).
  std::optional<std::string> (*refusal)(const Cell& cell, Device& device) = nullptr;
  // One round of the cell on one device (bench/engine.cpp); nullptr for group ops.
  void (*run)(const Cell& cell, RunContext& context) = nullptr;
  // A cell that runs as peer copies between a group's devices (p2p; latency of mode p2p, which is
  // no group op, being a one-device op besides): its copies over the group's device names, in
  // group order. The group engine reads nothing else of a copy's shape. Nullptr: no copies (the
  // all-reduce is a collective).
  PeerCopies (*peer_copies)(const Cell& cell, const std::vector<std::string>& group) = nullptr;

  // What a framework's script gets and must give back (bench/framework_run.cpp): the cell's
  // inputs as the engine makes them, its output, and the check of the output's bytes (exactly
  // output(cell).bytes of them). Nullptr: frameworks do not run the op.
  std::vector<HostBuffer> (*inputs)(const Cell& cell, std::uint64_t seed) = nullptr;
  // The bytes of an input a framework's file holds; nullptr: the whole buffer.
  std::uint64_t (*input_bytes)(const Cell& cell, const HostBuffer& input) = nullptr;
  // The transfers of every record the cell makes; nullptr: the first record's excluded, the
  // end-to-end one's included.
  Transfers (*transfers)(const Cell& cell) = nullptr;
  OpOutput (*output)(const Cell& cell) = nullptr;
  Verification (*verify)(const Cell& cell, const std::vector<HostBuffer>& inputs, const void* got,
                         DType compute, const VerifyOptions& options) = nullptr;
};

// The unit of an op (a static table, one line per op in bench/ops/op_unit.cpp), and all of them
// in the order of Op.
const OpUnit& unit_of(Op op);
std::span<const OpUnit> op_units();
// Whether the records of the op so named carry a dtype (its unit's has_dtype); true for a name
// no op has, whose records are judged by all their fields.
bool records_have_dtype(std::string_view op);
// The op a shape belongs to: the Shape variant lists the shapes in the order of Op.
Op op_of(const Shape& shape);

namespace detail {
template <typename S, std::size_t I = 0>
consteval std::size_t shape_index() {
  if constexpr (std::is_same_v<std::variant_alternative_t<I, Shape>, S>)
    return I;
  else
    return shape_index<S, I + 1>();
}
}  // namespace detail

// The op whose shape is S, for code that holds a shape type rather than a shape.
template <typename S>
inline constexpr Op op_for = static_cast<Op>(detail::shape_index<S>());

// A planned cell (neither an explicit request nor size yet).
Cell planned_cell(Op op, DType dtype, Shape shape);
// The same, of the op the shape belongs to.
Cell planned_cell(DType dtype, Shape shape);

// The "unsupported" record of a group op that cannot run on `device` (of `backend`), saying why:
// the unit's impl, dtype and shape of its first size (GroupOp::lone_shape).
nlohmann::json group_refusal(Op op, const std::vector<Shape>& sizes, const std::string& device,
                             const std::string& backend, const std::string& why);

// A named value of a plan's JSON (op, layout, direction, ...) through its from_string;
// std::invalid_argument "bench plan: bad WHAT 'VALUE'" for anything else.
template <typename E, typename F>
E plan_enum(const nlohmann::json& j, F from_string, const char* what) {
  auto v = from_string(j.get<std::string>());
  if (!v) throw std::invalid_argument(fmt::format("bench plan: bad {} '{}'", what, j.dump()));
  return *v;
}

// Overflow-checked sizes (std::overflow_error "size overflows 64 bits").
std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b);
std::uint64_t checked_add(std::uint64_t a, std::uint64_t b);

// The footprint of a cell of whole tensors (its inputs and output) of `elements` each: all on the
// device, on the host too, and on accelerators a pinned copy of each besides.
Footprint tensor_footprint(std::initializer_list<std::uint64_t> elements,
                           std::uint64_t element_size, bool host_device);

// An output's bytes as a host buffer of its dtype (for an op's verify).
HostBuffer output_buffer(const OpOutput& output, const void* got);

}  // namespace gpucheck::bench

// copy: bytes host to device, device to host (pinned or pageable host memory), device to device,
// host to host, or both ways at once; verified byte for byte.
#include "bench/ops/copy.h"

#include "bench/ops/op_unit.h"
#include "bench/ops/run_context.h"
#include "bench/size_text.h"
#include "bench/stats.h"
#include "core/json_keys.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace gpucheck::bench {

namespace copy_op {

namespace {

namespace k = keys;

std::optional<Direction> direction_from_string(std::string_view s) {
  for (auto d :
       {Direction::kH2d, Direction::kD2h, Direction::kD2d, Direction::kH2h, Direction::kBoth})
    if (to_string(d) == s) return d;
  return std::nullopt;
}

std::optional<HostMemory> host_memory_from_string(std::string_view s) {
  for (auto h : {HostMemory::kPinned, HostMemory::kPageable})
    if (to_string(h) == s) return h;
  return std::nullopt;
}

// The host has one memory: one copy, host to host. A device's: each way with pinned and pageable
// host memory, and device to device.
std::vector<Cell> plan(const PlanRequest& req) {
  std::vector<Cell> cells;
  auto add = [&](CopyShape s) { cells.push_back(planned_cell(Op::kCopy, DType::kF32, s)); };
  for (const Shape& size : req.sizes.of(Op::kCopy)) {
    const std::uint64_t bytes = std::get<CopyShape>(size).bytes;
    if (req.host_device) {
      add(CopyShape{bytes, Direction::kH2h, HostMemory::kPageable});
      continue;
    }
    for (auto dir : {Direction::kH2d, Direction::kD2h})
      for (auto mem : {HostMemory::kPinned, HostMemory::kPageable}) add(CopyShape{bytes, dir, mem});
    add(CopyShape{bytes, Direction::kD2d, HostMemory::kPageable});
    // Both ways at once: the baseline of stress's copy test, whose round trips do that.
    if (req.host_copies_together) add(CopyShape{bytes, Direction::kBoth, HostMemory::kPinned});
  }
  return cells;
}

// d2d and h2h read and write the same memory; both ways carry the bytes each way.
bool counted_twice(const CopyShape& s) {
  return s.direction == Direction::kD2d || s.direction == Direction::kH2h ||
         s.direction == Direction::kBoth;
}

Work work(const Cell& cell) {
  const auto& s = std::get<CopyShape>(cell.shape);
  return {static_cast<double>(s.bytes) * (counted_twice(s) ? 2.0 : 1.0), "GB/s"};
}

Footprint footprint(const Cell& cell, bool) {
  const auto& s = std::get<CopyShape>(cell.shape);
  Footprint f;
  f.device_total = checked_mul(s.bytes, counted_twice(s) ? 2 : 1);
  f.device_largest = s.bytes;
  // The source pattern and the copy brought back; both ways: a pinned buffer each way too.
  f.host_total = checked_mul(s.bytes, s.direction == Direction::kBoth ? 4 : 2);
  return f;
}

bool shrink(Cell& cell) {
  auto& s = std::get<CopyShape>(cell.shape);
  if (s.bytes <= 4096) return false;
  s.bytes /= 2;
  return true;
}

nlohmann::json to_json(const Shape& shape) {
  const auto& s = std::get<CopyShape>(shape);
  nlohmann::json j = {{k::kBytes, s.bytes}, {k::kDirection, to_string(s.direction)}};
  if (s.direction == Direction::kH2d || s.direction == Direction::kD2h ||
      s.direction == Direction::kBoth)
    j[k::kHostMemory] = to_string(s.host_memory);
  return j;
}

Shape from_json(const nlohmann::json& j) {
  CopyShape s{j.at(std::string(k::kBytes)).get<std::uint64_t>(), Direction::kH2h,
              HostMemory::kPageable};
  s.direction =
      plan_enum<Direction>(j.at(std::string(k::kDirection)), direction_from_string, "direction");
  if (j.contains(k::kHostMemory))
    s.host_memory = plan_enum<HostMemory>(j.at(std::string(k::kHostMemory)),
                                          host_memory_from_string, "host memory");
  return s;
}

// Copies both ways at once need queues of the device's own (a serial fallback would time them
// one after another and call it both ways).
std::optional<std::string> refusal(const Cell& cell, Device& device) {
  if (auto why = device.unsupported_reason(cell.op, cell.dtype, Layout::kNchw)) return why;
  if (std::get<CopyShape>(cell.shape).direction != Direction::kBoth) return std::nullopt;
  StressOps* ops = device.stress_ops();
  if (device.is_host() || !ops || !ops->host_copy_queues(1))
    return fmt::format(
        "copies both ways at once need copy queues of the device's own; the {} backend runs "
        "its host copies one after another",
        device.identity().backend);
  return std::nullopt;
}

// The random source pattern every copy moves.
HostBuffer pattern_of(std::uint64_t bytes, std::uint64_t seed) {
  HostBuffer pattern(DType::kF32, (bytes + 3) / 4);
  fill_uniform(pattern, -1.0, 1.0, seed, kStreamExpX);
  return pattern;
}

// An upload and a download of `bytes` at once on the device's own copy queues (the bench
// decided before running that it has them): the figure is both directions' bytes over the
// span from their common start to the later end, the context gives each direction's own GB/s,
// and both copies are verified byte for byte.
void run_both_ways(RunContext& ctx, nlohmann::json r, const HostBuffer& pattern,
                   std::vector<unsigned char>& back, std::size_t bytes) {
  using Queue = HostCopyQueues::Queue;
  enum : std::size_t { kOrigin, kUpStart, kUpEnd, kDownStart, kDownEnd, kEvents };
  Device& dev = ctx.device();
  auto queues = dev.stress_ops()->host_copy_queues(kEvents);
  if (!queues) throw std::runtime_error("copies both ways: the device's copy queues are gone");
  auto up_src = ctx.host_memory(bytes, HostMemory::kPinned);
  std::memcpy(up_src->data(), pattern.data(), bytes);
  auto up_dst = dev.allocate(bytes);
  auto down_src = dev.allocate(bytes);
  dev.upload(*down_src, pattern.data(), bytes);
  auto down_dst = ctx.host_memory(bytes, HostMemory::kPinned);
  std::memset(down_dst->data(), 0xA5, bytes);
  dev.synchronize();
  std::vector<double> up_s, down_s;
  bool truncated = false;
  auto alone = ctx.hold_host(true);
  auto times = ctx.reps(
      [&] {
        // Both queues start after one point, so the span has one origin.
        queues->record(kOrigin, Queue::kUp);
        queues->wait(Queue::kDown, kOrigin);
        queues->record(kUpStart, Queue::kUp);
        queues->upload(*up_dst, up_src->data(), bytes);
        queues->record(kUpEnd, Queue::kUp);
        queues->record(kDownStart, Queue::kDown);
        queues->download(down_dst->data(), *down_src, bytes);
        queues->record(kDownEnd, Queue::kDown);
        queues->wait_host(kUpEnd);
        queues->wait_host(kDownEnd);
        up_s.push_back(queues->seconds_between(kUpStart, kUpEnd));
        down_s.push_back(queues->seconds_between(kDownStart, kDownEnd));
        return std::max(queues->seconds_between(kOrigin, kUpEnd),
                        queues->seconds_between(kOrigin, kDownEnd));
      },
      &truncated);
  auto median_gbps = [&](const std::vector<double>& t) {
    const double s = median_of(t);
    return s > 0 ? static_cast<double>(bytes) / s / 1e9 : 0.0;
  };
  r[k::kContext][k::kDirectionGbps] = {median_gbps(up_s), median_gbps(down_s)};  // h2d, d2h
  dev.download(back.data(), *up_dst, bytes);
  dev.synchronize();
  Verification v =
      verify_exact(pattern.data(), back.data(), bytes, "uploaded bytes differ from the source");
  if (v.ok)
    v = verify_exact(pattern.data(), down_dst->data(), bytes,
                     "downloaded bytes differ from the source");
  ctx.collect(std::move(r), std::move(times), truncated, std::move(v));
}

// Copies are verified byte for byte: the destination must equal the random source.
void run(const Cell& cell, RunContext& ctx) {
  const auto& s = std::get<CopyShape>(cell.shape);
  Device& dev = ctx.device();
  const std::size_t bytes = s.bytes;
  const auto kept =
      shared_inputs<HostBuffer>(ctx, bytes, [&] { return pattern_of(bytes, ctx.seed()); });
  const HostBuffer& pattern = *kept;
  std::vector<unsigned char> back(bytes, 0xA5);
  const bool host_bound = s.direction != Direction::kD2d;
  nlohmann::json r = ctx.record(Transfers::kExcluded, host_bound);
  bool truncated = false;
  std::vector<double> times;
  auto timed = [&](const std::function<double()>& rep) {
    auto alone = ctx.hold_host(host_bound);
    return ctx.reps(rep, &truncated);
  };
  switch (s.direction) {
    case Direction::kH2h:
    case Direction::kD2d: {
      auto src = dev.allocate(bytes);
      auto dst = dev.allocate(bytes);
      dev.upload(*src, pattern.data(), bytes);
      dev.upload(*dst, back.data(), bytes);
      dev.synchronize();
      times = timed([&] { return dev.time_on_device([&] { dev.copy(*dst, *src, bytes); }); });
      dev.download(back.data(), *dst, bytes);
      dev.synchronize();
      break;
    }
    case Direction::kH2d: {
      auto host = ctx.host_memory(bytes, s.host_memory);
      std::memcpy(host->data(), pattern.data(), bytes);
      auto dst = dev.allocate(bytes);
      times =
          timed([&] { return dev.time_on_device([&] { dev.upload(*dst, host->data(), bytes); }); });
      dev.download(back.data(), *dst, bytes);
      dev.synchronize();
      break;
    }
    case Direction::kD2h: {
      auto src = dev.allocate(bytes);
      dev.upload(*src, pattern.data(), bytes);
      auto host = ctx.host_memory(bytes, s.host_memory);
      std::memset(host->data(), 0xA5, bytes);
      dev.synchronize();
      times = timed(
          [&] { return dev.time_on_device([&] { dev.download(host->data(), *src, bytes); }); });
      std::memcpy(back.data(), host->data(), bytes);
      break;
    }
    case Direction::kBoth:
      run_both_ways(ctx, std::move(r), pattern, back, bytes);
      return;
  }
  ctx.collect(
      std::move(r), std::move(times), truncated,
      verify_exact(pattern.data(), back.data(), bytes, "copied bytes differ from the source"));
}

// The engine's source pattern; the file holds exactly the copied bytes.
std::vector<HostBuffer> inputs(const Cell& cell, std::uint64_t seed) {
  std::vector<HostBuffer> in;
  in.push_back(pattern_of(std::get<CopyShape>(cell.shape).bytes, seed));
  return in;
}

// The pattern is whole f32 elements; the file holds exactly the copied bytes.
std::uint64_t input_bytes(const Cell& cell, const HostBuffer&) {
  return std::get<CopyShape>(cell.shape).bytes;
}

OpOutput output(const Cell& cell) {
  const std::uint64_t bytes = std::get<CopyShape>(cell.shape).bytes;
  return {bytes, DType::kF32, bytes};
}

Verification verify(const Cell& cell, const std::vector<HostBuffer>& in, const void* got, DType,
                    const VerifyOptions&) {
  return verify_exact(in.at(0).data(), got, std::get<CopyShape>(cell.shape).bytes,
                      "copied bytes differ from the source");
}

}  // namespace

}  // namespace copy_op

std::string copy_impl(const Device& device) {
  return device.impl(Op::kCopy, DType::kF32);
}

OpUnit copy_unit() {
  OpUnit u;
  u.op = Op::kCopy;
  u.in_default_plan = true;
  u.has_dtype = false;
  u.profile_shape = {{{"bytes"}},
                     {{"direction", {"h2d", "d2h", "d2d", "h2h", "both"}},
                      {"host_memory",
                       {"pinned", "pageable"},
                       "pinned",
                       "direction",
                       {"h2d", "d2h"},
                       "applies to h2d and d2h copies only"}},
                     {}};
  u.size_spec =
      SizeSpec{"copy",
               "copy",
               "copy and p2p sizes in bytes (KiB/MiB/GiB suffixes allowed; p2p default 256 MiB)",
               "BYTES",
               ',',
               false,
               [](std::string_view item, std::string_view where) -> Shape {
                 return CopyShape{byte_count(item, where)};
               }};
  u.plan = copy_op::plan;
  u.work = copy_op::work;
  u.footprint = copy_op::footprint;
  u.shrink = copy_op::shrink;
  u.shape_to_json = copy_op::to_json;
  u.shape_from_json = copy_op::from_json;
  u.refusal = copy_op::refusal;
  u.run = copy_op::run;
  u.inputs = copy_op::inputs;
  u.input_bytes = copy_op::input_bytes;
  u.output = copy_op::output;
  u.verify = copy_op::verify;
  return u;
}

}  // namespace gpucheck::bench

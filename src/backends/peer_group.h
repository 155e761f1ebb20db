// Several devices of one backend opened together in one process, for the work between them:
// peer copies and all-reduce. As with Device, the bench engine owns the workload (patterns,
// verification, records); a group offers primitives only.
#pragma once

#include "backends/device.h"

#include <nlohmann/json.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck {

// One copy of a timed batch: `bytes` from src (on device src_device) to dst (on dst_device),
// issued by `issuer` (src_device: the source pushes, as torch's dst.copy_(src) does), split into
// `pieces` copies of bytes/pieces each (pieces > 1: a latency batch of small copies).
struct PeerCopy {
  std::size_t src_device = 0, dst_device = 0, issuer = 0;
  const DeviceBuffer* src = nullptr;
  DeviceBuffer* dst = nullptr;
  std::size_t bytes = 0;
  std::size_t pieces = 1;
  bool sm = false;  // an SM copy kernel instead of the copy engines (needs peer access)
};

// What one timed batch saw: each copy's seconds for one repetition (its own events), and whether
// a spin kernel gave up waiting (the host blocked while enqueueing: launch overhead then counts).
struct CopyTiming {
  std::vector<double> seconds;
  bool spin_timed_out = false;
};

// An all-reduce spanning processes (ranks of a multi-process run, on one host or many): this
// group's devices are ranks first_rank, first_rank + 1, ... of `ranks`, meeting through `id`
// (the bytes Backend::start_collective gave rank 0).
struct CollectiveSpan {
  std::string id;
  int ranks = 0;
  int first_rank = 0;
};

struct CollectiveSetup {
  // NCCL's peer-to-peer and shared-memory transports off: the traffic takes the network path (IB,
  // RoCE or sockets) even between GPUs of one host.
  bool network_only = false;
  std::optional<CollectiveSpan> span;
};

class PeerGroup {
 public:
  virtual ~PeerGroup() = default;
  virtual std::size_t size() const = 0;
  virtual const DeviceIdentity& identity(std::size_t i) const = 0;
  virtual MemoryBudget memory_budget(std::size_t i) const = 0;

  virtual std::unique_ptr<DeviceBuffer> allocate(std::size_t device, std::size_t bytes) = 0;
  // Synchronous: the data is there (or back) when they return.
  virtual void upload(std::size_t device, DeviceBuffer& dst, const void* src,
                      std::size_t bytes) = 0;
  virtual void download(std::size_t device, void* dst, const DeviceBuffer& src,
                        std::size_t bytes) = 0;
  // Sets the first `bytes` of dst to `value` (poisons a receiving buffer before a cell), done when
  // it returns. By default an upload; a backend with a device-side fill overrides it.
  virtual void fill(std::size_t device, DeviceBuffer& dst, unsigned char value, std::size_t bytes) {
    const std::vector<unsigned char> pattern(bytes, value);
    upload(device, dst, pattern.data(), bytes);
  }

  // nullopt when device a may map b's memory (and b a's); else why not, in words.
  virtual std::optional<std::string> peer_access_unavailable(std::size_t a,
                                                             std::size_t b) const = 0;
  // Turns a's access to b's memory, and b's to a's, on or off.
  virtual void set_peer_access(std::size_t a, std::size_t b, bool enabled) = 0;
  // The copies run at once (one stream each), each `repeats` times back to back, all queued
  // behind spin kernels released together; returns each copy's seconds per repetition. A copy
  // between devices without peer access is staged through the host, whose enqueue can block:
  // such a batch is issued from one thread per copy instead (no latch to hold them).
  virtual CopyTiming timed_copies(const std::vector<PeerCopy>& copies, int repeats) = 0;
  virtual std::string copy_impl(bool sm) const = 0;

  // All-reduce: nullopt when available, else why not (library missing, one device).
  virtual std::optional<std::string> allreduce_unavailable() const = 0;
  virtual std::string allreduce_impl() const = 0;
  // f32 sum of `count` elements, send[i] → recv[i] on device i, `repeats` times back to back;
  // returns the seconds of one (host clock from the enqueue to every stream's completion).
  virtual double timed_allreduce_f32(const std::vector<const DeviceBuffer*>& send,
                                     const std::vector<DeviceBuffer*>& recv, std::size_t count,
                                     int repeats) = 0;

  // How the all-reduce runs, set once before the first one: nullopt when the group can, else
  // why not (a group whose all-reduce stays within one process, or has no transports to choose).
  virtual std::optional<std::string> setup_allreduce(const CollectiveSetup& setup) {
    if (setup.span) return std::string("this backend's all-reduce runs within one process");
    if (setup.network_only) return std::string("this backend's all-reduce has no network path");
    return std::nullopt;
  }

  // Facts for the group's records' context (library versions, environment that steers NCCL).
  virtual nlohmann::json context() const { return nlohmann::json::object(); }
};

}  // namespace gpucheck

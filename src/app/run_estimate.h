// How long a bench run has left, from what its finished units took. A unit is one round of one
// cell on one device; its time is what the parent saw between two event boundaries, so a
// device's start-up (its child, kernel builds) is part of its first units.
//
// Each device's units still to run are predicted at the mean time of its finished units (the
// mean over every device's units for a device not yet started), because on the VM a finer
// model, which predicted a unit from the same cell's earlier round or from the same cell on
// another device, did worse: first rounds carry kernel builds, and a device not yet opened
// drops cells (bf16 on Vulkan, f16 on a CPU) that no other device's record can foretell.
// Measured on five recorded runs (tests/fixtures/progress, docs/PERFORMANCE.md).
//
// Two things the count of units misses are modelled. GEMM searches (once per dtype before its
// first GEMM, on a device whose winners are not cached) take ten to forty units' time: a unit
// that searches is kept apart, and the searches still to come on a device that has searched in
// this run are predicted at what the finished ones took (twice the search's budget before any
// ended, as pocl's first searches took with the library's kernels built and the winner
// verified). And a device not yet started runs the share of its planned units that the
// started devices kept (a child drops the defaults its device cannot run).
//
// Devices that run at the same time are summed, so with several GPUs at once it is high.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpucheck::app {

class RunEstimate {
 public:
  struct Device {
    std::string name;
    std::size_t cells = 0;  // cells in the plan
    int rounds = 1;         // each cell runs once a round
    // Per cell: what a search before its first round is keyed by (the dtype of a GEMM or conv:
    // searched once per dtype), or "" for a cell that never searches. Empty: none does.
    std::vector<std::string> search_keys;
  };

  explicit RunEstimate(std::vector<Device> devices);

  // The device's child says how many units will really run and which of its cells (cells it
  // cannot run drop out; empty: every cell).
  void planned(const std::string& device, std::size_t units, const std::vector<bool>& runs = {});
  // A unit of `device` (its cell `cell`) starts at `now` (seconds on any one clock); the
  // device's unit before it ends there.
  void started(const std::string& device, std::size_t cell, double now);
  // The device's unit in progress searches GEMM parameters first, within budget_s.
  void once(const std::string& device, double budget_s);
  // The device's child has ended: its last unit ends at `now`.
  void ended(const std::string& device, double now);
  // Seconds left after `now`; nullopt until a unit has finished.
  std::optional<double> remaining(double now) const;

 private:
  struct DeviceState {
    Device plan;
    std::size_t units = 0;  // units the device will run (all its cells' rounds until planned)
    bool planned = false;
    std::vector<bool> runs;   // per cell: it will run (all, until planned)
    std::vector<bool> begun;  // per cell: a round of it has started
    std::size_t started = 0;
    bool ended = false;
    double unit_seconds = 0;  // the finished units' time, searches left out
    std::size_t units_done = 0;
    bool open = false;  // a unit is in progress
    double open_since = 0;
    bool open_searches = false;
    double budget = 0;  // the last search's budget
    bool searched = false;
  };

  void close(DeviceState& d, double now);
  double search_time(double budget_s) const;

  std::vector<DeviceState> devices_;
  std::vector<double> searches_;  // what each finished searching unit took
  double last_boundary_ = 0;      // the latest unit start or end of any device
};

}  // namespace gpucheck::app

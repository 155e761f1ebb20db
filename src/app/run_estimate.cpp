// The bench run's time left: see run_estimate.h for the model and why.
#include "app/run_estimate.h"

#include <algorithm>
#include <set>

namespace gpucheck::app {

RunEstimate::RunEstimate(std::vector<Device> devices) {
  for (auto& d : devices) {
    DeviceState s;
    s.units = d.cells * static_cast<std::size_t>(std::max(d.rounds, 1));
    s.runs.assign(d.cells, true);
    s.begun.assign(d.cells, false);
    s.plan = std::move(d);
    devices_.push_back(std::move(s));
  }
}

void RunEstimate::planned(const std::string& device, std::size_t units,
                          const std::vector<bool>& runs) {
  for (auto& d : devices_)
    if (d.plan.name == device) {
      d.units = units;
      d.planned = true;
      if (runs.size() == d.plan.cells) d.runs = runs;
    }
}

void RunEstimate::close(DeviceState& d, double now) {
  if (!d.open) return;
  const double took = std::max(now - d.open_since, 0.0);
  if (d.open_searches) {
    searches_.push_back(took);
  } else {
    d.unit_seconds += took;
    ++d.units_done;
  }
  d.open = false;
  d.open_searches = false;
}

void RunEstimate::started(const std::string& device, std::size_t cell, double now) {
  for (auto& d : devices_) {
    if (d.plan.name != device) continue;
    // A device's first unit also carries what came before it since the last boundary (its
    // child's start, opening the device).
    const double since = d.open ? now : std::min(last_boundary_, now);
    close(d, now);
    d.open = true;
    d.open_since = since;
    ++d.started;
    if (cell < d.begun.size()) d.begun[cell] = true;
  }
  last_boundary_ = std::max(last_boundary_, now);
}

void RunEstimate::once(const std::string& device, double budget_s) {
  for (auto& d : devices_)
    if (d.plan.name == device) {
      d.open_searches = true;
      d.budget = budget_s;
      d.searched = true;
    }
}

void RunEstimate::ended(const std::string& device, double now) {
  for (auto& d : devices_)
    if (d.plan.name == device) {
      close(d, now);
      d.ended = true;
    }
  last_boundary_ = std::max(last_boundary_, now);
}

double RunEstimate::search_time(double budget_s) const {
  if (searches_.empty()) return 2 * budget_s;
  double sum = 0;
  for (double t : searches_) sum += t;
  return sum / static_cast<double>(searches_.size());
}

std::optional<double> RunEstimate::remaining(double now) const {
  double seconds = 0, kept = 0, offered = 0;
  std::size_t done = 0;
  for (const auto& d : devices_) {
    seconds += d.unit_seconds;
    done += d.units_done;
    if (d.planned) {
      kept += static_cast<double>(d.units);
      offered += static_cast<double>(d.plan.cells) * std::max(d.plan.rounds, 1);
    }
  }
  if (done == 0) return std::nullopt;
  const double mean = seconds / static_cast<double>(done);
  const double keep = offered > 0 ? kept / offered : 1.0;
  double left = 0;
  for (const auto& d : devices_) {
    if (d.ended) continue;
    const double units =
        d.planned ? static_cast<double>(d.units) : keep * static_cast<double>(d.units);
    const double per = d.units_done ? d.unit_seconds / static_cast<double>(d.units_done) : mean;
    left += std::max(units - static_cast<double>(d.started), 0.0) * per;
    // The unit in progress: what its prediction leaves, never less than nothing.
    if (d.open)
      left += std::max((d.open_searches ? search_time(d.budget) : per) - (now - d.open_since), 0.0);
    // The searches still to come on a device that has searched: one per key no cell has begun.
    if (d.searched && d.plan.search_keys.size() == d.plan.cells) {
      std::set<std::string> begun, ahead;
      for (std::size_t c = 0; c < d.plan.cells; ++c)
        if (!d.plan.search_keys[c].empty() && d.runs[c])
          (d.begun[c] ? begun : ahead).insert(d.plan.search_keys[c]);
      for (const auto& key : ahead)
        if (!begun.count(key)) left += search_time(d.budget);
    }
  }
  return left;
}

}  // namespace gpucheck::app

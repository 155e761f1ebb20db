// A peer-copy cell (p2p, and latency of mode p2p) as its unit describes it to the group engine
// (OpUnit::peer_copies): the copies between the group's devices, how each is timed and how its
// record and log name them. The engine keeps what is its own: buffers, batches, timing,
// verification, peer access and the memory rule.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpucheck::bench {

struct PeerCopies {
  // (source, destination) places in the group, in the order the record lists them; the source
  // issues each copy.
  std::vector<std::pair<std::size_t, std::size_t>> copies;
  // The devices the cell occupies, in the order the memory rule checks them (a pair: source,
  // destination; a fan: in group order).
  std::vector<std::size_t> devices;
  // Bytes of one copy as timed (latency: all its pieces together).
  std::size_t bytes = 0;
  // Small copies one timed copy is cut into: its time over the pieces is the result.
  int pieces = 1;
  bool peer_access = false;
  bool sm = false;  // an SM copy kernel instead of the copy engines
  // The result is the cell's bytes over the time at the copies' summed rate, and the record
  // gives each copy's median GB/s; otherwise it is the seconds of one piece.
  bool summed_rate = true;
  // The devices the record is identified by (the second may be empty); names, so that a device
  // outside the group still makes a record.
  std::string first, second;
  // Every device at once: runs in a batch of its own, and the record names each copy.
  bool fan = false;
  std::string label;                   // the log's words for it
  std::optional<std::string> refusal;  // why no group can run it as planned
  std::optional<std::string> absent;   // a device it names that is not in the group
};

// The place of `device` among the group's names, or nullopt.
std::optional<std::size_t> place_in(const std::vector<std::string>& group,
                                    const std::string& device);

// A copy from `src` to `dst` and, both_ways, back at once: identified by the two, logged as
// "src→dst" or "src↔dst". Bytes, pieces, engine and refusal are the caller's to fill.
PeerCopies pair_copies(const std::vector<std::string>& group, const std::string& src,
                       const std::string& dst, bool both_ways, bool peer_access);

// Why no group can run these copies, whatever op they are: fewer than two devices, or an SM copy
// without peer access.
std::optional<std::string> peer_copy_refusal(const PeerCopies& c);

}  // namespace gpucheck::bench

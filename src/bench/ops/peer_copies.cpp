// What p2p's and latency's units share of describing their copies (bench/ops/peer_copies.h).
#include "bench/ops/peer_copies.h"

namespace gpucheck::bench {

std::optional<std::size_t> place_in(const std::vector<std::string>& group,
                                    const std::string& device) {
  for (std::size_t i = 0; i < group.size(); ++i)
    if (group[i] == device) return i;
  return std::nullopt;
}

PeerCopies pair_copies(const std::vector<std::string>& group, const std::string& src,
                       const std::string& dst, bool both_ways, bool peer_access) {
  PeerCopies out;
  out.first = src;
  out.second = dst;
  out.peer_access = peer_access;
  out.label = src + (both_ways ? "↔" : "→") + dst;
  const auto a = place_in(group, src), b = place_in(group, dst);
  if (!a || !b) {
    out.absent = !a ? src : dst;
    return out;
  }
  out.devices = {*a, *b};
  out.copies.emplace_back(*a, *b);
  // Both ways adds dst→src, issued by the other device.
  if (both_ways) out.copies.emplace_back(*b, *a);
  return out;
}

std::optional<std::string> peer_copy_refusal(const PeerCopies& c) {
  if (c.devices.size() < 2 || c.devices[0] == c.devices[1]) return "a peer copy needs two devices";
  if (c.sm && !c.peer_access)
    return "an SM copy reads and writes the peer's memory directly: it needs peer access (the "
           "staged path is a copy-engine path)";
  return std::nullopt;
}

}  // namespace gpucheck::bench

// What NCCL's own log (NCCL_DEBUG=INFO) says about the path an all-reduce took: the transports
// of its channels ("Channel 00/0 : 0[0] -> 1[1] via NET/Socket/0") and the network it chose
// ("Using network Socket"). The record carries them as proof of the path, not gpucheck's guess.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpucheck {

struct NcclPath {
  std::vector<std::string>
      transports;       // distinct, in order of first use: "NET/Socket", "P2P/CUMEM"
  std::string network;  // "Socket", "IB" (empty when the log does not say)
};

// Device numbers and "read"/"direct" qualifiers are dropped: "NET/IB/0/GDRDMA" is "NET/IB".
NcclPath parse_nccl_log(std::string_view text);

// Every transport a network one (NET/...), and at least one: the all-reduce left the host's
// shared memory and peer paths, as --transport net asks.
bool only_network(const NcclPath& path);

}  // namespace gpucheck

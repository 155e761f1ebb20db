// A result record's shape as people read it.
#include "core/shape_text.h"

#include "core/json_keys.h"

#include <fmt/format.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace gpucheck {

namespace k = keys;

std::string shape_text(const nlohmann::json& shape) {
  auto u = [&](std::string_view key) { return shape.value(key, std::uint64_t{0}); };
  // Peer copies, their latency and all-reduce name their devices.
  auto peers = [&](const char* arrow) {
    return fmt::format("{}{}{} {}", shape.value(k::kSrc, ""), arrow, shape.value(k::kDst, ""),
                       shape.value(k::kPeerAccess, true) ? "peer" : "staged");
  };
  if (shape.value(k::kMode, "") == "p2p") return fmt::format("{} B {}", u(k::kBytes), peers("->"));
  if (shape.value(k::kDirection, "") == "p2p")
    return fmt::format("{:g} MiB {} {}", static_cast<double>(u(k::kBytes)) / (1 << 20),
                       peers(shape.value(k::kBidirectional, false) ? "<->" : "->"),
                       shape.value(k::kEngine, ""));
  // Copies between many devices at once (nvbandwidth's all_to_one, one_to_all, all_to_all).
  if (const std::string fan = shape.value(k::kDirection, "");
      fan == "all_to_one" || fan == "one_to_all" || fan == "all_to_all")
    return fmt::format("{:g} MiB {} {} ({} copies at once) {}",
                       static_cast<double>(u(k::kBytes)) / (1 << 20), fan, peers("->"),
                       u(k::kCopies), shape.value(k::kEngine, ""));
  if (shape.contains(k::kDevices) && shape[std::string(k::kDevices)].is_array()) {
    std::string devices;
    for (const auto& d : shape[std::string(k::kDevices)])
      devices += (devices.empty() ? "" : ",") + d.get<std::string>();
    return fmt::format("{:g} MiB x{} ({})", static_cast<double>(u(k::kBytes)) / (1 << 20),
                       shape[std::string(k::kDevices)].size(), devices);
  }
  if (shape.contains(k::kBytes)) {
    double mib = static_cast<double>(u(k::kBytes)) / (1 << 20);
    std::string memory = shape.value(k::kHostMemory, "");
    return fmt::format("{:g} MiB {}{}{}", mib, shape.value(k::kDirection, ""),
                       memory.empty() ? "" : " ", memory);
  }
  if (shape.contains(k::kR))
    return fmt::format("{},{},{},{},{},{},{},{},{} {}", u(k::kN), u(k::kC), u(k::kH), u(k::kW),
                       u(k::kKk), u(k::kR), u(k::kS), u(k::kStride), u(k::kPad),
                       shape.value(k::kLayout, ""));
  if (shape.contains(k::kM)) return fmt::format("{}x{}x{}", u(k::kM), u(k::kN), u(k::kKk));
  if (shape.contains(k::kMode)) return shape.value(k::kMode, "");
  if (shape.contains(k::kCalls))
    return fmt::format("n={} calls={}{}", u(k::kN), u(k::kCalls),
                       shape.value(k::kD2hEachCall, false) ? " +d2h" : "");
  if (shape.contains(k::kN)) return fmt::format("n={}", u(k::kN));
  return shape.dump();
}

}  // namespace gpucheck

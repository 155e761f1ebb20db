// "mlx5_0/1 InfiniBand ACTIVE 400 Gb/sec (4X NDR)", "mlx5_2/1 RoCE ens6f0np0 ACTIVE ...",
// "GPUDirect: nvidia_peermem", "GPU 0000:18:00.0: nearest mlx5_0 (pcie_switch)".
#include "report/infiniband_items.h"

#include "core/json_access.h"
#include "core/json_keys_infiniband.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace gpucheck::report {

namespace k = keys;
using Json = nlohmann::json;

std::vector<std::string> infiniband_items(const Json& ib) {
  std::vector<std::string> out;
  for (const auto& d : member_or_empty(ib, k::kDevices)) {
    for (const auto& p : member_or_empty(d, k::kPorts)) {
      std::string layer = string_member(p, k::kLinkLayer);
      if (layer == "Ethernet") layer = "RoCE";
      std::string item = fmt::format("{}/{}", string_member(d, k::kName), p.value(k::kPort, 0));
      for (const auto& part : {layer, string_member(p, k::kNetdev), string_member(p, k::kState),
                               string_member(p, k::kRate)})
        if (!part.empty()) item += " " + part;
      out.push_back(std::move(item));
    }
  }
  if (out.empty()) return out;
  std::vector<std::string> modules;
  for (const auto& m : member_or_empty(ib, k::kPeerMemoryModules))
    if (m.is_string()) modules.push_back(m.get<std::string>());
  out.push_back("GPUDirect: " + (modules.empty() ? std::string("no peer-memory module")
                                                 : fmt::format("{}", fmt::join(modules, ", "))));
  for (const auto& g : member_or_empty(ib, k::kGpus)) {
    std::vector<std::string> closest;
    for (const auto& h : member_or_empty(g, k::kClosestHcas))
      if (h.is_string()) closest.push_back(h.get<std::string>());
    out.push_back(fmt::format("GPU {}: nearest {} ({})", string_member(g, k::kPciBusId),
                              fmt::join(closest, ","), string_member(g, k::kDistance)));
  }
  return out;
}

}  // namespace gpucheck::report

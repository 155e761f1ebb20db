// Reading NCCL's INFO lines; anything else in the log is ignored.
#include "core/nccl_log.h"

#include <algorithm>
#include <cctype>

namespace gpucheck {

namespace {

// "NET/IB/0/GDRDMA" → "NET/IB"; "P2P/CUMEM/read" → "P2P/CUMEM"; "SHM/direct/direct" → "SHM".
std::string transport_name(std::string_view via) {
  std::string out;
  std::size_t parts = 0;
  std::size_t start = 0;
  while (start <= via.size()) {
    std::size_t slash = via.find('/', start);
    if (slash == std::string_view::npos) slash = via.size();
    const std::string_view part = via.substr(start, slash - start);
    const bool qualifier = part.empty() || std::isdigit(static_cast<unsigned char>(part.front())) ||
                           part == "read" || part == "direct" || part == "GDRDMA";
    if (parts > 0 && qualifier) break;
    out += (parts == 0 ? "" : "/") + std::string(part);
    ++parts;
    start = slash + 1;
    // NET and P2P name their kind in the second part; the others are one word.
    if (parts == 2 || (parts == 1 && part != "NET" && part != "P2P")) break;
  }
  return out;
}

}  // namespace

NcclPath parse_nccl_log(std::string_view text) {
  NcclPath path;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (const auto via = line.find(" via ");
        via != std::string_view::npos && line.find("Channel") != std::string_view::npos) {
      std::string_view rest = line.substr(via + 5);
      rest = rest.substr(0, std::min(rest.find(' '), rest.size()));
      const std::string name = transport_name(rest);
      if (!name.empty() &&
          std::find(path.transports.begin(), path.transports.end(), name) == path.transports.end())
        path.transports.push_back(name);
    } else if (const auto u = line.find("Using network ");
               u != std::string_view::npos && path.network.empty()) {
      std::string_view rest = line.substr(u + 14);
      path.network = std::string(rest.substr(0, std::min(rest.find_first_of(" \r"), rest.size())));
    }
  }
  return path;
}

bool only_network(const NcclPath& path) {
  return !path.transports.empty() &&
         std::all_of(path.transports.begin(), path.transports.end(),
                     [](const std::string& t) { return t.rfind("NET/", 0) == 0; });
}

}  // namespace gpucheck

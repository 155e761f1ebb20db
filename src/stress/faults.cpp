// The planted-fault spec's grammar.
#include "stress/faults.h"

#include <fmt/format.h>

#include <charconv>
#include <stdexcept>
#include <string>

namespace gpucheck::stress {

std::vector<Fault> faults_for(std::string_view spec, std::string_view device) {
  std::vector<Fault> out;
  while (!spec.empty()) {
    const std::size_t comma = spec.find(',');
    std::string_view entry = spec.substr(0, comma);
    spec = comma == std::string_view::npos ? std::string_view{} : spec.substr(comma + 1);
    if (entry.empty()) continue;
    const std::size_t colon = entry.find(':');
    if (colon == std::string_view::npos)
      throw std::invalid_argument(fmt::format("{}: '{}' is not DEVICE:KIND[@N]", kFaultEnv, entry));
    std::string_view kind = entry.substr(colon + 1);
    std::string_view at;
    if (const std::size_t a = kind.find('@'); a != std::string_view::npos) {
      at = kind.substr(a + 1);
      kind = kind.substr(0, a);
    }
    Fault f;
    if (kind == "gemm_bit")
      f = {FaultKind::kGemmBit, 3};
    else if (kind == "memory_word")
      f = {FaultKind::kMemoryWord, 1};
    else if (kind == "hang")
      f = {FaultKind::kHang, 1};
    else if (kind == "die")
      f = {FaultKind::kDie, 1};
    else if (kind == "peer_byte")
      f = {FaultKind::kPeerByte, 3};
    else if (kind == "copy_byte")
      f = {FaultKind::kCopyByte, 3};
    else if (kind == "copy_skip")
      f = {FaultKind::kCopySkip, 3};
    else
      throw std::invalid_argument(
          fmt::format("{}: unknown fault '{}' (gemm_bit, memory_word, hang, die, peer_byte, "
                      "copy_byte, copy_skip)",
                      kFaultEnv, kind));
    if (!at.empty()) {
      auto [end, ec] = std::from_chars(at.data(), at.data() + at.size(), f.at);
      if (ec != std::errc() || end != at.data() + at.size())
        throw std::invalid_argument(fmt::format("{}: '{}' is not a count", kFaultEnv, at));
    }
    if (entry.substr(0, colon) == device) out.push_back(f);
  }
  return out;
}

}  // namespace gpucheck::stress
